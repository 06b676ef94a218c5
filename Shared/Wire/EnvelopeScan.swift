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
    /// with it take the decoder's way then).
    public static func uniqueMembers(_ frame: Data, _ keys: Set<String>) -> [String: Data]? {
        frame.withUnsafeBytes { raw -> [String: Data]? in
            let bytes = raw.bindMemory(to: UInt8.self)
            var repeated = false
            let found = scan(bytes, keys, repeated: &repeated)
            return repeated ? nil : found
        }
    }

    /// The top-level `id` string of a frame, even a truncated one; nil when there is none.
    public static func id(_ frame: Data) -> String? {
        guard let raw = members(frame, ["id"])["id"] else { return nil }
        // The usual id (a UUID) has no escapes: its text is the string.
        if raw.count >= 2, raw.first == quote, raw.last == quote, !raw.contains(backslash) {
            return String(decoding: raw.dropFirst().dropLast(), as: UTF8.self)
        }
        return try? WireCoding.decoder.decode(String.self, from: raw)
    }

    private static let quote = UInt8(ascii: "\""), backslash = UInt8(ascii: "\\")
    private static let openBrace = UInt8(ascii: "{"), closeBrace = UInt8(ascii: "}")
    private static let openBracket = UInt8(ascii: "["), closeBracket = UInt8(ascii: "]")
    private static let colon = UInt8(ascii: ":"), comma = UInt8(ascii: ",")

    private static func isSpace(_ b: UInt8) -> Bool { b == 0x20 || b == 0x09 || b == 0x0A || b == 0x0D }

    private static func scan(_ bytes: UnsafeBufferPointer<UInt8>, _ keys: Set<String>, repeated: inout Bool) -> [String: Data] {
        var result: [String: Data] = [:]
        let n = bytes.count
        var i = 0
        func skipSpace() { while i < n && isSpace(bytes[i]) { i += 1 } }
        skipSpace()
        guard i < n, bytes[i] == openBrace else { return result }
        i += 1
        while true {
            skipSpace()
            guard i < n, bytes[i] == quote, let keyEnd = endOfString(bytes, i) else { return result }
            let keyBytes = UnsafeBufferPointer(rebasing: bytes[(i + 1)..<(keyEnd - 1)])
            let key = keyBytes.contains(backslash)
                ? (try? JSONDecoder().decode(String.self, from: Data(bytes[i..<keyEnd]))) ?? ""
                : String(decoding: keyBytes, as: UTF8.self)
            i = keyEnd
            skipSpace()
            guard i < n, bytes[i] == colon else { return result }
            i += 1
            skipSpace()
            guard let valueEnd = endOfValue(bytes, i) else { return result }
            if keys.contains(key) {
                if result[key] != nil { repeated = true }
                result[key] = Data(bytes[i..<valueEnd])
            }
            i = valueEnd
            skipSpace()
            guard i < n, bytes[i] == comma else { return result }
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
}
