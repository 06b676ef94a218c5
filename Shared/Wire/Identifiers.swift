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
        precondition(initialized, "libsodium failed to initialize")
        var out = [UInt8](repeating: 0, count: Int(crypto_hash_sha256_BYTES))
        data.withUnsafeBytes { raw in
            _ = crypto_hash_sha256(&out, raw.bindMemory(to: UInt8.self).baseAddress, UInt64(data.count))
        }
        return Hex.encode(out)
    }

    public static func sha256Hex(_ text: String) -> String { sha256Hex(Data(text.utf8)) }

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
    /// The instant rounded to the millisecond, written exactly: Foundation's fractional
    /// formatting truncates (a time stored as …38.497 came out as …38.496), so the
    /// milliseconds are written here from the integer.
    public static func format(_ date: Date) -> String {
        let totalMs = Int64((date.timeIntervalSince1970 * 1000).rounded())
        var seconds = totalMs / 1000
        var ms = totalMs % 1000
        if ms < 0 {
            ms += 1000
            seconds -= 1
        }
        let whole = Date(timeIntervalSince1970: Double(seconds)).formatted(plain)
        guard ms > 0, whole.hasSuffix("Z") else { return whole }
        return String(whole.dropLast()) + "." + String(format: "%03d", Int(ms)) + "Z"
    }

    private static let plain = Date.ISO8601FormatStyle(timeZone: .gmt)
    private static let withFraction = Date.ISO8601FormatStyle(includingFractionalSeconds: true, timeZone: .gmt)

    /// Accepts `2026-05-01T14:45:00Z`, `2026-05-01T16:45:00+02:00`, and fractional seconds.
    public static func parse(_ text: String) -> Date? {
        if let d = try? plain.parse(text) { return d }
        if let d = try? withFraction.parse(text) { return d }
        return nil
    }
}
