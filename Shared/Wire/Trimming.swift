// Trimming the white space around a text field, without Foundation's `trimmingCharacters(in:)`:
// that bridges the string to NSString and walks a CharacterSet, 8 µs of a 300 µs write
// inside the writer's transaction (docs/performance.md, "The write path, a third round").
// The set trimmed is Foundation's `.whitespacesAndNewlines` on this platform: Unicode's
// White_Space property (U+0009–U+000D, U+0020, U+0085, U+00A0, U+1680, U+2000–U+200A,
// U+2028, U+2029, U+202F, U+205F, U+3000) and U+200B ZERO WIDTH SPACE, which Foundation
// still counts. It is cut by Unicode scalar, as Foundation cuts: a combining mark after a
// leading space stays. Tests/RuntimeTests/TrimmingTests.swift
// holds the two to the same answers.

import Foundation

extension String {
    /// Without the leading and trailing Unicode white space (what
    /// `trimmingCharacters(in: .whitespacesAndNewlines)` removes).
    public var trimmingWhitespace: String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !$0.isWhiteSpace }) else { return "" }
        let last = scalars.lastIndex(where: { !$0.isWhiteSpace })!
        // The common case, nothing to trim, makes no new string.
        if first == scalars.startIndex && scalars.index(after: last) == scalars.endIndex { return self }
        return String(scalars[first...last])
    }
}

extension Unicode.Scalar {
    /// Foundation's white space and new lines (see the header), answered for ASCII without
    /// the property tables.
    fileprivate var isWhiteSpace: Bool {
        value < 0x80 ? value == 0x20 || (0x09...0x0D).contains(value) : value == 0x200B || properties.isWhitespace
    }
}

extension String {
    /// The text as names are compared without case everywhere in Logbook (species and
    /// baits, expense categories, activity names): trimmed (`trimmingWhitespace`) and
    /// lowercased letter by letter in Unicode ("Ørret" and "ørret" are one). Records' SQL
    /// reads the same through `logbook_fold(text)` (Shared/Storage/Database.swift).
    public var foldedForComparison: String {
        // Nearly every name is already folded: printable ASCII without capitals, nothing to
        // trim at either end. That is checked on the bytes; anything else is trimmed and
        // lowercased by the standard library.
        let bytes = utf8
        if let first = bytes.first, let last = bytes.last, first > 0x20, last > 0x20, last != 0x7F,
            !bytes.contains(where: { $0 >= 0x80 || ($0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z")) })
        {
            return self
        }
        // (canonically equivalent spellings, "Ä" as one scalar or as A and a combining
        // mark, are one text to Swift's ==, so they fold to the same bytes for SQL too)
        return trimmingWhitespace.lowercased().precomposedStringWithCanonicalMapping
    }
}
