// Test support: the auth service in-process on a fresh database, the cheapest Argon2 cost,
// a clock the test moves, and helpers that call methods with raw JSON bodies (so malformed
// bodies can be sent too).
import AuthService
import Foundation
import Logging
import Runtime
import Storage
import Synchronization
import Testing
import Wire

/// A clock tests move by hand.
final class TestClock: Sendable {
    private let current = Mutex(Date(timeIntervalSince1970: 1_780_000_000))
    var now: Date { current.withLock { $0 } }
    func advance(by seconds: TimeInterval) { current.withLock { $0 = $0.addingTimeInterval(seconds) } }
}

/// A fresh directory under /tmp, short enough for ipc:// paths.
struct ScratchDirectory {
    let path: String

    init() throws {
        path = "/tmp/lba-\(UUID().uuidString.prefix(8).lowercased())"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    func remove() { try? FileManager.default.removeItem(atPath: path) }
}

var quietLogger: Logger {
    var logger = Logger(label: "auth-test")
    logger.logLevel = .critical
    return logger
}

struct Harness {
    let auth: AuthService
    let clock: TestClock
    let transport: InProcessTransport

    init(
        database: DatabaseSettings = .inMemory, clock: TestClock = TestClock(), failedLoginsPerMinute: Int = 60,
        recordsShards: Int = 1, argon2: Argon2Cost = .minimum
    ) throws {
        self.clock = clock
        var configuration = AuthConfiguration(
            argon2: argon2, hashingConcurrency: 2, failedLoginsPerMinute: failedLoginsPerMinute, now: { clock.now })
        configuration.recordsShards = recordsShards
        auth = try AuthService(configuration: configuration, database: database, logger: quietLogger)
        transport = InProcessTransport(auth.dispatcher)
    }

    /// Calls `method`; returns its result or throws the service's error.
    @discardableResult
    func call(_ method: String, _ body: JSONValue = [:], token: String? = nil, key: String? = nil) async throws -> JSONValue {
        let reply = try await transport.reply(method, body: body, options: CallOptions(token: token, idempotencyKey: key))
        if let error = reply.error { throw error }
        return reply.result ?? .null
    }

    /// Calls `method` expecting it to fail; returns the error.
    func failure(
        _ method: String, _ body: JSONValue = [:], token: String? = nil, key: String? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> ServiceError {
        let reply = try await transport.reply(method, body: body, options: CallOptions(token: token, idempotencyKey: key))
        guard let error = reply.error else {
            Issue.record("\(method) succeeded: \(reply.result?.jsonText ?? "null")", sourceLocation: sourceLocation)
            return ServiceError(.internal, "unexpected success")
        }
        return error
    }

    @discardableResult
    func register(_ username: String, password: String = "correct horse", email: String? = nil) async throws -> JSONValue {
        var body: [String: JSONValue] = ["username": .string(username), "password": .string(password)]
        if let email { body["email"] = .string(email) }
        return try await call("auth.register", .object(body))
    }

    /// Signs in; returns the token.
    func login(_ username: String, password: String = "correct horse") async throws -> String {
        let result = try await call("auth.login", ["username": .string(username), "password": .string(password)])
        return try #require(result["token"]?.stringValue)
    }

    func loginFailure(_ username: String, password: String) async throws -> ServiceError {
        try await failure("auth.login", ["username": .string(username), "password": .string(password)])
    }

    func events(after: Int = 0) async throws -> [Event] {
        try await call("events.since", ["after": .number(.init(after))]).decode(EventsSinceResult.self).events
    }
}
