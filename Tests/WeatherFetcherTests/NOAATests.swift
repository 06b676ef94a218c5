// NOAA CO-OPS tide through the real HTTP path against the stub: the nearest station within
// range, phase and height from high/low predictions, and every NOAA failure falling back
// to Open-Meteo Marine with the conditions still ready.
import Foundation
import Runtime
import TestSupport
import Testing
import Wire

@testable import WeatherFetcherService

extension Fixtures {
    /// Three tide-prediction stations in NOAA's shape (ids and rough places of real ones).
    static let stations = """
        {"count":3,"units":null,"stations":[\
        {"state":"MA","tidal":true,"greatlakes":false,"id":"8447930","name":"Woods Hole","lat":41.5236,"lng":-70.6711,"type":"R","reference_id":"8447930","timezonecorr":-5},\
        {"state":"RI","tidal":true,"greatlakes":false,"id":"8452660","name":"Newport","lat":41.5043,"lng":-71.3261,"type":"R","reference_id":"8452660","timezonecorr":-5},\
        {"state":"MA","tidal":true,"greatlakes":false,"id":"8449130","name":"Nantucket Island","lat":41.2856,"lng":-70.0967,"type":"R","reference_id":"8449130","timezonecorr":-5}]}
        """

    /// Highs and lows every 6 hours of every day asked (`begin_date…end_date`, yyyyMMdd):
    /// low 0.100 m at 04:00 and 16:00, high 1.300 m at 10:00 and 22:00 UTC.
    static func predictions(_ query: [String: String]) -> String {
        func day(_ text: String?) -> Int64? {
            guard let text, text.count == 8, let y = Int64(text.prefix(4)), let m = Int64(text.dropFirst(4).prefix(2)),
                let d = Int64(text.suffix(2))
            else { return nil }
            return WireTime.days(year: y, month: m, day: d)
        }
        guard let first = day(query["begin_date"]), let last = day(query["end_date"]), last >= first else {
            return #"{"error":{"message":"No Predictions data was found. Please make sure the Datum input is valid."}}"#
        }
        var entries: [String] = []
        for days in first...last {
            let (y, m, d) = WireTime.civil(days: days)
            for (hour, value, type) in [(4, "0.100", "L"), (10, "1.300", "H"), (16, "0.100", "L"), (22, "1.300", "H")] {
                entries.append(String(format: #"{"t":"%04d-%02d-%02d %02d:00","v":"%@","type":"%@"}"#, y, m, d, hour, value, type))
            }
        }
        return #"{"predictions":["# + entries.joined(separator: ",") + "]}"
    }

    /// Open-Meteo as usual plus NOAA's two endpoints; `noaa` may replace NOAA's answers.
    static func withNOAA(
        stations: @escaping @Sendable () -> StubResponse = { .json(Fixtures.stations) },
        predictions: @escaping @Sendable (StubRequest) -> StubResponse = { .json(Fixtures.predictions($0.query)) }
    ) -> StubHTTPServer.Handler {
        let openMeteo = Fixtures.openMeteo()
        return { request in
            switch request.path {
            case NOAA.stationsPath: stations()
            case NOAA.predictionsPath: predictions(request)
            default: openMeteo(request)
            }
        }
    }
}

@Suite struct NOAATests {
    static let woodsHole = (latitude: 41.5234, longitude: -70.6712)

    func harness(_ handler: @escaping StubHTTPServer.Handler = Fixtures.withNOAA()) throws -> Harness {
        try Harness(handler: handler) { $0.noaaMaxKm = 30 }
    }

    @Test func theNearestStationWithinRangeIsUsed() async throws {
        let harness = try harness()
        let service = try harness.makeService()
        try await service.applyRecords([
            harness.catchEvent(id: "wh", latitude: 41.5234, longitude: -70.6712, at: "2024-05-20T12:00:00Z"),
            // About 2.5 km from Newport, 54 km from Woods Hole.
            harness.catchEvent(id: "np", latitude: 41.49, longitude: -71.30, at: "2024-05-20T12:00:00Z"),
        ])
        let (wh, np) = try await service.running {
            (try await service.settled("wh"), try await service.settled("np"))
        }
        #expect(wh["status"] == "ready")
        #expect(wh["conditions"]?["tideSource"] == "noaa")
        #expect(wh["conditions"]?["tideDatum"] == "MLLW")
        #expect(wh["conditions"]?["tideStation"] == "Woods Hole")
        #expect(wh["conditions"]?["tideStationId"] == "8447930")
        // The place is rounded to 41.52, -70.67: 0.4 km from the station.
        #expect(wh["conditions"]?["tideStationKm"] == 0.4)
        #expect(np["conditions"]?["tideStation"] == "Newport")
        #expect(np["conditions"]?["tideStationId"] == "8452660")
        let km = try #require(np["conditions"]?["tideStationKm"]?.doubleValue)
        #expect((2...3.5).contains(km), "\(km)")

        let asked = harness.server.requests(path: NOAA.predictionsPath)
        #expect(Set(asked.compactMap { $0.query["station"] }) == ["8447930", "8452660"])
        let query = try #require(asked.first?.query)
        #expect(query["product"] == "predictions")
        #expect(query["interval"] == "hilo")
        #expect(query["datum"] == "MLLW")
        #expect(query["time_zone"] == "gmt")
        #expect(query["units"] == "metric")
        #expect(query["format"] == "json")
        #expect(query["begin_date"] == "20240519")
        #expect(query["end_date"] == "20240521")
        #expect(harness.server.requests(path: "/v1/marine").isEmpty, "NOAA answered: the marine API is not asked")
        #expect(harness.server.requests(path: NOAA.stationsPath).first?.query["type"] == "tidepredictions")
    }

    @Test func noStationInRangeUsesTheMarineAPI() async throws {
        let harness = try harness()
        let service = try harness.makeService()
        // About 170 km south of Woods Hole, well offshore.
        try await service.applyRecords([harness.catchEvent(id: "far", latitude: 40.0, longitude: -70.6)])
        let status = try await service.running { try await service.settled("far") }
        #expect(status["status"] == "ready")
        #expect(status["conditions"]?["tide"] == "measured")
        #expect(status["conditions"]?["tideSource"] == "open-meteo")
        #expect(status["conditions"]?["tideDatum"] == "MSL")
        #expect(status["conditions"]?["tideStation"] == nil)
        #expect(harness.server.requests(path: NOAA.stationsPath).count == 1)
        #expect(harness.server.requests(path: NOAA.predictionsPath).isEmpty)
        #expect(harness.server.requests(path: "/v1/marine").count == 1)
    }

    /// The fixture: low 0.1 m at 04:00, high 1.3 m at 10:00, low 0.1 m at 16:00, high at 22:00.
    @Test(arguments: [
        // Midway from low to high: rising, half way up (cosine 0.5).
        ("2024-05-20T07:00:00Z", "rising", 0.7, "mid", "2024-05-20T10:00:00Z", "2024-05-20T16:00:00Z"),
        // An hour after the low: f = 1/6, 0.1 + 1.2 × (1 − cos 30°)/2 = 0.180.
        ("2024-05-20T05:00:00Z", "rising", 0.18, "low", "2024-05-20T10:00:00Z", "2024-05-20T16:00:00Z"),
        // 20 minutes before the high: "high"; f = 17/18, 0.1 + 1.2 × (1 + cos 10°)/2 = 1.291.
        ("2024-05-20T09:40:00Z", "high", 1.291, "high", "2024-05-20T10:00:00Z", "2024-05-20T16:00:00Z"),
        // Exactly 30 minutes after the high is still "high"; 1.3 − 1.2 × (1 − cos 15°)/2 = 1.280.
        ("2024-05-20T10:30:00Z", "high", 1.28, "high", "2024-05-20T22:00:00Z", "2024-05-20T16:00:00Z"),
        // Two hours after the high: falling, f = 1/3, 1.3 − 1.2 × 0.25 = 1.0.
        ("2024-05-20T12:00:00Z", "falling", 1.0, "high", "2024-05-20T22:00:00Z", "2024-05-20T16:00:00Z"),
        // 31 minutes before the low: falling, not yet "low"; 1.3 − 1.2 × (1 + cos 15.5°)/2 = 0.122.
        ("2024-05-20T15:29:00Z", "falling", 0.122, "low", "2024-05-20T22:00:00Z", "2024-05-20T16:00:00Z"),
        // 10 minutes after the low: 0.1 + 1.2 × (1 − cos 5°)/2 = 0.102.
        ("2024-05-20T16:10:00Z", "low", 0.102, "low", "2024-05-20T22:00:00Z", "2024-05-21T04:00:00Z"),
    ])
    func phaseAndHeightFromHighsAndLows(
        at: String, phase: String, height: Double, band: String, nextHigh: String, nextLow: String
    ) async throws {
        let harness = try harness()
        let service = try harness.makeService()
        try await service.applyRecords([harness.catchEvent(id: "c", at: at)])
        let status = try await service.running { try await service.settled("c") }
        let conditions = try #require(status["conditions"])
        #expect(status["status"] == "ready")
        #expect(conditions["tide"] == "measured")
        #expect(conditions["tideSource"] == "noaa")
        #expect(conditions["tidePhase"]?.stringValue == phase)
        let measured = try #require(conditions["tideHeightM"]?.doubleValue)
        #expect(abs(measured - height) < 0.0005, "\(measured) at \(at)")
        #expect(conditions["tideHeightBand"]?.stringValue == band)
        #expect(conditions["nextHigh"]?.stringValue == nextHigh)
        #expect(conditions["nextLow"]?.stringValue == nextLow)
        #expect(status["summary"]?.stringValue?.hasSuffix(", \(phase) tide") == true)
    }

    @Test(arguments: [
        ("error body with HTTP 200", StubResponse.json(#"{"error":{"message":"No Predictions data was found."}}"#)),
        ("HTTP 500", StubResponse.json(#"{"error":{"message":"internal"}}"#, status: 500)),
        ("truncated JSON", StubResponse(body: Data(#"{"predictions":[{"t":"2024-05-20 04:00","v":"0.1"#.utf8))),
        ("cut-off connection", StubResponse(body: Data(Fixtures.predictions(["begin_date": "20240519", "end_date": "20240521"]).utf8), truncateAfter: 40)),
        ("no predictions", StubResponse.json(#"{"predictions":[]}"#)),
    ])
    func aFailedPredictionFallsBackToTheMarineAPI(_ name: String, _ response: StubResponse) async throws {
        let harness = try harness(Fixtures.withNOAA(predictions: { _ in response }))
        let service = try harness.makeService()
        try await service.applyRecords([harness.catchEvent(id: "c")])
        let status = try await service.running { try await service.settled("c") }
        #expect(status["status"] == "ready", "\(name)")
        #expect(status["conditions"]?["tide"] == "measured", "\(name)")
        #expect(status["conditions"]?["tideSource"] == "open-meteo", "\(name)")
        #expect(status["conditions"]?["tidePhase"]?.stringValue != nil, "\(name)")
        #expect(status["attempts"] == 0, "a NOAA failure is not a failed attempt (\(name))")
        #expect(harness.server.requests(path: NOAA.predictionsPath).count == 1, "\(name)")
        #expect(harness.server.requests(path: "/v1/marine").count == 1, "\(name)")
    }

    @Test func noaasHTTP400MessageIsKeptInTheTideReason() async throws {
        let message = "No Predictions data was found. Please make sure the Datum input is valid."
        let openMeteo = Fixtures.openMeteo()
        let handler: StubHTTPServer.Handler = { request in
            switch request.path {
            case NOAA.stationsPath: .json(Fixtures.stations)
            case NOAA.predictionsPath: .json(#"{"error":{"message":"\#(message)"}}"#, status: 400)
            case "/v1/marine": .json(#"{"error":true,"reason":"Parameter 'sea_level_height_msl' is invalid"}"#, status: 400)
            default: openMeteo(request)
            }
        }
        let harness = try harness(handler)
        let service = try harness.makeService()
        try await service.applyRecords([harness.catchEvent(id: "c")])
        let status = try await service.running { try await service.settled("c") }
        #expect(status["status"] == "ready")
        #expect(status["conditions"]?["tide"] == "unavailable")
        let note = try #require(status["conditions"]?["tideNote"]?.stringValue)
        #expect(note.contains("marine: Parameter 'sea_level_height_msl' is invalid"), "\(note)")
        #expect(note.contains("NOAA station 8447930: HTTP 400: \(message)"), "\(note)")
    }

    @Test(arguments: [
        ("HTTP 500", StubResponse.json("oops", status: 500)),
        ("error body with HTTP 200", StubResponse.json(#"{"error":{"message":"Unknown type"}}"#)),
        ("truncated JSON", StubResponse(body: Data(Fixtures.stations.utf8), truncateAfter: 60)),
    ])
    func aFailedStationListFallsBackAndIsNotAskedAgainAtOnce(_ name: String, _ response: StubResponse) async throws {
        let harness = try harness(Fixtures.withNOAA(stations: { response }))
        let service = try harness.makeService()
        try await service.applyRecords([
            harness.catchEvent(id: "a", at: "2024-05-20T07:00:00Z"), harness.catchEvent(id: "b", at: "2024-05-20T12:00:00Z"),
        ])
        let (a, b) = try await service.running { (try await service.settled("a"), try await service.settled("b")) }
        #expect(a["status"] == "ready", "\(name)")
        #expect(a["conditions"]?["tideSource"] == "open-meteo", "\(name)")
        #expect(b["conditions"]?["tideSource"] == "open-meteo", "\(name)")
        #expect(harness.server.requests(path: NOAA.stationsPath).count == 1, "\(name)")
        #expect(harness.server.requests(path: NOAA.predictionsPath).isEmpty, "\(name)")
        #expect(harness.server.requests(path: "/v1/marine").count == 2, "\(name)")
    }

    @Test func theStationListIsFetchedOnceForManyCatchesAndDaily() async throws {
        let harness = try harness()
        let service = try harness.makeService()
        let hours = ["05", "07", "09", "11", "13", "15", "17", "19"]
        try await service.applyRecords(
            hours.enumerated().map { index, hour in
                harness.catchEvent(
                    id: "c\(index)", latitude: index.isMultiple(of: 2) ? 41.5234 : 41.49,
                    longitude: index.isMultiple(of: 2) ? -70.6712 : -71.30, at: "2024-05-20T\(hour):10:00Z")
            })
        try await service.running {
            for index in hours.indices {
                let status = try await service.settled("c\(index)")
                #expect(status["conditions"]?["tideSource"] == "noaa")
            }
        }
        #expect(harness.server.requests(path: NOAA.stationsPath).count == 1)
        // One prediction call per station for that day, the rest from the cache; jobs run 4
        // at a time, so the first ones may each ask before the cache is filled.
        let predictionCalls = harness.server.requests(path: NOAA.predictionsPath).count
        #expect((2...4).contains(predictionCalls), "\(predictionCalls)")

        // A day later, a new catch refreshes the list once.
        harness.advance(by: 86400 + 60)
        try await service.applyRecords([harness.catchEvent(id: "later", at: "2024-05-22T12:00:00Z")])
        let later = try await service.running { try await service.settled("later") }
        #expect(later["conditions"]?["tideSource"] == "noaa")
        #expect(harness.server.requests(path: NOAA.stationsPath).count == 2)
    }

    @Test func aRestartUsesTheStoredStationList() async throws {
        let harness = try harness()
        do {
            let service = try harness.makeService()
            try await service.applyRecords([harness.catchEvent(id: "a", at: "2024-05-20T07:00:00Z")])
            let status = try await service.running { try await service.settled("a") }
            #expect(status["conditions"]?["tideSource"] == "noaa")
        }
        let restarted = try harness.makeService()
        try await restarted.applyRecords([harness.catchEvent(id: "b", at: "2024-05-21T07:00:00Z")])
        let status = try await restarted.running { try await restarted.settled("b") }
        #expect(status["conditions"]?["tideSource"] == "noaa")
        #expect(harness.server.requests(path: NOAA.stationsPath).count == 1)
    }

    @Test func freshwaterCatchesNeverAskNOAA() async throws {
        let harness = try harness()
        let service = try harness.makeService()
        try await service.applyRecords([harness.catchEvent(id: "pond", water: "fresh")])
        let status = try await service.running { try await service.settled("pond") }
        #expect(status["status"] == "ready")
        #expect(status["conditions"]?["tide"] == "skipped")
        #expect(status["conditions"]?["tideSource"] == nil)
        let fresh = try await service.client.reply(
            "weather.get",
            body: ["latitude": 41.5234, "longitude": -70.6712, "at": "2024-05-20T14:40:00Z", "water": "fresh"],
            options: CallOptions(token: "good-u1"))
        #expect(fresh.result?["conditions"]?["tide"] == "skipped")
        #expect(harness.server.requests(path: NOAA.stationsPath).isEmpty)
        #expect(harness.server.requests(path: NOAA.predictionsPath).isEmpty)
        #expect(harness.server.requests(path: "/v1/marine").isEmpty)
    }

    /// The station list is nobody's: a user whose budget the weather call spent does not make
    /// it "fail" for everyone (NOAA skipped until the retry, the tide taken from the marine API).
    @Test func aSpentUsersLookupDoesNotKeepEveryoneOffNOAA() async throws {
        let harness = try Harness(handler: Fixtures.withNOAA()) {
            $0.noaaMaxKm = 30
            $0.userCallsPerHour = 1
        }
        let service = try harness.makeService()
        let body: JSONValue = ["latitude": 41.5234, "longitude": -70.6712, "at": "2024-05-20T12:00:00Z"]
        _ = try await service.client.reply("weather.get", body: body, options: CallOptions(token: "good-u1"))
        #expect(harness.server.requests(path: NOAA.stationsPath).count == 1, "asked for u1's lookup, not charged to u1")
        // u2: the weather from the cache, the station list known, the predictions on u2's budget
        let second = try await service.client.reply("weather.get", body: body, options: CallOptions(token: "good-u2"))
        #expect(second.result?["conditions"]?["tideSource"] == "noaa", "\(second.result?.jsonText ?? second.error?.message ?? "")")
    }

    @Test func weatherGetUsesNOAAToo() async throws {
        let harness = try harness()
        let service = try harness.makeService()
        let reply = try await service.client.reply(
            "weather.get", body: ["latitude": 41.5234, "longitude": -70.6712, "at": "2024-05-20T12:00:00Z"],
            options: CallOptions(token: "good-u1"))
        #expect(reply.result?["conditions"]?["tideSource"] == "noaa")
        #expect(reply.result?["conditions"]?["tidePhase"] == "falling")
        #expect(reply.result?["summary"]?.stringValue?.hasSuffix(", falling tide") == true)
    }

    @Test func noaaSettingsAreReadAndChecked() throws {
        let directory = "/tmp/lbw-\(UUID().uuidString.prefix(8).lowercased())"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        func settings(_ extra: [String: String]) throws -> WeatherFetcherSettings {
            try WeatherFetcherSettings(configuration: StackConfiguration.scratch(directory, extra: extra))
        }
        let defaults = try settings([:])
        #expect(defaults.noaaURL == "https://api.tidesandcurrents.noaa.gov")
        #expect(defaults.noaaMaxKm == 30)
        let configured = try settings([
            "LOGBOOK_WEATHER_FETCHER_NOAA_URL": "http://127.0.0.1:9", "LOGBOOK_WEATHER_FETCHER_NOAA_MAX_KM": "12.5",
        ])
        #expect(configured.noaaURL == "http://127.0.0.1:9")
        #expect(configured.noaaMaxKm == 12.5)
        #expect(try settings(["LOGBOOK_WEATHER_FETCHER_NOAA_MAX_KM": "0"]).noaaMaxKm == 0)
        #expect(throws: (any Error).self) { try settings(["LOGBOOK_WEATHER_FETCHER_NOAA_MAX_KM": "-1"]) }
        #expect(throws: (any Error).self) { try settings(["LOGBOOK_WEATHER_FETCHER_NOAA_MAX_KM": "far"]) }
        #expect(throws: (any Error).self) { try settings(["LOGBOOK_WEATHER_FETCHER_NOAA_URL": "ftp://noaa.gov"]) }
    }

    @Test func noaaMaxKmZeroTurnsNOAAOff() async throws {
        let harness = try Harness(handler: Fixtures.withNOAA())
        let service = try harness.makeService()
        try await service.applyRecords([harness.catchEvent(id: "c")])
        let status = try await service.running { try await service.settled("c") }
        #expect(status["conditions"]?["tideSource"] == "open-meteo")
        #expect(harness.server.requests(path: NOAA.stationsPath).isEmpty)
    }
}
