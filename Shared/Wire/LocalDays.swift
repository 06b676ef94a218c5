// A user's days: every day, week and month a service counts (expense summaries, worked
// hours, the quote of the day) is a calendar day in the user's own IANA time zone, which
// auth keeps per account (docs/protocol.md, "Time zones"). A day is numbered like a UTC
// day — days since 1970-01-01 of the local calendar date — so day arithmetic and labels
// stay plain integers, and only the edges (an instant's day, a day's first instant) look
// at the zone's rules, daylight saving time included.
import Foundation

public enum LocalDays {
    public static let msPerDay: Int64 = 86_400_000

    /// The zone for an IANA name (`Europe/Oslo`, `Asia/Tokyo`, `UTC`), nil for anything else
    /// (an abbreviation such as `CEST`, a made-up name, an over-long string).
    public static func zone(named name: String) -> TimeZone? {
        guard (1...64).contains(name.utf8.count),
            name.unicodeScalars.allSatisfy({
                ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0)
                    || "/_-+".unicodeScalars.contains($0)
            }),
            name == "UTC" || name == "GMT" || name.contains("/"),
            let zone = TimeZone(identifier: name)
        else { return nil }
        return zone
    }

    /// The zone's IANA name as people write it (Foundation calls UTC "GMT").
    public static func name(of zone: TimeZone) -> String {
        zone.identifier == "GMT" ? "UTC" : zone.identifier
    }

    /// The zone for a stored name; UTC when the name is unknown (never fails a read).
    public static func zone(or name: String?) -> TimeZone {
        name.flatMap { zone(named: $0) } ?? .gmt
    }

    static func floorDiv(_ a: Int64, _ b: Int64) -> Int64 { a >= 0 ? a / b : -((-a + b - 1) / b) }

    /// The local day (days since 1970-01-01 of the local date) of an instant in ms.
    public static func day(ms: Int64, in zone: TimeZone) -> Int64 {
        let offset = Int64(zone.secondsFromGMT(for: Date(timeIntervalSince1970: Double(floorDiv(ms, 1000))))) * 1000
        return floorDiv(ms + offset, msPerDay)
    }

    /// The first instant (ms) of local day `day`: local midnight, or the first time that
    /// exists when a daylight-saving jump skips midnight.
    public static func start(ofDay day: Int64, in zone: TimeZone) -> Int64 {
        let naive = day * msPerDay
        // the offset at the naive instant, then again at the corrected one (offsets change
        // at most twice a year, far more than a day apart)
        var guess = naive - Int64(zone.secondsFromGMT(for: Date(timeIntervalSince1970: Double(naive / 1000)))) * 1000
        guess = naive - Int64(zone.secondsFromGMT(for: Date(timeIntervalSince1970: Double(guess / 1000)))) * 1000
        // a skipped midnight: step forward to the first instant that belongs to `day`
        if self.day(ms: guess, in: zone) < day {
            var step = guess
            while self.day(ms: step, in: zone) < day { step += 15 * 60_000 }
            return step
        }
        // an earlier instant may still be in `day` (a repeated hour): walk back to the edge
        while self.day(ms: guess - 15 * 60_000, in: zone) == day { guess -= 15 * 60_000 }
        return guess
    }

    /// `2026-11-01` for a local day.
    public static func text(_ day: Int64) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = .gmt
        let c = calendar.dateComponents([.year, .month, .day], from: Date(timeIntervalSince1970: Double(day * 86_400)))
        return String(format: "%04d-%02d-%02d", c.year!, c.month!, c.day!)
    }

    /// The local day of a plain date `2026-11-01`, nil when it is not a real date.
    public static func parse(date text: String) -> Int64? {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
            let y = Int(parts[0]), let m = Int(parts[1]), let d = Int(parts[2])
        else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = .gmt
        var c = DateComponents()
        c.year = y
        c.month = m
        c.day = d
        guard let date = calendar.date(from: c), calendar.component(.day, from: date) == d,
            calendar.component(.month, from: date) == m
        else { return nil }
        return floorDiv(Int64(date.timeIntervalSince1970), 86_400)
    }
}
