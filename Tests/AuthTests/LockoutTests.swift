// No lock-out: strangers' guesses back off the username (and spend a global budget), but
// the owner's device, known from an earlier login, keeps its own count and lane.
import AuthService
import Runtime
import Foundation
import Testing
import Wire

@Suite struct LockoutTests {
    func login(_ h: Harness, _ username: String, _ password: String, device: String? = nil) async throws -> Reply {
        var body: [String: JSONValue] = ["username": .string(username), "password": .string(password)]
        if let device { body["deviceToken"] = .string(device) }
        return try await h.transport.reply("auth.login", body: .object(body))
    }

    @Test func theOwnersDeviceIsNeverLockedOutByAStrangersGuesses() async throws {
        let h = try Harness()
        try await h.register("alice")
        let first = try await login(h, "alice", "correct horse")
        let device = try #require(first.result?["deviceToken"]?.stringValue)
        #expect(device.hasPrefix("lbd_") && device.count == 47)

        // 50 wrong guesses from another client, spread over a minute.
        var refused = 0
        for _ in 1...50 {
            let reply = try await login(h, "alice", "wrong guess")
            #expect([.unauthenticated, .resourceExhausted].contains(reply.error?.code))
            if reply.error?.code == .resourceExhausted { refused += 1 }
            h.clock.advance(by: 1.2)
        }
        #expect(refused > 30, "the stranger was throttled (\(refused) of 50 refused)")
        // The username is backing off: without the device even the right password waits.
        #expect(try await login(h, "alice", "correct horse").error?.code == .resourceExhausted)
        // The owner's device gets straight in, and keeps its token.
        let owner = try await login(h, "alice", "correct horse", device: device)
        #expect(owner.ok, "\(owner.error?.message ?? "")")
        #expect(owner.result?["deviceToken"]?.stringValue == device)

        // A device is throttled on its own failures.
        for _ in 1...5 { #expect(try await login(h, "alice", "wrong guess", device: device).error?.code == .unauthenticated) }
        #expect(try await login(h, "alice", "correct horse", device: device).error?.code == .resourceExhausted)
        // A made-up or another user's device token counts as no device at all.
        try await h.register("bob")
        let bobs = try #require(try await login(h, "bob", "correct horse").result?["deviceToken"]?.stringValue)
        #expect(try await login(h, "alice", "correct horse", device: bobs).error?.code == .resourceExhausted)
        let forged = "lbd_" + String(repeating: "A", count: 43)
        #expect(try await login(h, "alice", "correct horse", device: forged).error?.code == .resourceExhausted)
        // A wrong type names the field.
        let wrongType = try await h.transport.reply(
            "auth.login", body: ["username": "alice", "password": "correct horse", "deviceToken": 5])
        #expect(wrongType.error?.field == "deviceToken")
    }

    @Test func sprayingManyUsernamesIsHeldToTheGlobalBudget() async throws {
        let h = try Harness(failedLoginsPerMinute: 60)
        try await h.register("alice")
        let device = try #require(try await login(h, "alice", "correct horse").result?["deviceToken"]?.stringValue)
        h.clock.advance(by: 60)  // the budget full again

        var checked = 0
        var refused: [ServiceError] = []
        for i in 0..<200 {
            let reply = try await login(h, "user\(i)", "password \(i)")
            switch reply.error?.code {
            case .unauthenticated?: checked += 1
            case .resourceExhausted?: refused.append(reply.error!)
            default: Issue.record("unexpected \(reply.error?.code.rawValue ?? "success")")
            }
        }
        // With the clock standing still, exactly a full bucket (a quarter minute's worth) was
        // checked; the rest waited.
        #expect(checked == 15)
        #expect(refused.count == 185)
        #expect(refused.allSatisfy { ($0.details?["retryAfterMs"]?.doubleValue ?? 0) > 0 })
        // Meanwhile the owner's device signs in at once.
        #expect(try await login(h, "alice", "correct horse", device: device).ok)
        // The budget refills at its rate: one more a second, up to 15 after 15 s.
        h.clock.advance(by: 1)
        #expect(try await login(h, "user500", "x").error?.code == .unauthenticated)
        #expect(try await login(h, "user501", "x").error?.code == .resourceExhausted)
        h.clock.advance(by: 600)
        var afterRest = 0
        for i in 0..<30 where try await login(h, "rest\(i)", "x").error?.code == .unauthenticated { afterRest += 1 }
        #expect(afterRest == 15, "a rested bucket holds a quarter minute's worth")
    }

    @Test func theBudgetIsASettingAndZeroSwitchesItOff() async throws {
        let configuration = try AuthConfiguration.from { $0 == "FAILED_LOGINS_PER_MINUTE" ? "5" : nil }
        #expect(configuration.failedLoginsPerMinute == 5)
        #expect(throws: AuthConfigurationError.self) {
            try AuthConfiguration.from { $0 == "FAILED_LOGINS_PER_MINUTE" ? "-1" : nil }
        }
        let h = try Harness(failedLoginsPerMinute: 0)
        for i in 0..<80 { #expect(try await login(h, "user\(i)", "x").error?.code == .unauthenticated) }
    }

    /// docs/protocol.md: "A refused attempt does not count as a failure." An attempt refused
    /// because the server's budget is spent was counted against the username first, so a
    /// sprayer emptying the budget pushed the owner's username into its back-off.
    @Test func attemptsTheBudgetRefusesDoNotCountAgainstTheUsername() async throws {
        let h = try Harness(failedLoginsPerMinute: 4)  // a bucket of 1
        try await h.register("alice")
        #expect(try await login(h, "someone", "a guess").error?.code == .unauthenticated)  // the budget spent
        for _ in 0..<8 {
            let refused = try await login(h, "alice", "correct horse")
            #expect(refused.error?.code == .resourceExhausted)
            #expect(refused.error?.message.contains("on this server") == true, "\(refused.error?.message ?? "")")
        }
        h.clock.advance(by: 15)  // the budget back
        let signedIn = try await login(h, "alice", "correct horse")
        #expect(signedIn.ok, "her username is not backing off: \(signedIn.error?.message ?? "")")
    }

    /// A password asked of a signed-in session is counted against the session until it proves
    /// right, and then cleared: changing the password again and again is never held up.
    @Test func aSessionsRightPasswordsAreNotCountedAsFailures() async throws {
        let h = try Harness()
        try await h.register("dora")
        let token = try await h.login("dora")
        var current = "correct horse"
        for round in 1...8 {
            let next = "battery staple \(round)"
            let changed = try await h.transport.reply(
                "auth.password.change", body: ["currentPassword": .string(current), "newPassword": .string(next)],
                options: CallOptions(token: token, idempotencyKey: "change-\(round)"))
            #expect(changed.ok, "round \(round): \(changed.error?.message ?? "")")
            current = next
        }
    }

    /// A login whose password was checked against the hash the account had when it started is
    /// refused when a password change committed meanwhile: the old password stops working.
    @Test func aLoginCheckedAgainstAReplacedHashIsRefused() async throws {
        // a cost that takes a good part of a second, so the change lands while the login hashes
        let h = try Harness(argon2: Argon2Cost(opslimit: 6, memlimit: 64 << 20))
        try await h.register("erik")
        let before = try await h.auth.host.database.read { db in
            try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM sessions")
        }
        let clock = ContinuousClock()
        let started = clock.now
        let signingIn = Task { try await login(h, "erik", "correct horse") }
        try await Task.sleep(for: .milliseconds(50))
        // what a password change commits: a new hash (here written straight to the table)
        try await h.auth.host.database.write { db in
            try db.execute(sql: "UPDATE users SET passwordHash = '$argon2id$replaced' WHERE username = 'erik'")
        }
        let changedAfter = clock.now - started
        let reply = try await signingIn.value
        let took = clock.now - started
        try #require(took > changedAfter, "the login was still hashing when the hash changed")
        #expect(reply.error?.code == .unauthenticated, "\(reply.result?.jsonText ?? "")")
        let after = try await h.auth.host.database.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM sessions") }
        #expect(after == before, "no session was made")
    }

    @Test func aSuccessfulLoginDoesNotSpendTheBudget() async throws {
        let h = try Harness(failedLoginsPerMinute: 12)  // a bucket of 3
        try await h.register("carol")
        for _ in 0..<10 { #expect(try await login(h, "carol", "correct horse").ok) }
        for i in 0..<3 { #expect(try await login(h, "x\(i)", "y").error?.code == .unauthenticated) }
        #expect(try await login(h, "x9", "y").error?.code == .resourceExhausted)
    }
}
