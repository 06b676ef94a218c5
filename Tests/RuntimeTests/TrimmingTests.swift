// The services' trim of a text field (Shared/Wire/Trimming.swift) against Foundation's
// `trimmingCharacters(in: .whitespacesAndNewlines)`, which it replaced: every scalar of the
// Basic Multilingual Plane and the planes above it around a value, and texts built to catch
// a trim by grapheme rather than by scalar.
import Foundation
import Testing
import Wire

@Suite struct TrimmingTests {
    @Test func everyScalarIsTrimmedAsFoundationTrimsIt() {
        var differences: [String] = []
        for value in UInt32(0)...0x10FFFF {
            guard let scalar = Unicode.Scalar(value) else { continue }
            let text = "\(scalar)a b\(scalar)"
            let expected = text.trimmingCharacters(in: .whitespacesAndNewlines)
            if text.trimmingWhitespace != expected { differences.append(String(value, radix: 16)) }
        }
        #expect(differences.isEmpty, "trimmed differently from Foundation: U+\(differences.prefix(20))")
    }

    @Test func textsAreCutByScalarAsFoundationCutsThem() {
        let texts = [
            "", " ", " \t\r\n\u{85}\u{A0}\u{2028}\u{3000} ", "coffee", "  coffee  ", "\u{A0}latte\u{2009}",
            // a combining mark after a leading space: Foundation keeps the mark
            " \u{301}abc", "abc \u{301}", "\u{301} ", "e\u{301} ",
            // a flag and a family emoji, with and without white space around them
            " 🇫🇷 ", "👨‍👩‍👧", "\t👨‍👩‍👧\n", "in  between  stays", "\r\n",
            // line ends that CharacterSet counts as new lines
            "\u{2029}x\u{2029}", "\u{0B}x\u{0C}",
        ]
        for text in texts {
            #expect(text.trimmingWhitespace == text.trimmingCharacters(in: .whitespacesAndNewlines), "\(Array(text.unicodeScalars))")
        }
    }
}
