// The auth service's contract, docs/protocol.md "Auth service methods" and "Records
// shards": accounts, sessions and the operator's shard calls. (Auth's events, which every
// service's session cache consumes, are `AuthEvents` in Shared/Runtime/SessionCache.swift.)
import Foundation
import Wire

/// `auth.register`.
public struct RegisterRequest: Documented, Equatable {
    public var username: String
    public var password: String
    public var email: String?
    /// IANA name; the CLI sends the machine's zone. Default `UTC`.
    public var timeZone: String?

    public init(username: String, password: String, email: String? = nil, timeZone: String? = nil) {
        self.username = username
        self.password = password
        self.email = email
        self.timeZone = timeZone
    }

    public static let sample = RegisterRequest(username: "alice", password: "p", email: "a@b.c", timeZone: "UTC")
}

/// What `auth.register` answers.
public struct Registered: Codable, Sendable, Equatable {
    public var userId: String
    public var username: String
    public var email: String?
    public var createdAt: Date
    public var timeZone: String
    /// The records shard this account's records live on (the least loaded when it registered).
    public var shard: Int

    public init(userId: String, username: String, email: String?, createdAt: Date, timeZone: String, shard: Int) {
        self.userId = userId
        self.username = username
        self.email = email
        self.createdAt = createdAt
        self.timeZone = timeZone
        self.shard = shard
    }
}

/// `auth.login`.
public struct LoginRequest: Documented, Equatable {
    public var username: String
    public var password: String
    /// The token an earlier successful login on this device answered with.
    public var deviceToken: String?

    public init(username: String, password: String, deviceToken: String? = nil) {
        self.username = username
        self.password = password
        self.deviceToken = deviceToken
    }

    public static let sample = LoginRequest(username: "alice", password: "p", deviceToken: "lbd_")
}

public struct LoginResult: Codable, Sendable, Equatable {
    /// Shown once; only its SHA-256 is stored.
    public var token: String
    public var userId: String
    public var username: String
    public var sessionId: String
    public var expiresAt: Date
    /// This device's token: the one presented if it was known, else a new one. Shown once.
    public var deviceToken: String
    /// The user's records shard.
    public var shard: Int

    public init(
        token: String, userId: String, username: String, sessionId: String, expiresAt: Date, deviceToken: String,
        shard: Int
    ) {
        self.token = token
        self.userId = userId
        self.username = username
        self.sessionId = sessionId
        self.expiresAt = expiresAt
        self.deviceToken = deviceToken
        self.shard = shard
    }
}

/// `{revoked: true}`: what `auth.logout` answers.
public struct Revoked: Codable, Sendable, Equatable {
    public var revoked: Bool
    public init(revoked: Bool = true) { self.revoked = revoked }
}

/// `auth.whoami`. Other services decode it as the runtime's `Principal`.
public struct WhoamiResult: Codable, Sendable, Equatable {
    public var userId: String
    public var username: String
    public var sessionId: String
    public var email: String?
    public var createdAt: Date
    public var timeZone: String
    /// The user's records shard: where their records calls go (docs/protocol.md, "Shards").
    public var shard: Int

    public init(
        userId: String, username: String, sessionId: String, email: String?, createdAt: Date, timeZone: String, shard: Int
    ) {
        self.userId = userId
        self.username = username
        self.sessionId = sessionId
        self.email = email
        self.createdAt = createdAt
        self.timeZone = timeZone
        self.shard = shard
    }
}

/// `auth.settings.update`: the zone every service counts the user's days in.
public struct SettingsUpdate: Documented, Equatable {
    public var timeZone: String
    public init(timeZone: String) { self.timeZone = timeZone }
    public static let sample = SettingsUpdate(timeZone: "Europe/Oslo")
}

public struct SettingsResult: Codable, Sendable, Equatable {
    public var timeZone: String
    /// False when the zone was already this one (nothing written, no event).
    public var changed: Bool

    public init(timeZone: String, changed: Bool) {
        self.timeZone = timeZone
        self.changed = changed
    }
}

/// `auth.password.change`.
public struct PasswordChange: Documented, Equatable {
    public var currentPassword: String
    public var newPassword: String

    public init(currentPassword: String, newPassword: String) {
        self.currentPassword = currentPassword
        self.newPassword = newPassword
    }

    public static let sample = PasswordChange(currentPassword: "a", newPassword: "b")
}

public struct PasswordChangeResult: Codable, Sendable, Equatable {
    /// The user's other sessions that were ended.
    public var revokedSessions: Int
    public init(revokedSessions: Int) { self.revokedSessions = revokedSessions }
}

/// `auth.account.delete`.
public struct AccountDelete: Documented, Equatable {
    public var password: String
    public init(password: String) { self.password = password }
    public static let sample = AccountDelete(password: "p")
}

// MARK: Shards (the operator's, stack members only)

/// `auth.shard.get`. `stackKey` is accepted in the body from clients that cannot set the
/// envelope's.
public struct ShardGetRequest: Documented, Equatable {
    public var stackKey: String?
    /// The account to look up; absent: only the counts.
    public var username: String?

    public init(stackKey: String? = nil, username: String? = nil) {
        self.stackKey = stackKey
        self.username = username
    }

    public static let sample = ShardGetRequest(stackKey: "k", username: "alice")
}

public struct ShardCount: Codable, Sendable, Equatable {
    public var shard: Int
    public var users: Int
    public init(shard: Int, users: Int) {
        self.shard = shard
        self.users = users
    }
}

public struct ShardGetResult: Codable, Sendable, Equatable {
    public var userId: String?
    public var username: String?
    public var shard: Int?
    /// Accounts per shard, 1…LOGBOOK_RECORDS_SHARDS (and any shard still holding users beyond).
    public var shards: [ShardCount]

    public init(userId: String? = nil, username: String? = nil, shard: Int? = nil, shards: [ShardCount]) {
        self.userId = userId
        self.username = username
        self.shard = shard
        self.shards = shards
    }
}

/// `auth.shard.set`.
public struct ShardSetRequest: Documented, Equatable {
    public var stackKey: String?
    public var userId: String
    /// The shard the caller believes the user is on: refused when it is not (a second move).
    public var from: Int
    public var shard: Int

    public init(stackKey: String? = nil, userId: String, from: Int, shard: Int) {
        self.stackKey = stackKey
        self.userId = userId
        self.from = from
        self.shard = shard
    }

    public static let sample = ShardSetRequest(stackKey: "k", userId: "u", from: 1, shard: 2)
}

public struct ShardSetResult: Codable, Sendable, Equatable {
    public var userId: String
    public var shard: Int
    public init(userId: String, shard: Int) {
        self.userId = userId
        self.shard = shard
    }
}

// MARK: Methods

public enum AuthMethods {
    public static let register = Method<RegisterRequest, Registered>("auth.register", .write)
    /// Writes twice (the attempt, then the session) around a slow password check, in
    /// transactions of its own.
    public static let login = Method<LoginRequest, LoginResult>("auth.login", .ownWrite)
    public static let logout = Method<Empty, Revoked>("auth.logout", .write)
    public static let whoami = Method<Empty, WhoamiResult>("auth.whoami", .read)
    public static let settingsUpdate = Method<SettingsUpdate, SettingsResult>("auth.settings.update", .write)
    public static let passwordChange = Method<PasswordChange, PasswordChangeResult>("auth.password.change", .write)
    public static let accountDelete = Method<AccountDelete, Deleted>("auth.account.delete", .write)
    public static let shardGet = Method<ShardGetRequest, ShardGetResult>("auth.shard.get", .read)
    public static let shardSet = Method<ShardSetRequest, ShardSetResult>("auth.shard.set", .write)
}
