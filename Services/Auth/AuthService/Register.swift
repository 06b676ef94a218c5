// auth.register: a new account. Validation and the Argon2id hash happen before the
// transaction; inside it, the case-insensitive uniqueness check, the insert and the
// `user.registered` event commit together.
import Foundation
import GRDB
import Runtime
import Storage
import Wire

struct RegisterBody: Codable, Sendable {
    var username: String
    var password: String
    var email: String?
    /// IANA name; the CLI sends the machine's zone. Default `UTC`.
    var timeZone: String?
}

struct RegisterResult: Codable, Sendable, Equatable {
    var userId: String
    var username: String
    var email: String?
    var createdAt: Date
    var timeZone: String
    /// The records shard this account's records live on (the least loaded when it registered).
    var shard: Int
}

extension Handlers {
    struct NewAccount: Sendable {
        var username: String
        var email: String?
        var timeZone: String
        var passwordHash: String
    }

    func prepareRegister(_ body: RegisterBody, _ context: RequestContext) async throws -> NewAccount {
        let username = try AccountRules.username(body.username)
        try AccountRules.password(body.password)
        let email = try AccountRules.email(body.email)
        let timeZone = try AccountRules.timeZone(body.timeZone) ?? "UTC"
        try context.checkDeadline()
        return NewAccount(
            username: username, email: email, timeZone: timeZone, passwordHash: try await passwords.hash(body.password))
    }

    func commitRegister(_ account: NewAccount, _ context: RequestContext, _ db: Database) throws -> RegisterResult {
        if try User.find(db, username: account.username) != nil {
            throw ServiceError(
                .alreadyExists, "username \(AccountRules.quoted(account.username)) is already registered", field: "username")
        }
        let now = self.now
        let user = User(
            id: ID.make(at: now), username: account.username, email: account.email,
            passwordHash: account.passwordHash, createdAt: now, timeZone: account.timeZone,
            shard: try ShardCounts.leastLoaded(db, shards: configuration.recordsShards))
        try user.insert(db)
        try Outbox.append(
            db, type: AuthEvents.userRegistered, userId: user.id,
            data: AuthEvents.UserRegistered(
                userId: user.id, username: user.username, timeZone: user.timeZone, shard: user.shard), at: now)
        context.logger.info("account registered", metadata: ["user.id": "\(user.id)"])
        return RegisterResult(
            userId: user.id, username: user.username, email: user.email, createdAt: user.createdAt,
            timeZone: user.timeZone, shard: user.shard)
    }
}
