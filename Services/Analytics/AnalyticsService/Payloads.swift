// The payloads analytics reads by field rather than as the type its producer publishes.
// Most events are decoded as that very type (Shared/Contracts: vehicles, expenses,
// attendance, time). The three a replay is made of (fill-ups, catches and their conditions,
// one of each for nearly every event) are read through the types below, which hold the
// fields docs/protocol.md ("Events consumed") lists as read and leave the rest of the record
// unread: its dates of creation and change, the catch's weight, photo and status, the
// provider's raw weather values. Decoding the whole record was about half of the writer's
// time in a rebuild (docs/performance.md, "Payloads read by field"). A field
// the projections do not read cannot make its event unreadable.
import Contracts
import Storage
import Foundation
import Wire

/// `fillup.created|updated` (Contracts' `Fillup`), the fields the fuel projection reads.
struct FillupRead: Decodable, Equatable {
    var id: String
    var vehicleId: String
    var date: Date
    var odometer: Milli?
    var trip: Milli?
    var volume: Milli
    var totalMinor: Int64
    var currency: String
    var full: Bool
    var missed: Bool
}

/// `catch.created|updated` (Contracts' `Catch`), the fields the catch projection reads.
struct CatchRead: Decodable, Equatable {
    var id: String
    var species: String
    var bait: String
    var water: Water
    var latitude: Double
    var longitude: Double
    var caughtAt: Date
}

/// `conditions.ready` (Contracts' `ConditionsReady`): the catch and the buckets counted.
struct ConditionsReadyRead: Decodable, Equatable {
    var catchId: String
    var conditions: ConditionsRead
}

/// Contracts' `Conditions`: the place, hour and water the answer is for, and its buckets.
struct ConditionsRead: Decodable, Equatable {
    var hour: Date
    var latitude: Double
    var longitude: Double
    var water: Water?
    var temperatureBand: String?
    var pressureBand: String?
    var pressureTrend: String?
    var beaufort: Int?
    var windDirection: String?
    var sky: String?
    var timeOfDay: String?
    var moonPhase: String
    var tidePhase: String?
    var tideHeightBand: String?
}

// MARK: Read plainly

/// A payload with a plain reading: its fields taken straight from the parsed object when
/// each is plainly what it should be (a string, a number with at most three decimals, a
/// time in the wire's form); nil otherwise, and the event is decoded (`Decodable`) instead,
/// so a payload that cannot be read fails in the decoder's words. A plain reading must give
/// what decoding gives (Tests/AnalyticsTests/PayloadTests.swift holds them to that over
/// every one-field change of each payload); it skips the decoder's generic containers and
/// boxes, about half of what decoding these payloads cost.
protocol PlainPayload: Decodable {
    init?(plain object: [String: JSONValue])
}

extension Event {
    /// The payload read plainly, else decoded.
    func read<T: PlainPayload>(_ type: T.Type) throws -> T {
        if case .object(let object) = data, let value = T(plain: object) { return value }
        return try decode(T.self)
    }
}

/// An object's fields, each nil unless it is plainly of its type; an optional field's
/// reader gives `.some(nil)` when the field is absent or null. Each field is looked up once.
private struct Fields {
    let object: [String: JSONValue]

    func string(_ key: String) -> String? { Self.string(object[key]) }
    func date(_ key: String) -> Date? { Self.date(object[key]) }
    func water(_ key: String) -> Water? { Self.water(object[key]) }
    func bool(_ key: String) -> Bool? {
        guard case .bool(let value)? = object[key] else { return nil }
        return value
    }
    func double(_ key: String) -> Double? { Self.number(object[key])?.double }
    func int64(_ key: String) -> Int64? { Self.number(object[key])?.int64 }
    func milli(_ key: String) -> Milli? { Self.milli(object[key]) }

    static func string(_ value: JSONValue?) -> String? {
        guard case .string(let text)? = value else { return nil }
        return text
    }
    static func date(_ value: JSONValue?) -> Date? { string(value).flatMap(WireTime.parse) }
    static func water(_ value: JSONValue?) -> Water? { string(value).flatMap(Water.init(rawValue:)) }
    static func number(_ value: JSONValue?) -> JSONNumber? {
        guard case .number(let number)? = value else { return nil }
        return number
    }
    static func milli(_ value: JSONValue?) -> Milli? { number(value)?.thousandths.map(Milli.init(thousandths:)) }

    /// nil: present and not plainly a `T`; `.some(nil)`: absent or null.
    func optional<T>(_ key: String, _ read: (JSONValue?) -> T?) -> T?? {
        let value = object[key]
        switch value {
        case nil, .null?: return .some(nil)
        default:
            guard let read = read(value) else { return nil }
            return .some(read)
        }
    }
}

extension FillupRead: PlainPayload {
    init?(plain object: [String: JSONValue]) {
        let f = Fields(object: object)
        guard let id = f.string("id"), let vehicleId = f.string("vehicleId"), let date = f.date("date"),
            let odometer = f.optional("odometer", Fields.milli), let trip = f.optional("trip", Fields.milli),
            let volume = f.milli("volume"), let totalMinor = f.int64("totalMinor"), let currency = f.string("currency"),
            let full = f.bool("full"), let missed = f.bool("missed")
        else { return nil }
        self.init(
            id: id, vehicleId: vehicleId, date: date, odometer: odometer, trip: trip, volume: volume,
            totalMinor: totalMinor, currency: currency, full: full, missed: missed)
    }
}

extension CatchRead: PlainPayload {
    init?(plain object: [String: JSONValue]) {
        let f = Fields(object: object)
        guard let id = f.string("id"), let species = f.string("species"), let bait = f.string("bait"),
            let water = f.water("water"), let latitude = f.double("latitude"), let longitude = f.double("longitude"),
            let caughtAt = f.date("caughtAt")
        else { return nil }
        self.init(
            id: id, species: species, bait: bait, water: water, latitude: latitude, longitude: longitude,
            caughtAt: caughtAt)
    }
}

extension ConditionsReadyRead: PlainPayload {
    init?(plain object: [String: JSONValue]) {
        guard case .string(let catchId)? = object["catchId"], case .object(let conditions)? = object["conditions"] else {
            return nil
        }
        let f = Fields(object: conditions)
        guard let hour = f.date("hour"), let latitude = f.double("latitude"), let longitude = f.double("longitude"),
            let water = f.optional("water", Fields.water),
            let temperatureBand = f.optional("temperatureBand", Fields.string),
            let pressureBand = f.optional("pressureBand", Fields.string),
            let pressureTrend = f.optional("pressureTrend", Fields.string),
            let beaufort = f.optional("beaufort", { Fields.number($0)?.int64.flatMap { Int(exactly: $0) } }),
            let windDirection = f.optional("windDirection", Fields.string),
            let sky = f.optional("sky", Fields.string),
            let timeOfDay = f.optional("timeOfDay", Fields.string), let moonPhase = f.string("moonPhase"),
            let tidePhase = f.optional("tidePhase", Fields.string),
            let tideHeightBand = f.optional("tideHeightBand", Fields.string)
        else { return nil }
        self.init(
            catchId: catchId,
            conditions: ConditionsRead(
                hour: hour, latitude: latitude, longitude: longitude, water: water, temperatureBand: temperatureBand,
                pressureBand: pressureBand, pressureTrend: pressureTrend, beaufort: beaufort,
                windDirection: windDirection, sky: sky, timeOfDay: timeOfDay, moonPhase: moonPhase,
                tidePhase: tidePhase, tideHeightBand: tideHeightBand))
    }
}

/// `user.deleted` (auth): whose rows to delete.
struct UserDeletedPayload: Decodable, Sendable {
    var userId: String
}
