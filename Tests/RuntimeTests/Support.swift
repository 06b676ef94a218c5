// Test support: a throwaway directory and a small service running over real ZeroMQ.
import Foundation
import GRDB
import Logging
import Runtime
import ServiceLifecycle
import Storage
import Wire

/// A fresh directory under /tmp, removed by `remove()`. Kept short: ipc:// paths are limited.
struct ScratchDirectory {
    let path: String

    init() throws {
        path = "/tmp/lb-\(UUID().uuidString.prefix(8).lowercased())"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    func remove() { try? FileManager.default.removeItem(atPath: path) }
}

struct EchoBody: Codable, Sendable, Equatable {
    var text: String
    var count: Int?
}

struct NoteBody: Codable, Sendable {
    var text: String
}

struct NoteResult: Codable, Sendable, Equatable {
    var id: String
    var text: String
}

/// A service with a read (`test.echo`), a group-committed write (`test.note.add`) that
/// appends an event, a slow method and a public/user split, served by the real runtime.
struct TestService {
    static let migrator: DatabaseMigrator = {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(sql: "CREATE TABLE note (id TEXT PRIMARY KEY, userId TEXT NOT NULL, text TEXT NOT NULL)")
        }
        return migrator
    }()

    static func router(host: ServiceHost) -> Router {
        var router = host.makeRouter()
        router.read("test.echo", access: .public) { (body: EchoBody, _) in body }
        router.read("test.slow", access: .public) { (body: EchoBody, _) in
            try await Task.sleep(for: .milliseconds(body.count ?? 100))
            return body
        }
        router.read("test.whoami", access: .user) { (_: Empty, context) in context.principal! }
        router.write("test.note.add", access: .public) { (body: NoteBody, context, db) in
            guard !body.text.isEmpty else { throw ServiceError.invalid("text", "must not be empty") }
            let id = ID.make()
            try db.execute(sql: "INSERT INTO note (id, userId, text) VALUES (?, ?, ?)", arguments: [id, "u", body.text])
            try Outbox.append(db, type: "note.created", userId: "u", data: NoteResult(id: id, text: body.text))
            return NoteResult(id: id, text: body.text)
        }
        return router
    }
}

/// Tokens "good-<user>" resolve; everything else is refused.
struct FakeSessions: SessionResolver {
    func resolve(token: String) async throws -> Principal {
        guard token.hasPrefix("good-") else { throw ServiceError.unauthenticated("session expired or revoked") }
        return Principal(userId: String(token.dropFirst(5)), username: "tester", sessionId: "s1")
    }
}

/// Runs `body` against a TestService served over ZeroMQ on a throwaway ipc endpoint, then
/// shuts it down (also when `body` throws). With `curve`, its server and publisher speak CURVE.
func withRunningService<T: Sendable>(
    maxBytes: Int? = nil, curve: CurveSettings? = nil,
    _ body: @Sendable (_ endpoint: String, _ host: ServiceHost, _ scratch: ScratchDirectory) async throws -> T
) async throws -> T {
    let scratch = try ScratchDirectory()
    defer { scratch.remove() }
    var logger = Logger(label: "test")
    logger.logLevel = .critical
    let host = try ServiceHost(
        descriptor: ServiceDescriptor(name: "test"), database: DatabaseSettings(path: scratch.path + "/test.sqlite"),
        migrator: TestService.migrator, eventsEndpoint: "ipc://\(scratch.path)/test.events.sock", curve: curve,
        logger: logger)
    let dispatcher = host.dispatcher(router: TestService.router(host: host), sessions: FakeSessions())
    let endpoint = "ipc://\(scratch.path)/test.sock"
    let group = ServiceGroup(services: host.services(dispatcher: dispatcher, endpoint: endpoint), logger: logger)
    return try await withThrowingTaskGroup(of: Void.self) { tasks in
        tasks.addTask { try await group.run() }
        defer { tasks.cancelAll() }
        // Wait until the socket is bound.
        for _ in 0..<200 where !FileManager.default.fileExists(atPath: scratch.path + "/test.sock") {
            try await Task.sleep(for: .milliseconds(10))
        }
        do {
            let result = try await body(endpoint, host, scratch)
            await group.triggerGracefulShutdown()
            return result
        } catch {
            await group.triggerGracefulShutdown()
            throw error
        }
    }
}

/// Each of `bases`, and each with one character removed or one of `inserts` put in (in
/// turn, by position): the damaged frames the byte-level readers are held to the decoder
/// over (ReplyScanTests, InlinePingTests, RequestMembersTests).
func oneEditAway(_ bases: [String], inserts: [String]) -> [String] {
    var all = bases
    for base in bases {
        let characters = Array(base)
        for i in characters.indices {
            all.append(String(characters[..<i] + characters[(i + 1)...]))
            all.append(String(characters[..<i]) + inserts[i % inserts.count] + String(characters[i...]))
        }
    }
    return all
}
