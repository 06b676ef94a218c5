// A value that writes its own JSON: byte for byte what Foundation's encoder, set up as the
// shared one, writes for it (keys in UTF-8 byte order, no escaped slashes, optionals left
// out when nil). `WireCoding.encode` takes the writer of any value that has one, so replies,
// event payloads, stored answers and request frames all use it without knowing. For values
// written often or large enough that the encoder is most of their cost (an
// `analytics.suggest` answer lists every bucket and bait of a user's catches, and encoding it
// took five times the query), and for the CLI's JSON values (the encoder's first use in a
// one-shot command). Each writer is held to the encoder by a test over generated values
// (Tests/AnalyticsTests/SuggestTests.swift, Tests/RuntimeTests/JSONOutputTests.swift).
import Foundation
import Synchronization

public protocol JSONWritable: Encodable {
    /// Appends this value's JSON, exactly as `WireCoding.encode` writes it.
    func writeJSON(to out: inout JSONOutput)
}

extension JSONWritable {
    /// This value's JSON (the same bytes as `WireCoding.encode(self)`).
    public var jsonData: Data {
        var out = JSONOutput()
        writeJSON(to: &out)
        return out.data
    }

}

extension Array: JSONWritable where Element: JSONWritable {
    public func writeJSON(to out: inout JSONOutput) { out.array(self) { $0.write($1) } }
}

/// The bytes of a JSON text being written. Objects are written field by field, keys in the
/// order given, which must be UTF-8 byte order (the shared encoder's `.sortedKeys`).
public struct JSONOutput {
    /// Written into an array and made `Data` once at the end (DataText.swift): appending to
    /// `Data` piece by piece cost as much as Foundation's encoder for a record of ten fields.
    private var bytes: [UInt8] = []
    private var first = true

    public init() { bytes.reserveCapacity(512) }

    /// The JSON text written so far.
    public var data: Data { Data(bytes) }

    public mutating func beginObject() {
        bytes.append(UInt8(ascii: "{"))
        first = true
    }

    public mutating func endObject() {
        bytes.append(UInt8(ascii: "}"))
        first = false
    }

    public mutating func beginArray() {
        bytes.append(UInt8(ascii: "["))
        first = true
    }

    public mutating func endArray() {
        bytes.append(UInt8(ascii: "]"))
        first = false
    }

    /// Before an array element.
    public mutating func element() {
        if !first { bytes.append(UInt8(ascii: ",")) }
        first = false
    }

    /// An object's key (plain ASCII, as every Contracts key is), ready for its value.
    public mutating func key(_ name: StaticString) {
        if !first { bytes.append(UInt8(ascii: ",")) }
        first = false
        bytes.append(UInt8(ascii: "\""))
        bytes.append(contentsOf: UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
    }

    /// An object's key of any text, ready for its value.
    public mutating func key(_ name: String) {
        if !first { bytes.append(UInt8(ascii: ",")) }
        first = false
        bytes.appendQuoted(name)
        bytes.append(UInt8(ascii: ":"))
    }

    /// A literal (`null`, `true`, `false`) as a value.
    public mutating func raw(_ literal: StaticString) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
        first = false
    }

    /// A number as the encoder writes what `JSONNumber.encode(to:)` gives it, in the same
    /// order: an Int64's digits, a Decimal's description, else the nearest Double's
    /// description without a trailing ".0".
    public mutating func number(_ number: JSONNumber) {
        if let integer = number.int64 { return int(integer) }
        if let decimal = number.decimal { return self.decimal(decimal) }
        var text = number.double.description
        if text.hasSuffix(".0") { text.removeLast(2) }
        appendUTF8(text)
    }

    /// A string as the encoder writes it (CanonicalJSON.quoted).
    public mutating func string(_ text: String) { bytes.appendQuoted(text) }

    /// An instant as the shared encoder's date strategy writes it (WireTime.format, quoted).
    public mutating func date(_ date: Date) { bytes.appendQuoted(WireTime.format(date)) }

    public mutating func int(_ value: some BinaryInteger) {
        guard let value = Int64(exactly: value) else { return appendUTF8(String(value)) }
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        digits(value.magnitude)
    }

    /// `value` in decimal digits, as `String(value)` writes it, without making the String.
    private mutating func digits(_ value: UInt64) {
        var value = value
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { buffer in
            var start = 20
            repeat {
                start -= 1
                buffer[start] = UInt8(ascii: "0") + UInt8(value % 10)
                value /= 10
            } while value > 0
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[start...]))
        }
    }

    private mutating func appendUTF8(_ text: String) { bytes.appendUTF8(text) }

    /// A Decimal as the encoder writes it: its `description`, which depends on the value
    /// alone (0.750 and 0.75 both write 0.75). Answers repeat the same few values (shares
    /// are thousandths), and `description` costs about 0.7 µs, so the texts of the first
    /// 4,096 values seen are kept. They are found by the value's bytes, not by Decimal's own
    /// hashing and equality (which normalize the value and cost a good part of what they
    /// save): equal bytes are the same value, and a value spelt in other bytes is one more
    /// entry, never a wrong text.
    public mutating func decimal(_ value: Decimal) {
        guard !value.isNaN, let key = DecimalBytes(value) else { return appendUTF8(value.description) }
        if let text = Self.decimalTexts.withLock({ $0[key] }) { return bytes.append(contentsOf: text) }
        let text = Array(value.description.utf8)
        Self.decimalTexts.withLock { texts in
            if texts.count < 4_096 { texts[key] = text }
        }
        bytes.append(contentsOf: text)
    }

    private static let decimalTexts = Mutex<[DecimalBytes: [UInt8]]>([:])

    /// A Decimal's bytes, as a key.
    private struct DecimalBytes: Hashable {
        var words: (UInt64, UInt64, UInt64) = (0, 0, 0)

        init?(_ value: Decimal) {
            guard MemoryLayout<Decimal>.size <= 24 else { return nil }
            var words: (UInt64, UInt64, UInt64) = (0, 0, 0)
            withUnsafeMutableBytes(of: &words) { key in
                withUnsafeBytes(of: value) { key.copyMemory(from: $0) }
            }
            self.words = words
        }

        static func == (a: Self, b: Self) -> Bool { a.words == b.words }

        func hash(into hasher: inout Hasher) {
            hasher.combine(words.0)
            hasher.combine(words.1)
            hasher.combine(words.2)
        }
    }

    public mutating func write(_ value: some JSONWritable) { value.writeJSON(to: &self) }

    /// Each element written by `write`.
    public mutating func array<Element>(_ elements: [Element], _ write: (inout JSONOutput, Element) -> Void) {
        beginArray()
        for element in elements {
            self.element()
            write(&self, element)
        }
        endArray()
    }
}
