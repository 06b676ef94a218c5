// JSON text to a JSONValue in one pass over the bytes. Decoding a JSONValue through
// Foundation's JSONDecoder tries each kind in turn (string, number, bool, array, object), and
// every miss builds a DecodingError: an object cost four failed attempts, a reply's result a
// few hundred. This reads the common case directly: the JSON a service, the CLI or the HTTP
// edge writes. Anything unusual (a surrogate escape, a raw control character, bytes that are
// not UTF-8, a repeated key, a trailing comma or text, a number whose canonical text is not
// certain, nesting deeper than `maxDepth`) gives nil, and the caller decodes the text with
// Foundation as before, so its answers and its errors are unchanged
// (Tests/RuntimeTests/JSONParserTests.swift compares the two).
import Foundation

enum JSONParser {
    static let maxDepth = 128

    /// The value `data` spells, or nil when Foundation must decide.
    static func parse(_ data: Data) -> JSONValue? {
        data.withUnsafeBytes { raw -> JSONValue? in
            guard let base = raw.baseAddress, raw.count > 0 else { return nil }
            var reader = Reader(bytes: UnsafeBufferPointer(start: base.assumingMemoryBound(to: UInt8.self), count: raw.count))
            // A document that is only `null`: Foundation refuses it (no top-level value).
            guard let value = reader.value(depth: 0), value != .null else { return nil }
            reader.skipSpace()
            // (No `? value : nil` here or below: JSONValue takes the nil literal as `.null`.)
            guard reader.i == reader.bytes.count else { return nil }
            return value
        }
    }

    private struct Reader {
        let bytes: UnsafeBufferPointer<UInt8>
        var i = 0

        mutating func skipSpace() {
            while i < bytes.count {
                let b = bytes[i]
                guard b == 0x20 || b == 0x0A || b == 0x0D || b == 0x09 else { return }
                i += 1
            }
        }

        mutating func value(depth: Int) -> JSONValue? {
            skipSpace()
            guard i < bytes.count, depth < JSONParser.maxDepth else { return nil }
            switch bytes[i] {
            case UInt8(ascii: "{"): return object(depth: depth)
            case UInt8(ascii: "["): return array(depth: depth)
            case UInt8(ascii: "\""): return string().map(JSONValue.string)
            case UInt8(ascii: "t"):
                guard literal("true") else { return nil }
                return .bool(true)
            case UInt8(ascii: "f"):
                guard literal("false") else { return nil }
                return .bool(false)
            case UInt8(ascii: "n"):
                guard literal("null") else { return nil }
                return .null
            default: return number()
            }
        }

        mutating func literal(_ word: StaticString) -> Bool {
            let count = word.utf8CodeUnitCount
            guard bytes.count - i >= count else { return false }
            for k in 0..<count where bytes[i + k] != word.utf8Start[k] { return false }
            i += count
            return true
        }

        /// The members of the objects being read, innermost last: an object's members are
        /// gathered here and its dictionary made once, at its size. Inserting them one by one
        /// into a growing dictionary hashed each key again at every doubling, and hashing
        /// was the largest part of reading a replay's pages (docs/performance.md, "Rebuild, a
        /// last round").
        var members: [(key: String, value: JSONValue)] = []

        mutating func object(depth: Int) -> JSONValue? {
            i += 1  // {
            skipSpace()
            if i < bytes.count, bytes[i] == UInt8(ascii: "}") {
                i += 1
                return .object([:])
            }
            let base = members.count
            defer { members.removeSubrange(base...) }
            while true {
                skipSpace()
                guard i < bytes.count, bytes[i] == UInt8(ascii: "\""), let key = string() else { return nil }
                skipSpace()
                guard i < bytes.count, bytes[i] == UInt8(ascii: ":") else { return nil }
                i += 1
                guard let value = value(depth: depth + 1) else { return nil }
                members.append((key, value))
                skipSpace()
                guard i < bytes.count else { return nil }
                if bytes[i] == UInt8(ascii: ",") {
                    i += 1
                    continue
                }
                guard bytes[i] == UInt8(ascii: "}") else { return nil }
                i += 1
                var fields = [String: JSONValue](minimumCapacity: members.count - base)
                for member in members[base...] {
                    // A repeated key: which one Foundation keeps is its call.
                    guard fields.updateValue(member.value, forKey: member.key) == nil else { return nil }
                }
                return .object(fields)
            }
        }

        mutating func array(depth: Int) -> JSONValue? {
            i += 1  // [
            var items: [JSONValue] = []
            skipSpace()
            if i < bytes.count, bytes[i] == UInt8(ascii: "]") {
                i += 1
                return .array(items)
            }
            while true {
                guard let item = value(depth: depth + 1) else { return nil }
                items.append(item)
                skipSpace()
                guard i < bytes.count else { return nil }
                if bytes[i] == UInt8(ascii: ",") {
                    i += 1
                    continue
                }
                guard bytes[i] == UInt8(ascii: "]") else { return nil }
                i += 1
                return .array(items)
            }
        }

        /// A string token (at its opening quote): its text, escapes resolved.
        mutating func string() -> String? {
            i += 1  // "
            let start = i
            var ascii = true
            // The usual string: no escapes, read in place.
            while i < bytes.count {
                let b = bytes[i]
                if b == UInt8(ascii: "\"") {
                    let slice = UnsafeBufferPointer(rebasing: bytes[start..<i])
                    i += 1
                    return ascii ? String(decoding: slice, as: UTF8.self) : String(validating: slice, as: UTF8.self)
                }
                if b == UInt8(ascii: "\\") { return escaped(from: start) }
                if b < 0x20 { return nil }
                if b >= 0x80 { ascii = false }
                i += 1
            }
            return nil
        }

        /// The rest of a string that has escapes, from its first character.
        mutating func escaped(from start: Int) -> String? {
            var out: [UInt8] = Array(bytes[start..<i])
            while i < bytes.count {
                let b = bytes[i]
                i += 1
                switch b {
                case UInt8(ascii: "\""):
                    return String(validating: out, as: UTF8.self)
                case UInt8(ascii: "\\"):
                    guard i < bytes.count else { return nil }
                    let e = bytes[i]
                    i += 1
                    switch e {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(e)
                    case UInt8(ascii: "b"): out.append(0x08)
                    case UInt8(ascii: "f"): out.append(0x0C)
                    case UInt8(ascii: "n"): out.append(0x0A)
                    case UInt8(ascii: "r"): out.append(0x0D)
                    case UInt8(ascii: "t"): out.append(0x09)
                    case UInt8(ascii: "u"):
                        guard bytes.count - i >= 4, let code = hex4(), let scalar = Unicode.Scalar(code) else {
                            return nil  // a surrogate (half of a pair, or alone): Foundation's call
                        }
                        out.append(contentsOf: String(Character(scalar)).utf8)
                    default:
                        return nil
                    }
                default:
                    if b < 0x20 { return nil }
                    out.append(b)
                }
            }
            return nil
        }

        mutating func hex4() -> UInt32? {
            var code: UInt32 = 0
            for _ in 0..<4 {
                let b = bytes[i]
                let digit: UInt8
                switch b {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = b - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = b - UInt8(ascii: "a") + 10
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = b - UInt8(ascii: "A") + 10
                default: return nil
                }
                code = code << 4 | UInt32(digit)
                i += 1
            }
            return code
        }

        /// A number token, as the canonical text a JSONValue decoded by Foundation holds
        /// (`JSONNumber.canonicalText`: an Int64 at once, else a number a Decimal holds exactly).
        mutating func number() -> JSONValue? {
            let start = i
            scan: while i < bytes.count {
                switch bytes[i] {
                case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "+"), UInt8(ascii: "."),
                    UInt8(ascii: "e"), UInt8(ascii: "E"):
                    i += 1
                default:
                    break scan
                }
            }
            guard i > start else { return nil }
            let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<i]), as: UTF8.self)
            guard let canonical = JSONNumber.canonicalText(text) else { return nil }
            // A negative zero ("-0", "-0.0") is the number 0 in a JSONValue, but a Double
            // decoded from it by Foundation is -0.0: typed decoding from these values
            // (WireCoding.decode) must give what Foundation gives, so Foundation reads it.
            if canonical == "0", bytes[start] == UInt8(ascii: "-") { return nil }
            return .number(JSONNumber(canonical: canonical))
        }
    }
}
