// The time tracker's money rule (docs/protocol.md: `records.networth` and the store's "Money
// rules"): tracked time is money at 1 hour = $1.00 (100 cents, so one cent per 36 seconds),
// the goal is 10,000 hours, and cents are whole — rounded down, never up, so net worth is
// never overstated. Progress toward the goal is an exact decimal. Records, analytics and the
// store compute cents, amounts and progress with these functions (through `TimeWorth`,
// Time.swift, for what they answer); the CLI uses `cents` and `earned` for the entries it
// shows and draws its progress bar from the `progress` it is answered.
import Foundation
import Wire

public enum TimeValue {
    public static let msPerHour: Int64 = 3_600_000
    public static let msPerCent: Int64 = msPerHour / 100
    public static let goalHours: Int64 = 10_000
    public static let goalMs: Int64 = goalHours * msPerHour

    /// Whole cents earned by `ms` of tracked time.
    public static func cents(_ ms: Int64) -> Int64 { ms / msPerCent }

    /// What one saved entry of `ms` adds to cash when the user's total tracked time is
    /// `totalAfterMs` with it: the floor of the new total less the floor of the old one, as
    /// the store's ledger credits it (so 18 s after 18 s earn a cent, 18 s alone nothing).
    public static func earned(_ ms: Int64, totalAfterMs: Int64) -> Int64 {
        cents(totalAfterMs) - cents(totalAfterMs - ms)
    }

    /// The share of the 10,000-hour goal `ms` reaches, 0…1 and beyond (not capped), to 4
    /// decimals (0.01 %, one hour), half away from zero.
    public static func progress(_ ms: Int64) -> Decimal {
        var exact = Decimal(ms) / Decimal(goalMs)
        var result = Decimal()
        NSDecimalRound(&result, &exact, 4, .plain)
        return result
    }

    /// `$1,234.56`
    public static func dollars(_ cents: Int64) -> String {
        let sign = cents < 0 ? "-" : ""
        let rest = cents.magnitude % 100
        return "\(sign)$\(Digits.grouped(String(cents.magnitude / 100))).\(rest < 10 ? "0" : "")\(rest)"
    }
}
