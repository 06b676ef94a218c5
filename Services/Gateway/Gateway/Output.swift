// What the CLI prints: pretty JSON with `--json`, aligned text for people otherwise.
// Results go to stdout, errors to stderr as one line (or as the error JSON).
import Foundation
import Runtime
import Wire

public enum Output {
    /// Writes text plus a newline to stdout, unbuffered (the CLI may exit right after).
    public static func line(_ text: String) {
        write(text + "\n", to: STDOUT_FILENO)
    }

    public static func errorLine(_ text: String) {
        write(text + "\n", to: STDERR_FILENO)
    }

    /// All of `text`, straight to the file descriptor; stops quietly when the reader is gone.
    static func write(_ text: String, to fd: Int32) {
        var text = text
        _ = text.withUTF8 { FileDescriptor.writeAll(fd, UnsafeRawBufferPointer($0)) }
    }

    public static func json(_ value: JSONValue) {
        line(value.prettyText)
    }

    public static func json(_ value: some Encodable) {
        json((try? JSONValue.from(value)) ?? .null)
    }

    /// `error: <message> (<code>)` on stderr, or the error's JSON with `--json`.
    public static func error(_ error: ServiceError, json: Bool) {
        if json {
            errorLine((try? JSONValue.from(error))?.prettyText ?? "{}")
        } else {
            errorLine("error: \(error.message) (\(error.code.rawValue))")
        }
    }

    /// Columns padded to the widest cell; the last column is not padded.
    public static func table(_ headers: [String], _ rows: [[String]]) -> String {
        let all = [headers] + rows
        let count = all.map(\.count).max() ?? 0
        var widths = [Int](repeating: 0, count: count)
        for row in all {
            for (i, cell) in row.enumerated() { widths[i] = max(widths[i], cell.count) }
        }
        return all.map { row in
            row.enumerated().map { i, cell in
                i == row.count - 1 ? cell : pad(cell, to: widths[i])
            }.joined(separator: "  ")
        }.joined(separator: "\n")
    }

    /// `key: value` lines with the values aligned.
    public static func fields(_ pairs: [(String, String)]) -> String {
        let width = (pairs.map(\.0.count).max() ?? 0) + 1
        return pairs.map { pad($0.0 + ":", to: width) + "  " + $0.1 }.joined(separator: "\n")
    }

    /// `text` with spaces after it up to `width` characters, as the widths are counted (an
    /// accented letter or an emoji is one).
    static func pad(_ text: String, to width: Int) -> String {
        let count = text.count
        return count >= width ? text : text + String(repeating: " ", count: width - count)
    }

    /// A measurement (a coordinate, an accuracy) as JSON writes it: 40.7128; a whole number
    /// without decimals.
    public static func number(_ value: Double) -> String { JSONNumber(value).text }

    /// A JSON value as a short cell: strings bare, null as "-".
    public static func cell(_ value: JSONValue?) -> String {
        switch value {
        case .none, .null?: "-"
        case .string(let s)?: s
        case .number(let n)?: n.text
        case .bool(let b)?: b ? "yes" : "no"
        case let other?: other.jsonText
        }
    }

    /// 93 ms, 4.2 s, 3m 12s, 2h 5m, 3d 4h.
    public static func duration(milliseconds ms: Int64) -> String {
        if ms < 1000 { return "\(ms) ms" }
        let s = ms / 1000
        if s < 60 { return String(format: "%.1f s", Double(ms) / 1000) }
        if s < 3600 { return "\(s / 60)m \(s % 60)s" }
        if s < 86400 { return "\(s / 3600)h \(s % 3600 / 60)m" }
        return "\(s / 86400)d \(s % 86400 / 3600)h"
    }
}
