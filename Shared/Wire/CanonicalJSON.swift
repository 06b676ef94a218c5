// The canonical text of a JSON value (no whitespace, object keys sorted), written straight
// from its bytes: what the idempotency log hashes a write's body by (Router.requestHash).
// It produces exactly what `JSONValue.jsonText` gives for the same value (the shared
// encoder's sorted keys: UTF-8 byte order; numbers in JSONNumber's canonical text), without building a JSONValue tree and encoding it again.
// Anything it does not handle exactly (escapes in strings, non-ASCII keys, duplicate
// keys, deep nesting, a number it cannot read back the same way) answers nil, and the
// caller takes the long way (decode, then `jsonText`), so the result never differs.
import Foundation

public enum CanonicalJSON {
    /// The canonical text of the JSON value in `bytes`, or nil (see above).
    public static func text(_ bytes: Data) -> [UInt8]? {
        bytes.withUnsafeBytes { raw in text(raw.bindMemory(to: UInt8.self)) }
    }

    /// `text`, of bytes in memory (a member's value inside a frame).
    public static func text(_ input: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        var writer = Writer(input: input)
        writer.output.reserveCapacity(input.count)
        guard writer.value(depth: 0) else { return nil }
        writer.skipSpace()
        guard writer.i == writer.input.count else { return nil }
        return writer.output
    }

    /// `text` as a JSON string literal, exactly as the shared encoder writes it: the text
    /// itself in quotes when nothing in it needs an escape (the usual id, method, token),
    /// else with the encoder's escapes (DataText.swift, `appendQuoted`).
    public static func quoted(_ text: String) -> Data {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count + 2)
        bytes.appendQuoted(text)
        return Data(bytes)
    }

    private struct Writer {
        let input: UnsafeBufferPointer<UInt8>
        var i = 0
        var output: [UInt8] = []

        static let maxDepth = 64

        mutating func skipSpace() {
            while i < input.count {
                let b = input[i]
                guard b == 0x20 || b == 0x09 || b == 0x0A || b == 0x0D else { return }
                i += 1
            }
        }

        mutating func value(depth: Int) -> Bool {
            skipSpace()
            guard i < input.count, depth <= Self.maxDepth else { return false }
            switch input[i] {
            case UInt8(ascii: "{"): return object(depth: depth)
            case UInt8(ascii: "["): return array(depth: depth)
            case UInt8(ascii: "\""):
                guard let end = stringEnd(allowNonASCII: true) else { return false }
                let text = input[i..<end]
                // Non-ASCII text is copied as it is only when it is valid UTF-8.
                if text.contains(where: { $0 >= 0x80 }), String(validating: text, as: UTF8.self) == nil { return false }
                output.append(contentsOf: text)
                i = end
                return true
            case UInt8(ascii: "t"): return literal("true")
            case UInt8(ascii: "f"): return literal("false")
            case UInt8(ascii: "n"): return literal("null")
            default: return number()
            }
        }

        mutating func literal(_ word: StaticString) -> Bool {
            let count = word.utf8CodeUnitCount
            guard i + count <= input.count else { return false }
            for k in 0..<count where input[i + k] != word.utf8Start[k] { return false }
            output.append(contentsOf: input[i..<(i + count)])
            i += count
            return true
        }

        /// The index after the closing quote of the string at `i`; nil for a string this
        /// writer does not copy verbatim (an escape, a control character, a cut-off string,
        /// and non-ASCII text where that is not allowed).
        func stringEnd(allowNonASCII: Bool) -> Int? {
            var j = i + 1
            while j < input.count {
                let b = input[j]
                if b == UInt8(ascii: "\"") { return j + 1 }
                if b == UInt8(ascii: "\\") || b < 0x20 || (!allowNonASCII && b >= 0x80) { return nil }
                j += 1
            }
            return nil
        }

        mutating func array(depth: Int) -> Bool {
            i += 1
            output.append(UInt8(ascii: "["))
            skipSpace()
            if i < input.count, input[i] == UInt8(ascii: "]") {
                i += 1
                output.append(UInt8(ascii: "]"))
                return true
            }
            while true {
                guard value(depth: depth + 1) else { return false }
                skipSpace()
                guard i < input.count else { return false }
                if input[i] == UInt8(ascii: ",") {
                    i += 1
                    output.append(UInt8(ascii: ","))
                    continue
                }
                guard input[i] == UInt8(ascii: "]") else { return false }
                i += 1
                output.append(UInt8(ascii: "]"))
                return true
            }
        }

        mutating func object(depth: Int) -> Bool {
            i += 1
            // Each member's canonical text, written aside, then emitted in key order.
            var members: [(key: ArraySlice<UInt8>, text: [UInt8])] = []
            let outer = output
            skipSpace()
            if i < input.count, input[i] == UInt8(ascii: "}") {
                i += 1
                output.append(contentsOf: [UInt8(ascii: "{"), UInt8(ascii: "}")])
                return true
            }
            while true {
                skipSpace()
                guard i < input.count, input[i] == UInt8(ascii: "\""), let keyEnd = stringEnd(allowNonASCII: false) else {
                    return false
                }
                let key = ArraySlice(input[(i + 1)..<(keyEnd - 1)])
                i = keyEnd
                skipSpace()
                guard i < input.count, input[i] == UInt8(ascii: ":") else { return false }
                i += 1
                output = []
                guard value(depth: depth + 1) else { return false }
                members.append((key, output))
                skipSpace()
                guard i < input.count else { return false }
                if input[i] == UInt8(ascii: ",") {
                    i += 1
                    continue
                }
                guard input[i] == UInt8(ascii: "}") else { return false }
                i += 1
                break
            }
            members.sort { $0.key.lexicographicallyPrecedes($1.key) }
            for k in members.indices.dropFirst() where members[k].key == members[k - 1].key { return false }
            output = outer
            output.append(UInt8(ascii: "{"))
            for (k, member) in members.enumerated() {
                if k > 0 { output.append(UInt8(ascii: ",")) }
                output.append(UInt8(ascii: "\""))
                output.append(contentsOf: member.key)
                output.append(contentsOf: [UInt8(ascii: "\""), UInt8(ascii: ":")])
                output.append(contentsOf: member.text)
            }
            output.append(UInt8(ascii: "}"))
            return true
        }

        /// A JSON number, written in its canonical text (JSONNumber.swift).
        mutating func number() -> Bool {
            let start = i
            var j = i
            func digits() -> Int {
                let from = j
                while j < input.count, input[j] >= UInt8(ascii: "0"), input[j] <= UInt8(ascii: "9") { j += 1 }
                return j - from
            }
            if j < input.count, input[j] == UInt8(ascii: "-") { j += 1 }
            let firstDigit = j
            let integerDigits = digits()
            guard integerDigits > 0, integerDigits == 1 || input[firstDigit] != UInt8(ascii: "0") else { return false }
            var plain = true
            if j < input.count, input[j] == UInt8(ascii: ".") {
                j += 1
                guard digits() > 0 else { return false }
                plain = false
            }
            if j < input.count, input[j] == UInt8(ascii: "e") || input[j] == UInt8(ascii: "E") {
                j += 1
                if j < input.count, input[j] == UInt8(ascii: "+") || input[j] == UInt8(ascii: "-") { j += 1 }
                guard digits() > 0 else { return false }
                plain = false
            }
            i = j
            let token = input[start..<j]
            // The usual case: a small integer is its own canonical text ("-0" is "0").
            if plain, integerDigits <= 15, !(token.count == 2 && token.first == UInt8(ascii: "-") && token.last == UInt8(ascii: "0")) {
                output.append(contentsOf: token)
                return true
            }
            guard let text = JSONNumber.canonicalText(String(decoding: token, as: UTF8.self)) else { return false }
            output.append(contentsOf: text.utf8)
            return true
        }
    }
}
