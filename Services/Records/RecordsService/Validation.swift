// Field rules shared by every logbook. Each failure is `invalid_argument` naming the field,
// the rule and the offending value: `volume: must be greater than 0 (got -3)`.
import Contracts
import Foundation
import GRDB
import Runtime
import Wire

/// The service's notion of "now", injected so timer tests can move time.
public typealias Now = @Sendable () -> Date

/// Refuses `field` unless `condition` holds: "`field`: `rule` (got `got`)".
func require(_ condition: Bool, _ field: String, _ rule: String, got: @autoclosure () -> String) throws {
    if !condition { throw ServiceError.invalid(field, "\(rule) (got \(got()))") }
}

/// How a refused value is quoted in a message: strings in quotes, long text by its length.
func shown(_ text: String) -> String {
    characters(text) > 80 ? "\(characters(text)) characters" : "\"\(text)\""
}

/// A number as the caller likely wrote it: `-181`, not `-181.0`.
func shown(_ value: Double) -> String {
    value.isFinite && value.rounded() == value && abs(value) < 1e15 ? String(Int64(value)) : "\(value)"
}

/// Text length as SQLite's `length()` counts it (Unicode scalars), so the schema's CHECKs
/// and these rules agree.
func characters(_ text: String) -> Int { text.unicodeScalars.count }

/// Refuses U+0000 in any text: SQLite and C tools end strings there.
func noNul(_ value: String, _ field: String) throws {
    if let index = value.unicodeScalars.firstIndex(of: "\0") {
        let position = value.unicodeScalars.distance(from: value.unicodeScalars.startIndex, to: index) + 1
        throw ServiceError.invalid(field, "must not contain U+0000 (got one at character \(position))")
    }
}

/// A required short text (a name): trimmed, then 1…`max` characters.
func requiredText(_ value: String, _ field: String, max: Int, rule: String? = nil) throws -> String {
    try noNul(value, field)
    let trimmed = value.trimmingWhitespace
    try require(
        !trimmed.isEmpty && characters(trimmed) <= max, field, rule ?? "must be 1–\(max) characters", got: shown(value))
    return trimmed
}

/// An optional text: trimmed; empty reads as absent; at most `max` characters.
func optionalText(_ value: String?, _ field: String, max: Int) throws -> String? {
    guard let value else { return nil }
    try noNul(value, field)
    let trimmed = value.trimmingWhitespace
    if trimmed.isEmpty { return nil }
    try require(characters(trimmed) <= max, field, "must be at most \(max) characters", got: shown(value))
    return trimmed
}

/// An ISO-4217 code: three uppercase letters; `USD` when absent.
func currency(_ value: String?, _ field: String = "currency") throws -> String {
    guard let value else { return "USD" }
    try require(
        value.utf8.count == 3 && value.utf8.allSatisfy { $0 >= 65 && $0 <= 90 }, field,
        "must be an ISO-4217 code of 3 uppercase letters, like USD", got: shown(value))
    return value
}

/// Times more than five minutes ahead of the server are refused everywhere.
func notInFuture(_ date: Date, _ field: String, now: Date) throws {
    try require(
        date.timeIntervalSince(now) <= 5 * 60, field, "must not be more than 5 minutes in the future",
        got: WireTime.format(date))
}

func positive(_ value: Milli, _ field: String) throws {
    try require(value.thousandths > 0, field, "must be greater than 0", got: value.description)
}

func positive(_ value: Int64, _ field: String) throws {
    try require(value > 0, field, "must be greater than 0", got: "\(value)")
}

func checkLatitude(_ value: Double, _ field: String = "latitude") throws {
    try require(value.isFinite && (-90...90).contains(value), field, "must be between -90 and 90", got: shown(value))
}

func checkLongitude(_ value: Double, _ field: String = "longitude") throws {
    try require(value.isFinite && (-180...180).contains(value), field, "must be between -180 and 180", got: shown(value))
}

/// An id the caller sent: answered `not_found` when it cannot be one of ours, so a
/// malformed id and a foreign one look the same.
func notFound(_ what: String, _ id: String) -> ServiceError {
    ServiceError(.notFound, "\(what) \(id) not found", field: "id")
}

// MARK: Storage helpers

extension Date {
    /// The calendar day in UTC, `2026-05-01`, for messages.
    var day: String { String(WireTime.format(self).prefix(10)) }
}

extension Milli {
    /// Reads a stored thousandths column.
    init(_ thousandths: Int64) { self.init(thousandths: thousandths) }
}
