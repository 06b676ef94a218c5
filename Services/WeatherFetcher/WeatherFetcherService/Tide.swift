// Tide phase and height from Open-Meteo Marine's hourly sea level (docs/external-apis.md): the
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

    /// Thirds of the day's range; nil when the range is empty (a flat series). Worked out
    /// in whole millimetres (sea levels come in centimetres, NOAA heights in millimetres), so
    /// a height exactly a third of the way up is `mid`, as the docs say: in binary fractions
    /// (−0.2 − −0.3) / 0.3 is 0.3333…26, below a third.
    public static func band(_ height: Double, range: (Double, Double)?) -> String? {
        guard let (low, high) = range, let h = millimetres(height), let l = millimetres(low),
            let u = millimetres(high), u > l
        else { return nil }
        // (h − l) / (u − l) against 1/3 and 2/3, without dividing
        let above = 3 * (h - l)
        if above < u - l { return "low" }
        if above < 2 * (u - l) { return "mid" }
        return "high"
    }

    /// Whole millimetres of `metres`; nil past what a sea level could be (readings are
    /// capped at 10⁹, so no product above overflows).
    static func millimetres(_ metres: Double) -> Int64? {
        guard metres.isFinite, abs(metres) <= 1e9 else { return nil }
        return Int64((metres * 1000).rounded())
    }
}

/// The tide at a moment from NOAA's predicted highs and lows around it.
struct HiloReading: Sendable, Equatable {
    /// Metres above MLLW, 3 decimals.
    var heightM: Double
    /// rising | falling | high | low | slack
    var phase: String
    /// low | mid | high: the third of the range between the surrounding low and high.
    var heightBand: String?
    var nextHigh: Int64?
    var nextLow: Int64?
}

extension Tide {
    /// Within this many seconds of a predicted high or low the phase is `high` or `low`.
    static let extremeWindow: Int64 = 30 * 60

    /// With the predicted extremes e0 (at or before `time`) and e1 (after it):
    /// - phase: `high`/`low` within 30 minutes (inclusive) of the nearer of e0, e1 when it
    ///   is a high/low; otherwise `rising` when e1 is higher than e0, `falling` when lower,
    ///   `slack` when equal;
    /// - height: cosine interpolation, h = h0 + (h1 − h0) · (1 − cos(π·f)) / 2 with
    ///   f = (time − t0) / (t1 − t0): a half cosine from one extreme to the next, flat at
    ///   both ends as the tide is;
    /// - band: thirds of the e0…e1 range, as `band(_:range:)`.
    /// - Returns: nil when `time` is not between two predictions.
    static func hilo(_ extremes: [TideExtreme], at time: Int64) -> HiloReading? {
        guard let nextIndex = extremes.firstIndex(where: { $0.time > time }), nextIndex > 0 else { return nil }
        let e0 = extremes[nextIndex - 1]
        let e1 = extremes[nextIndex]
        let span = Double(e1.time - e0.time)
        let f = span > 0 ? Double(time - e0.time) / span : 0
        let height = e0.heightM + (e1.heightM - e0.heightM) * (1 - cos(Double.pi * f)) / 2
        let nearer = time - e0.time <= e1.time - time ? e0 : e1
        let phase: String
        if abs(nearer.time - time) <= extremeWindow {
            phase = nearer.high ? "high" : "low"
        } else if e1.heightM != e0.heightM {
            phase = e1.heightM > e0.heightM ? "rising" : "falling"
        } else {
            phase = "slack"
        }
        let later = extremes[nextIndex...]
        return HiloReading(
            heightM: (height * 1000).rounded() / 1000, phase: phase,
            heightBand: band(height, range: (min(e0.heightM, e1.heightM), max(e0.heightM, e1.heightM))),
            nextHigh: later.first(where: \.high)?.time, nextLow: later.first(where: { !$0.high })?.time)
    }
}
