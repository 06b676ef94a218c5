// Fuel logbook, fill-ups: `records.fillup.add|get|update|delete|list`. Volumes and
// distances are exact thousandths; of price per unit and total, the one not given is
// derived (half-up to a minor unit) and remembered as derived, so a later change of volume
// derives it again. The odometer never goes backwards against the fill-ups around it in
// date order.
import Contracts
import Foundation
import GRDB
import Runtime
import Storage
import Wire

extension Fillup {
    /// A new fill-up made at `at`, before the request's fields are applied.
    init(id: String, vehicleId: String, at: Date) {
        self.init(
            id: id, vehicleId: vehicleId, date: at, odometer: nil, trip: nil, volume: Milli(thousandths: 0),
            pricePerUnitMinor: Milli(thousandths: 0), totalMinor: 0, derived: .none, currency: "USD", full: true,
            missed: false, note: nil, createdAt: at, updatedAt: at)
    }

    static func find(_ db: Database, userId: String, id: String) throws -> Fillup {
        guard let row = try FillupRow.find(db, userId: userId, id: id) else { throw notFound("fill-up", id) }
        return row.fillup
    }
}

enum FuelLimits {
    static let volume: Int64 = 1_000_000_000  // 1,000,000 units, in thousandths
    static let distance: Int64 = 100_000_000_000  // 100,000,000 units, in thousandths
    /// Thousandths of a minor unit per volume unit: at most 1,000,000 minor units.
    static let price: Int64 = 1_000_000_000
    static let total: Int64 = 1_000_000_000_000
}

extension Records {
    func registerFillups(_ router: inout Router) {
        router.write(FuelMethods.fillupAdd) { body, context, db in
            let at = now()
            let vehicle = try vehicleOf(db, userId: context.userId, id: body.vehicleId)
            var fillup = Fillup(id: ID.make(at: at), vehicleId: vehicle, at: at)
            if let date = body.date {
                try notInFuture(date, "date", now: at)
                fillup.date = Date(ms: date.ms)
            }
            fillup.odometer = body.odometer
            fillup.trip = body.trip
            fillup.volume = body.volume
            try fillup.setPrice(perUnit: body.pricePerUnitMinor, total: body.totalMinor, requireOne: true)
            fillup.currency = try currency(body.currency)
            fillup.full = body.full ?? true
            fillup.missed = body.missed ?? false
            fillup.note = try optionalText(body.note, "note", max: 500)
            try fillup.validate()
            try checkOdometer(db, userId: context.userId, fillup)
            try FillupRow(fillup, userId: context.userId).insertRow(db)
            try Outbox.append(db, type: FuelEvents.fillupCreated, userId: context.userId, data: fillup, at: at)
            return fillup
        }

        router.read(FuelMethods.fillupGet) { body, context in
            try await database.read { db in try Fillup.find(db, userId: context.userId, id: body.id) }
        }

        router.write(FuelMethods.fillupUpdate) { body, context, db in
            let at = now()
            var fillup = try Fillup.find(db, userId: context.userId, id: body.id)
            if let date = body.date {
                try notInFuture(date, "date", now: at)
                fillup.date = Date(ms: date.ms)
            }
            fillup.odometer = body.odometer.applied(to: fillup.odometer)
            fillup.trip = body.trip.applied(to: fillup.trip)
            if let volume = body.volume { fillup.volume = volume }
            try fillup.setPrice(perUnit: body.pricePerUnitMinor, total: body.totalMinor, requireOne: false)
            if let code = body.currency { fillup.currency = try currency(code) }
            if let full = body.full { fillup.full = full }
            if let missed = body.missed { fillup.missed = missed }
            fillup.note = try optionalText(body.note.applied(to: fillup.note), "note", max: 500)
            fillup.updatedAt = at
            try fillup.validate()
            try checkOdometer(db, userId: context.userId, fillup)
            try FillupRow(fillup, userId: context.userId).update(db)
            try Outbox.append(db, type: FuelEvents.fillupUpdated, userId: context.userId, data: fillup, at: at)
            return fillup
        }

        router.write(FuelMethods.fillupDelete) { body, context, db in
            let fillup = try Fillup.find(db, userId: context.userId, id: body.id)
            try FillupRow.delete(db, userId: context.userId, id: fillup.id)
            try Outbox.append(
                db, type: FuelEvents.fillupDeleted, userId: context.userId,
                data: FillupDeleted(id: fillup.id, userId: context.userId, vehicleId: fillup.vehicleId), at: now())
            return Deleted()
        }

        router.read(FuelMethods.fillupList) { body, context in
            let limit = try Pagination.limit(body.limit)
            let list = ListKey(FuelMethods.fillupList.name, sort: "date", filters: [body.vehicleId])
            let cursor = try Cursor.decode(body.cursor, for: list)
            return try await database.read { db in
                let vehicle = try vehicleOf(db, userId: context.userId, id: body.vehicleId)
                return try Pagination.page(
                    db,
                    sql: """
                        SELECT * FROM fillup WHERE userId = ? AND vehicleId = ? AND (date, id) < (?, ?)
                        ORDER BY date DESC, id DESC LIMIT ?
                        """,
                    arguments: [context.userId, vehicle, cursor?.n ?? Int64.max, cursor?.id ?? ""], limit: limit,
                    list: list, key: { (f: Fillup) in (f.date.ms, nil, f.id) }, row: { try FillupRow(row: $0).fillup })
            }
        }
    }

    /// The caller's vehicle with this id, or `not_found` naming `vehicleId`.
    func vehicleOf(_ db: Database, userId: String, id: String) throws -> String {
        let missing = try VehicleRow.owned(by: userId).filter(VehicleRow.Columns.id == id).isEmpty(db)
        guard !missing else { throw ServiceError(.notFound, "vehicle \(id) not found", field: "vehicleId") }
        return id
    }

    /// The odometer reads at least what the previous fill-up (in date order) read and at
    /// most what the next one reads. Fill-ups without an odometer are skipped, and so are
    /// fill-ups on the very same instant: their order is only known from their odometers (so
    /// of several at the nearest instant, the highest earlier and the lowest later count, as
    /// the economy walk orders them).
    func checkOdometer(_ db: Database, userId: String, _ fillup: Fillup) throws {
        guard let odometer = fillup.odometer else { return }
        let arguments: StatementArguments = [userId, fillup.vehicleId, fillup.id, fillup.date.ms]
        if let previous = try Row.fetchOne(
            db,
            sql: """
                SELECT date, odometer FROM fillup
                WHERE userId = ? AND vehicleId = ? AND id != ? AND odometer IS NOT NULL AND date < ?
                ORDER BY date DESC, odometer DESC LIMIT 1
                """, arguments: arguments)
        {
            let reads = Milli(previous["odometer"] as Int64)
            try require(
                odometer >= reads, "odometer",
                "must be at least \(reads.grouped) (the fill-up on \(Date(ms: previous["date"]).day) reads \(reads.grouped))",
                got: odometer.grouped)
        }
        if let next = try Row.fetchOne(
            db,
            sql: """
                SELECT date, odometer FROM fillup
                WHERE userId = ? AND vehicleId = ? AND id != ? AND odometer IS NOT NULL AND date > ?
                ORDER BY date ASC, odometer ASC LIMIT 1
                """, arguments: arguments)
        {
            let reads = Milli(next["odometer"] as Int64)
            try require(
                odometer <= reads, "odometer",
                "must be at most \(reads.grouped) (the fill-up on \(Date(ms: next["date"]).day) reads \(reads.grouped))",
                got: odometer.grouped)
        }
    }
}

extension Fillup {
    /// Sets price per unit and total from what the caller gave; the other is derived from
    /// the volume. With neither given (an update), the derived one follows the volume.
    mutating func setPrice(perUnit: Milli?, total: Int64?, requireOne: Bool) throws {
        if let perUnit {
            try positive(perUnit, "pricePerUnitMinor")
            try require(
                perUnit.thousandths <= FuelLimits.price, "pricePerUnitMinor",
                "must be at most \(Milli(FuelLimits.price).grouped)", got: perUnit.description)
        }
        if let total {
            try positive(total, "totalMinor")
            try require(total <= FuelLimits.total, "totalMinor", "must be at most \(FuelLimits.total)", got: "\(total)")
        }
        try positive(volume, "volume")
        try require(
            volume.thousandths <= FuelLimits.volume, "volume", "must be at most \(Milli(FuelLimits.volume).grouped)",
            got: volume.description)
        switch (perUnit, total) {
        case (let perUnit?, let total?):
            pricePerUnitMinor = perUnit
            totalMinor = total
            derived = .none
        case (let perUnit?, nil):
            pricePerUnitMinor = perUnit
            derived = .total
        case (nil, let total?):
            totalMinor = total
            derived = .price
        case (nil, nil):
            if requireOne {
                throw ServiceError.invalid("pricePerUnitMinor", "give pricePerUnitMinor or totalMinor (or both)")
            }
        }
        // What is derived keeps the limits of what may be given, said of the field that led
        // to it (a total over a thousandth of a litre would make a price no one may type).
        let cause = perUnit != nil ? "pricePerUnitMinor" : total != nil ? "totalMinor" : "volume"
        switch derived {
        case .total:
            totalMinor = Fillup.total(volume: volume, perUnit: pricePerUnitMinor)
            try require(
                totalMinor > 0 && totalMinor <= FuelLimits.total, cause,
                "makes a total of \(totalMinor) minor units for \(volume.grouped) units; it must be from 1 to \(FuelLimits.total)",
                got: cause == "volume" ? volume.description : pricePerUnitMinor.description)
        case .price:
            pricePerUnitMinor = Fillup.perUnit(volume: volume, total: totalMinor)
            try require(
                pricePerUnitMinor.thousandths > 0 && pricePerUnitMinor.thousandths <= FuelLimits.price, cause,
                "makes a price of \(pricePerUnitMinor.grouped) per unit for \(volume.grouped) units; it must be more than 0 "
                    + "and at most \(Milli(FuelLimits.price).grouped)",
                got: cause == "volume" ? volume.description : "\(totalMinor)")
        case .none: break
        }
    }

    /// round(volume × price per unit), half up, in minor units: thousandths of a unit times
    /// thousandths of a minor unit, over 10^6. Bounded by FuelLimits: 10^9 × 10^9 stays
    /// below Int64.max.
    static func total(volume: Milli, perUnit: Milli) -> Int64 {
        (volume.thousandths * perUnit.thousandths + 500_000) / 1_000_000
    }

    /// round(total / volume), half up, to a thousandth of a minor unit per unit
    /// (2 × 10^12 × 10^6 stays below Int64.max).
    static func perUnit(volume: Milli, total: Int64) -> Milli {
        Milli(thousandths: (2 * total * 1_000_000 + volume.thousandths) / (2 * volume.thousandths))
    }

    /// Rules that hold whatever combination of fields an add or update leaves.
    func validate() throws {
        if odometer == nil && trip == nil {
            throw ServiceError.invalid("odometer", "give odometer or trip (or both)")
        }
        for (field, value) in [("odometer", odometer), ("trip", trip)] {
            guard let value else { continue }
            try positive(value, field)
            try require(
                value.thousandths <= FuelLimits.distance, field, "must be at most \(Milli(FuelLimits.distance).grouped)",
                got: value.description)
        }
    }
}
