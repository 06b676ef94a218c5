// Appending text to a frame being written. `Data.append(contentsOf: text.utf8)` takes the
// bytes through the generic sequence path; this copies the string's UTF-8 storage at once
// (every request and reply frame is written this way).
import Foundation

extension Data {
    /// Appends `text`'s UTF-8 bytes with one copy.
    public mutating func appendUTF8(_ text: String) {
        var text = text
        text.withUTF8 { bytes in
            guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
            append(base, count: bytes.count)
        }
    }
}

/// A frame or JSON text written as bytes first, made `Data` once at the end: piece by piece,
/// `Data` checks its representation on every append, and a `Data` per quoted string cost
/// more than everything else in writing a small frame.
extension Array where Element == UInt8 {
    /// Appends `text`'s UTF-8 bytes with one copy.
    public mutating func appendUTF8(_ text: String) {
        var text = text
        text.withUTF8 { append(contentsOf: $0) }
    }

    /// Appends `data`'s bytes.
    public mutating func append(_ data: Data) {
        data.withUnsafeBytes { append(contentsOf: $0) }
    }

    /// Appends `text` as a JSON string literal, exactly as the shared encoder writes it: the
    /// text itself in quotes when nothing in it needs an escape (the usual id, method, token,
    /// name), else with the encoder's escapes (`appendEscaped`). `CanonicalJSON.quoted` is
    /// this, as `Data`.
    public mutating func appendQuoted(_ text: String) {
        append(UInt8(ascii: "\""))
        var text = text
        text.withUTF8 { bytes in
            if bytes.contains(where: Self.needsEscape) {
                appendEscaped(bytes)
            } else {
                append(contentsOf: bytes)
            }
        }
        append(UInt8(ascii: "\""))
    }

    private static func needsEscape(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte < 0x20
    }

    /// UTF-8 with the escapes Foundation's encoder writes (held to it by
    /// Tests/RuntimeTests/JSONOutputTests.swift): a quote and a backslash escaped, \b \t \n
    /// \f \r by their letters, the other control characters as \u00xx in lowercase hex, and
    /// everything else (slashes too: the shared encoder does not escape them) as it is. Text
    /// that needs this (a cache key holding a request's JSON) used to go through the encoder,
    /// whose first use is a quarter of a millisecond of a one-shot command.
    private mutating func appendEscaped(_ bytes: UnsafeBufferPointer<UInt8>) {
        let hex = Hex.digits
        for byte in bytes {
            guard Self.needsEscape(byte) else {
                append(byte)
                continue
            }
            append(UInt8(ascii: "\\"))
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): append(byte)
            case 0x08: append(UInt8(ascii: "b"))
            case 0x09: append(UInt8(ascii: "t"))
            case 0x0A: append(UInt8(ascii: "n"))
            case 0x0C: append(UInt8(ascii: "f"))
            case 0x0D: append(UInt8(ascii: "r"))
            default: append(contentsOf: [UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
            }
        }
    }
}
