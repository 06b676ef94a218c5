// Moon phase, computed offline (EXTERNAL_APIS.md): days since the new moon of
// 2000-01-06 18:14 UTC (JD 2451550.1) modulo the mean synodic month. Accurate to about half
// a day, which is enough for a bucket that changes every 3.7 days.
import Foundation

public struct MoonPhase: Sendable, Equatable {
    public static let synodicMonth = 29.530588853
    public static let names = [
        "new moon", "waxing crescent", "first quarter", "waxing gibbous",
        "full moon", "waning gibbous", "last quarter", "waning crescent",
    ]

    /// Days since the last new moon, 0 ..< 29.53.
    public var age: Double
    /// Lit fraction of the disc, 0…1.
    public var illumination: Double
    /// One of `names`: the age rounded to the nearest eighth of the cycle.
    public var name: String

    public init(at date: Date) {
        let julianDay = date.timeIntervalSince1970 / 86400 + 2440587.5
        var age = (julianDay - 2451550.1).truncatingRemainder(dividingBy: Self.synodicMonth)
        if age < 0 { age += Self.synodicMonth }
        self.age = age
        illumination = (1 - cos(2 * Double.pi * age / Self.synodicMonth)) / 2
        let eighth = Int((age / Self.synodicMonth * 8).rounded(.toNearestOrAwayFromZero)) % 8
        name = Self.names[eighth]
    }
}
