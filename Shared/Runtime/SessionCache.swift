// How a service other than auth learns who a token belongs to without a round trip to auth
// on the hot path: validated tokens are cached (by their SHA-256, never in clear) for a
// short time-to-live, and auth's `session.revoked` / `user.deleted` events evict them at
// once. Auth heartbeats every 200 ms, so a lost revocation is noticed and replayed within
// that; a logout is therefore refused everywhere well within one second. An answer from
// auth that an eviction overtook while it was on its way is used for its request and not
// kept: it may be about a session revoked meanwhile (`resolve`).
import Foundation
import Logging
import Storage
import Synchronization
import Wire

public final class SessionCache: SessionResolver, EventSink, Sendable {
    struct Entry {
        var principal: Principal
        var expires: ContinuousClock.Instant
    }

    /// The validated tokens, and how many evictions there have been: an answer from auth
    /// is kept only if none came while it was asked for.
    struct State {
        var entries: [String: Entry] = [:]
        var evictions = 0
    }

    let auth: any Transport
    let ttl: Duration
    let capacity: Int
    private let state = Mutex(State())

    /// - Parameters:
    ///   - auth: how to reach the auth service (`auth.whoami` validates a token).
    ///   - ttl: the longest a validated token is trusted without asking auth again,
    ///     should every revocation event and heartbeat be lost.
    public init(auth: any Transport, ttl: Duration = .seconds(30), capacity: Int = 100_000) {
        self.auth = auth
        self.ttl = ttl
        self.capacity = capacity
    }

    public func resolve(token: String) async throws -> Principal {
        let key = Crypto.sha256Hex(token)
        let now = ContinuousClock().now
        let (cached, evictions) = state.withLock { ($0.entries[key], $0.evictions) }
        if let cached, cached.expires > now {
            return cached.principal
        }
        let principal: Principal
        do {
            principal = try await auth.call(
                "auth.whoami", Empty(), as: Principal.self, options: CallOptions(token: token, timeout: .seconds(2)))
        } catch let error as ServiceError where error.code == .unavailable || error.code == .deadlineExceeded {
            throw ServiceError(.unavailable, "cannot check the session: the auth service is not answering")
        }
        state.withLock {
            // An eviction while auth was asked may be this session's logout, applied after
            // auth answered and before the answer got here: kept, it would outlive the
            // logout by the whole time-to-live.
            guard $0.evictions == evictions else { return }
            if $0.entries.count >= capacity { $0.entries.removeAll() }
            $0.entries[key] = Entry(principal: principal, expires: now + ttl)
        }
        return principal
    }

    // MARK: EventSink (auth's events)

    public func position() async throws -> Int64? { nil }

    /// Every token validated before the consumer's start is asked about again: a logout
    /// published before that start (while auth's stream could not be read yet) is never
    /// seen here, and its token would otherwise stay trusted for the whole time-to-live.
    public func started(after seq: Int64) async throws { evict { _ in true } }

    public func apply(_ events: [Event]) async throws {
        for event in events {
            switch event.type {
            case AuthEvents.sessionRevoked:
                let revoked = try event.decode(AuthEvents.SessionRevoked.self)
                let ids = Set(revoked.sessionIds)
                evict { ids.contains($0.sessionId) }
            case AuthEvents.userDeleted:
                let deleted = try event.decode(AuthEvents.UserDeleted.self)
                evict { $0.userId == deleted.userId }
            case AuthEvents.userShardChanged:
                // the cached principal names the old shard (a `logbook shard move`)
                let changed = try event.decode(AuthEvents.UserShardChanged.self)
                evict { $0.userId == changed.userId }
            case AuthEvents.userSettingsChanged:
                // the cached principal carries the old time zone: ask auth again next time
                let changed = try event.decode(AuthEvents.UserSettingsChanged.self)
                evict { $0.userId == changed.userId }
            default:
                break
            }
        }
    }

    private func evict(_ matches: (Principal) -> Bool) {
        state.withLock {
            $0.entries = $0.entries.filter { !matches($0.value.principal) }
            $0.evictions += 1
        }
    }
}

/// The events auth publishes, shared so every consumer decodes the same shapes.
public enum AuthEvents {
    public static let sessionRevoked = "session.revoked"
    public static let userDeleted = "user.deleted"
    public static let userRegistered = "user.registered"
    public static let userSettingsChanged = "user.settings.changed"
    public static let userShardChanged = "user.shard.changed"

    /// A user's records now live on another shard (`auth.shard.set`, after a move).
    public struct UserShardChanged: Codable, Sendable {
        public var userId: String
        public var from: Int
        public var shard: Int
        public init(userId: String, from: Int, shard: Int) {
            self.userId = userId
            self.from = from
            self.shard = shard
        }
    }

    public struct SessionRevoked: Codable, Sendable {
        public var userId: String
        public var sessionIds: [String]
        /// `logout`, `password_changed`, `account_deleted`
        public var reason: String

        public init(userId: String, sessionIds: [String], reason: String) {
            self.userId = userId
            self.sessionIds = sessionIds
            self.reason = reason
        }
    }

    public struct UserDeleted: Codable, Sendable {
        public var userId: String
        public init(userId: String) { self.userId = userId }
    }

    public struct UserRegistered: Codable, Sendable {
        public var userId: String
        public var username: String
        /// IANA name; absent in events written before accounts had a time zone (read as UTC).
        public var timeZone: String?
        /// The records shard auth assigned (absent before shards: 1).
        public var shard: Int?
        public init(userId: String, username: String, timeZone: String? = nil, shard: Int? = nil) {
            self.userId = userId
            self.username = username
            self.timeZone = timeZone
            self.shard = shard
        }
    }

    /// A user's settings changed (today: the time zone every day boundary is counted in).
    public struct UserSettingsChanged: Codable, Sendable {
        public var userId: String
        public var timeZone: String
        public init(userId: String, timeZone: String) {
            self.userId = userId
            self.timeZone = timeZone
        }
    }
}
