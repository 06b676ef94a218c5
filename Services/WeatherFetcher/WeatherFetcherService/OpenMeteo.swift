// Open-Meteo's hourly answers (forecast, archive, marine share one shape, docs/external-apis.md):
// building the request URL and reading the answer. Every way an answer can be wrong maps
// to a `FetchFailure` saying whether trying again can help.
import Foundation
import Outbound
import Runtime
import Wire

/// Why a fetch did not produce data, and what to do about it.
public enum FetchFailure: Error, Sendable, Equatable, CustomStringConvertible {
    /// The provider refused the request itself (HTTP 400 `{"error":true,"reason":…}`, a date
    /// before 1940): asking again gives the same answer.
    case rejected(reason: String)
    /// HTTP 429, a "too many requests" answer, or Open-Meteo's "… API request limit
    /// exceeded" (whatever the status, 400 included): everyone pauses, until the limit's
    /// reset when the answer says which limit it is.
    case rateLimited(retryAfter: Duration?)
    /// A timeout, a refused connection, HTTP 5xx, malformed or truncated JSON: try later.
    case transient(String)
    /// This user's share of provider calls is spent (UserCallBudget); others go on.
    case userBudget(retryAfter: Duration)

    public var description: String {
        switch self {
        case .rejected(let reason): reason
        case .rateLimited: "the weather provider asks us to slow down (too many requests)"
        case .userBudget(let retryAfter):
            "this user's weather provider calls are spent for now (next in \(retryAfter.milliseconds) ms)"
        case .transient(let detail): detail
        }
    }
}

/// An hourly series: UTC hour start (Unix seconds) → the values of each variable.
struct HourlySeries: Sendable {
    var times: [Int64]
    var values: [String: [Double?]]

    func value(_ variable: String, at hour: Int64) -> Double? {
        guard let index = times.firstIndex(of: hour), let column = values[variable], index < column.count else {
            return nil
        }
        return column[index]
    }

    /// Every non-null value of a variable.
    func present(_ variable: String) -> [Double] { (values[variable] ?? []).compactMap { $0 } }
}

enum OpenMeteo {
    static let weatherVariables = [
        "temperature_2m", "pressure_msl", "wind_speed_10m", "wind_direction_10m", "cloud_cover", "precipitation",
        "weather_code", "is_day",
    ]
    static let tideVariable = "sea_level_height_msl"

    /// `base?latitude=…&longitude=…&hourly=…&timezone=GMT&start_date=…&end_date=…`
    static func url(base: String, latitude: Double, longitude: Double, hourly: [String], from start: Date, to end: Date)
        -> URL?
    {
        guard var components = URLComponents(string: base) else { return nil }
        var items = components.queryItems ?? []
        items += [
            URLQueryItem(name: "latitude", value: coordinate(latitude)),
            URLQueryItem(name: "longitude", value: coordinate(longitude)),
            URLQueryItem(name: "hourly", value: hourly.joined(separator: ",")),
            URLQueryItem(name: "timezone", value: "GMT"),
            URLQueryItem(name: "start_date", value: day(start)),
            URLQueryItem(name: "end_date", value: day(end)),
        ]
        components.queryItems = items
        return components.url
    }

    /// How long until the quota an over-limit answer names is reset: the next minute, hour
    /// or UTC day for Open-Meteo's "Minutely", "Hourly" and "Daily API request limit
    /// exceeded" (plus a second, so the first call after it lands in the new period); nil
    /// when the answer does not say which limit (the service's default pause then).
    static func quotaReset(_ reason: String, now: Date) -> Duration? {
        let text = reason.lowercased()
        let period: Double
        if text.contains("minutely") {
            period = 60
        } else if text.contains("hourly") {
            period = 3600
        } else if text.contains("daily") {
            period = 86400
        } else {
            return nil
        }
        let seconds = now.timeIntervalSince1970
        let reset = (seconds / period).rounded(.down) * period + period
        return .milliseconds(Int64(((reset - seconds) + 1) * 1000))
    }

    static func coordinate(_ value: Double) -> String { String(format: "%.2f", value) }

    /// `yyyy-MM-dd` in UTC.
    static func day(_ date: Date) -> String {
        let (y, m, d) = WireTime.civil(days: Int64((date.timeIntervalSince1970 / 86400).rounded(.down)))
        return String(format: "%04d-%02d-%02d", y, m, d)
    }

    /// Reads an answer: the series on success, otherwise why not. `now` dates a quota's
    /// reset ("Hourly API request limit exceeded" lasts until the next hour).
    static func parse(_ response: HTTPResponse, now: Date = Date()) throws(FetchFailure) -> HourlySeries {
        let text = String(decoding: response.body.prefix(2000), as: UTF8.self)
        let json = try? JSONValue.parse(response.body)
        let reason = json?["reason"]?.stringValue
        let lowered = text.lowercased()
        if response.status == 429 || lowered.contains("too many requests") || lowered.contains("request limit exceeded") {
            // A pause of at most a day, whatever the header says ("1e300" or "inf" must not trap).
            if let seconds = response.headers["retry-after"].flatMap(Double.init), seconds >= 0 {
                throw .rateLimited(retryAfter: .milliseconds(Int64(min(seconds, 86_400) * 1000)))
            }
            throw .rateLimited(retryAfter: quotaReset(reason ?? text, now: now))
        }
        if response.status == 400 || (response.status == 200 && json?["error"]?.boolValue == true) {
            throw .rejected(reason: reason ?? "the weather provider refused the request (HTTP \(response.status))")
        }
        guard response.status == 200 else {
            throw .transient("HTTP \(response.status)" + (reason.map { ": \($0)" } ?? ""))
        }
        guard let json else {
            throw .transient("malformed or truncated JSON (\(response.body.count) bytes)")
        }
        guard let hourly = json["hourly"]?.objectValue, let rawTimes = hourly["time"]?.arrayValue else {
            throw .transient("malformed answer: no hourly.time")
        }
        let rawOffset = json["utc_offset_seconds"]?.doubleValue ?? 0
        // Time zones are within a day of UTC; anything else is a broken answer (and must not trap).
        guard rawOffset.isFinite, abs(rawOffset) <= 86_400 else {
            throw .transient("malformed answer: utc_offset_seconds is \(rawOffset)")
        }
        let offset = Int64(rawOffset)
        var times: [Int64] = []
        times.reserveCapacity(rawTimes.count)
        for raw in rawTimes {
            guard let text = raw.stringValue, let local = parseHour(text) else {
                throw .transient("malformed answer: hourly.time has \(raw.jsonText)")
            }
            times.append(local - offset)
        }
        var values: [String: [Double?]] = [:]
        for (name, column) in hourly where name != "time" {
            // A column that is not an array is treated as missing; non-numbers, and numbers
            // no weather reading comes near, read as null.
            values[name] = column.arrayValue?.map { $0.doubleValue.flatMap(reading) }
        }
        return HourlySeries(times: times, values: values)
    }

    /// `2026-05-01T14:00` (no offset) → Unix seconds as if UTC; nil for a year outside
    /// 1…9999 (a provider's answer is not trusted to keep the arithmetic in range).
    static func parseHour(_ text: String) -> Int64? {
        let parts = text.split(whereSeparator: { $0 == "-" || $0 == "T" || $0 == ":" })
        guard parts.count >= 4, let y = Int64(parts[0]), let m = Int64(parts[1]), let d = Int64(parts[2]),
            let h = Int64(parts[3]), (1...9999).contains(y), (1...12).contains(m), (1...31).contains(d), (0...23).contains(h)
        else { return nil }
        let minutes = parts.count >= 5 ? Int64(parts[4]) ?? 0 : 0
        guard (0...59).contains(minutes) else { return nil }
        return WireTime.days(year: y, month: m, day: d) * 86400 + h * 3600 + minutes * 60
    }

    /// A provider's reading, or nil when it is not finite or beyond a billion (no weather or
    /// tide value comes near; the buckets' whole-number arithmetic must not meet one).
    static func reading(_ value: Double) -> Double? {
        value.isFinite && abs(value) <= 1e9 ? value : nil
    }
}
