// The pure formats the record commands print and read: CSV (RFC 4180), GeoJSON, dates typed
// by people, local times for tables, H:MM:SS durations and a text progress bar.
import Foundation
import Wire

public enum CSV {
    /// One field, quoted when it holds a comma, a quote, CR or LF (quotes doubled).
    public static func field(_ text: String) -> String {
        guard text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\r" || $0 == "\n" || $0 == "\r\n" }) else {
            return text
        }
        return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// A header row and the rows, each line ended by CRLF as RFC 4180 says.
    public static func document(_ headers: [String], _ rows: [[String]]) -> String {
        ([headers] + rows).map { $0.map(field).joined(separator: ",") + "\r\n" }.joined()
    }
}

public enum GeoJSON {
    /// A point feature: coordinates are [longitude, latitude], as GeoJSON (RFC 7946) orders them.
    public static func point(latitude: Double, longitude: Double, properties: [String: JSONValue]) -> JSONValue {
        [
            "type": "Feature",
            "geometry": ["type": "Point", "coordinates": [.number(.init(longitude)), .number(.init(latitude))]],
            "properties": .object(properties),
        ]
    }

    public static func collection(_ features: [JSONValue]) -> JSONValue {
        ["type": "FeatureCollection", "features": .array(features)]
    }
}

public enum TimeText {
    /// A duration typed by a person: "1h30m", "90m", "45s", "2h", "1h 5m 30s" or "H:MM".
    public static func duration(_ text: String, field: String) throws -> Int64 {
        let trimmed = text.trimmingCharacters(in: .whitespaces).lowercased()
        let refuse = ServiceError.invalid(field, "must be a duration like 1h30m, 90m, 45s or 1:30 (got \(text))")
        if trimmed.contains(":") {
            let parts = trimmed.split(separator: ":", omittingEmptySubsequences: false)
            // (hours capped as each number of the other form is: the product stays far from overflow)
            guard parts.count == 2, let hours = Int64(parts[0]), let minutes = Int64(parts[1]), parts[1].count == 2,
                (0...1_000_000).contains(hours), (0..<60).contains(minutes)
            else { throw refuse }
            return (hours * 60 + minutes) * 60_000
        }
        var total: Int64 = 0
        var number = ""
        var sawUnit = false
        for character in trimmed where character != " " {
            if character.isASCII, character.isNumber {
                number.append(character)
                continue
            }
            let unit: Int64
            switch character {
            case "h": unit = 3_600_000
            case "m": unit = 60_000
            case "s": unit = 1_000
            default: throw refuse
            }
            guard let value = Int64(number), value <= 1_000_000 else { throw refuse }
            let (sum, overflow) = total.addingReportingOverflow(value * unit)  // (a text of millions of parts)
            guard !overflow else { throw refuse }
            total = sum
            number = ""
            sawUnit = true
        }
        guard sawUnit, number.isEmpty, total > 0 else { throw refuse }
        return total
    }

    /// Reads a time typed by a person: ISO-8601 with an offset (`2026-05-01T14:45:00Z`), or a
    /// local `2026-05-01 14:45`, `2026-05-01T14:45`, `… 14:45:30`, or a plain `2026-05-01`
    /// (local midnight); `now`, `today` and `yesterday` too.
    public static func parse(_ text: String, field: String, timeZone: TimeZone = .current, now: Date = Date()) throws -> Date {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if let date = WireTime.parse(trimmed) { return date }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        switch trimmed.lowercased() {
        case "now": return now
        case "today": return calendar.startOfDay(for: now)
        case "yesterday": return calendar.date(byAdding: .day, value: -1, to: calendar.startOfDay(for: now))!
        default: break
        }
        for format in ["yyyy-MM-dd HH:mm", "yyyy-MM-dd'T'HH:mm", "yyyy-MM-dd HH:mm:ss", "yyyy-MM-dd'T'HH:mm:ss", "yyyy-MM-dd"] {
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.calendar = calendar
            formatter.timeZone = timeZone
            formatter.isLenient = false
            formatter.dateFormat = format
            if let date = formatter.date(from: trimmed), formatter.string(from: date) == trimmed { return date }
        }
        throw ServiceError.invalid(
            field, "must be a time like 2026-05-01T14:45:00Z, \"2026-05-01 14:45\" (local time) or 2026-05-01 (got \(text))")
    }

    /// True for a plain date (`2026-05-01`), which a range end reads as the whole day.
    /// Not one of the words that stand for a time relative to now (now, today, yesterday).
    public static func isAbsolute(_ text: String) -> Bool {
        !["now", "today", "yesterday"].contains(text.trimmingCharacters(in: .whitespaces).lowercased())
    }

    public static func isDateOnly(_ text: String) -> Bool {
        let t = text.trimmingCharacters(in: .whitespaces)
        return t.count == 10 && t.split(separator: "-").count == 3 || ["today", "yesterday"].contains(t.lowercased())
    }

    /// A wire time for a table, in local time: `2026-05-01 14:45`.
    public static func local(_ value: JSONValue?, timeZone: TimeZone? = nil, seconds: Bool = false) -> String {
        guard let text = value?.stringValue, let date = WireTime.parse(text) else { return Output.cell(value) }
        return local(date, timeZone: timeZone, seconds: seconds)
    }

    /// A time for a table, in local time: `2026-05-01 14:45`. Written from the zone's offset
    /// at that instant and the civil date (a list shows one per row, and a DateFormatter per
    /// cell cost more than the rest of the command); years before 1583 or after 9999 go to
    /// DateFormatter, which is what it writes for the others too (FormatsTests).
    /// With no `timeZone`, this machine's: its offset at that instant from the C library
    /// (`localtime_r`, the same TZ setting and zone files), which reads the zone without
    /// loading Foundation's time zones (ICU), a third of a millisecond of a one-shot `list`.
    public static func local(_ date: Date, timeZone: TimeZone? = nil, seconds: Bool = false) -> String {
        let since1970 = date.timeIntervalSince1970.rounded(.down)
        if since1970.magnitude < 1e12, let offset = timeZone.map({ $0.secondsFromGMT(for: date) }) ?? systemOffset(Int64(since1970)) {
            let local = Int64(since1970) + Int64(offset)
            var days = local / 86_400
            var second = local % 86_400
            if second < 0 {
                second += 86_400
                days -= 1
            }
            let (year, month, day) = WireTime.civil(days: days)
            if (1583...9999).contains(year) {
                func two(_ n: Int64) -> String { n < 10 ? "0\(n)" : "\(n)" }
                var text = "\(year)-\(two(month))-\(two(day)) \(two(second / 3600)):\(two(second / 60 % 60))"
                if seconds { text += ":" + two(second % 60) }
                return text
            }
        }
        return formatted(date, timeZone: timeZone ?? .current, seconds: seconds)
    }

    /// This machine's offset from UTC at `since1970`, in seconds; nil if the C library
    /// cannot say.
    static func systemOffset(_ since1970: Int64) -> Int? {
        var time = time_t(since1970)
        var parts = tm()
        guard localtime_r(&time, &parts) != nil else { return nil }
        return Int(parts.tm_gmtoff)
    }

    /// DateFormatter's text for `local` (the years it does not write itself).
    static func formatted(_ date: Date, timeZone: TimeZone, seconds: Bool) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = timeZone
        formatter.dateFormat = seconds ? "yyyy-MM-dd HH:mm:ss" : "yyyy-MM-dd HH:mm"
        return formatter.string(from: date)
    }

    /// Milliseconds as H:MM:SS (hours unbounded, seconds truncated): 3_723_000 → 1:02:03.
    public static func clock(milliseconds ms: Int64) -> String {
        let negative = ms < 0
        let s = ms.magnitude / 1000
        let text = "\(s / 3600):" + String(format: "%02d:%02d", Int(s % 3600 / 60), Int(s % 60))
        return negative ? "-" + text : text
    }

    /// The bar of a share of the goal as a service answers it (`TimeValue.progress`).
    public static func progress(share fraction: Decimal, width: Int = 20) -> String {
        progress(NSDecimalNumber(decimal: fraction).doubleValue, width: width)
    }

    /// A text bar toward a goal: `[###.................] 12.34%`.
    public static func progress(_ fraction: Double, width: Int = 20) -> String {
        let clamped = min(max(fraction.isFinite ? fraction : 0, 0), 1)
        let filled = Int((clamped * Double(width)).rounded(.down))
        let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
        return "[\(bar)] " + String(format: "%.2f%%", clamped * 100)
    }
}
