// The conditions of one catch (`Conditions`, Shared/Contracts/Conditions.swift) made from
// the providers' answers: raw hourly values at the catch hour with the buckets derived from
// them (Buckets, Moon, Tide), and the one-line summary the catch list shows.
// docs/weather-buckets.md documents every field.
import Contracts
import Foundation
import Wire

extension Conditions {
    /// "14°C, overcast, wind 3 Bft SW, pressure 1016 hPa rising slowly, rising tide"; parts
    /// whose values are missing are left out.
    var summary: String {
        var parts: [String] = []
        if let temperatureC { parts.append("\(Int(temperatureC.rounded()))°C") }
        if let skyDescription { parts.append(skyDescription) }
        if let beaufort {
            parts.append("wind \(beaufort) Bft" + (windDirection.map { " \($0)" } ?? ""))
        }
        if let pressureHpa {
            parts.append("pressure \(Int(pressureHpa.rounded())) hPa" + (pressureTrend.map { " \($0)" } ?? ""))
        }
        if let tidePhase { parts.append("\(tidePhase) tide") }
        return parts.isEmpty ? "no weather values for that hour" : parts.joined(separator: ", ")
    }
}

/// What the weather APIs said about the hours around a catch; cached per place and hour.
struct WeatherSlice: Codable, Sendable, Equatable {
    struct Hour: Codable, Sendable, Equatable {
        var temperature: Double?
        var pressure: Double?
        var windSpeed: Double?
        var windDirection: Double?
        var cloudCover: Double?
        var precipitation: Double?
        var weatherCode: Double?
        var isDay: Double?

        var isEmpty: Bool { temperature == nil && pressure == nil && windSpeed == nil && weatherCode == nil }
    }

    var source: String
    /// The catch hour (Unix seconds).
    var hour: Int64
    /// Three hours before, the catch hour, the hour after: offsets -3 … +1.
    var hours: [Hour]

    func at(_ offset: Int) -> Hour? {
        let index = offset + 3
        return hours.indices.contains(index) ? hours[index] : nil
    }

    init(source: String, hour: Int64, hours: [Hour]) {
        self.source = source
        self.hour = hour
        self.hours = hours
    }

    init(source: String, hour: Int64, series: HourlySeries) {
        self.source = source
        self.hour = hour
        hours = (-3...1).map { offset in
            let t = hour + Int64(offset) * 3600
            return Hour(
                temperature: series.value("temperature_2m", at: t), pressure: series.value("pressure_msl", at: t),
                windSpeed: series.value("wind_speed_10m", at: t), windDirection: series.value("wind_direction_10m", at: t),
                cloudCover: series.value("cloud_cover", at: t), precipitation: series.value("precipitation", at: t),
                weatherCode: series.value("weather_code", at: t), isDay: series.value("is_day", at: t))
        }
    }
}

/// What the marine API said: the sea level around the catch hour and the day's range, or
/// why there is none.
struct TideSlice: Codable, Sendable, Equatable {
    var before: Double?
    var at: Double?
    var after: Double?
    var low: Double?
    var high: Double?
    /// Set when the marine API refused the request (a date before its data starts).
    var refused: String?

    init(before: Double? = nil, at: Double? = nil, after: Double? = nil, low: Double? = nil, high: Double? = nil, refused: String? = nil) {
        self.before = before
        self.at = at
        self.after = after
        self.low = low
        self.high = high
        self.refused = refused
    }

    init(hour: Int64, series: HourlySeries) {
        let v = OpenMeteo.tideVariable
        before = series.value(v, at: hour - 3600)
        at = series.value(v, at: hour)
        after = series.value(v, at: hour + 3600)
        let present = series.present(v)
        low = present.min()
        high = present.max()
    }
}

/// The tide at a catch from a NOAA station's predictions.
struct NOAATide: Sendable, Equatable {
    var stationId: String
    var stationName: String
    var distanceKm: Double
    var reading: HiloReading
}

/// How the tide part of a catch's conditions came about.
enum TideInput: Sendable {
    case slice(TideSlice)
    /// From the nearest NOAA station's high/low predictions.
    case noaa(NOAATide)
    /// A freshwater catch: the marine API is not asked.
    case skipped
    /// The marine API kept failing; the weather is published without tide.
    case failed(String)
}

extension Conditions {
    init(weather: WeatherSlice, tide: TideInput, latitude: Double, longitude: Double, at date: Date) {
        let now = weather.at(0) ?? WeatherSlice.Hour()
        let moon = MoonPhase(at: date)
        self.init(
            source: weather.source, hour: Date(timeIntervalSince1970: TimeInterval(weather.hour)), latitude: latitude,
            longitude: longitude, moonPhase: moon.name, moonAgeDays: (moon.age * 100).rounded() / 100,
            moonIllumination: (moon.illumination * 1000).rounded() / 1000, tide: "none")
        temperatureC = now.temperature
        temperatureBand = now.temperature.map(Buckets.temperatureBand)
        pressureHpa = now.pressure
        pressureBand = now.pressure.map(Buckets.pressureBand)
        if let p = now.pressure, let earlier = weather.at(-3)?.pressure {
            let change = p - earlier
            pressureChange3h = (change * 10).rounded(.toNearestOrAwayFromZero) / 10
            pressureTrend = Buckets.pressureTrend(change: change)
        }
        windSpeedKmh = now.windSpeed
        windDirectionDeg = now.windDirection
        beaufort = now.windSpeed.map { Buckets.beaufort(kmh: $0) }
        windDirection = now.windDirection.map { Buckets.compass(degrees: $0) }
        cloudCoverPercent = now.cloudCover
        precipitationMm = now.precipitation
        weatherCode = now.weatherCode.map { Int($0) }
        sky = weatherCode.map { Buckets.sky(weatherCode: $0) }
        skyDescription = weatherCode.map { Buckets.skyDescription(weatherCode: $0) }
        isDay = now.isDay.map { $0 >= 0.5 }
        timeOfDay = Buckets.timeOfDay(
            before: weather.at(-1)?.isDay.map { $0 >= 0.5 }, at: isDay, after: weather.at(1)?.isDay.map { $0 >= 0.5 })
        switch tide {
        case .skipped:
            self.tide = "skipped"
            tideNote = "freshwater catch: no tide"
        case .failed(let reason):
            self.tide = "unavailable"
            tideNote = reason
        case .noaa(let noaa):
            self.tide = "measured"
            tideSource = "noaa"
            tideDatum = "MLLW"
            tideHeightM = noaa.reading.heightM
            tidePhase = noaa.reading.phase
            tideHeightBand = noaa.reading.heightBand
            tideStation = noaa.stationName
            tideStationId = noaa.stationId
            tideStationKm = (noaa.distanceKm * 10).rounded() / 10
            nextHigh = noaa.reading.nextHigh.map { Date(timeIntervalSince1970: TimeInterval($0)) }
            nextLow = noaa.reading.nextLow.map { Date(timeIntervalSince1970: TimeInterval($0)) }
        case .slice(let slice):
            if let refused = slice.refused {
                self.tide = "unavailable"
                tideNote = refused
            } else if let reading = Tide.reading(
                before: slice.before, at: slice.at, after: slice.after,
                range: slice.low.flatMap { low in slice.high.map { (low, $0) } })
            {
                self.tide = "measured"
                tideSource = "open-meteo"
                tideDatum = "MSL"
                tideHeightM = reading.heightM
                tidePhase = reading.phase
                tideHeightBand = reading.heightBand
            } else {
                self.tide = "none"
                tideNote = "no tide here (the marine model has no sea level for this place)"
            }
        }
    }
}
