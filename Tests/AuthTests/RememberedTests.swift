// Sessions and users auth keeps in memory (Services/Auth/AuthService/Remembered.swift): a
// request after any write that changes a session or a user sees the change at once, and a
// read that began before such a write is never kept.
import Foundation
import GRDB
import Runtime
import Storage
import Testing
import Wire

@testable import AuthService

@Suite struct RememberedTests {
    @Test func everyWriteToSessionsOrUsersIsSeenByTheNextRequest() async throws {
        let h = try Harness()
        try await h.register("nora")
        let token = try await h.login("nora")
        let other = try await h.login("nora")
        // remembered now (resolve and user), then changed by each write in turn
        #expect(try await h.call("auth.whoami", token: token)["timeZone"] == "UTC")
        try await h.call("auth.settings.update", ["timeZone": "Asia/Tokyo"], token: token)
        #expect(try await h.call("auth.whoami", token: token)["timeZone"] == "Asia/Tokyo")
        #expect(try await h.call("auth.whoami", token: other)["timeZone"] == "Asia/Tokyo")
        try await h.call(
            "auth.password.change", ["currentPassword": "correct horse", "newPassword": "battery staple"], token: token)
        #expect(try await h.failure("auth.whoami", token: other).code == .unauthenticated)
        #expect(try await h.call("auth.whoami", token: token)["username"] == "nora")
        try await h.call("auth.account.delete", ["password": "battery staple"], token: token)
        #expect(try await h.failure("auth.whoami", token: token).code == .unauthenticated)
    }

    @Test func aSessionRememberedStillExpiresOnTime() async throws {
        let h = try Harness()
        try await h.register("otto")
        let token = try await h.login("otto")
        h.clock.advance(by: 30 * 24 * 3600 - 1)
        #expect(try await h.call("auth.whoami", token: token)["username"] == "otto")
        #expect(try await h.call("auth.whoami", token: token)["username"] == "otto")
        h.clock.advance(by: 1)
        #expect(try await h.failure("auth.whoami", token: token).code == .unauthenticated)
    }

    /// What is remembered is what answers: a session removed behind auth's back (another
    /// connection, which auth's own writes never are) still answers until auth commits a
    /// change of its own, which forgets it.
    @Test func anAnswerComesFromMemoryUntilACommitForgetsIt() async throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let path = scratch.path + "/auth.sqlite"
        let h = try Harness(database: DatabaseSettings(path: path))
        try await h.register("pia")
        try await h.register("quinn")
        let token = try await h.login("pia")
        #expect(try await h.call("auth.whoami", token: token)["username"] == "pia")
        let outside = try DatabaseQueue(path: path)
        try await outside.write { db in try db.execute(sql: "DELETE FROM sessions") }
        try await outside.close()
        #expect(try await h.call("auth.whoami", token: token)["username"] == "pia")
        _ = try await h.login("quinn")  // a commit to sessions
        #expect(try await h.failure("auth.whoami", token: token).code == .unauthenticated)
    }

    @Test func aReadThatBeganBeforeACommitIsNotKept() {
        let remembered = Remembered()
        let principal = Principal(userId: "u", username: "rae", sessionId: "s")
        let before = remembered.generation
        remembered.forget()  // a commit lands while the read runs
        remembered.keep(session: .init(principal: principal, expiresAt: 2e9), tokenHash: "h", readAt: before)
        remembered.keep(
            user: User(id: "u", username: "rae", email: nil, passwordHash: "x", createdAt: Date()), readAt: before)
        #expect(remembered.session("h", now: 1e9) == nil)
        #expect(remembered.user("u") == nil)
        let after = remembered.generation
        remembered.keep(session: .init(principal: principal, expiresAt: 2e9), tokenHash: "h", readAt: after)
        #expect(remembered.session("h", now: 1e9) == principal)
        #expect(remembered.session("h", now: 2e9) == nil)  // expired
    }
}
