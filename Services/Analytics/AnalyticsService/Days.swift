// Days, ISO weeks, months and years in the user's own time zone, and the `from`/`to` range
// every summary takes: `from` inclusive, `to` exclusive, each a date (`2026-05-01`, a day of
// the user's calendar) or a time with an offset (the local day it falls in). Times are
// stored in UTC; a day number is the local date's days since 1970-01-01 (Wire's LocalDays),
// so the labels below read it as if it were a UTC day.
import Foundation
import Wire

enum Day {
    static let msPerDay: Int64 = 86_400_000

    /// Days since 1970-01-01 (UTC) of a time in milliseconds.
    static func of(ms: Int64) -> Int64 {
        ms >= 0 ? ms / msPerDay : -((-ms + msPerDay - 1) / msPerDay)
    }

    static func of(_ date: Date) -> Int64 { of(ms: date.ms) }

    static var calendar: Calendar {
        var calendar = Calendar(identifier: .iso8601)
        calendar.timeZone = .gmt
        return calendar
    }

    static func components(_ day: Int64) -> DateComponents {
        calendar.dateComponents([.year, .month, .day, .weekOfYear, .yearForWeekOfYear], from: Date(ms: day * msPerDay))
    }

    /// `2026-05-10`
    static func text(_ day: Int64) -> String {
        let c = components(day)
        return String(format: "%04d-%02d-%02d", c.year!, c.month!, c.day!)
    }

    /// The group a day falls in, as its label: `2026-05-10`, `2026-W19`, `2026-05`, `2026`.
    static func label(_ day: Int64, by period: Period) -> String {
        let c = components(day)
        switch period {
        case .day: return String(format: "%04d-%02d-%02d", c.year!, c.month!, c.day!)
        case .week: return String(format: "%04d-W%02d", c.yearForWeekOfYear!, c.weekOfYear!)
        case .month: return String(format: "%04d-%02d", c.year!, c.month!)
        case .year: return String(format: "%04d", c.year!)
        }
    }

    /// Parses `2026-05-01` (midnight UTC) or an ISO-8601 time with an offset.
    static func parseTime(_ text: String) -> Date? {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        if parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
            let y = Int(parts[0]), let m = Int(parts[1]), let d = Int(parts[2])
        {
            var c = DateComponents()
            c.year = y
            c.month = m
            c.day = d
            guard let date = calendar.date(from: c), calendar.component(.day, from: date) == d else { return nil }
            return date
        }
        return WireTime.parse(text)
    }
}

enum Period: String, Sendable, Codable, CaseIterable {
    case day, week, month, year
}

/// A range of whole local days, `from` inclusive, `to` exclusive; either end may be open.
struct DayRange: Sendable, Equatable {
    var from: Int64?
    var to: Int64?
    var zone: TimeZone

    /// `from` starts on the day it falls in; `to` ends before the day it falls in when it is
    /// that day's first instant (a plain date is), else after it (so `to: 2026-06-01` stops
    /// at the end of May). Days are the user's, in `zone`.
    init(from: String?, to: String?, zone: TimeZone = .gmt) throws {
        self.zone = zone
        if let from {
            if let day = LocalDays.parse(date: from) {
                self.from = day
            } else {
                guard let time = WireTime.parse(from) else { throw Self.invalid("from", from) }
                self.from = LocalDays.day(ms: time.ms, in: zone)
            }
        }
        if let to {
            if let day = LocalDays.parse(date: to) {
                self.to = day
            } else {
                guard let time = WireTime.parse(to) else { throw Self.invalid("to", to) }
                let day = LocalDays.day(ms: time.ms, in: zone)
                self.to = day + (LocalDays.start(ofDay: day, in: zone) == time.ms ? 0 : 1)
            }
        }
        // Compared as days, and as instants when both are times: a `to` earlier in the same
        // day than `from` is not after it, though both fall in (and so cover) that day.
        func instant(_ text: String?) -> Date? {
            text.flatMap { LocalDays.parse(date: $0) == nil ? WireTime.parse($0) : nil }
        }
        let earlier = instant(to).map { to in instant(from).map { to <= $0 } ?? false } ?? false
        if let f = self.from, let t = self.to, t <= f || earlier {
            throw ServiceError.invalid("to", "must be after from (got from \(from!), to \(to!))")
        }
    }

    private static func invalid(_ field: String, _ text: String) -> ServiceError {
        ServiceError.invalid(field, "must be a date like 2026-05-01 or a time with an offset (got \"\(text)\")")
    }

    /// Bounds for SQL (`day >= ? AND day < ?`).
    var lower: Int64 { from ?? Int64.min }
    var upper: Int64 { to ?? Int64.max }

    /// The same bounds as instants (ms), for tables keyed by time.
    var lowerMs: Int64 { from.map { LocalDays.start(ofDay: $0, in: zone) } ?? Int64.min }
    var upperMs: Int64 { to.map { LocalDays.start(ofDay: $0, in: zone) } ?? Int64.max }
}
