// Reading settings at process start, without Foundation's first-use costs: every `logbook`
// command reads the environment and the stack's settings before its first request, and
// `ProcessInfo.processInfo.environment` (0.15 ms) and `trimmingCharacters(in:)` (0.19 ms,
// its Unicode character sets loaded on first use) each cost more than the rest of reading
// them (docs/performance.md, "The CLI's own work").
#if canImport(Glibc)
    import Glibc
#endif

public enum ProcessEnvironment {
    /// The process environment, read from `environ`: the first of a repeated name wins, as
    /// `getenv` answers.
    public static func current() -> [String: String] {
        var values: [String: String] = [:]
        var entry = environ
        while let pointer = entry.pointee {
            let text = String(cString: pointer)
            if let equals = text.utf8.firstIndex(of: UInt8(ascii: "=")) {
                let name = String(text[..<equals])
                if values[name] == nil { values[name] = String(text[text.index(after: equals)...]) }
            }
            entry += 1
        }
        return values
    }
}

extension StringProtocol {
    /// Without leading and trailing spaces, tabs and line ends (ASCII): what a settings file,
    /// a key file or an environment value may carry around its value.
    public var trimmingSpaces: String {
        func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || (0x09...0x0D).contains(byte) }
        let bytes = Array(utf8)
        guard let first = bytes.firstIndex(where: { !isSpace($0) }) else { return "" }
        let last = bytes.lastIndex(where: { !isSpace($0) })!
        // Spaces are single bytes, so the cut falls between whole characters.
        return String(decoding: bytes[first...last], as: UTF8.self)
    }
}
