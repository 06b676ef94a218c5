// Test support: the records service in process (a real ServiceHost on an in-memory or
// temporary SQLite file, the real dispatcher, no socket), a clock the tests move, and
// requests written as raw JSON so numbers reach the service exactly as typed.
import Foundation
import GRDB
import Logging
@testable import RecordsService
import Runtime
import Storage
import Synchronization
import Testing
import Wire

/// Tokens "token-<user>" resolve to user "<user>"; anything else is refused.
struct TestSessions: SessionResolver {
    func resolve(token: String) async throws -> Principal {
        guard token.hasPrefix("token-") else { throw ServiceError.unauthenticated("session expired or revoked") }
        let user = String(token.dropFirst(6))
        return Principal(userId: user, username: user, sessionId: "session-\(user)")
    }
}

/// A clock that only moves when told to.
final class TestClock: Sendable {
    private let current: Mutex<Date>

    /// 2026-05-10T12:00:00Z
    static let start = Date(timeIntervalSince1970: 1_778_414_400)

    init(_ start: Date = TestClock.start) { current = Mutex(start) }

    var now: Date { current.withLock { $0 } }

    func advance(seconds: Double) { current.withLock { $0 = $0.addingTimeInterval(seconds) } }

    var closure: Now { { [self] in self.now } }
}

/// A scratch SQLite file path under /tmp, removed by `remove()`.
struct ScratchFile {
    let directory: String
    var path: String { directory + "/records.sqlite" }

    init() throws {
        directory = "/tmp/lb-rec-\(UUID().uuidString.prefix(8).lowercased())"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    func remove() { try? FileManager.default.removeItem(atPath: directory) }
}

struct Harness {
    let host: ServiceHost
    let dispatcher: Dispatcher
    let clock: TestClock
    let photos: PhotoStore

    /// - Parameter photos: where photos go; by default a directory under /tmp that is only
    ///   created when a test stores a photo.
    /// - Parameter guarded: with the guard of shard `shard` and the move methods around the
    ///   routes, as the service runs them (RecordsService.assemble).
    init(
        path: String? = nil, clock: TestClock = TestClock(), photos settings: PhotoSettings? = nil, guarded: Bool = false,
        shard: Int = 1
    ) throws {
        var logger = Logger(label: "records-test")
        logger.logLevel = .critical
        host = try ServiceHost(
            descriptor: ServiceDescriptor(name: "records"), database: DatabaseSettings(path: path),
            migrator: RecordsService.migrator, eventsEndpoint: nil, logger: logger)
        let settings = settings ?? PhotoSettings(directory: "/tmp/lb-photos-\(UUID().uuidString.prefix(8).lowercased())")
        photos = PhotoStore(settings: settings, database: host.database, logger: logger)
        var router = RecordsService.router(host: host, photos: photos, now: clock.closure)
        if guarded {
            let shardGuard = try ShardGuard(shard: shard, database: host.database)
            RecordsService.registerShardMoves(&router, guard: shardGuard, photos: photos)
            router = router.wrapped(shardGuard.around)
        }
        dispatcher = host.dispatcher(router: router, sessions: TestSessions())
        self.clock = clock
    }

    /// Sends `method` with `body` (raw JSON) as `user`; returns the reply and its raw text.
    func send(_ method: String, _ body: String = "{}", as user: String = "alice", key: String? = nil) async throws
        -> (reply: Reply, text: String)
    {
        var header: [String: JSONValue] = ["v": 1, "id": .string(ID.make()), "method": .string(method)]
        header["token"] = .string("token-\(user)")
        if let key { header["idempotencyKey"] = .string(key) }
        var frame = JSONValue.object(header).jsonText
        frame.removeLast()  // the closing brace: the body is spliced in as typed
        frame += ",\"body\":" + body + "}"
        let data = try await InProcessTransport(dispatcher).exchange(Data(frame.utf8), id: "", timeout: .seconds(5))
        let text = String(decoding: data, as: UTF8.self)
        return (try WireCoding.decode(Reply.self, from: data), text)
    }

    /// The result of a call that must succeed.
    @discardableResult
    func ok(
        _ method: String, _ body: String = "{}", as user: String = "alice", key: String? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> JSONValue {
        let (reply, text) = try await send(method, body, as: user, key: key)
        guard reply.ok, let result = reply.result else {
            Issue.record("\(method) failed: \(text)", sourceLocation: sourceLocation)
            throw ServiceError(.internal, "call failed")
        }
        return result
    }

    /// The error of a call that must fail.
    func fails(
        _ method: String, _ body: String = "{}", as user: String = "alice", key: String? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> ServiceError {
        let (reply, text) = try await send(method, body, as: user, key: key)
        guard let error = reply.error else {
            Issue.record("\(method) succeeded, expected an error: \(text)", sourceLocation: sourceLocation)
            throw ServiceError(.internal, "call succeeded")
        }
        return error
    }

    /// Every event in the outbox, via `events.since` as consumers read it.
    func events() async throws -> [Event] {
        let frame = #"{"v":1,"id":"e","method":"events.since","body":{"after":0,"limit":5000}}"#
        let data = await dispatcher.handle(Data(frame.utf8))
        let reply = try WireCoding.decode(Reply.self, from: data)
        return try #require(reply.result).decode(EventsSinceResult.self).events
    }

    /// How many rows `table` holds.
    func count(_ table: String) async throws -> Int {
        let sql: String
        switch table {
        case "vehicle": sql = "SELECT COUNT(*) FROM vehicle"
        case "fillup": sql = "SELECT COUNT(*) FROM fillup"
        case "fishCatch": sql = "SELECT COUNT(*) FROM fishCatch"
        case "expense": sql = "SELECT COUNT(*) FROM expense"
        case "attendance": sql = "SELECT COUNT(*) FROM attendance"
        case "activity": sql = "SELECT COUNT(*) FROM activity"
        case "timer": sql = "SELECT COUNT(*) FROM timer"
        case "timeEntry": sql = "SELECT COUNT(*) FROM timeEntry"
        case "idempotency": sql = "SELECT COUNT(*) FROM idempotency"
        case "photo": sql = "SELECT COUNT(*) FROM photo"
        default: preconditionFailure("unknown table \(table)")
        }
        return try await host.database.read { try Int.fetchOne($0, sql: sql) ?? 0 }
    }
}

/// A time `seconds` from the test clock's start, as the wire writes it.
func time(_ seconds: Double = 0, from clock: TestClock = TestClock()) -> String {
    WireTime.format(TestClock.start.addingTimeInterval(seconds))
}

extension JSONValue {
    var string: String { stringValue ?? "" }
    var int: Int { intValue ?? Int.min }
    var items: [JSONValue] { self["items"]?.arrayValue ?? [] }
}

extension Harness {
    func vehicle(as user: String = "alice") async throws -> String {
        try await ok("records.vehicle.add", #"{"nickname":"Civic"}"#, as: user)["id"]!.string
    }

    func activity(_ name: String = "Piano", as user: String = "alice") async throws -> String {
        try await ok("records.activity.add", #"{"name":"\#(name)"}"#, as: user)["id"]!.string
    }
}

let catchBody = #"{"species":"Pike","weight":2.5,"weightUnit":"kg","bait":"spoon","water":"fresh","latitude":59.3,"longitude":18.1}"#
