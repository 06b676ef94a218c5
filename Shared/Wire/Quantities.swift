// Exact quantities: volumes, distances, weights and lengths with at most three decimals, held
// as an integer count of thousandths, stored as an SQLite INTEGER (`Milli` is
// DatabaseValueConvertible in Shared/Storage) and written out as the shortest exact decimal.
// In a request, the number is decoded by WireCoding's JSONDecoder as a `Decimal` and refused
// with more than three decimals. Where a body or an event travels as a `JSONValue` (the CLI's
// requests, the HTTP edge, a consumer's events), its numbers are their digits (JSONNumber), so
// a quantity never passes through floating point on any path.
import Foundation

/// A non-integral quantity with at most three decimals, held as thousandths: 12.345 is
/// `Milli(thousandths: 12345)`. Decoding a number with more decimals fails with
/// "must have at most 3 decimals (got 1.2345)", which the router answers as
/// `invalid_argument` naming the field.
public struct Milli: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    public var thousandths: Int64

    public init(thousandths: Int64) { self.thousandths = thousandths }

    /// Exact conversion; nil when `value` has more than three decimals or does not fit.
    public init?(exactly value: Decimal) {
        guard value.isFinite else { return nil }
        var scaled = value * 1000
        var rounded = Decimal()
        NSDecimalRound(&rounded, &scaled, 0, .plain)
        guard rounded == scaled, abs(rounded) <= Decimal(Int64.max / 2) else { return nil }
        thousandths = NSDecimalNumber(decimal: rounded).int64Value
    }

    /// `value` to the nearest thousandth (half away from zero); nil when it does not fit.
    public init?(rounding value: Decimal) {
        guard value.isFinite else { return nil }
        var scaled = value * 1000
        var rounded = Decimal()
        NSDecimalRound(&rounded, &scaled, 0, .plain)
        guard abs(rounded) <= Decimal(Int64.max / 2) else { return nil }
        thousandths = NSDecimalNumber(decimal: rounded).int64Value
    }

    /// The exact decimal value (12345 thousandths → 12.345).
    public var decimal: Decimal { Decimal(thousandths) / 1000 }

    /// Shortest exact text: `12.345`, `12.3`, `12`, `-0.5`.
    public var description: String {
        let sign = thousandths < 0 ? "-" : ""
        let magnitude = thousandths.magnitude
        let whole = magnitude / 1000
        var fraction = String(magnitude % 1000)
        if fraction == "0" { return "\(sign)\(whole)" }
        fraction = String(repeating: "0", count: 3 - fraction.count) + fraction
        while fraction.hasSuffix("0") { fraction.removeLast() }
        return "\(sign)\(whole).\(fraction)"
    }

    /// For people: thousands grouped with commas, `12,345.6`.
    public var grouped: String {
        let text = description
        let negative = text.hasPrefix("-")
        let unsigned = negative ? String(text.dropFirst()) : text
        let parts = unsigned.split(separator: ".", maxSplits: 1)
        let joined = Digits.grouped(parts[0]) + (parts.count > 1 ? "." + String(parts[1]) : "")
        return negative ? "-" + joined : joined
    }

    public static func < (lhs: Milli, rhs: Milli) -> Bool { lhs.thousandths < rhs.thousandths }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let value = try container.decode(Decimal.self)
        guard let milli = Milli(exactly: value) else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "must have at most 3 decimals (got \(value))")
        }
        self = milli
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(decimal)
    }
}
