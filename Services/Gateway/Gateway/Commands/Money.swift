// Money typed on the command line: a decimal string ("3.45") converted exactly to integer
// minor units with the currency's exponent (USD 2, JPY 0, KWD 3), by reading its digits —
// never through a Double. And back: minor units as text for people and CSV.
import Foundation
import Wire

public enum Money {
    /// ISO 4217 exponents that differ from 2, plus the common 2-decimal ones for clarity.
    static let exponents: [String: Int] = [
        "USD": 2, "EUR": 2, "GBP": 2, "CAD": 2, "AUD": 2, "NZD": 2, "CHF": 2, "CNY": 2, "HKD": 2,
        "SGD": 2, "INR": 2, "MXN": 2, "BRL": 2, "SEK": 2, "NOK": 2, "DKK": 2, "PLN": 2, "CZK": 2,
        "HUF": 2, "ZAR": 2, "TRY": 2, "ILS": 2, "THB": 2, "TWD": 2, "PHP": 2, "MYR": 2, "IDR": 2,
        "JPY": 0, "KRW": 0, "ISK": 0, "VND": 0, "CLP": 0, "PYG": 0, "UGX": 0, "XAF": 0, "XOF": 0,
        "KWD": 3, "BHD": 3, "OMR": 3, "JOD": 3, "TND": 3, "IQD": 3, "LYD": 3,
    ]

    /// The currency's number of decimals (2 for a currency not in the table).
    public static func exponent(_ currency: String) -> Int { exponents[currency.uppercased()] ?? 2 }

    /// The largest amount the CLI sends: JSON numbers stay exact integers below 2^53.
    static let maxMinor: Int64 = 9_000_000_000_000_000

    /// Parses "3.45", "3", "0.5", "1200.00" into minor units. Refuses signs, separators,
    /// exponents and more decimals than the currency has (unless they are zeros).
    public static func parse(_ text: String, currency: String = "USD", field: String = "amount") throws -> Int64 {
        try parse(text, currency: currency, field: field, extraDecimals: 0)
    }

    /// A price per unit, which pumps show to a tenth of a cent: the currency's decimals and
    /// up to three more ("3.459" USD → 345.9 minor units), exactly, in thousandths of a minor unit.
    public static func parseUnitPrice(_ text: String, currency: String = "USD", field: String) throws -> Milli {
        Milli(thousandths: try parse(text, currency: currency, field: field, extraDecimals: 3))
    }

    /// A price per unit for people (`plain`: for CSV): "$3.459", "3.45".
    public static func unitPrice(_ value: JSONValue?, currency: String = "USD", plain: Bool) -> String? {
        guard case .number(let number)? = value, let minor = number.decimal.flatMap(Milli.init(rounding:)) else { return nil }
        return unitPrice(minor, currency: currency, plain: plain)
    }

    /// A price per unit in thousandths of a minor unit, for people (`plain`: for CSV).
    public static func unitPrice(_ minor: Milli, currency: String = "USD", plain: Bool) -> String {
        let exponent = exponent(currency)
        var text = Self.plain(minor.thousandths, decimals: exponent + 3)
        var decimals = exponent + 3
        while decimals > exponent, text.hasSuffix("0") {
            text.removeLast()
            decimals -= 1
        }
        if text.hasSuffix(".") { text.removeLast() }
        if plain { return text }
        return currency.uppercased() == "USD" ? "$" + text : "\(text) \(currency.uppercased())"
    }

    private static func parse(_ text: String, currency: String, field: String, extraDecimals: Int) throws -> Int64 {
        let exponent = exponent(currency) + extraDecimals
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if trimmed.hasPrefix("-"), Double(trimmed) != nil {
            throw ServiceError.invalid(field, "must be greater than 0 (got \(text))")
        }
        let parts = trimmed.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        let whole = parts.first.map(String.init) ?? ""
        var fraction = parts.count > 1 ? String(parts[1]) : ""
        let digits = { (s: String) in s.unicodeScalars.allSatisfy { ("0"..."9").contains($0) } }
        guard digits(whole), digits(fraction), !(whole.isEmpty && fraction.isEmpty) else {
            throw ServiceError.invalid(
                field, "must be a decimal amount like 3.45, with a dot and no thousands separators (got \(text))")
        }
        while fraction.count > exponent, fraction.hasSuffix("0") { fraction.removeLast() }
        guard fraction.count <= exponent else {
            throw ServiceError.invalid(
                field,
                "\(currency.uppercased()) \(extraDecimals > 0 ? "prices per unit" : "amounts") have at most \(exponent) decimal\(exponent == 1 ? "" : "s") (got \(text))"
            )
        }
        fraction += String(repeating: "0", count: exponent - fraction.count)
        let all = (whole + fraction).drop { $0 == "0" }
        guard all.count <= 16, let minor = Int64(all.isEmpty ? "0" : String(all)), minor <= maxMinor else {
            throw ServiceError.invalid(field, "is too large (got \(text))")
        }
        return minor
    }

    /// Minor units as a plain decimal: 345 USD → "3.45", 1200 JPY → "1200".
    public static func plain(_ minor: Int64, currency: String = "USD") -> String {
        plain(minor, decimals: exponent(currency))
    }

    /// An integer as a decimal with `decimals` places: (345900, 5) → "3.45900".
    static func plain(_ minor: Int64, decimals exponent: Int) -> String {
        let sign = minor < 0 ? "-" : ""
        var digits = String(minor.magnitude)
        guard exponent > 0 else { return sign + digits }
        if digits.count <= exponent { digits = String(repeating: "0", count: exponent - digits.count + 1) + digits }
        let split = digits.index(digits.endIndex, offsetBy: -exponent)
        // (Strings, not Substrings: `+` with a Substring is the generic append, whose first
        // use costs a scan of the runtime's conformance records)
        return sign + String(digits[..<split]) + "." + String(digits[split...])
    }

    /// For people: "$1,234.56" for USD, "1,234.56 EUR" otherwise.
    public static func format(_ minor: Int64, currency: String = "USD") -> String {
        let text = plain(minor, currency: currency)
        let negative = text.hasPrefix("-")
        let unsigned = negative ? String(text.dropFirst()) : text
        let parts = unsigned.split(separator: ".", maxSplits: 1)
        let grouped = Digits.grouped(parts[0]) + (parts.count > 1 ? "." + String(parts[1]) : "")
        let signed = (negative ? "-" : "") + grouped
        return currency.uppercased() == "USD" ? (negative ? "-$" + grouped : "$" + grouped) : "\(signed) \(currency.uppercased())"
    }
}

public enum Quantity {
    /// A decimal quantity ("12.345") checked for shape and at most 3 decimals, read exactly
    /// into thousandths (digit by digit: no floating point).
    public static func milli(_ text: String, field: String) throws -> Milli {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let negative = trimmed.hasPrefix("-")
        let unsigned = negative ? String(trimmed.dropFirst()) : trimmed
        let parts = unsigned.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        let digits = { (s: Substring) in s.unicodeScalars.allSatisfy { ("0"..."9").contains($0) } }
        let whole = parts[0].drop { $0 == "0" }
        let fraction = parts.count > 1 ? parts[1] : ""
        guard digits(parts[0]), digits(fraction), !(parts[0].isEmpty && fraction.isEmpty) else {
            throw ServiceError.invalid(field, "must be a number like 12.345 (got \(text))")
        }
        let significant = String(fraction.reversed().drop(while: { $0 == "0" }).reversed())
        if significant.count > 3 {
            throw ServiceError.invalid(field, "must have at most 3 decimals (got \(text))")
        }
        let padded = significant + String(repeating: "0", count: 3 - significant.count)
        guard whole.count <= 15, let thousandths = Int64(whole.isEmpty ? padded : whole + padded) else {
            throw ServiceError.invalid(field, "is too large (got \(text))")
        }
        return Milli(thousandths: negative ? -thousandths : thousandths)
    }

    /// A JSON number with at most 3 decimals as exact text: 12.345, 12,345.6 when grouped.
    public static func text(_ value: JSONValue?, grouped: Bool = false) -> String {
        guard case .number(let number)? = value, let milli = number.decimal.flatMap(Milli.init(rounding:)) else { return "-" }
        return grouped ? milli.grouped : milli.description
    }
}
