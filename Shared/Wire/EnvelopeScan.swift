// Reading a request's top-level members without parsing it: what the dispatcher needs when
// a full parse cannot say it — the raw text of `v` (an integer `1`, not `1.0`, which JSON
// decoders read as the same number) and the `id` of a request that was cut short, so the
// error still matches it. Strings are skipped with their escapes; nested objects and arrays
// are skipped whole, so an `id` inside the body is never taken for the request's.
import Foundation

public enum EnvelopeScan {
    /// The raw JSON text of each top-level member named in `keys`, as far as the frame can
    /// be read: a member whose value is cut off is left out, the ones before it are kept.
    public static func members(_ frame: Data, _ keys: Set<String>) -> [String: Data] {
        frame.withUnsafeBytes { raw -> [String: Data] in
            let bytes = raw.bindMemory(to: UInt8.self)
            var repeated = false
            return scan(bytes, keys, repeated: &repeated)
        }
    }

    /// As `members`, but nil when one of `keys` occurs twice at the top level (a JSON
    /// decoder reads one of the two; which one is its business, so callers that must agree
    /// with it take the decoder's way then). The runtime reads requests with `requestMembers`
    /// now; this stays as the plain reference the tests hold that one to
    /// (Tests/RuntimeTests/RequestMembersTests.swift).
    public static func uniqueMembers(_ frame: Data, _ keys: Set<String>) -> [String: Data]? {
        frame.withUnsafeBytes { raw -> [String: Data]? in
            let bytes = raw.bindMemory(to: UInt8.self)
            var repeated = false
            let found = scan(bytes, keys, repeated: &repeated)
            return repeated ? nil : found
        }
    }

    /// Where a request's members are in its frame: the byte range of each one's value text,
    /// counted from the frame's first byte. Read in one walk, comparing names as bytes, with
    /// nothing allocated: the dispatcher looks at every request this way on the socket's
    /// thread (`$srv.ping`, the method's route), and writes find their body by it.
    public struct Members: Sendable {
        public var v: Range<Int>?
        public var id: Range<Int>?
        public var method: Range<Int>?
        public var token: Range<Int>?
        public var idempotencyKey: Range<Int>?
        public var deadlineMs: Range<Int>?
        public var stackKey: Range<Int>?
        public var body: Range<Int>?
        /// One of these names occurs twice: a JSON decoder reads one of the two, and which
        /// is its business, so callers that must agree with it take the decoder's way.
        public var repeated = false
        /// A member's name has escapes (it may spell one of these names): callers take the
        /// decoder's way.
        public var escapedName = false

        /// Neither of the above: the ranges say all the decoder would read.
        public var plain: Bool { !repeated && !escapedName }
    }

    /// The request members of `frame` (see `Members`), as far as the frame can be read: a
    /// member whose value is cut off is left out, the ones before it are kept.
    public static func requestMembers(_ bytes: UnsafeBufferPointer<UInt8>) -> Members {
        var found = Members()
        // (Kept apart from `found`: `set` writes it while a member of `found` is its inout.)
        var repeated = false, escapedName = false
        func set(_ slot: inout Range<Int>?, _ value: Range<Int>) {
            if slot != nil { repeated = true }
            slot = value
        }
        walk(bytes) { key, value in
            switch key.count {
            case 1 where key[0] == UInt8(ascii: "v"): set(&found.v, value)
            case 2 where key[0] == UInt8(ascii: "i") && key[1] == UInt8(ascii: "d"): set(&found.id, value)
            case 4 where key.elementsEqual("body".utf8): set(&found.body, value)
            case 5 where key.elementsEqual("token".utf8): set(&found.token, value)
            case 6 where key.elementsEqual("method".utf8): set(&found.method, value)
            case 8 where key.elementsEqual("stackKey".utf8): set(&found.stackKey, value)
            case 10 where key.elementsEqual("deadlineMs".utf8): set(&found.deadlineMs, value)
            case 14 where key.elementsEqual("idempotencyKey".utf8): set(&found.idempotencyKey, value)
            default: break
            }
        } escapedKey: { _, _ in
            escapedName = true
        }
        found.repeated = repeated
        found.escapedName = escapedName
        return found
    }

    /// The top-level `id` string of a frame, even a truncated one; nil when there is none.
    /// Compares member names as bytes: no set, dictionary or string per member (every
    /// reply a client reads goes through here).
    public static func id(_ frame: Data) -> String? {
        let found = frame.withUnsafeBytes { raw -> (text: String?, raw: Data?) in
            let bytes = raw.bindMemory(to: UInt8.self)
            var last: Range<Int>?
            walk(bytes) { key, value in
                if key.count == 2, key[0] == UInt8(ascii: "i"), key[1] == UInt8(ascii: "d") { last = value }
            } escapedKey: { quoted, value in
                if (try? JSONDecoder().decode(String.self, from: Data(quoted))) == "id" { last = value }
            }
            guard let range = last else { return (nil, nil) }
            let value = UnsafeBufferPointer(rebasing: bytes[range])
            // The usual id (a UUID) has no escapes: its text is the string.
            if value.count >= 2, value[0] == quote, value[value.count - 1] == quote, !value.contains(backslash) {
                return (String(decoding: UnsafeBufferPointer(rebasing: value[1..<(value.count - 1)]), as: UTF8.self), nil)
            }
            return (nil, Data(value))
        }
        if let text = found.text { return text }
        return found.raw.flatMap { try? WireCoding.decoder.decode(String.self, from: $0) }
    }

    /// The raw text of `result` in a whole success reply: `"ok":true`, no `error` (or a null
    /// one), each of the three once, and the object closed with nothing after it. Nil for
    /// anything else, which the caller then reads with the decoder. The whole frame must be
    /// JSON by the grammar's rules (checked in one pass, far cheaper than a decoder's parse),
    /// so a damaged reply is never half-read.
    public static func successResult(_ frame: Data) -> Data? {
        frame.withUnsafeBytes { raw -> Data? in
            let bytes = raw.bindMemory(to: UInt8.self)
            var ok: Range<Int>?, result: Range<Int>?, error: Range<Int>?
            var usable = true
            let closed = walk(bytes) { key, value in
                switch key.count {
                case 2 where key[0] == UInt8(ascii: "o") && key[1] == UInt8(ascii: "k"):
                    usable = usable && ok == nil
                    ok = value
                case 5 where key.elementsEqual("error".utf8):
                    usable = usable && error == nil
                    error = value
                case 6 where key.elementsEqual("result".utf8):
                    usable = usable && result == nil
                    result = value
                default: break
                }
            } escapedKey: { _, _ in
                usable = false
            }
            guard closed, usable, let ok, let result, bytes[ok].elementsEqual("true".utf8) else { return nil }
            if let error, !bytes[error].elementsEqual("null".utf8) { return nil }
            var syntax = Syntax(bytes: bytes)
            guard syntax.document() else { return nil }
            return Data(UnsafeBufferPointer(rebasing: bytes[result]))
        }
    }

    private static let quote = UInt8(ascii: "\""), backslash = UInt8(ascii: "\\")
    private static let openBrace = UInt8(ascii: "{"), closeBrace = UInt8(ascii: "}")
    private static let openBracket = UInt8(ascii: "["), closeBracket = UInt8(ascii: "]")
    private static let colon = UInt8(ascii: ":"), comma = UInt8(ascii: ",")

    private static func isSpace(_ b: UInt8) -> Bool { b == 0x20 || b == 0x09 || b == 0x0A || b == 0x0D }

    private static func scan(_ bytes: UnsafeBufferPointer<UInt8>, _ keys: Set<String>, repeated: inout Bool) -> [String: Data] {
        var result: [String: Data] = [:]
        // A name is made a string only when its length is one a wanted key has.
        var lengths: UInt64 = 0
        for key in keys where key.utf8.count < 64 { lengths |= 1 << UInt64(key.utf8.count) }
        walk(bytes) { keyBytes, value in
            guard keyBytes.count < 64, lengths & (1 << UInt64(keyBytes.count)) != 0 else { return }
            let key = String(decoding: keyBytes, as: UTF8.self)
            if keys.contains(key) {
                if result[key] != nil { repeated = true }
                result[key] = Data(UnsafeBufferPointer(rebasing: bytes[value]))
            }
        } escapedKey: { keyBytes, value in
            let key = (try? JSONDecoder().decode(String.self, from: Data(keyBytes))) ?? ""
            if keys.contains(key) {
                if result[key] != nil { repeated = true }
                result[key] = Data(UnsafeBufferPointer(rebasing: bytes[value]))
            }
        }
        return result
    }

    /// Calls `visit` with each top-level member's name (its bytes between the quotes, when
    /// it has no escapes) and the range of its value's text, as far as the frame can be read.
    /// A name with escapes goes to `escapedKey` with its quoted text instead; by default it
    /// is skipped (no name the protocol reads has one). True when the object closed and
    /// nothing but white space follows it.
    @discardableResult
    private static func walk(
        _ bytes: UnsafeBufferPointer<UInt8>,
        visit: (_ key: UnsafeBufferPointer<UInt8>, _ value: Range<Int>) -> Void,
        escapedKey: (_ quotedKey: UnsafeBufferPointer<UInt8>, _ value: Range<Int>) -> Void = { _, _ in }
    ) -> Bool {
        let n = bytes.count
        var i = 0
        func skipSpace() { while i < n && isSpace(bytes[i]) { i += 1 } }
        skipSpace()
        guard i < n, bytes[i] == openBrace else { return false }
        i += 1
        while true {
            skipSpace()
            guard i < n, bytes[i] == quote, let keyEnd = endOfString(bytes, i) else { return false }
            let keyStart = i
            i = keyEnd
            skipSpace()
            guard i < n, bytes[i] == colon else { return false }
            i += 1
            skipSpace()
            guard let valueEnd = endOfValue(bytes, i) else { return false }
            let keyBytes = UnsafeBufferPointer(rebasing: bytes[(keyStart + 1)..<(keyEnd - 1)])
            if keyBytes.contains(backslash) {
                escapedKey(UnsafeBufferPointer(rebasing: bytes[keyStart..<keyEnd]), i..<valueEnd)
            } else {
                visit(keyBytes, i..<valueEnd)
            }
            i = valueEnd
            skipSpace()
            if i < n, bytes[i] == closeBrace {
                i += 1
                skipSpace()
                return i == n
            }
            guard i < n, bytes[i] == comma else { return false }
            i += 1
        }
    }

    /// The index after the closing quote of the string starting at `start`; nil if cut off.
    private static func endOfString(_ bytes: UnsafeBufferPointer<UInt8>, _ start: Int) -> Int? {
        var j = start + 1
        while j < bytes.count {
            let b = bytes[j]
            if b == backslash {
                j += 2
            } else if b == quote {
                return j + 1
            } else {
                j += 1
            }
        }
        return nil
    }

    /// The index after the value starting at `start`; nil if it is cut off.
    private static func endOfValue(_ bytes: UnsafeBufferPointer<UInt8>, _ start: Int) -> Int? {
        let n = bytes.count
        guard start < n else { return nil }
        let first = bytes[start]
        if first == quote { return endOfString(bytes, start) }
        if first == openBrace || first == openBracket {
            var depth = 0
            var j = start
            while j < n {
                let b = bytes[j]
                if b == quote {
                    guard let end = endOfString(bytes, j) else { return nil }
                    j = end
                    continue
                }
                if b == openBrace || b == openBracket { depth += 1 }
                if b == closeBrace || b == closeBracket {
                    depth -= 1
                    if depth == 0 { return j + 1 }
                }
                j += 1
            }
            return nil
        }
        var j = start
        while j < n {
            let b = bytes[j]
            if b == comma || b == closeBrace || b == closeBracket || isSpace(b) { return j }
            j += 1
        }
        return nil  // a scalar running to the end of a cut-off frame may be cut too
    }

    /// A JSON syntax check (RFC 8259): values, string escapes, UTF-8, numbers' grammar.
    private struct Syntax {
        let bytes: UnsafeBufferPointer<UInt8>
        var i = 0
        static let maxDepth = 512

        init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

        mutating func document() -> Bool {
            skipSpace()
            guard value(depth: 0) else { return false }
            skipSpace()
            return i == bytes.count
        }

        mutating func skipSpace() { while i < bytes.count && isSpace(bytes[i]) { i += 1 } }

        mutating func value(depth: Int) -> Bool {
            guard i < bytes.count, depth < Self.maxDepth else { return false }
            switch bytes[i] {
            case quote: return string()
            case openBrace: return container(close: closeBrace, depth: depth, keyed: true)
            case openBracket: return container(close: closeBracket, depth: depth, keyed: false)
            case UInt8(ascii: "t"): return literal("true")
            case UInt8(ascii: "f"): return literal("false")
            case UInt8(ascii: "n"): return literal("null")
            default: return number()
            }
        }

        mutating func container(close: UInt8, depth: Int, keyed: Bool) -> Bool {
            i += 1
            skipSpace()
            if i < bytes.count, bytes[i] == close {
                i += 1
                return true
            }
            while true {
                skipSpace()
                if keyed {
                    guard i < bytes.count, bytes[i] == quote, string() else { return false }
                    skipSpace()
                    guard i < bytes.count, bytes[i] == colon else { return false }
                    i += 1
                    skipSpace()
                }
                guard value(depth: depth + 1) else { return false }
                skipSpace()
                guard i < bytes.count else { return false }
                if bytes[i] == close {
                    i += 1
                    return true
                }
                guard bytes[i] == comma else { return false }
                i += 1
            }
        }

        mutating func literal(_ word: String) -> Bool {
            let count = word.utf8.count
            guard i + count <= bytes.count, bytes[i..<(i + count)].elementsEqual(word.utf8) else { return false }
            i += count
            return true
        }

        mutating func string() -> Bool {
            let start = i + 1
            i += 1
            var ascii = true
            while i < bytes.count {
                let b = bytes[i]
                if b == quote {
                    i += 1
                    return ascii || String(validating: UnsafeBufferPointer(rebasing: bytes[start..<(i - 1)]), as: UTF8.self) != nil
                }
                if b < 0x20 { return false }
                if b >= 0x80 { ascii = false }
                if b == backslash {
                    guard i + 1 < bytes.count else { return false }
                    switch bytes[i + 1] {
                    case quote, backslash, UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"), UInt8(ascii: "n"),
                        UInt8(ascii: "r"), UInt8(ascii: "t"):
                        i += 2
                    case UInt8(ascii: "u"):
                        guard i + 5 < bytes.count,
                            bytes[(i + 2)...(i + 5)].allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 | 0x20 >= 0x61 && $0 | 0x20 <= 0x66) })
                        else { return false }
                        i += 6
                    default:
                        return false
                    }
                    continue
                }
                i += 1
            }
            return false
        }

        mutating func number() -> Bool {
            func digits() -> Int {
                let from = i
                while i < bytes.count, bytes[i] >= 0x30, bytes[i] <= 0x39 { i += 1 }
                return i - from
            }
            if i < bytes.count, bytes[i] == UInt8(ascii: "-") { i += 1 }
            let first = i
            let integer = digits()
            guard integer > 0, integer == 1 || bytes[first] != 0x30 else { return false }
            if i < bytes.count, bytes[i] == UInt8(ascii: ".") {
                i += 1
                guard digits() > 0 else { return false }
            }
            if i < bytes.count, bytes[i] | 0x20 == UInt8(ascii: "e") {
                i += 1
                if i < bytes.count, bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-") { i += 1 }
                guard digits() > 0 else { return false }
            }
            return true
        }
    }
}
