// Moon phase, computed offline from the published algorithms of Jean Meeus, *Astronomical
// Algorithms* (2nd ed., 1998): the true times of new moon, first quarter, full moon and
// last quarter from chapter 49 (the mean phase of lunation k plus the periodic terms of
// its tables and the fourteen planetary arguments), and the illuminated fraction of the
// disc from chapter 48 (formula 48.4, the phase angle from the Moon's mean elongation and
// anomalies of chapter 47). Times come out in Dynamical Time and are brought to UTC with
// ΔT. The chapter claims a few seconds' accuracy for the phases over the centuries the
// catches can come from; tests hold it to 15 minutes against tabulated times.
//
// The age is the time since the last true new moon. The name follows the principal phases
// themselves: within the first or last quarter of the interval between two of them it is
// the nearer one's name ("new moon", "first quarter", "full moon", "last quarter"),
// otherwise the crescent or gibbous between them.
import Foundation

public struct MoonPhase: Sendable, Equatable {
    /// The mean synodic month (days), for scales and defaults only: each lunation's real
    /// length (29.27 to 29.83 days) comes from the phase times.
    public static let synodicMonth = 29.530588861
    public static let names = [
        "new moon", "waxing crescent", "first quarter", "waxing gibbous",
        "full moon", "waning gibbous", "last quarter", "waning crescent",
    ]

    /// Days since the last new moon, 0 ..< the lunation's length.
    public var age: Double
    /// Lit fraction of the disc, 0…1.
    public var illumination: Double
    /// One of `names`.
    public var name: String

    public init(at date: Date) {
        let jd = Self.julianDay(date)
        // the principal phase (a quarter of a lunation: k in steps of 0.25) at or before jd
        var quarter = ((jd - 2451550.09766) / Self.synodicMonth * 4).rounded(.down)
        while Self.phaseTime(quarter / 4) > jd { quarter -= 1 }
        while Self.phaseTime((quarter + 1) / 4) <= jd { quarter += 1 }
        let start = Self.phaseTime(quarter / 4)
        let end = Self.phaseTime((quarter + 1) / 4)
        let principal = Int(quarter.truncatingRemainder(dividingBy: 4) + 4) % 4
        let fraction = (jd - start) / (end - start)
        let index = fraction < 0.25 ? 2 * principal : fraction >= 0.75 ? (2 * principal + 2) % 8 : 2 * principal + 1
        name = Self.names[index]
        let newMoonK = ((quarter - Double(principal)) / 4).rounded()
        age = jd - Self.phaseTime(newMoonK)
        illumination = Self.illuminatedFraction(julianDay: jd)
    }

    /// The Julian Day (UT) of a date.
    static func julianDay(_ date: Date) -> Double { date.timeIntervalSince1970 / 86400 + 2440587.5 }

    /// ΔT = TT − UT in seconds, from the polynomial fits Espenak and Meeus give for NASA's
    /// eclipse canon (1900–2150; outside it the nearest fit, close enough for a bucket).
    static func deltaT(year: Double) -> Double {
        switch year {
        case ..<1920:
            let t = year - 1900
            return -2.79 + 1.494119 * t - 0.0598939 * t * t + 0.0061966 * t * t * t - 0.000197 * t * t * t * t
        case ..<1941:
            let t = year - 1920
            return 21.20 + 0.84493 * t - 0.076100 * t * t + 0.0020936 * t * t * t
        case ..<1961:
            let t = year - 1950
            return 29.07 + 0.407 * t - t * t / 233 + t * t * t / 2547
        case ..<1986:
            let t = year - 1975
            return 45.45 + 1.067 * t - t * t / 260 - t * t * t / 718
        case ..<2005:
            let t = year - 2000
            return 63.86 + 0.3345 * t - 0.060374 * t * t + 0.0017275 * t * t * t + 0.000651814 * t * t * t * t
                + 0.00002373599 * t * t * t * t * t
        case ..<2050:
            let t = year - 2000
            return 62.92 + 0.32217 * t + 0.005589 * t * t
        default:
            let u = (year - 1820) / 100
            return -20 + 32 * u * u - 0.5628 * (2150 - year)
        }
    }

    /// Meeus ch. 49: the time (Julian Day, UT) of the phase of lunation `k`: a whole k is a
    /// new moon, k + 0.25 first quarter, k + 0.5 full moon, k + 0.75 last quarter (k = 0 is
    /// the new moon of 2000-01-06).
    static func phaseTime(_ k: Double) -> Double {
        let t = k / 1236.85
        let t2 = t * t
        let t3 = t2 * t
        let t4 = t3 * t
        var jde = 2451550.09766 + 29.530588861 * k + 0.00015437 * t2 - 0.000000150 * t3 + 0.00000000073 * t4
        let e = 1 - 0.002516 * t - 0.0000074 * t2
        let m = radians(2.5534 + 29.10535670 * k - 0.0000014 * t2 - 0.00000011 * t3)
        let mp = radians(201.5643 + 385.81693528 * k + 0.0107582 * t2 + 0.00001238 * t3 - 0.000000058 * t4)
        let f = radians(160.7108 + 390.67050284 * k - 0.0016118 * t2 - 0.00000227 * t3 + 0.000000011 * t4)
        let omega = radians(124.7746 - 1.56375588 * k + 0.0020672 * t2 + 0.00000215 * t3)

        let phase = k - k.rounded(.down)
        var correction: Double
        if phase < 0.125 || phase >= 0.875 || (phase >= 0.375 && phase < 0.625) {
            // new moon (table 49.A, left column) or full moon (right column)
            let full = phase >= 0.375 && phase < 0.625
            correction =
                (full ? -0.40614 : -0.40720) * sin(mp)
                + (full ? 0.17302 : 0.17241) * e * sin(m)
                + (full ? 0.01614 : 0.01608) * sin(2 * mp)
                + (full ? 0.01043 : 0.01039) * sin(2 * f)
                + (full ? 0.00734 : 0.00739) * e * sin(mp - m)
                + (full ? -0.00515 : -0.00514) * e * sin(mp + m)
                + (full ? 0.00209 : 0.00208) * e * e * sin(2 * m)
            correction +=
                -0.00111 * sin(mp - 2 * f)
                - 0.00057 * sin(mp + 2 * f)
                + 0.00056 * e * sin(2 * mp + m)
                - 0.00042 * sin(3 * mp)
                + 0.00042 * e * sin(m + 2 * f)
                + 0.00038 * e * sin(m - 2 * f)
                - 0.00024 * e * sin(2 * mp - m)
                - 0.00017 * sin(omega)
                - 0.00007 * sin(mp + 2 * m)
            correction +=
                0.00004 * sin(2 * mp - 2 * f)
                + 0.00004 * sin(3 * m)
                + 0.00003 * sin(mp + m - 2 * f)
                + 0.00003 * sin(2 * mp + 2 * f)
                - 0.00003 * sin(mp + m + 2 * f)
                + 0.00003 * sin(mp - m + 2 * f)
                - 0.00002 * sin(mp - m - 2 * f)
                - 0.00002 * sin(3 * mp + m)
                + 0.00002 * sin(4 * mp)
        } else {
            // first and last quarters (table 49.A, quarters), then ± W
            correction =
                -0.62801 * sin(mp)
                + 0.17172 * e * sin(m)
                - 0.01183 * e * sin(mp + m)
                + 0.00862 * sin(2 * mp)
                + 0.00804 * sin(2 * f)
                + 0.00454 * e * sin(mp - m)
                + 0.00204 * e * e * sin(2 * m)
            correction +=
                -0.00180 * sin(mp - 2 * f)
                - 0.00070 * sin(mp + 2 * f)
                - 0.00040 * sin(3 * mp)
                - 0.00034 * e * sin(2 * mp - m)
                + 0.00032 * e * sin(m + 2 * f)
                + 0.00032 * e * sin(m - 2 * f)
                - 0.00028 * e * e * sin(mp + 2 * m)
                + 0.00027 * e * sin(2 * mp + m)
            correction +=
                -0.00017 * sin(omega)
                - 0.00005 * sin(mp - m - 2 * f)
                + 0.00004 * sin(2 * mp + 2 * f)
                - 0.00004 * sin(mp + m + 2 * f)
                + 0.00004 * sin(mp - 2 * m)
                + 0.00003 * sin(mp + m - 2 * f)
                + 0.00003 * sin(3 * m)
                + 0.00002 * sin(2 * mp - 2 * f)
                + 0.00002 * sin(mp - m + 2 * f)
                - 0.00002 * sin(3 * mp + m)
            let w =
                0.00306 - 0.00038 * e * cos(m) + 0.00026 * cos(mp) - 0.00002 * cos(mp - m)
                + 0.00002 * cos(mp + m) + 0.00002 * cos(2 * f)
            correction += phase < 0.5 ? w : -w
        }
        jde += correction

        // the planetary arguments, the same for every phase
        let a: [(Double, Double, Double)] = [
            (0.000325, 299.77, 0.107408), (0.000165, 251.88, 0.016321), (0.000164, 251.83, 26.651886),
            (0.000126, 349.42, 36.412478), (0.000110, 84.66, 18.206239), (0.000062, 141.74, 53.303771),
            (0.000060, 207.14, 2.453732), (0.000056, 154.84, 7.306860), (0.000047, 34.52, 27.261239),
            (0.000042, 207.19, 0.121824), (0.000040, 291.34, 1.844379), (0.000037, 161.72, 24.198154),
            (0.000035, 239.56, 25.513099), (0.000023, 331.55, 3.592518),
        ]
        for (i, (coefficient, base, rate)) in a.enumerated() {
            let angle = base + rate * k - (i == 0 ? 0.009173 * t2 : 0)
            jde += coefficient * sin(radians(angle))
        }
        let year = 2000 + k / 12.3685
        return jde - deltaT(year: year) / 86400
    }

    /// Meeus ch. 48 (formula 48.4 with the arguments of ch. 47): the lit fraction of the disc.
    static func illuminatedFraction(julianDay jd: Double) -> Double {
        let t = (jd - 2451545) / 36525
        let t2 = t * t
        let t3 = t2 * t
        let t4 = t3 * t
        let d = radians(297.8501921 + 445267.1114034 * t - 0.0018819 * t2 + t3 / 545868 - t4 / 113065000)
        let m = radians(357.5291092 + 35999.0502909 * t - 0.0001536 * t2 + t3 / 24490000)
        let mp = radians(134.9633964 + 477198.8675055 * t + 0.0087414 * t2 + t3 / 69699 - t4 / 14712000)
        let i =
            180 - degrees(d) - 6.289 * sin(mp) + 2.100 * sin(m) - 1.274 * sin(2 * d - mp) - 0.658 * sin(2 * d)
            - 0.214 * sin(2 * mp) - 0.110 * sin(d)
        return (1 + cos(radians(i))) / 2
    }

    static func radians(_ degrees: Double) -> Double { degrees.truncatingRemainder(dividingBy: 360) * .pi / 180 }
    static func degrees(_ radians: Double) -> Double { radians * 180 / .pi }
}
