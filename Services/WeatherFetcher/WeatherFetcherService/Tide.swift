// Tide phase and height from Open-Meteo Marine's hourly sea level (EXTERNAL_APIS.md): the
// catch hour compared with its neighbours gives rising/falling, a local extreme gives
// high/low; the height is placed within the range of the fetched day(s) in thirds.
import Foundation

public struct TideReading: Codable, Sendable, Equatable {
    /// Sea level above mean sea level at the catch hour, in metres.
    public var heightM: Double
    /// rising | falling | high | low | slack
    public var phase: String?
    /// low | mid | high: the lower, middle or upper third of the range seen that day.
    public var heightBand: String?
}

public enum Tide {
    /// - Parameters:
    ///   - before/at/after: sea level at the hour before, the catch hour and the hour after.
    ///   - range: lowest and highest sea level over the fetched day(s).
    /// - Returns: nil when there is no height at the catch hour.
    public static func reading(before: Double?, at: Double?, after: Double?, range: (Double, Double)?) -> TideReading? {
        guard let at else { return nil }
        return TideReading(heightM: at, phase: phase(before: before, at: at, after: after), heightBand: band(at, range: range))
    }

    /// High when the catch hour is at least as high as both neighbours and higher than one;
    /// low likewise; slack when all three are equal; otherwise the sign of the change across
    /// the catch hour (after − before), or of the one step known when a neighbour is missing.
    public static func phase(before: Double?, at: Double, after: Double?) -> String? {
        switch (before, after) {
        case (let b?, let a?):
            if at == b && at == a { return "slack" }
            if at >= b && at >= a { return "high" }
            if at <= b && at <= a { return "low" }
            return a > b ? "rising" : "falling"
        case (let b?, nil):
            return at > b ? "rising" : at < b ? "falling" : "slack"
        case (nil, let a?):
            return a > at ? "rising" : a < at ? "falling" : "slack"
        case (nil, nil):
            return nil
        }
    }

    /// Thirds of the day's range; nil when the range is empty (a flat series).
    public static func band(_ height: Double, range: (Double, Double)?) -> String? {
        guard let (low, high) = range, high > low else { return nil }
        let position = (height - low) / (high - low)
        switch position {
        case ..<(1.0 / 3): return "low"
        case ..<(2.0 / 3): return "mid"
        default: return "high"
        }
    }
}
