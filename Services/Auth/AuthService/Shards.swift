// Records shards (Shared/Runtime/Shards.swift): auth decides each user's shard at
// registration, the least loaded one (fewest accounts; the lowest number on a tie), and
// names it in every session it validates. `auth.shard.get` and `auth.shard.set` are the
// operator's (`logbook shard move`): open to members of the stack only (their stack key in
// the body). A set publishes `user.shard.changed`, which evicts the user's cached sessions
// in every service (SessionCache.swift).
import Contracts
import Foundation
import GRDB
import Runtime
import Storage
import Wire

enum ShardCounts {
    /// The shard a new account goes to: of shards 1…`shards`, the one with the fewest users.
    static func leastLoaded(_ db: Database, shards: Int) throws -> Int {
        guard shards > 1 else { return 1 }
        var counts = [Int: Int]()
        for row in try Row.fetchAll(db, sql: "SELECT shard, COUNT(*) AS users FROM users GROUP BY shard") {
            counts[row["shard"]] = row["users"]
        }
        return (1...shards).min { (counts[$0] ?? 0, $0) < (counts[$1] ?? 0, $1) } ?? 1
    }

    static func all(_ db: Database) throws -> [Int: Int] {
        var counts = [Int: Int]()
        for row in try Row.fetchAll(db, sql: "SELECT shard, COUNT(*) AS users FROM users GROUP BY shard") {
            counts[row["shard"]] = row["users"]
        }
        return counts
    }
}

extension Handlers {
    func shardGet(_ body: ShardGetRequest, _ context: RequestContext) async throws -> ShardGetResult {
        try StackMember.require(body.stackKey)
        let shards = configuration.recordsShards
        return try await database.read { db in
            let counts = try ShardCounts.all(db)
            let numbers = Set(1...shards).union(counts.keys).sorted()
            var result = ShardGetResult(shards: numbers.map { .init(shard: $0, users: counts[$0] ?? 0) })
            if let username = body.username {
                guard let user = try User.find(db, username: username) else {
                    throw ServiceError.notFound("user \(AccountRules.quoted(username))")
                }
                result.userId = user.id
                result.username = user.username
                result.shard = user.shard
            }
            return result
        }
    }

    func shardSet(_ body: ShardSetRequest, _ context: RequestContext, _ db: Database) throws -> ShardSetResult {
        try StackMember.require(body.stackKey)
        guard (1...configuration.recordsShards).contains(body.shard) else {
            throw ServiceError.invalid("shard", "must be a shard from 1 to \(configuration.recordsShards)")
        }
        guard let user = try User.find(db, id: body.userId) else { throw ServiceError.notFound("user \(body.userId)") }
        if user.shard == body.shard { return ShardSetResult(userId: user.id, shard: user.shard) }
        guard user.shard == body.from else {
            throw ServiceError(
                .failedPrecondition, "the user is on shard \(user.shard), not \(body.from)", field: "from",
                details: ["shard": .number(.init(user.shard))])
        }
        try db.execute(sql: "UPDATE users SET shard = ? WHERE id = ?", arguments: [body.shard, user.id])
        try Outbox.append(
            db, type: AuthEvents.userShardChanged, userId: user.id,
            data: AuthEvents.UserShardChanged(userId: user.id, from: user.shard, shard: body.shard), at: now)
        context.logger.info(
            "records shard changed", metadata: ["user.id": "\(user.id)", "shard.from": "\(user.shard)", "shard.to": "\(body.shard)"])
        return ShardSetResult(userId: user.id, shard: body.shard)
    }
}
