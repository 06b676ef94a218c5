// Test support: Open-Meteo answers in their real shape, served by the stub HTTP server for
// whatever days a request asks; a weather-fetcher on a throwaway database with short
// delays and a clock that starts wherever the test wants; records' events made by hand.
import Foundation
import GRDB
import Logging
import Runtime
import ServiceLifecycle
import Storage
import Synchronization
import TestSupport
import Testing
import Wire

@testable import WeatherFetcherService

/// Hourly values as functions of the hour (Unix seconds of its start).
struct WeatherModel: Sendable {
    var temperature: @Sendable (Int64) -> Double? = { _ in 14.2 }
    /// Rises 0.3 hPa an hour: 0.9 hPa in 3 hours, "rising slowly".
    var pressure: @Sendable (Int64) -> Double? = { 1015 + Double(($0 / 3600) % 24) * 0.3 }
    var windSpeed: @Sendable (Int64) -> Double? = { _ in 15 }
    var windDirection: @Sendable (Int64) -> Double? = { _ in 225 }
    var weatherCode: @Sendable (Int64) -> Double? = { _ in 3 }
    /// Day from 06:00 to 18:00 UTC.
    var isDay: @Sendable (Int64) -> Double? = { (6..<18).contains(($0 / 3600) % 24) ? 1 : 0 }
    /// A 12.42-hour tide of ±1.2 m; nil for "no sea here".
    var seaLevel: (@Sendable (Int64) -> Double?)? = { 1.2 * cos(2 * Double.pi * Double($0) / 3600 / 12.42) }
}

enum Fixtures {
    /// The hours of the days `start_date…end_date` (both inclusive), as Unix seconds.
    static func hours(_ query: [String: String]) -> [Int64] {
        guard let start = query["start_date"].flatMap({ OpenMeteo.parseHour($0 + "T00:00") }),
            let end = query["end_date"].flatMap({ OpenMeteo.parseHour($0 + "T00:00") }), end >= start
        else { return [] }
        return Array(stride(from: start, to: end + 86400, by: 3600))
    }

    static func time(_ hour: Int64) -> String {
        // (days and hours counted down from 1970 too: floor division)
        let seconds = (hour % 86400 + 86400) % 86400
        let (y, m, d) = WireTime.civil(days: (hour - seconds) / 86400)
        return String(format: "%04d-%02d-%02dT%02d:00", y, m, d, seconds / 3600)
    }

    static func column(_ hours: [Int64], _ value: (Int64) -> Double?) -> String {
        "[" + hours.map { value($0).map { "\($0)" } ?? "null" }.joined(separator: ",") + "]"
    }

    static func weather(_ query: [String: String], _ model: WeatherModel) -> String {
        let h = hours(query)
        let times = "[" + h.map { "\"\(time($0))\"" }.joined(separator: ",") + "]"
        return """
            {"latitude":\(query["latitude"] ?? "0"),"longitude":\(query["longitude"] ?? "0"),"elevation":12.0,\
            "generationtime_ms":0.15,"utc_offset_seconds":0,"timezone":"GMT","timezone_abbreviation":"GMT",\
            "hourly_units":{"time":"iso8601","temperature_2m":"°C","pressure_msl":"hPa","wind_speed_10m":"km/h",\
            "wind_direction_10m":"°","cloud_cover":"%","precipitation":"mm","weather_code":"wmo code","is_day":""},\
            "hourly":{"time":\(times),"temperature_2m":\(column(h, model.temperature)),\
            "pressure_msl":\(column(h, model.pressure)),"wind_speed_10m":\(column(h, model.windSpeed)),\
            "wind_direction_10m":\(column(h, model.windDirection)),"cloud_cover":\(column(h, { _ in 100 })),\
            "precipitation":\(column(h, { _ in 0 })),"weather_code":\(column(h, model.weatherCode)),\
            "is_day":\(column(h, model.isDay))}}
            """
    }

    static func marine(_ query: [String: String], _ model: WeatherModel) -> String {
        let h = hours(query)
        let times = "[" + h.map { "\"\(time($0))\"" }.joined(separator: ",") + "]"
        let levels = column(h, model.seaLevel ?? { _ in nil })
        return """
            {"latitude":\(query["latitude"] ?? "0"),"longitude":\(query["longitude"] ?? "0"),\
            "generationtime_ms":0.2,"utc_offset_seconds":0,"timezone":"GMT","timezone_abbreviation":"GMT",\
            "elevation":0.0,"hourly_units":{"time":"iso8601","sea_level_height_msl":"m"},\
            "hourly":{"time":\(times),"sea_level_height_msl":\(levels)}}
            """
    }

    /// Answers like Open-Meteo: forecast and archive with weather, marine with sea level.
    static func openMeteo(_ model: WeatherModel = WeatherModel()) -> StubHTTPServer.Handler {
        { request in
            switch request.path {
            case "/v1/forecast", "/v1/archive": .json(weather(request.query, model))
            case "/v1/marine": .json(marine(request.query, model))
            default: .json(#"{"error":true,"reason":"no such endpoint"}"#, status: 404)
            }
        }
    }
}

/// Tokens "good-<user>" resolve to that user.
struct FakeSessions: SessionResolver {
    func resolve(token: String) async throws -> Principal {
        guard token.hasPrefix("good-") else { throw ServiceError.unauthenticated("session expired or revoked") }
        return Principal(userId: String(token.dropFirst(5)), username: "tester", sessionId: "s1")
    }
}

/// A weather-fetcher under test: a database file in a scratch directory (so it can be
/// "restarted"), the stub provider, short delays, a clock starting at `start`.
final class Harness: Sendable {
    let directory: String
    let server: StubHTTPServer
    let settings: WeatherFetcherSettings
    private let sequence = Mutex<Int64>(0)
    private let skew: Skew

    init(start: String = "2024-06-01T12:00:00Z", handler: @escaping StubHTTPServer.Handler = Fixtures.openMeteo(),
        configure: (inout WeatherFetcherSettings) -> Void = { _ in })
        throws
    {
        directory = "/tmp/lbw-\(UUID().uuidString.prefix(8).lowercased())"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        server = try StubHTTPServer(handler: handler)
        var settings = WeatherFetcherSettings()
        settings.forecastURL = server.baseURL + "/v1/forecast"
        settings.archiveURL = server.baseURL + "/v1/archive"
        settings.marineURL = server.baseURL + "/v1/marine"
        // NOAA answers from the stub too, but is off unless a test turns it on (noaaMaxKm),
        // so the Open-Meteo tests keep counting only Open-Meteo calls.
        settings.noaaURL = server.baseURL
        settings.noaaMaxKm = 0
        settings.httpTimeout = .seconds(1)
        settings.backoffBase = .milliseconds(20)
        settings.backoffMax = .milliseconds(100)
        settings.maxAttempts = 50
        settings.rateLimitPause = .milliseconds(200)
        settings.idlePoll = .milliseconds(100)
        // The injected clock: starts at `start`, then runs at real speed.
        let origin = WireTime.parse(start)!
        let began = Date()
        let skew = Skew()
        self.skew = skew
        settings.now = { origin.addingTimeInterval(Date().timeIntervalSince(began) + skew.seconds) }
        configure(&settings)
        self.settings = settings
    }

    deinit {
        server.stop()
        try? FileManager.default.removeItem(atPath: directory)
    }

    func makeService() throws -> WeatherFetcherService {
        var logger = Logger(label: "weather-test")
        logger.logLevel = .critical
        return try WeatherFetcherService(
            database: DatabaseSettings(path: directory + "/weather.sqlite"), settings: settings, eventsEndpoint: nil,
            logger: logger)
    }

    /// Moves the injected clock forward.
    func advance(by seconds: TimeInterval) { skew.add(seconds) }

    func nextSeq() -> Int64 {
        sequence.withLock {
            $0 += 1
            return $0
        }
    }
}

extension WeatherFetcherService {
    var client: InProcessTransport { InProcessTransport(host.dispatcher(router: router(), sessions: FakeSessions())) }

    /// Applies records' events the way the real consumer does: through a checkpointed sink.
    func applyRecords(_ events: [Event]) async throws {
        try await DatabaseEventSink(producer: "records", writer: host.database, handler: recordsHandler).apply(events)
    }

    func applyAuth(_ events: [Event]) async throws {
        try await DatabaseEventSink(producer: "auth", writer: host.database, handler: authHandler).apply(events)
    }

    /// Runs the job runner while `body` runs.
    @discardableResult
    func running<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await self.runner.run() }
            defer { group.cancelAll() }
            return try await body()
        }
    }

    func status(_ catchId: String, user: String = "u1") async throws -> JSONValue {
        let reply = try await client.reply(
            "weather.conditions.get", body: ["catchId": .string(catchId)], options: CallOptions(token: "good-\(user)"))
        if let error = reply.error { return ["error": .string(error.code.rawValue)] }
        return reply.result ?? .null
    }

    /// Polls until the catch's conditions leave `pending` (or `timeout` passes).
    @discardableResult
    func settled(_ catchId: String, user: String = "u1", timeout: Duration = .seconds(10)) async throws -> JSONValue {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        while true {
            let status = try await status(catchId, user: user)
            if let state = status["status"]?.stringValue, state != "pending" { return status }
            if clock.now >= deadline { return status }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    func published() async throws -> [Event] {
        try await host.database.read { try Outbox.since($0, after: 0, limit: 1000) }
    }
}

extension Harness {
    func catchEvent(
        _ type: String = "catch.created", id: String, user: String = "u1", latitude: Double = 41.5234,
        longitude: Double = -70.6712, at: String = "2024-05-20T14:40:00Z", water: String = "salt",
        placeOrTimeChanged: Bool? = nil, waterChanged: Bool? = nil, seq: Int64? = nil
    ) -> Event {
        var data: [String: JSONValue] = [
            "id": .string(id), "species": "Striped bass", "weight": 4.2, "weightUnit": "kg", "bait": "eel",
            "water": .string(water), "latitude": .number(.init(latitude)), "longitude": .number(.init(longitude)),
            "caughtAt": .string(at), "released": true, "note": .null, "photo": .null,
            "conditions": ["status": "pending"], "createdAt": .string(at), "updatedAt": .string(at),
        ]
        if let placeOrTimeChanged { data["placeOrTimeChanged"] = .bool(placeOrTimeChanged) }
        if let waterChanged { data["waterChanged"] = .bool(waterChanged) }
        return Event(seq: seq ?? nextSeq(), type: type, userId: user, at: Date(), data: .object(data))
    }

    func deletedEvent(id: String, user: String = "u1") -> Event {
        Event(seq: nextSeq(), type: "catch.deleted", userId: user, at: Date(), data: ["id": .string(id), "userId": .string(user)])
    }
}

/// How far the injected clock has been moved forward.
final class Skew: Sendable {
    private let value = Mutex<TimeInterval>(0)
    var seconds: TimeInterval { value.withLock { $0 } }
    func add(_ seconds: TimeInterval) { value.withLock { $0 += seconds } }
}
