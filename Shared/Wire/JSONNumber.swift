// A JSON number as its exact decimal text, so a value that is carried as a `JSONValue`
// (the CLI's requests and saved answers, an event's payload in a consumer, the HTTP edge's
// bodies, `logbook call`) keeps every digit it was written with: 11.2 stays 11.2, not the
// nearest Double, and a 64-bit integer is not rounded. The text is canonical (no "+",
// no leading or trailing zeros, no exponent when the value is a Decimal), so two spellings of
// one value compare and hash equal and CanonicalJSON writes the same text for it.
//
// A number that no Decimal holds (beyond ±1e127 or below 1e-128: no field of the protocol)
// keeps Swift's text for the nearest Double.
import Foundation

public struct JSONNumber: Sendable, Hashable, CustomStringConvertible, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral
{
    /// The canonical JSON text of the number.
    public let text: String

    init(canonical text: String) { self.text = text }

    public init(_ value: some BinaryInteger) { text = String(value) }

    /// The decimal's digits, as `Decimal` writes them (no exponent).
    public init(_ value: Decimal) {
        text = value.isFinite ? value.description : "0"
    }

    /// The Double's shortest text, read back as a decimal: `JSONNumber(0.1)` is 0.1. Only for
    /// measurements that are Doubles (coordinates, timings); quantities are `Milli`.
    public init(_ value: Double) {
        guard value.isFinite else {
            text = "0"
            return
        }
        if value.rounded() == value, abs(value) < 9.0e15 {
            text = String(Int64(value))
            return
        }
        let shortest = "\(value)"
        // A fraction Swift writes without an exponent is already canonical: digits, one
        // point, no zero at either end that Decimal would drop (Tests/RuntimeTests/
        // WireTests.swift compares the two ways over 200,000 Doubles). Anything else is
        // read as Decimal reads it (an exponent) or kept as Swift wrote it (no Decimal).
        if value.rounded() != value, !shortest.utf8.contains(UInt8(ascii: "e")) {
            text = shortest
            return
        }
        self = JSONNumber(text: shortest) ?? JSONNumber(canonical: shortest)
    }

    public init(_ value: Milli) { text = value.description }

    /// The number that `text` spells in JSON's grammar, canonical; nil when it is not one.
    public init?(text: String) {
        guard Self.isJSONNumber(text.utf8) else { return nil }
        if let integer = Int64(text) {
            self.text = String(integer)  // "-0" is "0"
        } else if let decimal = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")), decimal.isFinite,
            Self.fitsDecimal(text)
        {
            self.text = decimal.description
        } else if let double = Double(text), double.isFinite {
            self.text = double.rounded() == double && abs(double) < 9.0e15 ? String(Int64(double)) : "\(double)"
        } else {
            return nil
        }
    }

    /// The canonical text of a JSON number token, when it is certain to be the text a
    /// `JSONValue` decoded from the same token holds: an Int64, or a number a Decimal holds
    /// exactly. Nil otherwise (CanonicalJSON then takes the long way).
    public static func canonicalText(_ token: String) -> String? {
        isShortCanonical(token.utf8) ? token : canonicalTextTheLongWay(token)
    }

    /// `canonicalText` through Int64 and Decimal, for any token.
    static func canonicalTextTheLongWay(_ token: String) -> String? {
        guard isJSONNumber(token.utf8) else { return nil }
        if let integer = Int64(token) { return String(integer) }
        guard fitsDecimal(token), let decimal = Decimal(string: token, locale: Locale(identifier: "en_US_POSIX")),
            decimal.isFinite
        else { return nil }
        return decimal.description
    }

    public init(integerLiteral value: Int) { self.init(value) }
    public init(floatLiteral value: Double) { self.init(value) }

    public var description: String { text }

    /// The nearest Double (for arithmetic on measurements; never for a quantity).
    public var double: Double { Double(text) ?? 0 }

    /// Whether the value is a whole number (of any size).
    public var isWhole: Bool {
        if text.utf8.contains(UInt8(ascii: "e")) { return double.rounded() == double }
        return !text.utf8.contains(UInt8(ascii: "."))
    }

    /// The value as an integer, when it is one and fits.
    public var int64: Int64? { Int64(text) }

    /// The value as a Decimal (exact), when a Decimal holds it.
    public var decimal: Decimal? {
        guard text.utf8.count < 160, !text.utf8.contains(UInt8(ascii: "e")) else { return nil }
        return Decimal(string: text, locale: Locale(identifier: "en_US_POSIX"))
    }

    /// Whether `bytes` is a number already in its canonical spelling, with at most 18 digits:
    /// `-?(0|[1-9][0-9]*)(\.[0-9]*[1-9])?`, and not `-0`. Nearly every number a service
    /// writes is one (ids' sequence numbers, amounts, coordinates), and the long way reads
    /// each into an Int64 or a Foundation Decimal and writes it back out: a seventh of a
    /// consumer's time decoding a replay's pages (docs/performance.md, "Rebuild, a second
    /// look"). A Decimal holds 38 digits, so 18 are always exact, and its text has no
    /// leading or trailing zero (Tests/RuntimeTests/WireTests.swift compares the two ways).
    static func isShortCanonical(_ bytes: String.UTF8View) -> Bool {
        var i = bytes.startIndex
        let end = bytes.endIndex
        if i != end, bytes[i] == UInt8(ascii: "-") { bytes.formIndex(after: &i) }
        guard i != end else { return false }
        let firstDigit = bytes[i]
        var digits = 0
        while i != end, bytes[i] &- UInt8(ascii: "0") < 10 {
            digits += 1
            bytes.formIndex(after: &i)
        }
        // one digit, or none leading with 0; a lone "-0" is "0"
        guard digits > 0, digits == 1 || firstDigit != UInt8(ascii: "0") else { return false }
        if i == end {
            return digits <= 18 && !(firstDigit == UInt8(ascii: "0") && bytes.first == UInt8(ascii: "-"))
        }
        guard bytes[i] == UInt8(ascii: ".") else { return false }
        bytes.formIndex(after: &i)
        var last: UInt8 = 0
        var fraction = 0
        while i != end, bytes[i] &- UInt8(ascii: "0") < 10 {
            last = bytes[i]
            fraction += 1
            bytes.formIndex(after: &i)
        }
        return i == end && fraction > 0 && last != UInt8(ascii: "0") && digits + fraction <= 18
    }

    /// Whether `bytes` is exactly one JSON number (RFC 8259: `-? int frac? exp?`).
    public static func isJSONNumber(_ bytes: some Collection<UInt8>) -> Bool {
        var i = bytes.startIndex
        func digits() -> Int {
            var n = 0
            while i != bytes.endIndex, bytes[i] >= UInt8(ascii: "0"), bytes[i] <= UInt8(ascii: "9") {
                bytes.formIndex(after: &i)
                n += 1
            }
            return n
        }
        if i != bytes.endIndex, bytes[i] == UInt8(ascii: "-") { bytes.formIndex(after: &i) }
        let first = i
        let whole = digits()
        guard whole > 0, whole == 1 || bytes[first] != UInt8(ascii: "0") else { return false }
        if i != bytes.endIndex, bytes[i] == UInt8(ascii: ".") {
            bytes.formIndex(after: &i)
            guard digits() > 0 else { return false }
        }
        if i != bytes.endIndex, bytes[i] == UInt8(ascii: "e") || bytes[i] == UInt8(ascii: "E") {
            bytes.formIndex(after: &i)
            if i != bytes.endIndex, bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-") { bytes.formIndex(after: &i) }
            guard digits() > 0 else { return false }
        }
        return i == bytes.endIndex
    }

    /// Whether a Decimal holds the number in `text` exactly: at most 38 significant digits and
    /// a magnitude it can write out without an exponent (what `description` gives).
    private static func fitsDecimal(_ text: String) -> Bool {
        var significant = 0
        var leading = true
        var exponent = 0
        var seenExponent = false
        var exponentText = ""
        for byte in text.utf8 {
            if seenExponent {
                exponentText.unicodeScalars.append(Unicode.Scalar(byte))
                continue
            }
            switch byte {
            case UInt8(ascii: "e"), UInt8(ascii: "E"): seenExponent = true
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                if byte != UInt8(ascii: "0") { leading = false }
                if !leading { significant += 1 }
            default: break
            }
        }
        if seenExponent {
            guard let e = Int(exponentText) else { return false }
            exponent = e
        }
        // (magnitude, not abs: an exponent of Int.min, "1e-9223372036854775808", must not trap)
        return significant <= 38 && exponent.magnitude <= 90
    }
}

extension JSONNumber: Codable {
    /// Reads a number as JSONDecoder does for a Decimal (from its digits, exactly), falling
    /// back to a Double for one no Decimal holds.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let decimal = try? container.decode(Decimal.self), decimal.isFinite {
            self.init(decimal)
        } else {
            let double = try container.decode(Double.self)
            guard double.isFinite else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "not a finite number")
            }
            self.init(double)
        }
    }

    /// Writes the text back: an integer as an integer, a decimal as the Decimal it is (whose
    /// JSON is its digits), anything else as its Double.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        if let integer = int64 {
            try container.encode(integer)
        } else if let decimal {
            try container.encode(decimal)
        } else {
            try container.encode(double)
        }
    }
}

extension JSONNumber {
    /// The value in thousandths (a `Milli`), read from the canonical digits: nil unless it has
    /// at most three decimals, at most 18 digits and fits `Milli`'s range, so that whatever
    /// this answers is what `Milli(exactly:)` of the number's Decimal answers.
    public var thousandths: Int64? {
        var value: Int64 = 0
        var negative = false
        var decimals = -1  // -1: no point yet
        var digits = 0
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                if decimals >= 0 {
                    decimals += 1
                    if decimals > 3 { return nil }
                }
                digits += 1
                if digits > 18 { return nil }
                value = value * 10 + Int64(byte &- UInt8(ascii: "0"))
            case UInt8(ascii: "-") where digits == 0 && !negative:
                negative = true
            case UInt8(ascii: ".") where decimals < 0 && digits > 0:
                decimals = 0
            default:
                return nil  // an exponent, or not a number's text
            }
        }
        guard digits > 0, decimals != 0 else { return nil }
        let scale: Int64 = decimals <= 0 ? 1000 : decimals == 1 ? 100 : decimals == 2 ? 10 : 1
        let (scaled, overflow) = value.multipliedReportingOverflow(by: scale)
        guard !overflow, scaled <= Int64.max / 2 else { return nil }
        return negative ? -scaled : scaled
    }
}
