// Test support: the store service in-process on an in-memory store.sqlite, a token → user
// resolver, a settable clock, and crafted records/auth events.
import Contracts
import Foundation
import GRDB
import Logging
import Runtime
import Storage
import StoreService
import Synchronization
import Testing
import Wire

/// Tokens "tok-<user>" resolve to user "<user>"; user "tokyo" has the account zone Asia/Tokyo.
struct TestSessions: SessionResolver {
    static let zones = ["tokyo": "Asia/Tokyo"]

    func resolve(token: String) async throws -> Principal {
        guard token.hasPrefix("tok-") else { throw ServiceError.unauthenticated("session expired or revoked") }
        let user = String(token.dropFirst(4))
        return Principal(userId: user, username: user, sessionId: "s-\(token)", timeZone: Self.zones[user])
    }
}

final class TestClock: Sendable {
    private let current: Mutex<Date>
    init(_ start: Date) { current = Mutex(start) }
    convenience init(_ iso: String) { self.init(WireTime.parse(iso)!) }
    var now: Date { current.withLock { $0 } }
    func set(_ iso: String) { current.withLock { $0 = WireTime.parse(iso)! } }
    func advance(_ seconds: TimeInterval) { current.withLock { $0 = $0.addingTimeInterval(seconds) } }
}

/// A URL where nothing listens (connection refused at once): ZenQuotes is "down".
let unreachableQuotes = "http://127.0.0.1:9"

struct StoreHarness {
    let host: ServiceHost
    let store: StoreService
    let transport: InProcessTransport
    let clock: TestClock
    let records: DatabaseEventSink
    let auth: DatabaseEventSink

    init(
        quotesURL: String = unreachableQuotes, clock: TestClock = TestClock("2026-05-01T12:00:00Z"), path: String? = nil
    )
        throws
    {
        var logger = Logger(label: "store-test")
        logger.logLevel = .critical
        host = try ServiceHost(
            descriptor: ServiceDescriptor(name: "store"), database: DatabaseSettings(path: path),
            migrator: StoreService.migrator,
            eventsEndpoint: nil, logger: logger)
        let now = { @Sendable in clock.now }
        store = StoreService(host: host, settings: StoreSettings(quotesURL: URL(string: quotesURL)!, clock: now))
        transport = InProcessTransport(host.dispatcher(router: store.router(), sessions: TestSessions()))
        self.clock = clock
        records = DatabaseEventSink(producer: "records", writer: host.database, handler: store.applyRecordsEvent)
        auth = DatabaseEventSink(producer: "auth", writer: host.database, handler: store.applyAuthEvent)
    }

    func call<Result: Decodable>(
        _ method: String, _ body: JSONValue = [:], user: String, key: String? = nil, as: Result.Type = Result.self
    ) async throws -> Result {
        try await transport.call(
            method, body, as: Result.self, options: CallOptions(token: "tok-\(user)", idempotencyKey: key))
    }

    /// The error a call answers (fails the test if it succeeds).
    func error(
        _ method: String, _ body: JSONValue = [:], user: String?, key: String? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> ServiceError {
        let reply = try await transport.reply(
            method, body: body, options: CallOptions(token: user.map { "tok-\($0)" }, idempotencyKey: key))
        guard let error = reply.error else {
            Issue.record("\(method) succeeded: \(reply.result?.jsonText ?? "")", sourceLocation: sourceLocation)
            throw ServiceError(.internal, "expected an error")
        }
        return error
    }

    func wallet(_ user: String) async throws -> WalletView { try await call("store.wallet", user: user) }

    func ledger(_ user: String, limit: Int = 200) async throws -> [LedgerEntryView] {
        let result: LedgerResult = try await call("store.ledger", ["limit": .number(.init(limit))], user: user)
        return result.entries
    }

    func buy(_ user: String, _ item: String, key: String? = nil) async throws -> PurchaseResult {
        try await call("store.buy", ["itemId": .string(item)], user: user, key: key)
    }
}

/// Builds records' and auth's events with consecutive sequence numbers.
struct EventScript {
    private(set) var events: [Event] = []
    var start = WireTime.parse("2026-04-01T08:00:00Z")!

    @discardableResult
    mutating func saved(_ user: String, _ entryId: String, ms: Int64, minutesAfterStart: Double = 0) -> Event {
        let at = start.addingTimeInterval(minutesAfterStart * 60 + Double(events.count))
        return add(
            "time.saved", user,
            [
                "id": .string(entryId), "userId": .string(user), "activityId": "act-1", "durationMs": .number(.init(ms)),
                "startedAt": .string(WireTime.format(at)), "savedAt": .string(WireTime.format(at)),
            ], at: at)
    }

    @discardableResult
    mutating func deleted(_ user: String, _ entryId: String) -> Event {
        add("time.deleted", user, ["id": .string(entryId)], at: start.addingTimeInterval(Double(events.count)))
    }

    @discardableResult
    mutating func add(_ type: String, _ user: String?, _ data: JSONValue, at: Date? = nil) -> Event {
        let event = Event(
            seq: Int64(events.count + 1), type: type, userId: user,
            at: at ?? start.addingTimeInterval(Double(events.count)),
            data: data)
        events.append(event)
        return event
    }
}

let hour: Int64 = 3_600_000
