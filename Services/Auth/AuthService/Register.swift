// auth.register: a new account. Validation and the Argon2id hash happen before the
// transaction; inside it, the case-insensitive uniqueness check, the insert and the
// `user.registered` event commit together.
import Contracts
import Foundation
import GRDB
import Runtime
import Storage
import Wire

extension Handlers {
    struct NewAccount: Sendable {
        var username: String
        var email: String?
        var timeZone: String
        var passwordHash: String
    }

    func prepareRegister(_ body: RegisterRequest, _ context: RequestContext) async throws -> NewAccount {
        let username = try AccountRules.username(body.username)
        try AccountRules.password(body.password)
        let email = try AccountRules.email(body.email)
        let timeZone = try AccountRules.timeZone(body.timeZone) ?? "UTC"
        try context.checkDeadline()
        return NewAccount(
            username: username, email: email, timeZone: timeZone, passwordHash: try await passwords.hash(body.password))
    }

    func commitRegister(_ account: NewAccount, _ context: RequestContext, _ db: Database) throws -> Registered {
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
        return Registered(
            userId: user.id, username: user.username, email: user.email, createdAt: user.createdAt,
            timeZone: user.timeZone, shard: user.shard)
    }
}
