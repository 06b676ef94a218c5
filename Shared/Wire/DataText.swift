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
    /// name), else the encoder's literal. `CanonicalJSON.quoted` is this, as `Data`.
    public mutating func appendQuoted(_ text: String) {
        let mark = count
        append(UInt8(ascii: "\""))
        var text = text
        let plain = text.withUTF8 { bytes -> Bool in
            for byte in bytes where byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte < 0x20 {
                return false
            }
            append(contentsOf: bytes)
            return true
        }
        if plain {
            append(UInt8(ascii: "\""))
        } else {
            removeSubrange(mark...)
            append((try? WireCoding.encode(text)) ?? Data("\"\"".utf8))
        }
    }
}
