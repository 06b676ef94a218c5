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
