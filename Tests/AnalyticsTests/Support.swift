// Test support: the analytics service in process on a fresh database, events fed through
// the same `DatabaseEventSink` a consumer uses (so checkpoints and duplicates behave as in
// production), and queries through `InProcessTransport` with tokens "token-<user>".
import Foundation
import GRDB
import Logging
import Runtime
import Storage
import Synchronization
import Testing
import Wire

@testable import AnalyticsService

struct TestSessions: SessionResolver {
    func resolve(token: String) async throws -> Principal {
        guard token.hasPrefix("token-") else { throw ServiceError.unauthenticated("session expired or revoked") }
        let user = String(token.dropFirst(6))
        return Principal(userId: user, username: user, sessionId: "session-\(user)")
    }
}

/// 2026-05-04T00:00:00Z, a Monday (ISO week 2026-W19).
let monday = Date(timeIntervalSince1970: 1_777_852_800)

func day(_ n: Double, hour: Double = 0) -> Date { monday.addingTimeInterval(n * 86_400 + hour * 3_600) }

var quietLogger: Logger {
    var logger = Logger(label: "analytics-test")
    logger.logLevel = .critical
    return logger
}

final class TestClock: Sendable {
    private let current: Mutex<Date>
    init(_ start: Date) { current = Mutex(start) }
    var now: Date { current.withLock { $0 } }
    func set(_ date: Date) { current.withLock { $0 = date } }
}

final class Harness: Sendable {
    let service: AnalyticsService
    let transport: InProcessTransport
    /// Every event fed, per producer, in sequence order (to replay into another harness).
    private let log = Mutex<[String: [Event]]>([:])
    let clock: TestClock

    init(path: String? = nil, now: Date = day(10)) throws {
        let clock = TestClock(now)
        self.clock = clock
        service = try AnalyticsService(
            database: DatabaseSettings(path: path), sessions: TestSessions(), logger: quietLogger,
            now: { clock.now })
        transport = InProcessTransport(service.dispatcher)
    }

    var events: [String: [Event]] { log.withLock { $0 } }

    /// Makes the next event of `producer` and applies it through a sink.
    @discardableResult
    func feed(_ type: String, _ data: JSONValue, user: String = "alice", from producer: String = "records") async throws
        -> Event
    {
        let event = log.withLock { log -> Event in
            let seq = Int64((log[producer]?.count ?? 0) + 1)
            let event = Event(seq: seq, type: type, userId: user, at: day(10), data: data)
            log[producer, default: []].append(event)
            return event
        }
        try await deliver([event], from: producer)
        return event
    }

    /// Applies events as a consumer would: one transaction with the checkpoint, the batch's
    /// aggregates written once at its end.
    func deliver(_ events: [Event], from producer: String) async throws {
        let sink = DatabaseEventSink(
            producer: producer, writer: service.host.database, batch: AnalyticsService.applyBatch(producer))
        try await sink.apply(events)
    }

    func call(_ method: String, _ body: JSONValue = [:], user: String = "alice") async throws -> JSONValue {
        let reply = try await transport.reply(method, body: body, options: CallOptions(token: "token-\(user)"))
        if let error = reply.error { throw error }
        return reply.result ?? .null
    }

    func call<T: Decodable>(_ method: String, _ body: JSONValue = [:], user: String = "alice", as: T.Type) async throws
        -> T
    {
        try await call(method, body, user: user).decode(T.self)
    }

    func failure(
        _ method: String, _ body: JSONValue = [:], user: String = "alice",
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> ServiceError {
        let reply = try await transport.reply(method, body: body, options: CallOptions(token: "token-\(user)"))
        guard let error = reply.error else {
            Issue.record("\(method) succeeded: \(reply.result?.jsonText ?? "null")", sourceLocation: sourceLocation)
            return ServiceError(.internal, "unexpected success")
        }
        return error
    }

    func read<T: Sendable>(_ body: @Sendable @escaping (Database) throws -> T) async throws -> T {
        try await service.host.database.read(body)
    }
}

// MARK: Payloads as records writes them

func time(_ date: Date) -> JSONValue { .string(WireTime.format(date)) }

func vehicle(_ id: String, distance: String = "mi", volume: String = "gal") -> JSONValue {
    [
        "id": .string(id), "nickname": "Car", "distanceUnit": .string(distance), "volumeUnit": .string(volume),
        "createdAt": time(day(0)), "updatedAt": time(day(0)),
    ]
}

func fillup(
    _ id: String, vehicle: String = "v1", date: Date, odometer: Double? = nil, trip: Double? = nil, volume: Double,
    totalMinor: Int64, currency: String = "USD", full: Bool = true, missed: Bool = false
) -> JSONValue {
    var object: [String: JSONValue] = [
        "id": .string(id), "vehicleId": .string(vehicle), "date": time(date), "volume": .number(.init(volume)),
        "pricePerUnitMinor": 0, "totalMinor": .number(.init(totalMinor)), "derived": "none",
        "currency": .string(currency),
        "full": .bool(full), "missed": .bool(missed), "createdAt": time(date), "updatedAt": time(date),
    ]
    if let odometer { object["odometer"] = .number(.init(odometer)) }
    if let trip { object["trip"] = .number(.init(trip)) }
    return .object(object)
}

extension JSONValue {
    /// A decimal field read as a Decimal through its JSON text (exact for short decimals).
    func decimal(_ key: String) -> Decimal? {
        guard let value = self[key], value != .null else { return nil }
        return Decimal(string: value.jsonText)
    }
}
