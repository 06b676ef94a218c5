// Records shards in auth (AuthService/Shards.swift): the least loaded shard at
// registration, named by register, login and whoami (and so in the principal other services
// resolve); auth.shard.get and auth.shard.set for the operator, with the event that makes
// every session cache forget the user's sessions.
import AuthService
import Foundation
import Runtime
import Testing
import Wire

@Suite struct ShardAssignmentTests {
    @Test func newAccountsGoToTheLeastLoadedShard() async throws {
        let h = try Harness(recordsShards: 3)
        var shards: [Int] = []
        for name in ["ann", "ben", "cid", "dee"] {
            shards.append(try #require(try await h.register(name)["shard"]?.intValue))
        }
        #expect(shards == [1, 2, 3, 1])
        // moving one away makes its old shard the least loaded again
        let ben = try await h.call("auth.shard.get", ["username": "ben"])
        let benId = try #require(ben["userId"]?.stringValue)
        try await h.call("auth.shard.set", ["userId": .string(benId), "from": 2, "shard": 3])
        #expect(try await h.register("eve")["shard"]?.intValue == 2)
        let counts = try await h.call("auth.shard.get")
        #expect(counts["shards"] == [["shard": 1, "users": 2], ["shard": 2, "users": 1], ["shard": 3, "users": 2]])
    }

    @Test func loginWhoamiAndThePrincipalNameTheShard() async throws {
        let h = try Harness(recordsShards: 2)
        try await h.register("ann")
        try await h.register("ben")
        let login = try await h.call("auth.login", ["username": "ben", "password": "correct horse"])
        #expect(login["shard"]?.intValue == 2)
        let token = try #require(login["token"]?.stringValue)
        let me = try await h.call("auth.whoami", token: token)
        #expect(try me.decode(Principal.self).shard == 2)
        let registered = try await h.events().filter { $0.type == AuthEvents.userRegistered }
        #expect(try registered.map { try $0.decode(AuthEvents.UserRegistered.self).shard } == [1, 2])
    }

    @Test func oneShardIsTodaysBehaviour() async throws {
        let h = try Harness()
        for name in ["ann", "ben"] { #expect(try await h.register(name)["shard"]?.intValue == 1) }
    }

    @Test func setChecksTheShardAndTheUsersCurrentOneAndPublishes() async throws {
        let h = try Harness(recordsShards: 2)
        let ann = try #require(try await h.register("ann")["userId"]?.stringValue)
        let token = try await h.login("ann")
        let outside = try await h.failure("auth.shard.set", ["userId": .string(ann), "from": 1, "shard": 3])
        #expect(outside.code == .invalidArgument && outside.field == "shard")
        let stale = try await h.failure("auth.shard.set", ["userId": .string(ann), "from": 2, "shard": 2])
        #expect(stale.code == .failedPrecondition && stale.details?["shard"]?.intValue == 1)
        let unknown = try await h.failure("auth.shard.set", ["userId": "nobody", "from": 1, "shard": 2])
        #expect(unknown.code == .notFound)
        let missing = try await h.failure("auth.shard.get", ["username": "nobody"])
        #expect(missing.code == .notFound)
        try await h.call("auth.shard.set", ["userId": .string(ann), "from": 1, "shard": 2])
        #expect(try await h.call("auth.whoami", token: token)["shard"]?.intValue == 2)
        let changed = try #require(try await h.events().first { $0.type == AuthEvents.userShardChanged })
        let payload = try changed.decode(AuthEvents.UserShardChanged.self)
        #expect(payload.userId == ann && payload.from == 1 && payload.shard == 2)
    }
}
