// Fetching through the real HTTP path against the stub provider: which API is asked,
// what each kind of bad answer leads to, and what the conditions say.
import Foundation
import Outbound
import Runtime
import TestSupport
import Testing
import Synchronization
import Wire

@testable import WeatherFetcherService

@Suite struct FetchTests {
    @Test func recentCatchesUseTheForecastOlderOnesTheArchive() async throws {
        let harness = try Harness(start: "2024-06-01T12:00:00Z")
        let service = try harness.makeService()
        try await service.applyRecords([
            harness.catchEvent(id: "recent", at: "2024-05-20T14:40:00Z"),
            harness.catchEvent(id: "old", latitude: 44.1, at: "2023-01-10T06:10:00Z"),
        ])
        try await service.running {
            let recent = try await service.settled("recent")
            let old = try await service.settled("old")
            #expect(recent["status"] == "ready")
            #expect(recent["conditions"]?["source"] == "forecast")
            #expect(old["status"] == "ready")
            #expect(old["conditions"]?["source"] == "archive")
        }
        let forecast = harness.server.requests(path: "/v1/forecast")
        let archive = harness.server.requests(path: "/v1/archive")
        #expect(forecast.count == 1)
        #expect(archive.count == 1)
        // The catch hour (15:00, rounded from 14:40) and the 3 hours before fit one day.
        #expect(forecast.first?.query["start_date"] == "2024-05-20")
        #expect(forecast.first?.query["end_date"] == "2024-05-20")
        #expect(forecast.first?.query["timezone"] == "GMT")
        #expect(forecast.first?.query["latitude"] == "41.52")
        #expect(forecast.first?.query["hourly"]?.contains("pressure_msl") == true)
        // 06:00 needs 03:00 the same day; an early catch reaches back into the day before.
        #expect(archive.first?.query["start_date"] == "2023-01-10")
    }

    @Test func readyConditionsCarryRawValuesBucketsAndSummary() async throws {
        let harness = try Harness()
        let service = try harness.makeService()
        try await service.applyRecords([harness.catchEvent(id: "c1", at: "2024-05-20T14:40:00Z")])
        let status = try await service.running { try await service.settled("c1") }
        let conditions = try #require(status["conditions"])
        #expect(status["status"] == "ready")
        #expect(conditions["temperatureC"] == 14.2)
        #expect(conditions["temperatureBand"] == "10 to 15 °C")
        #expect(conditions["pressureChange3h"] == 0.9)
        #expect(conditions["pressureTrend"] == "rising slowly")
        #expect(conditions["beaufort"] == 3)
        #expect(conditions["windDirection"] == "SW")
        #expect(conditions["sky"] == "cloudy")
        #expect(conditions["timeOfDay"] == "day")
        #expect(conditions["hour"] == "2024-05-20T15:00:00Z")
        #expect(conditions["tide"] == "measured")
        #expect(conditions["tidePhase"]?.stringValue != nil)
        #expect(conditions["moonPhase"]?.stringValue != nil)
        let summary = try #require(status["summary"]?.stringValue)
        #expect(summary.hasPrefix("14°C, overcast, wind 3 Bft SW, pressure 1020 hPa rising slowly, "))
        #expect(summary.hasSuffix(" tide"))

        let events = try await service.published()
        #expect(events.map(\.type) == ["conditions.ready"])
        #expect(events.first?.userId == "u1")
        #expect(events.first?.data["catchId"] == "c1")
        #expect(events.first?.data["summary"]?.stringValue == summary)
    }

    @Test func marineNullsMeanNoTideNotAFailure() async throws {
        var model = WeatherModel()
        model.seaLevel = nil
        let harness = try Harness(handler: Fixtures.openMeteo(model))
        let service = try harness.makeService()
        try await service.applyRecords([harness.catchEvent(id: "lake", water: "salt")])
        let status = try await service.running { try await service.settled("lake") }
        #expect(status["status"] == "ready")
        #expect(status["conditions"]?["tide"] == "none")
        #expect(status["conditions"]?["tidePhase"] == nil)
        #expect(status["summary"]?.stringValue?.contains("tide") == false)
        #expect(harness.server.requests(path: "/v1/marine").count == 1)
    }

    @Test func freshwaterCatchesDoNotAskForTide() async throws {
        let harness = try Harness()
        let service = try harness.makeService()
        try await service.applyRecords([harness.catchEvent(id: "pond", water: "fresh")])
        let status = try await service.running { try await service.settled("pond") }
        #expect(status["status"] == "ready")
        #expect(status["conditions"]?["tide"] == "skipped")
        #expect(harness.server.requests(path: "/v1/marine").isEmpty)
    }

    @Test func http400WithReasonMakesTheConditionsUnavailable() async throws {
        let harness = try Harness(handler: { _ in
            .json(#"{"error":true,"reason":"Latitude must be in range of -90 to 90°. Given: 91.0."}"#, status: 400)
        })
        let service = try harness.makeService()
        try await service.applyRecords([harness.catchEvent(id: "c1")])
        let status = try await service.running { try await service.settled("c1") }
        #expect(status["status"] == "unavailable")
        #expect(status["reason"] == "Latitude must be in range of -90 to 90°. Given: 91.0.")
        #expect(harness.server.requests.count == 1, "a refusal is not retried")
        let events = try await service.published()
        #expect(events.map(\.type) == ["conditions.unavailable"])
        #expect(events.first?.data["reason"] == "Latitude must be in range of -90 to 90°. Given: 91.0.")
    }

    @Test func catchesBefore1940AreUnavailableWithoutAsking() async throws {
        let harness = try Harness()
        let service = try harness.makeService()
        try await service.applyRecords([harness.catchEvent(id: "old", at: "1939-07-04T12:00:00Z")])
        let status = try await service.running { try await service.settled("old") }
        #expect(status["status"] == "unavailable")
        #expect(status["reason"]?.stringValue?.contains("1940") == true)
        #expect(harness.server.requests.isEmpty)
    }

    /// The first hours of 1940 are accepted, and asked of the archive from its first day:
    /// the three hours before (for the pressure trend) would be in 1939, which it refuses.
    @Test func theFirstHoursOf1940AskNothingBeforeIt() async throws {
        let harness = try Harness(handler: { request in
            guard let start = request.query["start_date"], start >= "1940-01-01" else {
                return .json(#"{"error":true,"reason":"Parameter 'start_date' is out of allowed range from 1940-01-01"}"#, status: 400)
            }
            return Fixtures.openMeteo()(request)
        })
        let service = try harness.makeService()
        try await service.applyRecords([harness.catchEvent(id: "first", at: "1940-01-01T01:00:00Z", water: "fresh")])
        let status = try await service.running { try await service.settled("first") }
        #expect(status["status"] == "ready", "\(status.jsonText) \(harness.server.requests.map(\.query))")
        #expect(harness.server.requests(path: "/v1/archive").allSatisfy { $0.query["start_date"] == "1940-01-01" })
    }

    @Test func serverErrorThenSuccessIsRetried() async throws {
        let harness = try Harness()
        let service = try harness.makeService()
        let forecastCalls = Counter()
        harness.server.respond { request in
            if request.path == "/v1/forecast" && forecastCalls.next() == 1 {
                return .json(#"{"error":true,"reason":"internal"}"#, status: 500)
            }
            return Fixtures.openMeteo()(request)
        }
        try await service.applyRecords([harness.catchEvent(id: "c1")])
        let status = try await service.running { try await service.settled("c1") }
        #expect(status["status"] == "ready")
        #expect(harness.server.requests(path: "/v1/forecast").count == 2)
        #expect(try await service.published().map(\.type) == ["conditions.ready"])
    }

    @Test func slowAnswersTimeOutAndAreRetried() async throws {
        let harness = try Harness()
        let service = try harness.makeService()
        let forecastCalls = Counter()
        harness.server.respond { request in
            var response = Fixtures.openMeteo()(request)
            if request.path == "/v1/forecast" && forecastCalls.next() == 1 { response.delay = .milliseconds(2500) }
            return response
        }
        try await service.applyRecords([harness.catchEvent(id: "c1")])
        let status = try await service.running { try await service.settled("c1") }
        #expect(status["status"] == "ready")
        #expect(harness.server.requests(path: "/v1/forecast").count == 2)
    }

    @Test func truncatedJSONIsRetried() async throws {
        let harness = try Harness()
        let service = try harness.makeService()
        let forecastCalls = Counter()
        harness.server.respond { request in
            var response = Fixtures.openMeteo()(request)
            if request.path == "/v1/forecast" && forecastCalls.next() == 1 { response.truncateAfter = 200 }
            return response
        }
        try await service.applyRecords([harness.catchEvent(id: "c1")])
        let status = try await service.running { try await service.settled("c1") }
        #expect(status["status"] == "ready")
        #expect(harness.server.requests(path: "/v1/forecast").count == 2)
    }

    @Test func nullValuesAreLeftOutNotFatal() async throws {
        var model = WeatherModel()
        let catchHour = try #require(WireTime.parse("2024-05-20T15:00:00Z")).timeIntervalSince1970
        model.temperature = { Double($0) == catchHour ? nil : 10 }
        model.pressure = { Double($0) == catchHour - 3 * 3600 ? nil : 1012 }
        model.windDirection = { _ in nil }
        let harness = try Harness(handler: Fixtures.openMeteo(model))
        let service = try harness.makeService()
        try await service.applyRecords([harness.catchEvent(id: "c1")])
        let status = try await service.running { try await service.settled("c1") }
        #expect(status["status"] == "ready")
        #expect(status["conditions"]?["temperatureC"] == nil)
        #expect(status["conditions"]?["pressureHpa"] == 1012)
        #expect(status["conditions"]?["pressureTrend"] == nil)
        #expect(status["conditions"]?["windDirection"] == nil)
        #expect(status["conditions"]?["beaufort"] == 3)
        let summary = try #require(status["summary"]?.stringValue)
        #expect(summary.hasPrefix("overcast, wind 3 Bft, pressure 1012 hPa"))
    }

    /// A provider is not trusted with the service's arithmetic: a value no weather comes near
    /// (it used to reach whole-number conversions that trap) reads as missing.
    @Test func absurdValuesAreLeftOutNotFatal() async throws {
        var model = WeatherModel()
        model.temperature = { _ in 1e300 }
        model.pressure = { _ in -1e300 }
        model.windDirection = { _ in 9.3e18 }
        model.weatherCode = { _ in 1e19 }
        model.seaLevel = { _ in 1e300 }
        let harness = try Harness(handler: Fixtures.openMeteo(model))
        let service = try harness.makeService()
        try await service.applyRecords([harness.catchEvent(id: "c1")])
        let status = try await service.running { try await service.settled("c1") }
        #expect(status["status"] == "ready")
        for field in ["temperatureC", "pressureHpa", "windDirection", "weatherCode", "tidePhase"] {
            #expect(status["conditions"]?[field] == nil, "\(field)")
        }
        #expect(status["conditions"]?["beaufort"] == 3, "the sane values are kept")
    }

    @Test func absurdTimesOffsetsAndPausesAreRefusedNotFatal() throws {
        for time in ["99999999999-01-01T00:00", "9223372036854775807-01-01T00:00", "0-01-01T00:00", "2024-05-20T01:9223372036854775807"] {
            guard case .transient = openMeteoFailure(200, #"{"hourly":{"time":["\#(time)"]}}"#) else {
                Issue.record("\(time)")
                continue
            }
        }
        #expect(NOAA.parseTime("99999999999-01-01 00:00") == nil)
        #expect(NOAA.parseTime("2024-05-20 04:20") != nil)
        for offset in ["1e300", "-9.3e18", "90000"] {
            guard case .transient = openMeteoFailure(200, #"{"utc_offset_seconds":\#(offset),"hourly":{"time":["2024-05-20T01:00"]}}"#) else {
                Issue.record("\(offset)")
                continue
            }
        }
        #expect(openMeteoFailure(200, #"{"utc_offset_seconds":-36000,"hourly":{"time":["2024-05-20T01:00"]}}"#) == nil)
        for header in ["1e300", "inf", "9223372036854775807"] {
            #expect(openMeteoFailure(429, "{}", headers: ["retry-after": header]) == .rateLimited(retryAfter: .seconds(86_400)), "\(header)")
        }
        #expect(openMeteoFailure(429, "{}", headers: ["retry-after": "nan"]) == .rateLimited(retryAfter: nil))
    }

    @Test func parsingEveryKindOfBadAnswer() throws {
        #expect(openMeteoFailure(400, #"{"error":true,"reason":"bad date"}"#) == .rejected(reason: "bad date"))
        #expect(openMeteoFailure(200, #"{"error":true,"reason":"bad date"}"#) == .rejected(reason: "bad date"))
        // Open-Meteo's quota answers: paused until the limit's reset, whatever the status
        let now = try #require(WireTime.parse("2024-06-01T12:59:30Z"))
        func quota(_ status: Int, _ reason: String) -> FetchFailure? {
            do {
                _ = try OpenMeteo.parse(
                    HTTPResponse(status: status, body: Data(#"{"error":true,"reason":"\#(reason)"}"#.utf8), headers: [:]),
                    now: now)
                return nil
            } catch {
                return error
            }
        }
        #expect(
            quota(429, "Minutely API request limit exceeded. Please try again in one minute.")
                == .rateLimited(retryAfter: .seconds(31)))
        #expect(
            quota(400, "Hourly API request limit exceeded. Please try again in the next hour.")
                == .rateLimited(retryAfter: .seconds(31)))
        #expect(
            quota(400, "Daily API request limit exceeded. Please try again tomorrow.")
                == .rateLimited(retryAfter: .seconds(11 * 3600 + 31)))
        #expect(quota(200, "API request limit exceeded") == .rateLimited(retryAfter: nil))
        #expect(openMeteoFailure(429, "{}", headers: ["retry-after": "2"]) == .rateLimited(retryAfter: .seconds(2)))
        #expect(openMeteoFailure(200, #"[{"q":"Too many requests. Obtain an auth key"}]"#) == .rateLimited(retryAfter: nil))
        guard case .transient = openMeteoFailure(503, "Service Unavailable") else { Issue.record("503"); return }
        guard case .transient = openMeteoFailure(200, #"{"hourly":{"time":["2024-05-20T00:00"],"temp"#) else {
            Issue.record("truncated")
            return
        }
        guard case .transient = openMeteoFailure(200, #"{"latitude":1}"#) else { Issue.record("no hourly"); return }
        guard case .transient = openMeteoFailure(200, #"{"hourly":{"time":["yesterday"]}}"#) else { Issue.record("bad time"); return }
        let series = try OpenMeteo.parse(
            HTTPResponse(
                status: 200,
                body: Data(
                    #"{"utc_offset_seconds":3600,"hourly":{"time":["2024-05-20T01:00","2024-05-20T02:00"],"temperature_2m":[null,11.5],"is_day":"x"}}"#
                        .utf8)))
        let midnight = try #require(WireTime.parse("2024-05-20T00:00:00Z")).timeIntervalSince1970
        #expect(series.times == [Int64(midnight), Int64(midnight) + 3600])
        #expect(series.value("temperature_2m", at: Int64(midnight)) == nil)
        #expect(series.value("temperature_2m", at: Int64(midnight) + 3600) == 11.5)
        #expect(series.value("is_day", at: Int64(midnight)) == nil)
    }
}

/// Counts calls from the stub server's threads.
final class Counter: Sendable {
    private let value = Mutex<Int>(0)
    func next() -> Int {
        value.withLock {
            $0 += 1
            return $0
        }
    }
    var count: Int { value.withLock { $0 } }
}

/// What `OpenMeteo.parse` makes of an answer: the failure, or nil when it reads as a series.
func openMeteoFailure(_ status: Int, _ body: String, headers: [String: String] = [:]) -> FetchFailure? {
    do {
        _ = try OpenMeteo.parse(HTTPResponse(status: status, body: Data(body.utf8), headers: headers))
        return nil
    } catch {
        return error
    }
}
