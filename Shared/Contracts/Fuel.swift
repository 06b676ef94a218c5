// The fuel logbook's contract: vehicles and fill-ups (records), their events, and the
// economy figures (analytics). docs/protocol.md, "Fuel" and "analytics.fuel.stats".
// Volumes and distances are `Milli` (exact thousandths) from the CLI's text to the
// database and into analytics: never a binary floating point.
import Foundation
import Wire

// MARK: Vehicles

/// A vehicle as records keeps it, answers it and publishes it (`vehicle.created|updated`).
public struct Vehicle: Documented, Equatable {
    public var id: String
    public var nickname: String
    public var make: String?
    public var model: String?
    public var year: Int?
    public var distanceUnit: DistanceUnit
    public var volumeUnit: VolumeUnit
    public var createdAt: Date
    public var updatedAt: Date

    public init(
        id: String, nickname: String, make: String?, model: String?, year: Int?, distanceUnit: DistanceUnit,
        volumeUnit: VolumeUnit, createdAt: Date, updatedAt: Date
    ) {
        self.id = id
        self.nickname = nickname
        self.make = make
        self.model = model
        self.year = year
        self.distanceUnit = distanceUnit
        self.volumeUnit = volumeUnit
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }

    public static let sample = Vehicle(
        id: "v", nickname: "Van", make: "Ford", model: "Transit", year: 2020, distanceUnit: .mi, volumeUnit: .gal,
        createdAt: Date(timeIntervalSince1970: 0), updatedAt: Date(timeIntervalSince1970: 0))
}

public struct VehicleAdd: Documented, Equatable {
    public var nickname: String
    public var make: String?
    public var model: String?
    public var year: Int?
    public var distanceUnit: DistanceUnit?
    public var volumeUnit: VolumeUnit?

    public init(
        nickname: String, make: String? = nil, model: String? = nil, year: Int? = nil, distanceUnit: DistanceUnit? = nil,
        volumeUnit: VolumeUnit? = nil
    ) {
        self.nickname = nickname
        self.make = make
        self.model = model
        self.year = year
        self.distanceUnit = distanceUnit
        self.volumeUnit = volumeUnit
    }

    public static let sample = VehicleAdd(
        nickname: "Van", make: "Ford", model: "Transit", year: 2020, distanceUnit: .km, volumeUnit: .l)
}

extension Vehicle {
    /// The vehicle `add` makes, before records checks its text: units not given are mi and gal.
    public init(id: String, adding add: VehicleAdd, at: Date) {
        self.init(
            id: id, nickname: add.nickname, make: add.make, model: add.model, year: add.year,
            distanceUnit: add.distanceUnit ?? .mi, volumeUnit: add.volumeUnit ?? .gal, createdAt: at, updatedAt: at)
    }
}

public struct VehicleUpdate: Documented {
    public var id: String
    public var nickname: String?
    public var make: Patch<String>
    public var model: Patch<String>
    public var year: Patch<Int>
    public var distanceUnit: DistanceUnit?
    public var volumeUnit: VolumeUnit?

    public init(
        id: String, nickname: String? = nil, make: Patch<String> = .unchanged, model: Patch<String> = .unchanged,
        year: Patch<Int> = .unchanged, distanceUnit: DistanceUnit? = nil, volumeUnit: VolumeUnit? = nil
    ) {
        self.id = id
        self.nickname = nickname
        self.make = make
        self.model = model
        self.year = year
        self.distanceUnit = distanceUnit
        self.volumeUnit = volumeUnit
    }

    public static let sample = VehicleUpdate(
        id: "v", nickname: "Van", make: .set("Ford"), model: .clear, year: .set(2020), distanceUnit: .km, volumeUnit: .l)
}

/// `vehicle.deleted`: its fill-ups went with it.
public struct VehicleDeleted: Documented, Equatable {
    public var id: String
    public var userId: String
    public var fillupsDeleted: Int

    public init(id: String, userId: String, fillupsDeleted: Int) {
        self.id = id
        self.userId = userId
        self.fillupsDeleted = fillupsDeleted
    }

    public static let sample = VehicleDeleted(id: "v", userId: "u", fillupsDeleted: 3)
}

// MARK: Fill-ups

/// Which of price per unit and total was computed from the other.
public enum PriceDerived: String, WireEnum { case none, price, total }

/// A fill-up as records keeps it, answers it and publishes it (`fillup.created|updated`).
public struct Fillup: Documented, Equatable {
    public var id: String
    public var vehicleId: String
    public var date: Date
    public var odometer: Milli?
    public var trip: Milli?
    public var volume: Milli
    /// Minor units per volume unit, to a thousandth of a minor unit ($3.459/gal is 345.9).
    public var pricePerUnitMinor: Milli
    public var totalMinor: Int64
    public var derived: PriceDerived
    public var currency: String
    public var full: Bool
    public var missed: Bool
    public var note: String?
    public var createdAt: Date
    public var updatedAt: Date

    public init(
        id: String, vehicleId: String, date: Date, odometer: Milli?, trip: Milli?, volume: Milli,
        pricePerUnitMinor: Milli, totalMinor: Int64, derived: PriceDerived, currency: String, full: Bool, missed: Bool,
        note: String?, createdAt: Date, updatedAt: Date
    ) {
        self.id = id
        self.vehicleId = vehicleId
        self.date = date
        self.odometer = odometer
        self.trip = trip
        self.volume = volume
        self.pricePerUnitMinor = pricePerUnitMinor
        self.totalMinor = totalMinor
        self.derived = derived
        self.currency = currency
        self.full = full
        self.missed = missed
        self.note = note
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }

    public static let sample = Fillup(
        id: "f", vehicleId: "v", date: Date(timeIntervalSince1970: 0), odometer: Milli(thousandths: 1),
        trip: Milli(thousandths: 1), volume: Milli(thousandths: 11_200), pricePerUnitMinor: Milli(thousandths: 345_000),
        totalMinor: 3864, derived: .total, currency: "USD", full: true, missed: false, note: "n",
        createdAt: Date(timeIntervalSince1970: 0), updatedAt: Date(timeIntervalSince1970: 0))
}

public struct FillupAdd: Documented, Equatable {
    public var vehicleId: String
    public var date: Date?
    public var odometer: Milli?
    public var trip: Milli?
    public var volume: Milli
    public var pricePerUnitMinor: Milli?
    public var totalMinor: Int64?
    public var currency: String?
    public var full: Bool?
    public var missed: Bool?
    public var note: String?

    public init(
        vehicleId: String, date: Date? = nil, odometer: Milli? = nil, trip: Milli? = nil, volume: Milli,
        pricePerUnitMinor: Milli? = nil, totalMinor: Int64? = nil, currency: String? = nil, full: Bool? = nil,
        missed: Bool? = nil, note: String? = nil
    ) {
        self.vehicleId = vehicleId
        self.date = date
        self.odometer = odometer
        self.trip = trip
        self.volume = volume
        self.pricePerUnitMinor = pricePerUnitMinor
        self.totalMinor = totalMinor
        self.currency = currency
        self.full = full
        self.missed = missed
        self.note = note
    }

    public static let sample = FillupAdd(
        vehicleId: "v", date: Date(timeIntervalSince1970: 0), odometer: Milli(thousandths: 1), trip: Milli(thousandths: 1),
        volume: Milli(thousandths: 11_200), pricePerUnitMinor: Milli(thousandths: 345_000), totalMinor: 3864,
        currency: "USD", full: true, missed: false, note: "n")
}

public struct FillupUpdate: Documented {
    public var id: String
    public var date: Date?
    public var odometer: Patch<Milli>
    public var trip: Patch<Milli>
    public var volume: Milli?
    public var pricePerUnitMinor: Milli?
    public var totalMinor: Int64?
    public var currency: String?
    public var full: Bool?
    public var missed: Bool?
    public var note: Patch<String>

    public init(
        id: String, date: Date? = nil, odometer: Patch<Milli> = .unchanged, trip: Patch<Milli> = .unchanged,
        volume: Milli? = nil, pricePerUnitMinor: Milli? = nil, totalMinor: Int64? = nil, currency: String? = nil,
        full: Bool? = nil, missed: Bool? = nil, note: Patch<String> = .unchanged
    ) {
        self.id = id
        self.date = date
        self.odometer = odometer
        self.trip = trip
        self.volume = volume
        self.pricePerUnitMinor = pricePerUnitMinor
        self.totalMinor = totalMinor
        self.currency = currency
        self.full = full
        self.missed = missed
        self.note = note
    }

    public static let sample = FillupUpdate(
        id: "f", date: Date(timeIntervalSince1970: 0), odometer: .set(Milli(thousandths: 1)), trip: .clear,
        volume: Milli(thousandths: 1), pricePerUnitMinor: Milli(thousandths: 1), totalMinor: 1, currency: "USD",
        full: true, missed: false, note: .clear)
}

public struct FillupList: Documented, Equatable {
    public var vehicleId: String
    public var cursor: String?
    public var limit: Int?

    public init(vehicleId: String, cursor: String? = nil, limit: Int? = nil) {
        self.vehicleId = vehicleId
        self.cursor = cursor
        self.limit = limit
    }

    public static let sample = FillupList(vehicleId: "v", cursor: "c", limit: 50)
}

/// `fillup.deleted`.
public struct FillupDeleted: Documented, Equatable {
    public var id: String
    public var userId: String
    public var vehicleId: String

    public init(id: String, userId: String, vehicleId: String) {
        self.id = id
        self.userId = userId
        self.vehicleId = vehicleId
    }

    public static let sample = FillupDeleted(id: "f", userId: "u", vehicleId: "v")
}

// MARK: Economy (analytics)

/// `{vehicleId, units?}`: `analytics.fuel.stats` and `analytics.fuel.economy`.
public struct FuelStatsRequest: Documented, Equatable {
    public var vehicleId: String
    /// `mpg_us` | `mpg_uk` | `l_per_100km` | `km_per_l` (checked by analytics, which names
    /// the accepted values); nil: the vehicle's default.
    public var units: String?

    public init(vehicleId: String, units: String? = nil) {
        self.vehicleId = vehicleId
        self.units = units
    }

    public static let sample = FuelStatsRequest(vehicleId: "v", units: "mpg_us")
}

public struct EconomyPoint: Codable, Sendable, Equatable {
    public var fillId: String
    public var date: Date
    public var value: Decimal
    public init(fillId: String, date: Date, value: Decimal) {
        self.fillId = fillId
        self.date = date
        self.value = value
    }
}

public struct CostPerDistance: Codable, Sendable, Equatable {
    /// Minor units per `per` (2 decimals).
    public var minor: Decimal
    public var per: String
    public init(minor: Decimal, per: String) {
        self.minor = minor
        self.per = per
    }
}

public struct FuelSpending: Codable, Sendable, Equatable {
    public var currency: String
    public var fills: Int
    public var totalMinor: Int64
    /// Volume bought in this currency, in the vehicle's volume unit.
    public var volume: Decimal
    /// Σ total / Σ volume, minor units per volume unit (2 decimals).
    public var averagePricePerUnitMinor: Decimal?
    /// Cost of closed segments paid in this currency over their distance; nil until one closes.
    public var costPerDistance: CostPerDistance?
    public init(
        currency: String, fills: Int, totalMinor: Int64, volume: Decimal, averagePricePerUnitMinor: Decimal?,
        costPerDistance: CostPerDistance?
    ) {
        self.currency = currency
        self.fills = fills
        self.totalMinor = totalMinor
        self.volume = volume
        self.averagePricePerUnitMinor = averagePricePerUnitMinor
        self.costPerDistance = costPerDistance
    }
}

public struct WaitingFills: Codable, Sendable, Equatable {
    public var partialFills: Int
    public var distance: Decimal
    public var volume: Decimal
    public init(partialFills: Int, distance: Decimal, volume: Decimal) {
        self.partialFills = partialFills
        self.distance = distance
        self.volume = volume
    }
}

/// `analytics.fuel.stats`.
public struct FuelStats: Codable, Sendable, Equatable {
    public var vehicleId: String
    public var units: String
    public var unitLabel: String
    public var distanceUnit: String
    public var volumeUnit: String
    public var fills: Int
    public var closedSegments: Int
    /// Σ distance / Σ volume over closed segments; nil with `reason` when not computable yet.
    public var average: Decimal?
    public var reason: String?
    public var last: EconomyPoint?
    public var best: EconomyPoint?
    public var worst: EconomyPoint?
    /// Distance and volume of the closed segments, in the vehicle's units.
    public var closedDistance: Decimal
    public var closedVolume: Decimal
    /// Partial fill-ups after the last full one, waiting for the next full fill-up.
    public var waiting: WaitingFills?
    public var spending: [FuelSpending]

    public init(
        vehicleId: String, units: String, unitLabel: String, distanceUnit: String, volumeUnit: String, fills: Int,
        closedSegments: Int, average: Decimal?, reason: String?, last: EconomyPoint?, best: EconomyPoint?,
        worst: EconomyPoint?, closedDistance: Decimal, closedVolume: Decimal, waiting: WaitingFills?,
        spending: [FuelSpending]
    ) {
        self.vehicleId = vehicleId
        self.units = units
        self.unitLabel = unitLabel
        self.distanceUnit = distanceUnit
        self.volumeUnit = volumeUnit
        self.fills = fills
        self.closedSegments = closedSegments
        self.average = average
        self.reason = reason
        self.last = last
        self.best = best
        self.worst = worst
        self.closedDistance = closedDistance
        self.closedVolume = closedVolume
        self.waiting = waiting
        self.spending = spending
    }
}

/// How a fill-up counts in the economy (docs/fuel-economy.md).
public enum FuelOutcome: String, WireEnum {
    /// The vehicle's first fill-up: only sets the starting odometer.
    case first
    /// A partial fill-up: its distance and volume join the open segment.
    case partial
    /// A full fill-up that closed a segment: it has an economy.
    case closed
    /// A fill-up before this one was not recorded: the open segment is discarded.
    case missed
    /// Neither an odometer reading to measure from nor a trip distance.
    case distanceUnknown = "distance_unknown"
    /// The odometer reads less than the distance already counted.
    case odometerBackwards = "odometer_backwards"
    /// A full fill-up with no distance since the segment began.
    case noDistance = "no_distance"
}

public struct FillEconomy: Codable, Sendable, Equatable {
    public var fillId: String
    public var date: Date
    public var full: Bool
    public var missed: Bool
    public var outcome: FuelOutcome
    /// The fill-up's economy in `units`; nil with `reason` when it has none.
    public var economy: Decimal?
    public var reason: String?
    /// The segment it closed (closed fill-ups only), in the vehicle's units.
    public var distance: Decimal?
    public var volume: Decimal?

    public init(
        fillId: String, date: Date, full: Bool, missed: Bool, outcome: FuelOutcome, economy: Decimal? = nil,
        reason: String? = nil, distance: Decimal? = nil, volume: Decimal? = nil
    ) {
        self.fillId = fillId
        self.date = date
        self.full = full
        self.missed = missed
        self.outcome = outcome
        self.economy = economy
        self.reason = reason
        self.distance = distance
        self.volume = volume
    }
}

/// `analytics.fuel.economy`: newest first, like `records.fillup.list`.
public struct FuelEconomyList: Codable, Sendable, Equatable {
    public var vehicleId: String
    public var units: String
    public var unitLabel: String
    public var fills: [FillEconomy]
    public init(vehicleId: String, units: String, unitLabel: String, fills: [FillEconomy]) {
        self.vehicleId = vehicleId
        self.units = units
        self.unitLabel = unitLabel
        self.fills = fills
    }
}

// MARK: Methods and events

/// The fuel methods, named once for the routes that serve them and the clients that call them.
public enum FuelMethods {
    public static let vehicleAdd = Method<VehicleAdd, Vehicle>("records.vehicle.add", .write)
    public static let vehicleGet = Method<IdBody, Vehicle>("records.vehicle.get", .read)
    public static let vehicleUpdate = Method<VehicleUpdate, Vehicle>("records.vehicle.update", .write)
    public static let vehicleDelete = Method<IdBody, Deleted>("records.vehicle.delete", .write)
    public static let vehicleList = Method<ListBody, Page<Vehicle>>("records.vehicle.list", .read)
    public static let fillupAdd = Method<FillupAdd, Fillup>("records.fillup.add", .write)
    public static let fillupGet = Method<IdBody, Fillup>("records.fillup.get", .read)
    public static let fillupUpdate = Method<FillupUpdate, Fillup>("records.fillup.update", .write)
    public static let fillupDelete = Method<IdBody, Deleted>("records.fillup.delete", .write)
    public static let fillupList = Method<FillupList, Page<Fillup>>("records.fillup.list", .read)
    public static let stats = Method<FuelStatsRequest, FuelStats>("analytics.fuel.stats", .read)
    public static let economy = Method<FuelStatsRequest, FuelEconomyList>("analytics.fuel.economy", .read)
}

/// The fuel events records publishes: type names and payloads.
public enum FuelEvents {
    public static let vehicleCreated = "vehicle.created"
    public static let vehicleUpdated = "vehicle.updated"
    public static let vehicleDeleted = "vehicle.deleted"
    public static let fillupCreated = "fillup.created"
    public static let fillupUpdated = "fillup.updated"
    public static let fillupDeleted = "fillup.deleted"
}

// MARK: Written without the encoder (Shared/Wire/JSONWritable.swift)

// Keys in UTF-8 byte order, optionals left out when nil: what the synthesized `Encodable`
// gives through the shared encoder. Every `analytics.fuel.stats` answer was encoded through
// Foundation's encoder, which cost about as much as working the figures out
// (docs/performance.md, "Fuel stats written directly"); Tests/RuntimeTests/JSONOutputTests.swift
// holds these writers to the encoder.

extension EconomyPoint: JSONWritable {
    public func writeJSON(to out: inout JSONOutput) {
        out.beginObject()
        out.key("date")
        out.date(date)
        out.key("fillId")
        out.string(fillId)
        out.key("value")
        out.decimal(value)
        out.endObject()
    }
}

extension CostPerDistance: JSONWritable {
    public func writeJSON(to out: inout JSONOutput) {
        out.beginObject()
        out.key("minor")
        out.decimal(minor)
        out.key("per")
        out.string(per)
        out.endObject()
    }
}

extension FuelSpending: JSONWritable {
    public func writeJSON(to out: inout JSONOutput) {
        out.beginObject()
        if let averagePricePerUnitMinor {
            out.key("averagePricePerUnitMinor")
            out.decimal(averagePricePerUnitMinor)
        }
        if let costPerDistance {
            out.key("costPerDistance")
            out.write(costPerDistance)
        }
        out.key("currency")
        out.string(currency)
        out.key("fills")
        out.int(fills)
        out.key("totalMinor")
        out.int(totalMinor)
        out.key("volume")
        out.decimal(volume)
        out.endObject()
    }
}

extension WaitingFills: JSONWritable {
    public func writeJSON(to out: inout JSONOutput) {
        out.beginObject()
        out.key("distance")
        out.decimal(distance)
        out.key("partialFills")
        out.int(partialFills)
        out.key("volume")
        out.decimal(volume)
        out.endObject()
    }
}

extension FuelStats: JSONWritable {
    public func writeJSON(to out: inout JSONOutput) {
        out.beginObject()
        if let average {
            out.key("average")
            out.decimal(average)
        }
        if let best {
            out.key("best")
            out.write(best)
        }
        out.key("closedDistance")
        out.decimal(closedDistance)
        out.key("closedSegments")
        out.int(closedSegments)
        out.key("closedVolume")
        out.decimal(closedVolume)
        out.key("distanceUnit")
        out.string(distanceUnit)
        out.key("fills")
        out.int(fills)
        if let last {
            out.key("last")
            out.write(last)
        }
        if let reason {
            out.key("reason")
            out.string(reason)
        }
        out.key("spending")
        out.array(spending) { $0.write($1) }
        out.key("unitLabel")
        out.string(unitLabel)
        out.key("units")
        out.string(units)
        out.key("vehicleId")
        out.string(vehicleId)
        out.key("volumeUnit")
        out.string(volumeUnit)
        if let waiting {
            out.key("waiting")
            out.write(waiting)
        }
        if let worst {
            out.key("worst")
            out.write(worst)
        }
        out.endObject()
    }
}
