// The pure math behind the buckets, at their boundaries (docs/weather-buckets.md).
import Contracts
import Foundation
import Testing
import Wire

@testable import WeatherFetcherService

@Suite struct BucketTests {
    @Test(arguments: [
        (0.0, "steady"), (0.04, "steady"), (-0.04, "steady"), (0.1, "rising slowly"), (-0.1, "falling slowly"),
        (1.5, "rising slowly"), (1.54, "rising slowly"), (1.56, "rising"), (1.6, "rising"), (-1.6, "falling"),
        (3.5, "rising"), (3.6, "rising quickly"), (-3.6, "falling quickly"), (6.0, "rising quickly"),
        (6.04, "rising quickly"), (6.1, "rising very rapidly"), (-7.0, "falling very rapidly"),
    ])
    func pressureTrendClasses(change: Double, expected: String) {
        #expect(Buckets.pressureTrend(change: change) == expected)
    }

    @Test(arguments: [
        (0.0, 0), (0.4, 0), (0.5, 1), (5.4, 1), (5.5, 2), (11.4, 2), (11.5, 3), (19.0, 3), (20.0, 4), (28.0, 4),
        (29.0, 5), (38.0, 5), (39.0, 6), (49.0, 6), (50.0, 7), (61.0, 7), (62.0, 8), (74.0, 8), (75.0, 9), (88.0, 9),
        (89.0, 10), (102.0, 10), (103.0, 11), (117.0, 11), (118.0, 12), (250.0, 12), (-3.0, 0),
    ])
    func beaufortBoundaries(kmh: Double, force: Int) {
        #expect(Buckets.beaufort(kmh: kmh) == force)
    }

    @Test func wmoGroups() {
        let groups: [(ClosedRange<Int>, String)] = [
            (0...0, "clear"), (1...3, "cloudy"), (51...57, "drizzle"), (61...67, "rain"), (71...77, "snow"),
            (80...82, "showers"), (85...86, "snow showers"), (95...99, "thunderstorm"),
        ]
        for (codes, name) in groups {
            for code in codes { #expect(Buckets.sky(weatherCode: code) == name, "code \(code)") }
        }
        #expect(Buckets.sky(weatherCode: 45) == "fog")
        #expect(Buckets.sky(weatherCode: 48) == "fog")
        for code in [4, 44, 50, 58, 70, 83, 94, 100] { #expect(Buckets.sky(weatherCode: code) == "unknown") }
        #expect(Buckets.skyDescription(weatherCode: 3) == "overcast")
    }

    @Test(arguments: [
        (0.0, "N"), (22.4, "N"), (22.5, "NE"), (45.0, "NE"), (67.5, "E"), (90.0, "E"), (135.0, "SE"), (180.0, "S"),
        (225.0, "SW"), (270.0, "W"), (315.0, "NW"), (337.4, "NW"), (337.5, "N"), (359.9, "N"), (360.0, "N"),
        (-45.0, "NW"), (810.0, "E"),
    ])
    func compassPoints(degrees: Double, point: String) {
        #expect(Buckets.compass(degrees: degrees) == point)
    }

    @Test func temperatureAndPressureBands() {
        #expect(Buckets.temperatureBand(14.9) == "10 to 15 °C")
        #expect(Buckets.temperatureBand(15) == "15 to 20 °C")
        #expect(Buckets.temperatureBand(0) == "0 to 5 °C")
        #expect(Buckets.temperatureBand(-0.1) == "-5 to 0 °C")
        #expect(Buckets.temperatureBand(-12) == "-15 to -10 °C")
        #expect(Buckets.pressureBand(999.9) == "below 1000 hPa")
        #expect(Buckets.pressureBand(1000) == "1000 to 1010 hPa")
        #expect(Buckets.pressureBand(1009.9) == "1000 to 1010 hPa")
        #expect(Buckets.pressureBand(1010) == "1010 to 1020 hPa")
        #expect(Buckets.pressureBand(1029.9) == "1020 to 1030 hPa")
        #expect(Buckets.pressureBand(1030) == "1030 hPa and above")
    }

    @Test func timeOfDayFromIsDayTransitions() {
        #expect(Buckets.timeOfDay(before: false, at: true, after: true) == "dawn")
        #expect(Buckets.timeOfDay(before: false, at: false, after: true) == "dawn")
        #expect(Buckets.timeOfDay(before: true, at: false, after: false) == "dusk")
        #expect(Buckets.timeOfDay(before: true, at: true, after: false) == "dusk")
        #expect(Buckets.timeOfDay(before: true, at: true, after: true) == "day")
        #expect(Buckets.timeOfDay(before: false, at: false, after: false) == "night")
        #expect(Buckets.timeOfDay(before: nil, at: true, after: nil) == "day")
        #expect(Buckets.timeOfDay(before: true, at: nil, after: true) == nil)
    }

    @Test func moonPhaseOnKnownDates() throws {
        let newMoon = MoonPhase(at: try #require(WireTime.parse("2024-04-08T18:21:00Z")))
        #expect(newMoon.name == "new moon")
        #expect(newMoon.age < 0.6 || newMoon.age > MoonPhase.synodicMonth - 0.6, "age \(newMoon.age)")
        #expect(newMoon.illumination < 0.01)

        let fullMoon = MoonPhase(at: try #require(WireTime.parse("2024-04-23T23:49:00Z")))
        #expect(fullMoon.name == "full moon")
        #expect(abs(fullMoon.age - MoonPhase.synodicMonth / 2) < 0.6, "age \(fullMoon.age)")
        #expect(fullMoon.illumination > 0.99)

        #expect(MoonPhase(at: try #require(WireTime.parse("2024-04-15T19:13:00Z"))).name == "first quarter")
        #expect(MoonPhase(at: try #require(WireTime.parse("2024-05-01T11:27:00Z"))).name == "last quarter")
        #expect(MoonPhase(at: try #require(WireTime.parse("2024-04-11T12:00:00Z"))).name == "waxing crescent")
        #expect(MoonPhase(at: try #require(WireTime.parse("2024-04-27T12:00:00Z"))).name == "waning gibbous")
    }

    /// New and full moons tabulated by the U.S. Naval Observatory (Astronomical Applications
    /// Department, "Phases of the Moon", to the minute, UTC); these are the syzygies of
    /// well-known eclipses, so the dates are easy to check in any almanac.
    static let tabulatedPhases: [(String, String)] = [
        ("new moon", "2017-08-21T18:30:00Z"), ("full moon", "2018-07-27T20:20:00Z"),
        ("full moon", "2019-01-21T05:16:00Z"), ("new moon", "2019-07-02T19:16:00Z"),
        ("new moon", "2020-12-14T16:17:00Z"), ("full moon", "2021-05-26T11:14:00Z"),
        ("full moon", "2022-11-08T11:02:00Z"), ("new moon", "2023-04-20T04:12:00Z"),
        ("new moon", "2023-10-14T17:55:00Z"), ("new moon", "2024-04-08T18:21:00Z"),
        ("full moon", "2024-04-23T23:49:00Z"), ("new moon", "2024-10-02T18:49:00Z"),
        ("full moon", "2025-03-14T06:55:00Z"), ("full moon", "2025-09-07T18:09:00Z"),
        ("new moon", "2026-02-17T12:01:00Z"), ("full moon", "2026-03-03T11:38:00Z"),
        ("new moon", "2026-08-12T17:37:00Z"), ("full moon", "2026-08-28T04:18:00Z"),
    ]

    @Test func phaseTimesWithin15MinutesOfTheTables() throws {
        for (phase, text) in Self.tabulatedPhases {
            let date = try #require(WireTime.parse(text))
            let jd = MoonPhase.julianDay(date)
            // the lunation: k whole for a new moon, k + 0.5 for a full moon
            let k = ((jd - 2451550.09766) / MoonPhase.synodicMonth * 2).rounded() / 2
            #expect((k - k.rounded(.down) == 0.5) == (phase == "full moon"), "\(text)")
            let minutes = (MoonPhase.phaseTime(k) - jd) * 1440
            #expect(abs(minutes) <= 15, "\(phase) \(text): off by \(minutes) min")
            // the age and the name at the tabulated minute, and an hour either side
            let moon = MoonPhase(at: date)
            #expect(moon.name == phase, "\(text)")
            if phase == "new moon" {
                // just after the true new moon (age ≈ 0) or just before it (the end of a lunation)
                let untilNext = MoonPhase.phaseTime(k) - jd
                #expect(moon.age < 15.0 / 1440 || (untilNext > 0 && untilNext < 15.0 / 1440), "\(text): age \(moon.age)")
                #expect(moon.illumination < 0.002, "\(text)")
            } else {
                #expect(moon.illumination > 0.99, "\(text)")
            }
            let after = MoonPhase(at: date.addingTimeInterval(3600))
            if phase == "new moon" { #expect(abs(after.age - 1.0 / 24) < 15.0 / 1440, "\(text): age \(after.age)") }
        }
    }

    @Test func meeusWorkedExamples() {
        // Example 49.a: the new moon of 1977 February, k = −283: JDE 2443192.65118 (TD)
        let jde = MoonPhase.phaseTime(-283) + MoonPhase.deltaT(year: 2000 - 283 / 12.3685) / 86400
        #expect(abs(jde - 2443192.65118) < 0.00005, "\(jde)")
        // Example 48.a: 1992 April 12, 0h TD: illuminated fraction 0.6786 (formula 48.4 is
        // the low-precision one, good to about 0.0014 here)
        #expect(abs(MoonPhase.illuminatedFraction(julianDay: 2448724.5) - 0.6786) < 0.003)
    }

    @Test func tidePhaseFromAKnownSeries() {
        // A semidiurnal tide sampled hourly: high near hour 3, low near hour 9.
        let series = (0..<13).map { 1.2 * cos(2 * Double.pi * (Double($0) - 3) / 12.42) }
        func phase(_ i: Int) -> String? { Tide.phase(before: series[i - 1], at: series[i], after: series[i + 1]) }
        #expect(phase(1) == "rising")
        #expect(phase(3) == "high")
        #expect(phase(5) == "falling")
        #expect(phase(9) == "low")
        #expect(phase(11) == "rising")
        #expect(Tide.phase(before: 0.5, at: 0.5, after: 0.5) == "slack")
        #expect(Tide.phase(before: nil, at: 0.2, after: 0.4) == "rising")
        #expect(Tide.phase(before: 0.4, at: 0.2, after: nil) == "falling")
        #expect(Tide.phase(before: nil, at: 0.2, after: nil) == nil)

        let range = (series.min()!, series.max()!)
        #expect(Tide.band(series[3], range: range) == "high")
        #expect(Tide.band(series[9], range: range) == "low")
        #expect(Tide.band(0.0, range: range) == "mid")
        #expect(Tide.band(0.3, range: (0.3, 0.3)) == nil)
        // Exactly on a third is the band above (docs/weather-buckets.md), however the
        // centimetres fall in binary: every low, range and height to the centimetre.
        #expect(Tide.band(-0.2, range: (-0.3, 0.0)) == "mid")
        #expect(Tide.band(0.3, range: (0.1, 0.4)) == "high")
        for lowCm in -150...(-120) {
            for spanCm in stride(from: 3, through: 300, by: 3) {
                let third = spanCm / 3
                func band(_ cm: Int) -> String? {
                    Tide.band(Double(cm) / 100, range: (Double(lowCm) / 100, Double(lowCm + spanCm) / 100))
                }
                #expect(band(lowCm + third - 1) == "low")
                #expect(band(lowCm + third) == "mid", "low \(lowCm) cm, span \(spanCm) cm")
                #expect(band(lowCm + 2 * third - 1) == "mid")
                #expect(band(lowCm + 2 * third) == "high", "low \(lowCm) cm, span \(spanCm) cm")
            }
        }
        #expect(Tide.reading(before: nil, at: nil, after: 1, range: range) == nil)
    }

    @Test func summaryLine() {
        let weather = WeatherSlice(
            source: "forecast", hour: 0,
            hours: [
                .init(temperature: 13, pressure: 1015.3, isDay: 1), .init(isDay: 1), .init(isDay: 1),
                .init(
                    temperature: 14.2, pressure: 1016.1, windSpeed: 15, windDirection: 225, cloudCover: 100,
                    precipitation: 0, weatherCode: 3, isDay: 1),
                .init(isDay: 1),
            ])
        let conditions = Conditions(
            weather: weather, tide: .slice(TideSlice(before: 0.1, at: 0.3, after: 0.5, low: -1, high: 1)),
            latitude: 41.52, longitude: -70.67, at: Date(timeIntervalSince1970: 0))
        #expect(conditions.summary == "14°C, overcast, wind 3 Bft SW, pressure 1016 hPa rising slowly, rising tide")
        #expect(conditions.pressureChange3h == 0.8)
        #expect(conditions.tide == "measured")
        #expect(conditions.tideHeightBand == "mid")
        #expect(conditions.timeOfDay == "day")
        #expect(conditions.sky == "cloudy")
    }
}

@Suite struct NearestHourTests {
    /// docs/weather-buckets.md: the nearest UTC hour, 14:29 → 14:00 and 14:30 → 15:00, before
    /// 1970 as after (the archive goes back to 1940).
    @Test(arguments: [
        ("2024-05-20T14:29:59Z", "2024-05-20T14:00:00Z"), ("2024-05-20T14:30:00Z", "2024-05-20T15:00:00Z"),
        ("1950-06-01T14:29:59Z", "1950-06-01T14:00:00Z"), ("1950-06-01T14:30:00Z", "1950-06-01T15:00:00Z"),
        ("1969-12-31T23:30:00Z", "1970-01-01T00:00:00Z"), ("1969-12-31T23:29:00Z", "1969-12-31T23:00:00Z"),
        ("1940-01-01T00:30:00Z", "1940-01-01T01:00:00Z"),
    ])
    func halfAnHourGoesToTheLaterHour(at: String, hour: String) throws {
        let date = try #require(WireTime.parse(at))
        let expected = try #require(WireTime.parse(hour))
        #expect(Fetcher.nearestHour(date) * 3600 == Int64(expected.timeIntervalSince1970))
    }
}
