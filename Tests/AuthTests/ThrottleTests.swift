@testable import AuthService
import Foundation
import Storage
import Testing
import Wire

@Suite struct ThrottleTests {
    @Test func fiveFailuresThenBackOff() async throws {
        let h = try Harness()
        try await h.register("alice")
        for _ in 1...5 {
            #expect(try await h.loginFailure("alice", password: "wrong guess").code == .unauthenticated)
        }
        // Refused without checking the password, even the right one, for 1 s after the 5th failure.
        let refused = try await h.loginFailure("Alice", password: "correct horse")
        #expect(refused.code == .resourceExhausted)
        #expect(refused.details?["retryAfterMs"] == 1000)
        #expect(refused.message.contains("try again in 1 s"))
        h.clock.advance(by: 0.4)
        #expect(try await h.loginFailure("alice", password: "wrong guess").details?["retryAfterMs"] == 600)

        // The window passes: one more attempt; it fails, and the next window doubles.
        h.clock.advance(by: 0.6)
        #expect(try await h.loginFailure("alice", password: "wrong guess").code == .unauthenticated)
        #expect(try await h.loginFailure("alice", password: "correct horse").details?["retryAfterMs"] == 2000)
        h.clock.advance(by: 2)

        // Success resets the count: the next failure is an ordinary one.
        _ = try await h.login("alice")
        #expect(try await h.loginFailure("alice", password: "wrong guess").code == .unauthenticated)
        _ = try await h.login("alice")
    }

    @Test func unknownUsernamesAreThrottledToo() async throws {
        let h = try Harness()
        for _ in 1...5 { _ = try await h.loginFailure("ghost", password: "wrong guess") }
        #expect(try await h.loginFailure("ghost", password: "wrong guess").code == .resourceExhausted)
        // Other usernames are not affected.
        try await h.register("bob")
        _ = try await h.login("bob")
    }

    @Test func throttlingSurvivesARestart() async throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let settings = DatabaseSettings(path: scratch.path + "/auth.sqlite")
        let clock = TestClock()
        do {
            let h = try Harness(database: settings, clock: clock)
            try await h.register("carol")
            for _ in 1...5 { _ = try await h.loginFailure("carol", password: "wrong guess") }
        }
        let restarted = try Harness(database: settings, clock: clock)
        #expect(try await restarted.loginFailure("carol", password: "correct horse").code == .resourceExhausted)
    }

    @Test func passwordChecksOfSignedInUsersCountToo() async throws {
        let h = try Harness()
        try await h.register("dave")
        let token = try await h.login("dave")
        for _ in 1...5 {
            let error = try await h.failure("auth.account.delete", ["password": "wrong guess"], token: token)
            #expect(error.code == .permissionDenied)
        }
        #expect(try await h.failure("auth.account.delete", ["password": "correct horse"], token: token).code == .resourceExhausted)
    }

    @Test func backOffDoublesAndIsCapped() {
        let throttle = LoginThrottle()
        #expect(throttle.wait(afterFailures: 4) == 0)
        #expect(throttle.wait(afterFailures: 5) == 1)
        #expect(throttle.wait(afterFailures: 6) == 2)
        #expect(throttle.wait(afterFailures: 13) == 256)
        #expect(throttle.wait(afterFailures: 14) == 300)
        #expect(throttle.wait(afterFailures: 1000) == 300)
    }
}

@Suite struct ConfigurationTests {
    @Test func readsSettings() throws {
        let values = ["ARGON2_OPSLIMIT": "3", "ARGON2_MEMLIMIT": "16384", "SESSION_DAYS": "7", "HASHING_CONCURRENCY": "1"]
        let configuration = try AuthConfiguration.from { values[$0] }
        #expect(configuration.argon2 == Argon2Cost(opslimit: 3, memlimit: 16384))
        #expect(configuration.sessionLifetime == 7 * 24 * 3600)
        #expect(configuration.hashingConcurrency == 1)
        let defaults = try AuthConfiguration.from { _ in nil }
        #expect(defaults.argon2 == .interactive)
        #expect(defaults.sessionLifetime == 30 * 24 * 3600)
    }

    @Test func refusesBadSettings() {
        #expect(throws: AuthConfigurationError.self) { try AuthConfiguration.from { $0 == "ARGON2_MEMLIMIT" ? "12" : nil } }
        #expect(throws: AuthConfigurationError.self) { try AuthConfiguration.from { $0 == "SESSION_DAYS" ? "soon" : nil } }
    }
}

@Suite struct RehashTests {
    /// libsodium's cost fields of an `$argon2id$v=19$m=…,t=…,p=1$…` string.
    static func cost(_ hash: String) -> String {
        hash.split(separator: "$").dropFirst(2).first.map(String.init) ?? hash
    }

    /// erin registered at the minimum cost, then auth opened again on the same file at a
    /// higher one: that auth, the higher cost, and erin's hash as registered.
    static func afterACostRaise(_ scratch: ScratchDirectory) async throws -> (Harness, Argon2Cost, String) {
        let settings = DatabaseSettings(path: scratch.path + "/auth.sqlite")
        let clock = TestClock()
        let before: String
        do {
            let first = try Harness(database: settings, clock: clock)
            try await first.register("erin")
            before = try await storedHash(first)
        }
        let raised = Argon2Cost(opslimit: Argon2Cost.minimum.opslimit + 1, memlimit: Argon2Cost.minimum.memlimit)
        return (try Harness(database: settings, clock: clock, argon2: raised), raised, before)
    }

    static func storedHash(_ h: Harness) async throws -> String {
        try await h.auth.host.database.read { db in
            try String.fetchOne(db, sql: "SELECT passwordHash FROM users WHERE username = 'erin'") ?? ""
        }
    }

    @Test("after the cost changes, a login stores the password's hash at the new cost; a wrong one does not")
    func aLoginRehashesAtTheCurrentCost() async throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let (h, raised, before) = try await Self.afterACostRaise(scratch)
        func stored(_ h: Harness) async throws -> String { try await Self.storedHash(h) }
        _ = try await h.loginFailure("erin", password: "wrong guess")
        #expect(try await stored(h) == before, "a wrong password changes nothing")
        _ = try await h.login("erin")
        let after = try await stored(h)
        #expect(after != before)
        #expect(Self.cost(after) == "m=\(raised.memlimit / 1024),t=\(raised.opslimit),p=1", "\(after)")
        #expect(Self.cost(before) == "m=\(raised.memlimit / 1024),t=\(Argon2Cost.minimum.opslimit),p=1", "\(before)")
        // the new hash is the same password's
        _ = try await h.login("erin")
        #expect(try await stored(h) == after, "made once, not at every login")
    }

    @Test("two logins at once after the cost changes: both sign in (one rehashes, the other checks again)")
    func concurrentLoginsWhileRehashing() async throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let (h, _, _) = try await Self.afterACostRaise(scratch)
        for round in 0..<5 {
            // a fresh old-cost hash each round, so every round races a rehash
            if round > 0 {
                let old = try Passwords(cost: .minimum, concurrency: 1)
                let hash = try await old.hash("correct horse")
                try await h.auth.host.database.write { db in
                    try db.execute(sql: "UPDATE users SET passwordHash = ? WHERE username = 'erin'", arguments: [hash])
                }
            }
            async let first = h.call("auth.login", ["username": "erin", "password": "correct horse"])
            async let second = h.call("auth.login", ["username": "erin", "password": "correct horse"])
            let (a, b) = try await (first, second)
            #expect(a["token"]?.stringValue != nil && b["token"]?.stringValue != nil, "round \(round)")
        }
    }
}
