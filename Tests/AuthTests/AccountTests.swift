import AuthService
import Foundation
import GRDB
import Runtime
import Testing
import Wire

@Suite struct AccountTests {
    @Test func changingThePasswordRevokesOtherSessionsOnly() async throws {
        let h = try Harness()
        try await h.register("alice")
        let current = try await h.login("alice")
        let other1 = try await h.login("alice")
        let other2 = try await h.login("alice")
        let result = try await h.call(
            "auth.password.change", ["currentPassword": "correct horse", "newPassword": "battery staple"], token: current)
        #expect(result == ["revokedSessions": 2])
        #expect(try await h.call("auth.whoami", token: current)["username"] == "alice")
        #expect(try await h.failure("auth.whoami", token: other1).code == .unauthenticated)
        #expect(try await h.failure("auth.whoami", token: other2).code == .unauthenticated)
        #expect(try await h.loginFailure("alice", password: "correct horse").code == .unauthenticated)
        _ = try await h.login("alice", password: "battery staple")
    }

    @Test func changingThePasswordNeedsTheCurrentOne() async throws {
        let h = try Harness()
        try await h.register("bob")
        let token = try await h.login("bob")
        let wrong = try await h.failure(
            "auth.password.change", ["currentPassword": "guess guess", "newPassword": "battery staple"], token: token)
        #expect(wrong.code == .permissionDenied)
        #expect(wrong.field == "currentPassword")
        let short = try await h.failure(
            "auth.password.change", ["currentPassword": "correct horse", "newPassword": "short"], token: token)
        #expect(short.code == .invalidArgument)
        #expect(short.field == "newPassword")
        #expect(short.message == "newPassword: must be 8–1024 characters (got 5)")
        let missing = try await h.failure("auth.password.change", ["currentPassword": "correct horse"], token: token)
        #expect(missing.field == "newPassword")
        // Nothing changed.
        _ = try await h.login("bob")
        #expect(try await h.call("auth.whoami", token: token)["username"] == "bob")
        #expect(try await h.failure("auth.password.change", ["currentPassword": "correct horse", "newPassword": "battery staple"]).code == .unauthenticated)
    }

    @Test func deletingTheAccountRemovesUserAndSessions() async throws {
        let h = try Harness()
        let registered = try await h.register("carol")
        let userId = try #require(registered["userId"]?.stringValue)
        let token = try await h.login("carol")
        let other = try await h.login("carol")
        try await h.register("dave")
        let wrong = try await h.failure("auth.account.delete", ["password": "not it at all"], token: token)
        #expect(wrong.code == .permissionDenied)
        #expect(wrong.field == "password")
        #expect(try await h.call("auth.account.delete", ["password": "correct horse"], token: token) == ["deleted": true])
        #expect(try await h.failure("auth.whoami", token: token).code == .unauthenticated)
        #expect(try await h.failure("auth.whoami", token: other).code == .unauthenticated)
        #expect(try await h.loginFailure("carol", password: "correct horse").message == "wrong username or password")
        let (users, sessions) = try await h.auth.host.database.read { db in
            (
                try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM users WHERE id = ?", arguments: [userId]),
                try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM sessions WHERE userId = ?", arguments: [userId])
            )
        }
        #expect(users == 0)
        #expect(sessions == 0)
        // The name is free again; other accounts are untouched.
        try await h.register("carol")
        _ = try await h.login("dave")
    }

    @Test func eventsDescribeEveryChange() async throws {
        let h = try Harness()
        let registered = try await h.register("erin")
        let userId = try #require(registered["userId"]?.stringValue)
        let a = try await h.login("erin")
        let b = try await h.login("erin")
        let c = try await h.login("erin")
        let sessionB = try await h.call("auth.whoami", token: b)["sessionId"]?.stringValue
        let sessionC = try await h.call("auth.whoami", token: c)["sessionId"]?.stringValue
        let sessionA = try await h.call("auth.whoami", token: a)["sessionId"]?.stringValue
        try await h.call("auth.logout", token: b)
        try await h.call("auth.password.change", ["currentPassword": "correct horse", "newPassword": "new password"], token: a)
        let d = try await h.login("erin", password: "new password")
        let sessionD = try await h.call("auth.whoami", token: d)["sessionId"]?.stringValue

        let before = try await h.events()
        #expect(before.map(\.type) == ["user.registered", "session.revoked", "session.revoked"])
        let registeredEvent = try before[0].decode(AuthEvents.UserRegistered.self)
        #expect(registeredEvent.userId == userId && registeredEvent.username == "erin")
        let logout = try before[1].decode(AuthEvents.SessionRevoked.self)
        #expect(logout.reason == "logout" && logout.sessionIds == [sessionB].compactMap { $0 })
        let changed = try before[2].decode(AuthEvents.SessionRevoked.self)
        #expect(changed.reason == "password_changed" && changed.sessionIds == [sessionC].compactMap { $0 })
        #expect(!changed.sessionIds.contains(sessionA ?? ""))

        try await h.call("auth.account.delete", ["password": "new password"], token: d, key: "delete-1")
        // Nothing of the user is left in the idempotency log, the deletion's own key included.
        let keys = try await h.auth.host.database.read { db in
            try String.fetchAll(db, sql: "SELECT key FROM idempotency WHERE principal = ?", arguments: [userId])
        }
        #expect(keys == [])
        #expect(try await h.failure("auth.account.delete", ["password": "new password"], token: d, key: "delete-1").code == .unauthenticated)
        // Deleting the account blanks the user's earlier events (same sequence numbers, no
        // data) and adds the two every service needs.
        let events = try await h.events()
        #expect(events.map(\.type) == ["redacted", "redacted", "redacted", "session.revoked", "user.deleted"])
        #expect(events.map(\.seq) == [1, 2, 3, 4, 5])
        #expect(events.prefix(3).allSatisfy { $0.data == [:] })
        #expect(events.prefix(3).allSatisfy { $0.userId == nil }, "redacted events carry no user id")
        #expect(events.suffix(2).allSatisfy { $0.userId == userId })
        let deleted = try events[3].decode(AuthEvents.SessionRevoked.self)
        #expect(deleted.reason == "account_deleted")
        #expect(Set(deleted.sessionIds) == Set([sessionA, sessionD].compactMap { $0 }))
        #expect(try events[4].decode(AuthEvents.UserDeleted.self).userId == userId)
        // Replay from a position.
        #expect(try await h.events(after: 3).map(\.seq) == [4, 5])
    }
}
