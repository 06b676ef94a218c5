// A catch gets its weather and tide end to end: `logbook catch add` against the real stack,
// the weather-fetcher's real HTTP code calling a local server that answers like Open-Meteo
// (forecast and marine), records attaching the result, `logbook catch show` printing it.
import Foundation
import TestSupport
import Testing

@Suite("catch conditions end to end", .serialized, .timeLimit(.minutes(3)))
struct WeatherTests {
    /// A catch time whose hour is over: a catch of the current hour waits for it to pass
    /// (docs/protocol.md, "Fetching policy").
    static var threeHoursAgo: String { ISO8601DateFormatter().string(from: Date().addingTimeInterval(-3 * 3600)) }

    /// Open-Meteo's hourly shape for every hour of start_date…end_date: 14.2 °C, pressure
    /// rising 0.5 hPa an hour, a SW breeze, overcast; the sea rising and falling.
    static func openMeteo(_ request: StubRequest) -> StubResponse {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd"
        guard let start = request.query["start_date"].flatMap(formatter.date(from:)),
            let end = request.query["end_date"].flatMap(formatter.date(from:))
        else { return .json(#"{"error":true,"reason":"start_date and end_date are required"}"#, status: 400) }
        formatter.dateFormat = "yyyy-MM-dd'T'HH:mm"
        let hours = stride(from: start.timeIntervalSince1970, to: end.timeIntervalSince1970 + 86400, by: 3600).map {
            Date(timeIntervalSince1970: $0)
        }
        func column(_ value: (Int) -> String) -> String { "[" + hours.indices.map(value).joined(separator: ",") + "]" }
        let times = column { "\"\(formatter.string(from: hours[$0]))\"" }
        let body: String
        if request.path == "/v1/marine" {
            body = """
                {"latitude":41.5,"longitude":-70.7,"utc_offset_seconds":0,"timezone":"GMT",\
                "hourly_units":{"time":"iso8601","sea_level_height_msl":"m"},\
                "hourly":{"time":\(times),"sea_level_height_msl":\(column { String(format: "%.2f", sin(Double($0) / 2) * 0.8) })}}
                """
        } else {
            body = """
                {"latitude":41.5,"longitude":-70.7,"elevation":12.0,"utc_offset_seconds":0,"timezone":"GMT",\
                "hourly_units":{"time":"iso8601","temperature_2m":"°C","pressure_msl":"hPa"},\
                "hourly":{"time":\(times),"temperature_2m":\(column { _ in "14.2" }),\
                "pressure_msl":\(column { String(format: "%.1f", 1000 + Double($0) * 0.5) }),\
                "surface_pressure":\(column { _ in "1000.0" }),"wind_speed_10m":\(column { _ in "12.0" }),\
                "wind_direction_10m":\(column { _ in "225" }),"cloud_cover":\(column { _ in "100" }),\
                "precipitation":\(column { _ in "0.0" }),"weather_code":\(column { _ in "3" }),\
                "is_day":\(column { _ in "1" })}}
                """
        }
        return .json(body)
    }

    @Test("catch add → conditions fetched over HTTP → catch show prints them")
    func conditionsArrive() async throws {
        let provider = try StubHTTPServer(handler: Self.openMeteo)
        defer { provider.stop() }
        let environment = [
            "LOGBOOK_WEATHER_FETCHER_FORECAST_URL": provider.baseURL + "/v1/forecast",
            "LOGBOOK_WEATHER_FETCHER_ARCHIVE_URL": provider.baseURL + "/v1/archive",
            "LOGBOOK_WEATHER_FETCHER_MARINE_URL": provider.baseURL + "/v1/marine",
        ]
        try await withStack(environment: environment) { stack in
            let up = try await stack.logbook("stack", "up")
            try #require(up.status == 0, "stack up failed: \(up.stderr)")
            let register = try await stack.logbook(
                "register", "angler", "--password-stdin", stdin: "correct horse battery staple\n")
            try #require(register.status == 0, "\(register.stderr)")
            let added = try await stack.logbook(
                "catch", "add", "--species", "Striped bass", "--weight", "4.2", "--bait", "sand eel", "--water", "salt",
                "--lat", "41.52", "--lon", "-70.67", "--at", Self.threeHoursAgo, "--json")
            try #require(added.status == 0, "\(added.stderr)")
            let id = try #require(added.object["id"] as? String)
            #expect((added.object["conditions"] as? [String: Any])?["status"] as? String == "pending")

            var conditions: [String: Any] = [:]
            let ready = try await stack.eventually {
                let shown = try await stack.logbook("catch", "show", id, "--json")
                conditions = shown.object["conditions"] as? [String: Any] ?? [:]
                return conditions["status"] as? String == "ready"
            }
            #expect(ready, "conditions: \(conditions)\n\(stack.log("weather-fetcher"))")
            let summary = try #require(conditions["summary"] as? String)
            #expect(summary.contains("14°C") || summary.contains("14 °C"), "summary: \(summary)")

            let show = try await stack.logbook("catch", "show", id)
            #expect(show.status == 0)
            #expect(show.stdout.contains(summary), "catch show prints the summary:\n\(show.stdout)")
            // …and the details the weather-fetcher keeps: bands, trend, Beaufort, moon, tide.
            for detail in ["temperature:", "14.2 °C", "pressure:", "rising slowly", "wind:", "force 3", "from SW", "moon:", "tide:"] {
                #expect(show.stdout.contains(detail), "catch show has \(detail)")
            }
            print("catch show:\n\(show.stdout)")
            #expect(!provider.requests(path: "/v1/forecast").isEmpty, "the weather came over HTTP")
            #expect(!provider.requests(path: "/v1/marine").isEmpty, "salt water asks for the tide")
        }
    }
}
