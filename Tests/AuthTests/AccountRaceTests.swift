// What a password-checked write (account deletion, password change) finds when it commits:
// the password is checked outside the transaction, slowly, so the session may have ended
// or the password changed meanwhile; and what deletion leaves behind.
import AuthService
import Foundation
import GRDB
import Runtime
import Testing
import Wire

@Suite struct AccountRaceTests {
    /// Starts `method` with `token` and returns once its password check is under way (the
    /// check counts the attempt against the session before it hashes).
    func startChecked(_ h: Harness, _ method: String, _ body: JSONValue, token: String, sessionId: String)
        async throws -> Task<Reply, any Error>
    {
        let task = Task { try await h.transport.reply(method, body: body, options: CallOptions(token: token)) }
        for _ in 0..<400 {
            let counted = try await h.auth.host.database.read { db in
                try Int.fetchOne(
                    db, sql: "SELECT COUNT(*) FROM loginFailures WHERE username LIKE ?", arguments: ["%" + sessionId + "%"])
            }
            if counted == 1 { return task }
            try await Task.sleep(for: .milliseconds(5))
        }
        Issue.record("\(method) never started its password check")
        return task
    }

    /// Argon2 slow enough (hundreds of ms) for a logout to land while the password is checked.
    static let slow = Argon2Cost(opslimit: 4, memlimit: 64 << 20)

    @Test func aDeletionWhoseSessionEndedWhileCheckingDeletesNothing() async throws {
        let h = try Harness(argon2: Self.slow)
        try await h.register("carol")
        let token = try await h.login("carol")
        let sessionId = try #require(try await h.call("auth.whoami", token: token)["sessionId"]?.stringValue)
        let deletion = try await startChecked(
            h, "auth.account.delete", ["password": "correct horse"], token: token, sessionId: sessionId)
        try await h.call("auth.logout", token: token)
        let reply = try await deletion.value
        #expect(reply.error?.code == .unauthenticated, "\(reply.result?.jsonText ?? "")")
        let users = try await h.auth.host.database.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM users") }
        #expect(users == 1)
        #expect(try await h.events().allSatisfy { $0.type != "user.deleted" })
    }

    @Test func aPasswordChangeWhoseSessionEndedWhileCheckingChangesNothing() async throws {
        let h = try Harness(argon2: Self.slow)
        try await h.register("dave")
        let token = try await h.login("dave")
        let sessionId = try #require(try await h.call("auth.whoami", token: token)["sessionId"]?.stringValue)
        let change = try await startChecked(
            h, "auth.password.change", ["currentPassword": "correct horse", "newPassword": "battery staple"],
            token: token, sessionId: sessionId)
        try await h.call("auth.logout", token: token)
        #expect(try await change.value.error?.code == .unauthenticated)
        _ = try await h.login("dave")  // the old password still opens the account
    }

    /// A login whose caller gave up while the password was checked makes no session and no
    /// device nobody received (the retry would make another pair).
    @Test func aLoginPastItsDeadlineMakesNoSession() async throws {
        let h = try Harness(argon2: Self.slow)
        try await h.register("fred")
        let reply = try await h.transport.reply(
            "auth.login", body: ["username": "fred", "password": "correct horse"],
            options: CallOptions(timeout: .milliseconds(60)))
        #expect(reply.error?.code == .deadlineExceeded)
        try await Task.sleep(for: .milliseconds(1_500))  // the check ends meanwhile
        let (sessions, devices) = try await h.auth.host.database.read { db in
            (
                try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM sessions"),
                try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM devices")
            )
        }
        #expect(sessions == 0)
        #expect(devices == 0)
        _ = try await h.login("fred")
    }

    @Test func deletionForgetsTheRegistrationsKey() async throws {
        let h = try Harness()
        let body: JSONValue = ["username": "alice", "password": "correct horse", "email": "a@example.com"]
        let first = try await h.call("auth.register", body, key: "k-1")
        let userId = try #require(first["userId"]?.stringValue)
        let token = try await h.login("alice")
        try await h.call("auth.account.delete", ["password": "correct horse"], token: token)
        let kept = try await h.auth.host.database.read { db in
            try Int.fetchOne(
                db, sql: "SELECT COUNT(*) FROM idempotency WHERE instr(CAST(result AS TEXT), ?) > 0",
                arguments: [userId])
        }
        #expect(kept == 0)
        // the same request again is a new registration, not the deleted account's answer
        let again = try await h.call("auth.register", body, key: "k-1")
        #expect(again["userId"]?.stringValue != userId)
    }

    @Test func expiredSessionsAreNotCountedAsRevoked() async throws {
        let h = try Harness()
        try await h.register("erin")
        _ = try await h.login("erin")  // expires before the change
        h.clock.advance(by: 10 * 86_400)
        let live = try await h.login("erin")
        let current = try await h.login("erin")
        h.clock.advance(by: 21 * 86_400)  // (no login since: nothing swept the expired one)
        let before = try await h.events().count
        let result = try await h.call(
            "auth.password.change", ["currentPassword": "correct horse", "newPassword": "battery staple"], token: current)
        #expect(result == ["revokedSessions": 1])
        let revoked = try await h.events().dropFirst(before).filter { $0.type == "session.revoked" }
        #expect(revoked.count == 1)
        #expect(try await h.failure("auth.whoami", token: live).code == .unauthenticated)
    }
}
