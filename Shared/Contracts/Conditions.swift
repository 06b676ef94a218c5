// The weather-fetcher's contract: a catch's conditions (raw hourly values at the catch hour
// and the buckets derived from them), the events that carry them to records and analytics,
// and the `weather.*` methods. docs/protocol.md, "Weather-fetcher"; every bucket is defined
// in docs/weather-buckets.md. Weather values are the providers' own numbers (`Double`):
// measurements, not quantities a user typed.
import Foundation
import Wire

/// The conditions of one catch (or of a place and hour asked with `weather.get`): what
/// `conditions.ready` carries and `weather.get` answers. A value the provider gave as
/// `null` is absent, and so are the buckets derived from it.
public struct Conditions: Documented, Equatable {
    /// forecast | archive: which Open-Meteo API answered.
    public var source: String
    /// The UTC hour the values are for: the catch time rounded to the nearest hour.
    public var hour: Date
    /// The place asked for, rounded to 2 decimals (about 1 km).
    public var latitude: Double
    public var longitude: Double
    /// The water the catch had when these were fetched (a freshwater catch gets no tide),
    /// so a consumer can tell an answer made before a change of water; absent in answers
    /// from older versions.
    public var water: Water?

    public var temperatureC: Double?
    public var temperatureBand: String?
    public var pressureHpa: Double?
    public var pressureBand: String?
    /// Pressure at the catch hour minus 3 hours earlier, hPa, one decimal.
    public var pressureChange3h: Double?
    public var pressureTrend: String?
    public var windSpeedKmh: Double?
    public var windDirectionDeg: Double?
    public var beaufort: Int?
    public var windDirection: String?
    public var cloudCoverPercent: Double?
    public var precipitationMm: Double?
    public var weatherCode: Int?
    public var sky: String?
    public var skyDescription: String?
    public var isDay: Bool?
    public var timeOfDay: String?

    public var moonPhase: String
    public var moonAgeDays: Double
    public var moonIllumination: Double

    /// measured | none (no sea here: freshwater or inland) | skipped (a freshwater catch) |
    /// unavailable (the marine API refused or kept failing; see `tideNote`).
    public var tide: String
    public var tideNote: String?
    public var tideHeightM: Double?
    public var tidePhase: String?
    public var tideHeightBand: String?
    /// noaa | open-meteo: who gave the tide reading (with `tide: measured`).
    public var tideSource: String?
    /// MLLW (NOAA: mean lower low water) | MSL (Open-Meteo: mean sea level): what
    /// `tideHeightM` is measured from.
    public var tideDatum: String?
    /// NOAA only: the station whose predictions were used and its distance from the place.
    public var tideStation: String?
    public var tideStationId: String?
    public var tideStationKm: Double?
    /// NOAA only: the first predicted high and low water after the catch time.
    public var nextHigh: Date?
    public var nextLow: Date?

    /// The fields every answer has; set the others on the value.
    public init(
        source: String, hour: Date, latitude: Double, longitude: Double, moonPhase: String, moonAgeDays: Double,
        moonIllumination: Double, tide: String
    ) {
        self.source = source
        self.hour = hour
        self.latitude = latitude
        self.longitude = longitude
        self.moonPhase = moonPhase
        self.moonAgeDays = moonAgeDays
        self.moonIllumination = moonIllumination
        self.tide = tide
    }

    public static let sample: Conditions = {
        var c = Conditions(
            source: "archive", hour: Date(timeIntervalSince1970: 0), latitude: 59.33, longitude: 18.07,
            moonPhase: "full moon", moonAgeDays: 14.2, moonIllumination: 0.99, tide: "measured")
        c.water = .salt
        c.temperatureC = 14
        c.temperatureBand = "10 to 15 °C"
        c.pressureHpa = 1016
        c.pressureBand = "1010 to 1020 hPa"
        c.pressureChange3h = 1.2
        c.pressureTrend = "rising slowly"
        c.windSpeedKmh = 15
        c.windDirectionDeg = 225
        c.beaufort = 3
        c.windDirection = "SW"
        c.cloudCoverPercent = 100
        c.precipitationMm = 0
        c.weatherCode = 3
        c.sky = "cloudy"
        c.skyDescription = "overcast"
        c.isDay = true
        c.timeOfDay = "day"
        c.tideNote = "n"
        c.tideHeightM = 1.2
        c.tidePhase = "rising"
        c.tideHeightBand = "mid"
        c.tideSource = "noaa"
        c.tideDatum = "MLLW"
        c.tideStation = "s"
        c.tideStationId = "1"
        c.tideStationKm = 1.5
        c.nextHigh = Date(timeIntervalSince1970: 0)
        c.nextLow = Date(timeIntervalSince1970: 0)
        return c
    }()
}

// MARK: Events

/// `conditions.ready`: a catch's conditions and their one-line summary.
public struct ConditionsReady: Documented, Equatable {
    public var catchId: String
    public var summary: String
    public var conditions: Conditions

    public init(catchId: String, summary: String, conditions: Conditions) {
        self.catchId = catchId
        self.summary = summary
        self.conditions = conditions
    }

    public static let sample = ConditionsReady(catchId: "c", summary: "14°C, overcast", conditions: .sample)
}

/// `conditions.unavailable`: why a catch has no conditions, and the place, time and water
/// the answer is about (the catch's, unrounded), so a consumer can tell it from an answer
/// about the catch before an edit; the place, time and water are absent from older events.
public struct ConditionsUnavailable: Documented, Equatable {
    public var catchId: String
    public var reason: String
    public var latitude: Double?
    public var longitude: Double?
    public var hour: Date?
    public var water: Water?

    public init(
        catchId: String, reason: String, latitude: Double? = nil, longitude: Double? = nil, hour: Date? = nil,
        water: Water? = nil
    ) {
        self.catchId = catchId
        self.reason = reason
        self.latitude = latitude
        self.longitude = longitude
        self.hour = hour
        self.water = water
    }

    public static let sample = ConditionsUnavailable(
        catchId: "c", reason: "r", latitude: 1, longitude: 1, hour: Date(timeIntervalSince1970: 0), water: .fresh)
}

/// The events the weather-fetcher publishes.
public enum WeatherEvents {
    public static let conditionsReady = "conditions.ready"
    public static let conditionsUnavailable = "conditions.unavailable"
}

// MARK: Methods

/// `weather.get`: the conditions at a place and time, on demand.
public struct WeatherGet: Documented, Equatable {
    public var latitude: Double
    public var longitude: Double
    public var at: Date
    /// fresh skips the tide; salt or absent asks for it.
    public var water: Water?

    public init(latitude: Double, longitude: Double, at: Date, water: Water? = nil) {
        self.latitude = latitude
        self.longitude = longitude
        self.at = at
        self.water = water
    }

    public static let sample = WeatherGet(latitude: 1, longitude: 1, at: Date(timeIntervalSince1970: 0), water: .salt)
}

public struct WeatherGetResult: Codable, Sendable, Equatable {
    public var summary: String
    public var conditions: Conditions

    public init(summary: String, conditions: Conditions) {
        self.summary = summary
        self.conditions = conditions
    }
}

/// `{catchId}`: `weather.conditions.get`.
public struct ConditionsGet: Documented, Equatable {
    public var catchId: String
    public init(catchId: String) { self.catchId = catchId }
    public static let sample = ConditionsGet(catchId: "c")
}

/// `weather.conditions.get`: where a catch's conditions stand, and them once ready.
public struct CatchWeather: Codable, Sendable, Equatable {
    public var catchId: String
    public var status: ConditionsStatus
    /// Unavailable only.
    public var reason: String?
    /// Ready only.
    public var summary: String?
    public var conditions: Conditions?
    /// Failed attempts so far (while pending).
    public var attempts: Int
    /// The last failure while pending, for operators and the curious.
    public var lastError: String?

    public init(
        catchId: String, status: ConditionsStatus, reason: String? = nil, summary: String? = nil,
        conditions: Conditions? = nil, attempts: Int, lastError: String? = nil
    ) {
        self.catchId = catchId
        self.status = status
        self.reason = reason
        self.summary = summary
        self.conditions = conditions
        self.attempts = attempts
        self.lastError = lastError
    }
}

public enum WeatherMethods {
    public static let get = Method<WeatherGet, WeatherGetResult>("weather.get", .read, service: "weather-fetcher")
    public static let conditions = Method<ConditionsGet, CatchWeather>(
        "weather.conditions.get", .read, service: "weather-fetcher")
}

/// The hour a catch's conditions are for: its time rounded to the nearest UTC hour, half an
/// hour rounding up (14:29:59 → 14:00, 14:30 → 15:00; docs/weather-buckets.md). An answer
/// is for a catch's current time exactly when the two round to the same hour: the
/// weather-fetcher fetches by it, and records and analytics match answers by it.
public enum CatchHour {
    /// The hour, counted from 1970 (Unix seconds / 3600), of an instant in ms.
    public static func of(ms: Int64) -> Int64 {
        let shifted = ms.addingReportingOverflow(1_800_000)
        guard !shifted.overflow else { return Int64.max / 3_600_000 }
        let (quotient, remainder) = shifted.partialValue.quotientAndRemainder(dividingBy: 3_600_000)
        return remainder < 0 ? quotient - 1 : quotient
    }

    public static func of(_ date: Date) -> Int64 { of(ms: date.ms) }

    /// Whether an answer made for `hour` (any instant of it, or the catch time it was
    /// made for) answers a catch made at `catchMs`.
    public static func same(_ answerMs: Int64, _ catchMs: Int64) -> Bool { of(ms: answerMs) == of(ms: catchMs) }
}
