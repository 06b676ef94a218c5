// The buckets analytics groups catches by: pure functions of the raw hourly values, each
// boundary written down in docs/weather-buckets.md. Lower bounds are inclusive, upper
// bounds exclusive, unless a table says otherwise.
import Foundation

public enum Buckets {
    // MARK: Temperature

    /// 5 °C bands, lower bound inclusive: 14.9 → "10 to 15 °C", 15.0 → "15 to 20 °C",
    /// -0.1 → "-5 to 0 °C".
    public static func temperatureBand(_ celsius: Double) -> String {
        let lower = Int((celsius / 5).rounded(.down)) * 5
        return "\(lower) to \(lower + 5) °C"
    }

    // MARK: Pressure

    /// Mean-sea-level pressure bands, lower bound inclusive.
    public static func pressureBand(_ hPa: Double) -> String {
        switch hPa {
        case ..<1000: "below 1000 hPa"
        case ..<1010: "1000 to 1010 hPa"
        case ..<1020: "1010 to 1020 hPa"
        case ..<1030: "1020 to 1030 hPa"
        default: "1030 hPa and above"
        }
    }

    /// The Met Office's 3-hour pressure tendency classes. The change is first rounded to
    /// 0.1 hPa (the table's resolution, half away from zero), which closes the table's
    /// gaps: 1.54 → 1.5 "slowly", 1.55 → 1.6 plain "rising"; 3.55 → 3.6 "quickly";
    /// exactly 6.0 is "quickly", 6.1 "very rapidly".
    public static func pressureTrend(change: Double) -> String {
        let tenths = (abs(change) * 10).rounded(.toNearestOrAwayFromZero)
        let direction = change > 0 ? "rising" : "falling"
        switch tenths {
        case ..<1: return "steady"
        case ...15: return "\(direction) slowly"
        case ...35: return direction
        case ...60: return "\(direction) quickly"
        default: return "\(direction) very rapidly"
        }
    }

    // MARK: Wind

    /// Lowest whole km/h of Beaufort forces 1…12 (WMO table): 0 is below 1 km/h.
    static let beaufortLowerBounds: [Double] = [1, 6, 12, 20, 29, 39, 50, 62, 75, 89, 103, 118]

    /// Beaufort force from a 10 m wind speed in km/h; the speed is rounded to a whole km/h
    /// first (the table is in whole km/h), so 5.4 → 5 → force 1 and 5.5 → 6 → force 2.
    public static func beaufort(kmh: Double) -> Int {
        let whole = max(0, kmh).rounded(.toNearestOrAwayFromZero)
        return beaufortLowerBounds.lastIndex(where: { whole >= $0 }).map { $0 + 1 } ?? 0
    }

    static let compassPoints = ["N", "NE", "E", "SE", "S", "SW", "W", "NW"]

    /// The 8-point compass direction the wind blows from; each point covers 45°, centred on
    /// it, lower edge inclusive: 337.5 ≤ d < 22.5 is N, 22.5 starts NE.
    public static func compass(degrees: Double) -> String {
        var normalized = degrees.truncatingRemainder(dividingBy: 360)
        if normalized < 0 { normalized += 360 }
        let index = Int(((normalized + 22.5) / 45).rounded(.down)) % 8
        return compassPoints[index]
    }

    // MARK: Sky

    /// The WMO weather-code group (docs/weather-buckets.md, "Sky"): what analytics buckets by.
    public static func sky(weatherCode code: Int) -> String {
        switch code {
        case 0: "clear"
        case 1...3: "cloudy"
        case 45, 48: "fog"
        case 51...57: "drizzle"
        case 61...67: "rain"
        case 71...77: "snow"
        case 80...82: "showers"
        case 85, 86: "snow showers"
        case 95...99: "thunderstorm"
        default: "unknown"
        }
    }

    /// A finer description for the summary line ("overcast" rather than "cloudy").
    public static func skyDescription(weatherCode code: Int) -> String {
        switch code {
        case 0: "clear sky"
        case 1: "mainly clear"
        case 2: "partly cloudy"
        case 3: "overcast"
        case 45, 48: "fog"
        case 51...57: "drizzle"
        case 61...67: "rain"
        case 71...77: "snow"
        case 80...82: "rain showers"
        case 85, 86: "snow showers"
        case 95...99: "thunderstorm"
        default: "weather code \(code)"
        }
    }

    // MARK: Time of day

    /// Dawn or dusk when the sun rises or sets within an hour of the catch hour (is_day
    /// changes between the hour before and the catch hour, or between the catch hour and
    /// the hour after); otherwise day or night from is_day at the catch hour. Nil when
    /// Open-Meteo gave no is_day for the catch hour.
    public static func timeOfDay(before: Bool?, at: Bool?, after: Bool?) -> String? {
        guard let at else { return nil }
        if let before, before != at { return at ? "dawn" : "dusk" }
        if let after, after != at { return after ? "dawn" : "dusk" }
        return at ? "day" : "night"
    }
}
