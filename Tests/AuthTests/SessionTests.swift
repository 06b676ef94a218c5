import AuthService
import Foundation
import Logging
import GRDB
import Runtime
import Storage
import Synchronization
import Testing
import Wire

@Suite struct SessionTests {
    @Test func loginThenWhoami() async throws {
        let h = try Harness()
        let registered = try await h.register("Alice", email: "alice@example.com")
        let login = try await h.call("auth.login", ["username": "ALICE", "password": "correct horse"])
        let token = try #require(login["token"]?.stringValue)
        #expect(token.hasPrefix("lbk_"))
        #expect(token.count == 47)
        #expect(login["userId"] == registered["userId"])
        #expect(login["username"] == "alice")
        #expect(login["expiresAt"] == .string(WireTime.format(h.clock.now.addingTimeInterval(30 * 24 * 3600))))
        let me = try await h.call("auth.whoami", token: token)
        #expect(me["userId"] == registered["userId"])
        #expect(me["username"] == "alice")
        #expect(me["sessionId"] == login["sessionId"])
        #expect(me["email"] == "alice@example.com")
        #expect(me["createdAt"] == registered["createdAt"])
        // Other services decode it as a Principal.
        let principal = try me.decode(Principal.self)
        #expect(principal.sessionId == login["sessionId"]?.stringValue)
    }

    @Test func wrongPasswordAndUnknownUserGetTheSameAnswer() async throws {
        let h = try Harness()
        try await h.register("bob")
        let wrong = try await h.loginFailure("bob", password: "not the password")
        let unknown = try await h.loginFailure("nobody", password: "correct horse")
        let malformed = try await h.loginFailure("no such name!", password: "correct horse")
        for error in [wrong, unknown, malformed] {
            #expect(error.code == .unauthenticated)
            #expect(error.message == "wrong username or password")
        }
    }

    @Test func missingOrBadTokensAreRefused() async throws {
        let h = try Harness()
        #expect(try await h.failure("auth.whoami").code == .unauthenticated)
        #expect(try await h.failure("auth.whoami", token: "lbk_nope").code == .unauthenticated)
        let forged = "lbk_" + Crypto.base64URL(Crypto.random(count: 32))
        #expect(try await h.failure("auth.whoami", token: forged).code == .unauthenticated)
    }

    @Test func logoutRevokesTheTokenAtOnce() async throws {
        let h = try Harness()
        try await h.register("carol")
        let token = try await h.login("carol")
        let other = try await h.login("carol")
        #expect(try await h.call("auth.logout", token: token) == ["revoked": true])
        let reuse = try await h.failure("auth.whoami", token: token)
        #expect(reuse.code == .unauthenticated)
        #expect(try await h.failure("auth.logout", token: token).code == .unauthenticated)
        // Only that session ended.
        #expect(try await h.call("auth.whoami", token: other)["username"] == "carol")
    }

    @Test func sessionsExpire() async throws {
        let h = try Harness()
        try await h.register("dave")
        let token = try await h.login("dave")
        h.clock.advance(by: 30 * 24 * 3600 - 1)
        #expect(try await h.call("auth.whoami", token: token)["username"] == "dave")
        h.clock.advance(by: 1)
        #expect(try await h.failure("auth.whoami", token: token).code == .unauthenticated)
    }

    @Test func tokensAreStoredOnlyAsHashes() async throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let path = scratch.path + "/auth.sqlite"
        let h = try Harness(database: DatabaseSettings(path: path))
        try await h.register("erin")
        let token = try await h.login("erin")
        let stored = try await h.auth.host.database.read { db in
            try String.fetchAll(db, sql: "SELECT tokenHash FROM sessions")
        }
        #expect(stored == [Crypto.sha256Hex(token)])
        // Not in any table, nor anywhere in the database files (main file and WAL).
        let dump = try await h.auth.host.database.read { db in
            try [
                "SELECT * FROM users", "SELECT * FROM sessions", "SELECT * FROM loginFailures",
                "SELECT * FROM outbox", "SELECT * FROM idempotency",
            ].flatMap { sql in try Row.fetchAll(db, sql: sql).map { "\($0)" } }.joined(separator: "\n")
        }
        #expect(!dump.isEmpty)
        #expect(!dump.contains(token))
        #expect(!dump.contains(String(token.dropFirst(4))))
        for file in [path, path + "-wal"] {
            guard let data = FileManager.default.contents(atPath: file) else { continue }
            #expect(data.range(of: Data(token.utf8)) == nil)
            #expect(data.range(of: Data(token.dropFirst(4).utf8)) == nil)
        }
    }
}

/// Hands the first exchange's reply back only when released, so a test can apply events
/// between auth's answer and its arrival.
final class HeldReply: Transport {
    let inner: any Transport
    let arrived = AsyncStream<Void>.makeStream()
    let release = AsyncStream<Void>.makeStream()
    let calls = Mutex(0)

    init(_ inner: any Transport) { self.inner = inner }

    var service: String { inner.service }

    func exchange(_ frame: Data, id: String, timeout: Duration) async throws -> Data {
        let reply = try await inner.exchange(frame, id: id, timeout: timeout)
        let first = calls.withLock {
            $0 += 1
            return $0 == 1
        }
        if first {
            arrived.continuation.yield()
            for await _ in release.stream { break }
        }
        return reply
    }
}

@Suite struct SessionCacheRaceTests {
    /// SessionCache: a `session.revoked` applied while auth's "valid" answer for that session
    /// is on its way must not leave the answer cached for the time-to-live.
    @Test func aLogoutThatOvertakesWhoamiIsNotOutlivedByTheCache() async throws {
        let h = try Harness()
        try await h.register("Alice")
        let token = try await h.login("Alice")
        let held = HeldReply(h.transport)
        let cache = SessionCache(auth: held, ttl: .seconds(300))
        let before = try await h.events().count
        let asking = Task { try await cache.resolve(token: token) }
        for await _ in held.arrived.stream { break }  // auth has said the session is valid …
        try await h.call("auth.logout", token: token)
        try await cache.apply(try await h.events(after: before))  // … and the logout is applied first
        held.release.continuation.yield()
        #expect(try await asking.value.username == "alice")  // (that request was asked before the logout)
        await #expect(throws: ServiceError.self) { try await cache.resolve(token: token) }
        #expect(held.calls.withLock { $0 } == 2, "auth was asked again")
    }

    /// A cache keeps no history: its consumer starts at auth's position when auth first
    /// answers. A token validated before then (auth's stream could not be read yet, its
    /// answers could) and logged out before then is never evicted by an event: the start
    /// asks about every cached token again.
    @Test func aLogoutBeforeTheConsumerStartsIsNotOutlivedByTheCache() async throws {
        let h = try Harness()
        try await h.register("Alice")
        let token = try await h.login("Alice")
        let cache = SessionCache(auth: h.transport, ttl: .seconds(300))
        #expect(try await cache.resolve(token: token).username == "alice")
        try await h.call("auth.logout", token: token)
        var logger = Logger(label: "cache-consumer")
        logger.logLevel = .critical
        let consumer = EventConsumer(
            settings: .init(producer: "auth", eventsEndpoint: "ipc:///tmp/lb-auth-nobody.sock", pollInterval: .milliseconds(20)),
            producerRPC: h.transport, sink: cache, logger: logger)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await consumer.run() }
            defer { group.cancelAll() }
            for _ in 0..<300 where consumer.position < 0 { try await Task.sleep(for: .milliseconds(10)) }
            #expect(consumer.position > 0, "the consumer started after the logout")
            await #expect(throws: ServiceError.self) { try await cache.resolve(token: token) }
        }
    }
}
