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
///
/// The bytes go into memory of its own, grown by doubling, and are made `Data` once at the
/// end (`data`). Appending to `Data` piece by piece cost as much as Foundation's encoder for
/// a record of ten fields; appending to an `[UInt8]` checked the array's uniqueness and
/// capacity in a call for every piece, a quarter of writing a suggestion, which is a
/// thousand pieces (docs/performance.md, "A suggestion's size"). Not copyable, so the memory
/// has one owner, which frees it.
public struct JSONOutput: ~Copyable {
    @usableFromInline var base: UnsafeMutablePointer<UInt8>
    @usableFromInline var count = 0
    @usableFromInline var capacity: Int
    @usableFromInline var first = true

    public init() {
        capacity = 1_024
        base = .allocate(capacity: capacity)
    }

    deinit { base.deallocate() }

    /// The JSON text written so far.
    public var data: Data { Data(bytes: base, count: count) }

    /// Room for `more` bytes after the ones written.
    @inlinable mutating func reserve(_ more: Int) {
        if capacity - count < more { grow(more) }
    }

    @usableFromInline mutating func grow(_ more: Int) {
        let larger = max(capacity * 2, count + more)
        let moved = UnsafeMutablePointer<UInt8>.allocate(capacity: larger)
        moved.update(from: base, count: count)
        base.deallocate()
        base = moved
        capacity = larger
    }

    @inlinable mutating func put(_ byte: UInt8) {
        reserve(1)
        base[count] = byte
        count += 1
    }

    @inlinable mutating func put(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let source = bytes.baseAddress, !bytes.isEmpty else { return }
        reserve(bytes.count)
        let n = bytes.count
        let from = UnsafeRawPointer(source), to = UnsafeMutableRawPointer(base + count)
        if n >= 8, n <= 16 {
            // (most names and labels) two words that may overlap, rather than a call to memmove
            let head = from.loadUnaligned(as: UInt64.self)
            let tail = from.loadUnaligned(fromByteOffset: n - 8, as: UInt64.self)
            to.storeBytes(of: head, as: UInt64.self)
            to.storeBytes(of: tail, toByteOffset: n - 8, as: UInt64.self)
        } else if n >= 4, n < 8 {
            let head = from.loadUnaligned(as: UInt32.self)
            let tail = from.loadUnaligned(fromByteOffset: n - 4, as: UInt32.self)
            to.storeBytes(of: head, as: UInt32.self)
            to.storeBytes(of: tail, toByteOffset: n - 4, as: UInt32.self)
        } else {
            to.copyMemory(from: from, byteCount: n)
        }
        count += n
    }

    /// How many bytes are written so far: where the next one goes.
    public var written: Int { count }

    /// Writes again the bytes at `range` of what is written (a part already written once,
    /// from `written` before it to `written` after).
    public mutating func repeatWritten(_ range: Range<Int>) {
        precondition(range.lowerBound >= 0 && range.upperBound <= count, "repeatWritten: a range not yet written")
        reserve(range.count)
        (base + count).update(from: base + range.lowerBound, count: range.count)
        count += range.count
        first = false
    }

    @inlinable mutating func put(_ literal: StaticString) {
        put(UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
    }

    @inlinable public mutating func beginObject() {
        put(UInt8(ascii: "{"))
        first = true
    }

    @inlinable public mutating func endObject() {
        put(UInt8(ascii: "}"))
        first = false
    }

    @inlinable public mutating func beginArray() {
        put(UInt8(ascii: "["))
        first = true
    }

    @inlinable public mutating func endArray() {
        put(UInt8(ascii: "]"))
        first = false
    }

    /// Before an array element.
    @inlinable public mutating func element() {
        if !first { put(UInt8(ascii: ",")) }
        first = false
    }

    /// An object's key (plain ASCII, as every Contracts key is), ready for its value. A
    /// literal key comes here, copied as it is: had the overload for any text been `key(_:)`
    /// too, Swift would pick it for a literal (String is a literal's default type) and scan
    /// every key for characters to escape, a sixth of writing a suggestion
    /// (docs/performance.md, "A suggestion's size").
    @inlinable public mutating func key(_ name: StaticString) {
        reserve(name.utf8CodeUnitCount + 4)
        if !first { put(UInt8(ascii: ",")) }
        first = false
        put(UInt8(ascii: "\""))
        put(name)
        put(UInt8(ascii: "\""))
        put(UInt8(ascii: ":"))
    }

    /// An object's key of any text, quoted and escaped, ready for its value.
    public mutating func key(text name: String) {
        if !first { put(UInt8(ascii: ",")) }
        first = false
        string(name)
        put(UInt8(ascii: ":"))
    }

    /// A literal (`null`, `true`, `false`) as a value, or any fixed run of JSON text that
    /// ends where a value or a comma may follow (`{"bait":`, `,"count":`).
    @inlinable public mutating func raw(_ literal: StaticString) {
        put(literal)
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

    /// A string as the encoder writes it (CanonicalJSON.quoted, `[UInt8].appendQuoted`).
    public mutating func string(_ text: String) {
        // Copied straight in when nothing needs an escape (read in place: no copy of the String)
        let plain = text.utf8.withContiguousStorageIfAvailable { bytes in
            guard Self.needsNoEscape(bytes) else { return false }
            reserve(bytes.count + 2)
            base[count] = UInt8(ascii: "\"")
            count += 1
            put(bytes)
            base[count] = UInt8(ascii: "\"")
            count += 1
            return true
        }
        if plain != true {
            var quoted: [UInt8] = []
            quoted.appendQuoted(text)  // (the escapes live there once)
            quoted.withUnsafeBufferPointer { put($0) }
        }
    }

    /// No quote, backslash or control character in `bytes`: checked eight bytes at a time
    /// (each test is true of a word exactly when one of its bytes is such a byte), the last
    /// word ending at the last byte; text shorter than a word is checked as one, padded.
    /// Names and labels are most of what an answer writes.
    static func needsNoEscape(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let start = bytes.baseAddress else { return true }
        if bytes.count < 8 { return noEscapeIn(Self.word(start, bytes.count)) }
        var at = 0
        while bytes.count - at >= 8 {
            let word = UInt64(littleEndian: UnsafeRawPointer(start + at).loadUnaligned(as: UInt64.self))
            if !noEscapeIn(word) { return false }
            at += 8
        }
        // the last word ends at the last byte (some of its bytes checked already)
        guard at < bytes.count else { return true }
        let last = UInt64(littleEndian: UnsafeRawPointer(start + bytes.count - 8).loadUnaligned(as: UInt64.self))
        return noEscapeIn(last)
    }

    /// The `count` (below 8) bytes at `start` as one word, read without touching a byte past
    /// them (two loads that may overlap), the rest of the word an 'A', which needs no escape.
    /// (Copying them into a word in memory and loading that stalled on the copy:
    /// docs/performance.md, "What grows with a suggestion".)
    @inline(__always) static func word(_ start: UnsafePointer<UInt8>, _ count: Int) -> UInt64 {
        let raw = UnsafeRawPointer(start)
        let padding: UInt64 = 0x4141_4141_4141_4141
        if count >= 4 {
            let low = UInt64(UInt32(littleEndian: raw.loadUnaligned(as: UInt32.self)))
            let high = UInt64(UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: count - 4, as: UInt32.self)))
            return low | high << 32
        }
        guard count > 0 else { return padding }
        let first = UInt64(start[0]), middle = UInt64(start[count / 2]), last = UInt64(start[count - 1])
        return padding << 24 | first | middle << 8 | last << 16
    }

    /// No byte of `word` is below 0x20, a quote or a backslash.
    @inline(__always) static func noEscapeIn(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        let below20 = (word &- ones &* 0x20) & ~word & highs  // a byte < 0x20
        let quote = word ^ (ones &* 0x22)
        let backslash = word ^ (ones &* 0x5C)
        let zero = ((quote &- ones) & ~quote | (backslash &- ones) & ~backslash) & highs  // a byte equal
        return below20 | zero == 0
    }

    /// An instant as the shared encoder's date strategy writes it (WireTime.format, quoted).
    public mutating func date(_ date: Date) { string(WireTime.format(date)) }

    /// (Inlinable, so a caller's Int is written without going through the generic.)
    @inlinable public mutating func int(_ value: some BinaryInteger) {
        guard let value = Int64(exactly: value) else { return appendUTF8(String(value)) }
        if value < 0 { put(UInt8(ascii: "-")) }
        digits(value.magnitude)
    }

    /// `value` in decimal digits, as `String(value)` writes it, without making the String.
    @usableFromInline mutating func digits(_ value: UInt64) {
        if value < 10 { return put(UInt8(ascii: "0") + UInt8(value)) }  // (a share's whole, most counts)
        var length = 1
        var rest = value / 10
        while rest > 0 {
            length += 1
            rest /= 10
        }
        reserve(length)
        var value = value
        var at = count + length
        repeat {
            at -= 1
            base[at] = UInt8(ascii: "0") + UInt8(value % 10)
            value /= 10
        } while value > 0
        count += length
    }

    @usableFromInline mutating func appendUTF8(_ text: String) {
        var text = text
        text.withUTF8 { put($0) }
    }

    /// A Decimal as the encoder writes it: its `description`, which depends on the value
    /// alone (0.750 and 0.75 both write 0.75). Answers repeat the same few values (shares
    /// are thousandths), and `description` costs about 0.7 µs, so the texts of the first
    /// 4,096 values seen are kept. They are found by the value's bytes, not by Decimal's own
    /// hashing and equality (which normalize the value and cost a good part of what they
    /// save): equal bytes are the same value, and a value spelt in other bytes is one more
    /// entry, never a wrong text.
    public mutating func decimal(_ value: Decimal) {
        guard !value.isNaN, let key = DecimalBytes(value) else { return appendUTF8(value.description) }
        if let text = Self.decimalTexts.withLock({ $0[key] }) { return text.withUnsafeBufferPointer { put($0) } }
        let text = Array(value.description.utf8)
        Self.decimalTexts.withLock { texts in
            if texts.count < 4_096 { texts[key] = text }
        }
        text.withUnsafeBufferPointer { put($0) }
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

    /// Exact thousandths as the encoder writes `Milli` (its `decimal`): the shortest exact
    /// text, `12.345`, `0.75`, `1`, `-0.5`, which is also `Milli.description`. Digits only,
    /// no Decimal: a suggestion writes a share for every bucket and bait it lists.
    public mutating func milli(_ value: Milli) {
        if value.thousandths < 0 { put(UInt8(ascii: "-")) }
        let magnitude = value.thousandths.magnitude
        digits(magnitude / 1000)
        let fraction = magnitude % 1000
        guard fraction != 0 else { return }
        // ".d1d2d3" without the trailing zeros: all four written, and `count` moved past the
        // ones kept
        let d1 = fraction / 100, d2 = fraction / 10 % 10, d3 = fraction % 10
        reserve(4)
        base[count] = UInt8(ascii: ".")
        base[count + 1] = UInt8(ascii: "0") + UInt8(d1)
        base[count + 2] = UInt8(ascii: "0") + UInt8(d2)
        base[count + 3] = UInt8(ascii: "0") + UInt8(d3)
        count += d3 != 0 ? 4 : d2 != 0 ? 3 : 2
    }

    @inlinable public mutating func write(_ value: some JSONWritable) { value.writeJSON(to: &self) }

    /// Each element written by `write`.
    @inlinable public mutating func array<Element>(
        _ elements: [Element], _ write: (inout JSONOutput, Element) -> Void
    ) {
        beginArray()
        for element in elements {
            self.element()
            write(&self, element)
        }
        endArray()
    }
}
