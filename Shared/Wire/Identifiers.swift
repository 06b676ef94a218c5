// Ids, times and hashes shared by every service and the gateway.
import CSodium
import Foundation
import Synchronization

/// Ids are UUIDv7: 48 bits of Unix milliseconds, then a 12-bit counter, then randomness, so
/// they sort by creation. Within one process they are strictly increasing even when many are
/// made in the same millisecond (RFC 9562 §6.2, method 1: the counter lives in `rand_a`).
public enum ID {
    private static let last = Mutex<(ms: UInt64, counter: UInt16)>((0, 0))

    public static func make(at date: Date = Date()) -> String {
        var bytes = [UInt8](repeating: 0, count: 16)
        randomBytes(&bytes)
        let wall = UInt64(max(0, date.timeIntervalSince1970 * 1000))
        let (ms, counter) = last.withLock { state -> (UInt64, UInt16) in
            if wall > state.ms {
                // A fresh millisecond: start the counter at a random value in the lower half,
                // leaving room to count up.
                state = (wall, UInt16(bytes[6] & 0x07) << 8 | UInt16(bytes[7]))
            } else if state.counter < 0x0FFF {
                state.counter += 1
            } else {
                state = (state.ms + 1, 0)  // counter exhausted: borrow the next millisecond
            }
            return state
        }
        for i in 0..<6 { bytes[i] = UInt8((ms >> (8 * (5 - UInt64(i)))) & 0xFF) }
        bytes[6] = 0x70 | UInt8(counter >> 8)  // version 7 and the counter's high bits
        bytes[7] = UInt8(counter & 0xFF)
        bytes[8] = (bytes[8] & 0x3F) | 0x80  // RFC 4122 variant
        return Hex.uuid(bytes)
    }

    /// True for the canonical lowercase 8-4-4-4-12 hex form.
    public static func isValid(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard bytes.count == 36 else { return false }
        for (i, b) in bytes.enumerated() {
            if [8, 13, 18, 23].contains(i) {
                if b != UInt8(ascii: "-") { return false }
            } else if !((b >= 48 && b <= 57) || (b >= 97 && b <= 102)) {
                return false
            }
        }
        return true
    }
}

public enum Crypto {
    static let initialized: Bool = sodium_init() >= 0

    /// Cryptographically secure random bytes (libsodium).
    public static func random(count: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        randomBytes(&bytes)
        return bytes
    }

    /// SHA-256 as lowercase hex.
    public static func sha256Hex(_ data: Data) -> String {
        data.withUnsafeBytes { sha256Hex(of: $0.bindMemory(to: UInt8.self)) }
    }

    /// SHA-256 of the text's UTF-8 bytes, as lowercase hex. Read in place: `Data(text.utf8)`
    /// asks the runtime whether a UTF8View is ContiguousBytes, a scan of every conformance
    /// in the binary on its first use in a process (a one-shot `logbook` command's).
    public static func sha256Hex(_ text: String) -> String {
        var text = text
        return text.withUTF8 { sha256Hex(of: $0) }
    }

    private static func sha256Hex(of bytes: UnsafeBufferPointer<UInt8>) -> String {
        precondition(initialized, "libsodium failed to initialize")
        var out = [UInt8](repeating: 0, count: Int(crypto_hash_sha256_BYTES))
        _ = crypto_hash_sha256(&out, bytes.baseAddress, UInt64(bytes.count))
        return Hex.encode(out)
    }

    /// URL-safe base64 without padding.
    public static func base64URL(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}

private func randomBytes(_ bytes: inout [UInt8]) {
    precondition(Crypto.initialized, "libsodium failed to initialize")
    let count = bytes.count
    bytes.withUnsafeMutableBytes { randombytes_buf($0.baseAddress!, count) }
}

/// Times on the wire: ISO-8601 with an offset; written in UTC with milliseconds when needed.
extension Date {
    /// Milliseconds since 1970 in UTC, rounded: how every service stores a time.
    public var ms: Int64 { Int64((timeIntervalSince1970 * 1000).rounded()) }
    public init(ms: Int64) { self.init(timeIntervalSince1970: Double(ms) / 1000) }
}

public enum WireTime {
    /// The instant rounded to the millisecond, in UTC: `2026-05-01T14:45:00Z`, or
    /// `2026-05-01T14:45:00.250Z` when the milliseconds are not zero. Written from integers
    /// (days to a civil date): every record, reply and event carries a few of these, and
    /// Foundation's ISO 8601 style goes through its calendar for each one. Years before 1583
    /// (where Foundation's calendar is Julian, not proleptic Gregorian) and after 9999 are
    /// left to that style, so every text is the one it writes.
    public static func format(_ date: Date) -> String {
        let totalMs = Int64((date.timeIntervalSince1970 * 1000).rounded())
        var seconds = totalMs / 1000
        var ms = totalMs % 1000
        if ms < 0 {
            ms += 1000
            seconds -= 1
        }
        var days = seconds / 86_400
        var secondOfDay = seconds % 86_400
        if secondOfDay < 0 {
            secondOfDay += 86_400
            days -= 1
        }
        let (year, month, day) = civil(days: days)
        guard (1583...9999).contains(year) else { return foundationFormat(seconds: seconds, ms: ms) }
        var bytes = [UInt8]()
        bytes.reserveCapacity(24)
        func digits(_ value: Int64, _ count: Int) {
            var divisor: Int64 = 1
            for _ in 1..<count { divisor *= 10 }
            var rest = value
            while divisor > 0 {
                bytes.append(UInt8(ascii: "0") + UInt8(rest / divisor))
                rest %= divisor
                divisor /= 10
            }
        }
        digits(year, 4)
        bytes.append(UInt8(ascii: "-"))
        digits(month, 2)
        bytes.append(UInt8(ascii: "-"))
        digits(day, 2)
        bytes.append(UInt8(ascii: "T"))
        digits(secondOfDay / 3600, 2)
        bytes.append(UInt8(ascii: ":"))
        digits(secondOfDay / 60 % 60, 2)
        bytes.append(UInt8(ascii: ":"))
        digits(secondOfDay % 60, 2)
        if ms > 0 {
            bytes.append(UInt8(ascii: "."))
            digits(ms, 3)
        }
        bytes.append(UInt8(ascii: "Z"))
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The proleptic Gregorian date of a day counted from 1970-01-01 (day 0): Howard
    /// Hinnant's civil-calendar algorithm, no Calendar needed.
    public static func civil(days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    /// Days from 1970-01-01 to a proleptic Gregorian date (the inverse of `civil`).
    public static func days(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    private static func foundationFormat(seconds: Int64, ms: Int64) -> String {
        let whole = Date(timeIntervalSince1970: Double(seconds)).formatted(plain)
        guard ms > 0, whole.hasSuffix("Z") else { return whole }
        let padded = String(ms + 1000).dropFirst()
        return String(whole.dropLast()) + "." + padded + "Z"
    }

    private static let plain = Date.ISO8601FormatStyle(timeZone: .gmt)
    private static let withFraction = Date.ISO8601FormatStyle(includingFractionalSeconds: true, timeZone: .gmt)

    /// Accepts `2026-05-01T14:45:00Z`, `2026-05-01T16:45:00+02:00`, and fractional seconds.
    /// The forms this system writes (whole seconds or milliseconds, `Z` or `±HH:MM`) are read
    /// from their digits; anything else goes to Foundation's ISO 8601 parser.
    public static func parse(_ text: String) -> Date? {
        if let fast = parseCommon(text) { return fast }
        if let d = try? plain.parse(text) { return d }
        if let d = try? withFraction.parse(text) { return d }
        return nil
    }

    /// `YYYY-MM-DDTHH:MM:SS[.mmm](Z|±HH:MM)` from 1583 on, with every field in range; nil
    /// for anything else (left to Foundation).
    static func parseCommon(_ text: String) -> Date? {
        text.utf8.withContiguousStorageIfAvailable { b -> Date? in
            let n = b.count
            guard n == 20 || n == 24 || n == 25 || n == 29 else { return nil }
            func number(_ at: Int, _ count: Int) -> Int64? {
                var value: Int64 = 0
                for i in at..<(at + count) {
                    let d = b[i] &- UInt8(ascii: "0")
                    guard d < 10 else { return nil }
                    value = value * 10 + Int64(d)
                }
                return value
            }
            guard b[4] == UInt8(ascii: "-"), b[7] == UInt8(ascii: "-"), b[10] == UInt8(ascii: "T"),
                b[13] == UInt8(ascii: ":"), b[16] == UInt8(ascii: ":"),
                let year = number(0, 4), let month = number(5, 2), let day = number(8, 2),
                let hour = number(11, 2), let minute = number(14, 2), let second = number(17, 2),
                year >= 1583, (1...12).contains(month), day >= 1, day <= daysIn(month: month, year: year),
                hour < 24, minute < 60, second < 60
            else { return nil }
            var at = 19
            var ms: Int64 = 0
            if b[at] == UInt8(ascii: ".") {
                // three digits, and a zone after them within the text
                guard at + 4 < n, let fraction = number(at + 1, 3) else { return nil }
                ms = fraction
                at += 4
            }
            var offsetSeconds: Int64 = 0
            switch b[at] {
            case UInt8(ascii: "Z"):
                guard at + 1 == n else { return nil }
            case UInt8(ascii: "+"), UInt8(ascii: "-"):
                guard at + 6 == n, b[at + 3] == UInt8(ascii: ":"), let h = number(at + 1, 2), let m = number(at + 4, 2),
                    h < 24, m < 60
                else { return nil }
                offsetSeconds = (h * 3600 + m * 60) * (b[at] == UInt8(ascii: "+") ? 1 : -1)
            default:
                return nil
            }
            let seconds = days(year: year, month: month, day: day) * 86_400 + hour * 3600 + minute * 60 + second
                - offsetSeconds
            return Date(ms: seconds * 1000 + ms)
        } ?? nil
    }

    private static func daysIn(month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }
}
