// The weather-fetcher's settings: provider URLs (LOGBOOK_WEATHER_FETCHER_*), HTTP timeout,
// rate limit and retry policy. Defaults are the real Open-Meteo endpoints and the policy in
// docs/protocol.md, "Weather-fetcher"; tests shorten the delays and inject the clock.
import Foundation
import Outbound
import Runtime

public struct WeatherFetcherSettings: Sendable {
    public var forecastURL = "https://api.open-meteo.com/v1/forecast"
    public var archiveURL = "https://archive-api.open-meteo.com/v1/archive"
    public var marineURL = "https://marine-api.open-meteo.com/v1/marine"
    /// NOAA CO-OPS: `/mdapi/prod/webapi/stations.json` and `/api/prod/datagetter` are appended.
    public var noaaURL = "https://api.tidesandcurrents.noaa.gov"
    /// A salt-water catch takes its tide from NOAA's nearest tide-prediction station when
    /// one is within this many kilometres; 0 turns NOAA off (Open-Meteo Marine only).
    public var noaaMaxKm: Double = 30
    /// How long the cached NOAA station list is used before it is fetched again.
    public var noaaStationsMaxAge: Duration = .seconds(24 * 3600)
    /// After the station list could not be fetched, how long to wait before asking again
    /// (meanwhile the stale list, if any, is used, else Open-Meteo Marine).
    public var noaaStationsRetry: Duration = .seconds(10 * 60)
    /// Per HTTP request (whole seconds; see `HTTPClient`).
    public var httpTimeout: Duration = .seconds(10)
    /// Catches newer than this use the forecast API, older ones the archive.
    public var recentDays = 90
    /// Retry delay after the first failure, doubled per failure up to `backoffMax`.
    public var backoffBase: Duration = .seconds(5)
    public var backoffMax: Duration = .seconds(30 * 60)
    /// A job gives up (`conditions.unavailable`) after this many failed attempts…
    public var maxAttempts = 100
    /// …or once it has been waiting this long, whichever comes first.
    public var maxAge: Duration = .seconds(48 * 3600)
    /// Outbound calls per minute across the whole service (Open-Meteo allows 600).
    public var callsPerMinute = 600
    /// Provider calls one user's catches and `weather.get` may cause an hour (burst 20);
    /// 0: no per-user limit (UserCallBudget.swift).
    public var userCallsPerHour = 120
    /// How long everyone waits after a 429 / "too many requests" without Retry-After.
    public var rateLimitPause: Duration = .seconds(60)
    /// Jobs fetched at the same time.
    public var concurrency = 4
    /// The longest the job runner sleeps without looking for due jobs.
    public var idlePoll: Duration = .seconds(5)
    /// The clock jobs are scheduled by (injected in tests).
    public var now: @Sendable () -> Date = { Date() }
    /// 0…1; the back-off delay is scaled by 0.5 + 0.5 × jitter ("equal jitter").
    public var jitter: @Sendable () -> Double = { Double.random(in: 0...1) }

    public init() {}

    /// Reads LOGBOOK_WEATHER_FETCHER_{FORECAST_URL, ARCHIVE_URL, MARINE_URL, NOAA_URL,
    /// NOAA_MAX_KM, HTTP_TIMEOUT_SECONDS, CALLS_PER_MINUTE, USER_CALLS_PER_HOUR, MAX_ATTEMPTS}.
    public init(configuration: StackConfiguration) throws {
        let service = WeatherFetcherService.name
        func url(_ name: String, _ fallback: String) throws -> String {
            guard let value = configuration.setting(service, name) else { return fallback }
            guard let parsed = URL(string: value), parsed.scheme == "http" || parsed.scheme == "https" else {
                throw ConfigurationError("LOGBOOK_WEATHER_FETCHER_\(name) must be an http(s) URL (got \"\(value)\")")
            }
            return value
        }
        func positive(_ name: String) throws -> Int? {
            guard let value = configuration.setting(service, name) else { return nil }
            guard let number = Int(value), number > 0 else {
                throw ConfigurationError("LOGBOOK_WEATHER_FETCHER_\(name) must be a whole number above 0 (got \"\(value)\")")
            }
            return number
        }
        forecastURL = try url("FORECAST_URL", forecastURL)
        archiveURL = try url("ARCHIVE_URL", archiveURL)
        marineURL = try url("MARINE_URL", marineURL)
        noaaURL = try url("NOAA_URL", noaaURL)
        if let value = configuration.setting(service, "NOAA_MAX_KM") {
            guard let km = Double(value), km.isFinite, km >= 0 else {
                throw ConfigurationError("LOGBOOK_WEATHER_FETCHER_NOAA_MAX_KM must be a number of kilometres, 0 or more (got \"\(value)\")")
            }
            noaaMaxKm = km
        }
        if let seconds = try positive("HTTP_TIMEOUT_SECONDS") {
            guard seconds <= 3_600 else {
                throw ConfigurationError(
                    "LOGBOOK_WEATHER_FETCHER_HTTP_TIMEOUT_SECONDS must be at most 3600 (an hour; got \(seconds))")
            }
            httpTimeout = .seconds(seconds)
        }
        if let calls = try positive("CALLS_PER_MINUTE") { callsPerMinute = calls }
        if let attempts = try positive("MAX_ATTEMPTS") { maxAttempts = attempts }
        if let value = configuration.setting(service, "USER_CALLS_PER_HOUR") {
            guard let number = Int(value), number >= 0 else {
                throw ConfigurationError(
                    "LOGBOOK_WEATHER_FETCHER_USER_CALLS_PER_HOUR must be a whole number, 0 or more (got \"\(value)\")")
            }
            userCallsPerHour = number
        }
    }

    /// The delay before attempt `failures + 1`: base × 2^(failures − 1), capped, jittered.
    func backoff(afterFailures failures: Int) -> Duration {
        let exponent = min(max(failures - 1, 0), 30)
        let raw = backoffBase * (1 << exponent)
        let capped = min(raw, backoffMax)
        return capped * (0.5 + 0.5 * min(max(jitter(), 0), 1))
    }
}
