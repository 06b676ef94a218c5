// The fields analytics reads from other services' events, decoded tolerantly: extra fields
// are ignored and whatever a producer may leave out is optional. These mirror (and do not
// import) the structs records, weather-fetcher and auth pass to `Outbox.append`; the
// consumed events are listed in docs/protocol-analytics.md.
import Foundation

/// A quantity with at most three decimals as integer thousandths (records' `Milli` on the
/// wire: a JSON number). Valid inputs (below 10^12) are exact through a Double.
struct Thousandths: Decodable, Sendable, Equatable {
    var value: Int64

    init(_ value: Int64) { self.value = value }

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let number = try container.decode(Double.self)
        guard number.isFinite, abs(number) < 1e14 else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "not a quantity: \(number)")
        }
        value = Int64((number * 1000).rounded())
    }
}

struct VehiclePayload: Decodable, Sendable {
    var id: String
    var nickname: String?
    var distanceUnit: String?
    var volumeUnit: String?
}

struct IdPayload: Decodable, Sendable {
    var id: String
}

struct FillupPayload: Decodable, Sendable {
    var id: String
    var vehicleId: String
    var date: Date
    var odometer: Thousandths?
    var trip: Thousandths?
    var volume: Thousandths
    var totalMinor: Int64
    var currency: String?
    var full: Bool?
    var missed: Bool?
}

struct FillupDeletedPayload: Decodable, Sendable {
    var id: String
    var vehicleId: String?
}

struct ExpensePayload: Decodable, Sendable {
    var id: String
    var name: String?
    var amountMinor: Int64
    var currency: String?
    var date: Date
    var category: String?
}

struct AttendancePayload: Decodable, Sendable {
    var id: String
    var kind: String
    var at: Date
}

struct ActivityCreatedPayload: Decodable, Sendable {
    var id: String
    var name: String
    var createdAt: Date?
}

struct ActivityDeletedPayload: Decodable, Sendable {
    var id: String
    var name: String?
    var totalMs: Int64?
}

struct TimeSavedPayload: Decodable, Sendable {
    var id: String
    var activityId: String
    var durationMs: Int64
}

struct TimerPayload: Decodable, Sendable {
    var activityId: String
    var state: String
    var accumulatedMs: Int64?
    var runningSince: Date?
}

struct CatchPayload: Decodable, Sendable {
    var id: String
    var species: String
    var bait: String?
    var water: String?
    var latitude: Double?
    var longitude: Double?
    var caughtAt: Date?
}

/// `conditions.ready {catchId, summary, conditions}`: the buckets analytics counts, and the
/// place and hour they were fetched for (to tell them from a stale answer after an edit).
struct ConditionsReadyPayload: Decodable, Sendable {
    var catchId: String
    var summary: String?
    var conditions: ConditionsPayload
}

struct ConditionsPayload: Decodable, Sendable {
    var hour: Date?
    var latitude: Double?
    var longitude: Double?
    var temperatureBand: String?
    var pressureBand: String?
    var pressureTrend: String?
    var beaufort: Int?
    var windDirection: String?
    var sky: String?
    var timeOfDay: String?
    var moonPhase: String?
    var tidePhase: String?
    var tideHeightBand: String?
}

/// `conditions.unavailable {catchId, reason}`; `hour`, `latitude` and `longitude` are read
/// when the weather-fetcher includes them.
struct ConditionsUnavailablePayload: Decodable, Sendable {
    var catchId: String
    var reason: String?
    var hour: Date?
    var latitude: Double?
    var longitude: Double?
}

struct UserDeletedPayload: Decodable, Sendable {
    var userId: String
}
