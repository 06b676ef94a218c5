// The fields analytics reads from other services' events, decoded tolerantly: extra fields
// are ignored and whatever a producer may leave out is optional. Vehicles and fill-ups are
// decoded as the very types records publishes (Contracts/Fuel.swift); the consumed events
// are listed in docs/protocol.md, "Analytics service".
import Foundation
import Storage
import Wire

struct IdPayload: Decodable, Sendable {
    var id: String
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
    /// fresh | salt: the catch's water the answer was made for (absent in older events).
    var water: String? = nil
}

/// `conditions.unavailable {catchId, reason}`; `hour`, `latitude` and `longitude` are read
/// when the weather-fetcher includes them.
struct ConditionsUnavailablePayload: Decodable, Sendable {
    var catchId: String
    var reason: String?
    var hour: Date?
    var latitude: Double?
    var longitude: Double?
    var water: String?
}

struct UserDeletedPayload: Decodable, Sendable {
    var userId: String
}

// MARK: Fast paths

/// Reads fields straight from an event's JSON, for the payloads a bulk replay sees most
/// (catches, conditions): going through JSONEncoder and JSONDecoder cost about
/// as much as the projection itself. Same tolerance as the Decodable structs; a missing
/// or mistyped required field throws a DecodingError (the event is then skipped and logged).
struct PayloadReader {
    let object: [String: JSONValue]
    let type: String

    init(_ value: JSONValue, type: String) throws {
        guard case .object(let object) = value else { throw Self.error(type, "is not a JSON object") }
        self.object = object
        self.type = type
    }

    static func error(_ type: String, _ message: String) -> DecodingError {
        DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "\(type) payload: \(message)"))
    }

    private func present(_ key: String) -> JSONValue? {
        guard let value = object[key], value != .null else { return nil }
        return value
    }

    func string(_ key: String) throws -> String {
        guard let value = try optionalString(key) else { throw Self.error(type, "\(key) is required") }
        return value
    }

    func optionalString(_ key: String) throws -> String? {
        guard let value = present(key) else { return nil }
        guard let text = value.stringValue else { throw Self.error(type, "\(key) must be a string") }
        return text
    }

    func optionalDate(_ key: String) throws -> Date? {
        guard let text = try optionalString(key) else { return nil }
        guard let date = WireTime.parse(text) else { throw Self.error(type, "\(key) is not an ISO-8601 time") }
        return date
    }

    func double(_ key: String) throws -> Double? {
        guard let value = present(key) else { return nil }
        guard let number = value.doubleValue, number.isFinite else { throw Self.error(type, "\(key) must be a number") }
        return number
    }

    func nested(_ key: String) throws -> PayloadReader {
        guard let value = present(key) else { throw Self.error(type, "\(key) is required") }
        return try PayloadReader(value, type: type + "." + key)
    }
}

extension CatchPayload {
    init(_ event: Event) throws {
        let r = try PayloadReader(event.data, type: event.type)
        self.init(
            id: try r.string("id"), species: try r.string("species"), bait: try r.optionalString("bait"),
            water: try r.optionalString("water"), latitude: try r.double("latitude"),
            longitude: try r.double("longitude"),
            caughtAt: try r.optionalDate("caughtAt"))
    }
}

extension ConditionsReadyPayload {
    init(_ event: Event) throws {
        let r = try PayloadReader(event.data, type: event.type)
        let c = try r.nested("conditions")
        let beaufort = try c.double("beaufort").map { Int($0.rounded()) }
        self.init(
            catchId: try r.string("catchId"), summary: try r.optionalString("summary"),
            conditions: ConditionsPayload(
                hour: try c.optionalDate("hour"), latitude: try c.double("latitude"),
                longitude: try c.double("longitude"),
                temperatureBand: try c.optionalString("temperatureBand"),
                pressureBand: try c.optionalString("pressureBand"),
                pressureTrend: try c.optionalString("pressureTrend"), beaufort: beaufort,
                windDirection: try c.optionalString("windDirection"), sky: try c.optionalString("sky"),
                timeOfDay: try c.optionalString("timeOfDay"), moonPhase: try c.optionalString("moonPhase"),
                tidePhase: try c.optionalString("tidePhase"), tideHeightBand: try c.optionalString("tideHeightBand"),
                water: try c.optionalString("water")))
    }
}
