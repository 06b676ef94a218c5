// The fuel projection: vehicles and their fill-ups from records' events, with the walk's
// result stored per fill-up and the aggregates stored per vehicle, so `analytics.fuel.stats`
// reads one vehicle row and its few currency rows.
//
// A created, edited or deleted fill-up re-walks the vehicle from the first position it
// touched (the lower of its old and new place in date order), starting from the state
// stored after the fill-up before it, and stops at the first fill-up past both places whose
// recomputed result and state equal the stored ones: everything after it is unchanged. An
// append walks one fill-up; an insert in the middle walks to the end of its segment.
// Aggregates change by the difference between old and new results (integer sums).
import Contracts
import Foundation
import GRDB
import Wire

enum FuelProjection {
    // MARK: Vehicles

    static func putVehicle(_ db: Database, userId: String, _ vehicle: Vehicle) throws {
        let distance = vehicle.distanceUnit
        let volume = vehicle.volumeUnit
        try db.execute(
            cached: """
                INSERT INTO vehicle (id, userId, nickname, distanceUnit, volumeUnit) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT (id) DO UPDATE SET nickname = excluded.nickname, distanceUnit = excluded.distanceUnit,
                    volumeUnit = excluded.volumeUnit
                WHERE vehicle.userId = excluded.userId
                """,
            arguments: [vehicle.id, userId, vehicle.nickname, distance.rawValue, volume.rawValue])
    }

    static func deleteVehicle(_ db: Database, userId: String, id: String, batch: ProjectionBatch) throws {
        // what the batch holds for it is written first; fill and fuelSpend rows go with it (ON DELETE CASCADE)
        try batch.flush(db)
        batch.owners[id] = nil
        batch.tails[id] = nil
        try db.execute(cached: "DELETE FROM vehicle WHERE userId = ? AND id = ?", arguments: [userId, id])
    }

    /// A fill-up for a vehicle this projection has not seen (its event was lost, or it was
    /// recorded before analytics existed) gets a vehicle with the default units; the
    /// vehicle's next event sets them.
    private static func ensureVehicle(_ db: Database, userId: String, id: String, batch: ProjectionBatch) throws -> Bool {
        if let owner = batch.owners[id] { return owner == userId }
        if let owner = try String.fetchOne(db, cached: "SELECT userId FROM vehicle WHERE id = ?", arguments: [id]) {
            batch.owners[id] = owner
            return owner == userId
        }
        try db.execute(
            cached: "INSERT INTO vehicle (id, userId, distanceUnit, volumeUnit) VALUES (?, ?, 'mi', 'gal')",
            arguments: [id, userId])
        batch.owners[id] = userId
        return true
    }

    // MARK: Fill-ups

    static func putFill(_ db: Database, userId: String, _ payload: FillupRead, batch: ProjectionBatch) throws {
        try batch.settleFirst(db, vehicle: payload.vehicleId)
        let fill = FuelFill(
            id: payload.id, date: payload.date.ms, odometer: payload.odometer?.thousandths,
            trip: payload.trip?.thousandths, volume: payload.volume.thousandths, totalMinor: payload.totalMinor,
            currency: payload.currency, full: payload.full, missed: payload.missed)
        guard fill.volume > 0, try ensureVehicle(db, userId: userId, id: payload.vehicleId, batch: batch) else { return }
        // Nearly every fill-up of a replay is new and goes last: `append` inserts it unless
        // its id is stored already, so a new one is not looked up first.
        if try append(db, userId: userId, vehicleId: payload.vehicleId, fill, batch: batch) { return }
        let old = try StoredFill.find(db, userId: userId, id: fill.id, batch: batch)
        if let old, old.vehicleId != payload.vehicleId {
            try batch.settleFirst(db, vehicle: old.vehicleId)
            // records never moves a fill-up between vehicles; if it did, treat it as a delete and an add
            try change(db, userId: userId, vehicleId: old.vehicleId, old: old, new: nil, batch: batch)
            try change(db, userId: userId, vehicleId: payload.vehicleId, old: nil, new: fill, batch: batch)
            return
        }
        try change(db, userId: userId, vehicleId: payload.vehicleId, old: old, new: fill, batch: batch)
    }

    static func deleteFill(_ db: Database, userId: String, id: String, batch: ProjectionBatch) throws {
        guard let old = try StoredFill.find(db, userId: userId, id: id, batch: batch) else { return }
        try batch.settleFirst(db, vehicle: old.vehicleId)
        try change(db, userId: userId, vehicleId: old.vehicleId, old: old, new: nil, batch: batch)
    }

    /// Replaces `old` by `new` (either may be nil) and re-walks what that affects; the
    /// vehicle's aggregates change in `batch`.
    static func change(
        _ db: Database, userId: String, vehicleId: String, old: StoredFill?, new: FuelFill?, batch: ProjectionBatch
    ) throws {
        if old == nil, let new, try append(db, userId: userId, vehicleId: vehicleId, new, batch: batch) { return }
        // anything else may move the vehicle's last fill-up
        batch.tails[vehicleId] = nil
        var delta = Delta()
        if let old {
            delta.remove(old.result)
            delta.fills -= 1
            spend(batch, userId: userId, vehicleId: vehicleId, old.fill, sign: -1)
        }
        if let new {
            delta.fills += 1
            spend(batch, userId: userId, vehicleId: vehicleId, new, sign: 1)
            let raw: StatementArguments = [
                new.date, new.odometer, new.odometer ?? -1, new.trip, new.volume, new.totalMinor, new.currency,
                new.full,
                new.missed,
            ]
            if old != nil {
                // The result is unknown until the walk reaches it ('pending' never equals a result).
                try db.execute(
                    cached: """
                        UPDATE fill SET date = ?, odometer = ?, odoKey = ?, trip = ?, volume = ?, totalMinor = ?,
                            currency = ?, full = ?, missed = ?, outcome = 'pending', segmentDistance = NULL,
                            segmentVolume = NULL, segmentCostMinor = NULL, segmentCurrency = NULL, ratio = NULL
                        WHERE id = ?
                        """,
                    arguments: raw + [new.id])
            } else {
                try db.execute(
                    cached: """
                        INSERT INTO fill (date, odometer, odoKey, trip, volume, totalMinor, currency, full, missed,
                            id, userId, vehicleId)
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                        """,
                    arguments: raw + [new.id, userId, vehicleId])
            }
        } else if let old {
            try db.execute(cached: "DELETE FROM fill WHERE id = ?", arguments: [old.fill.id])
        }

        let keys = [old?.fill.key, new?.key].compactMap { $0 }
        guard let start = keys.min(), let mustReach = keys.max() else { return }
        try walk(db, vehicleId: vehicleId, from: start, mustReach: mustReach, delta: &delta)
        batch.vehicle(vehicleId, userId: userId, delta)
    }

    /// A new fill-up after the vehicle's last one (the usual case, and nearly every event of
    /// a replay): its result is one step from the state stored after the last, so the row is
    /// written whole at once, what `change` and `walk` would store with four more statements.
    /// The last fill-up's key and state are kept in `batch` for the next append. False when
    /// the fill-up goes anywhere but last, or when a fill-up with its id is stored (then
    /// nothing is written).
    private static func append(
        _ db: Database, userId: String, vehicleId: String, _ new: FuelFill, batch: ProjectionBatch
    ) throws -> Bool {
        let tail: ProjectionBatch.Tail
        if let known = batch.tails[vehicleId] {
            tail = known
        } else {
            let last = try batch.statement(
                db,
                """
                SELECT id, vehicleId, date, odometer, trip, volume, totalMinor, currency, full, missed, outcome,
                    segmentDistance, segmentVolume, segmentCostMinor, segmentCurrency, anchored, reading, openFills,
                    openDistance, openVolume, openCostMinor, openCurrency
                FROM fill WHERE vehicleId = ? ORDER BY date DESC, odoKey DESC, id DESC LIMIT 1
                """)
            last.bind(1, vehicleId)
            tail = try last.first { row in
                let stored = StoredFill(row)
                return ProjectionBatch.Tail(key: stored.fill.key, state: stored.state)
            } ?? ProjectionBatch.Tail(key: nil, state: .start)
        }
        // SQLite's order: ids compare as bytes
        if let key = tail.key {
            let after =
                (key.date, key.odoKey) < (new.key.date, new.key.odoKey)
                || ((key.date, key.odoKey) == (new.key.date, new.key.odoKey)
                    && key.id.utf8.lexicographicallyPrecedes(new.id.utf8))
            guard after else { return false }
        }
        let (result, state) = FuelWalk.step(tail.state, new)
        let insert = try batch.statement(
            db,
            """
            INSERT INTO fill (id, userId, vehicleId, date, odometer, odoKey, trip, volume, totalMinor, currency, full,
                missed, outcome, segmentDistance, segmentVolume, segmentCostMinor, segmentCurrency, ratio, anchored,
                reading, openFills, openDistance, openVolume, openCostMinor, openCurrency)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (id) DO NOTHING
            """)
        insert.bind(1, new.id)
        insert.bind(2, userId)
        insert.bind(3, vehicleId)
        insert.bind(4, new.date)
        insert.bind(5, new.odometer)
        insert.bind(6, new.odometer ?? -1)
        insert.bind(7, new.trip)
        insert.bind(8, new.volume)
        insert.bind(9, new.totalMinor)
        insert.bind(10, new.currency)
        insert.bind(11, new.full)
        insert.bind(12, new.missed)
        insert.bind(13, result.outcome.rawValue)
        insert.bind(14, result.distance)
        insert.bind(15, result.volume)
        insert.bind(16, result.costMinor)
        insert.bind(17, result.currency)
        insert.bind(18, result.ratio)
        insert.bind(19, state.anchored)
        insert.bind(20, state.reading)
        insert.bind(21, state.openFills)
        insert.bind(22, state.openDistance)
        insert.bind(23, state.openVolume)
        insert.bind(24, state.openCostMinor)
        insert.bind(25, state.openCurrency)
        guard try insert.changed() else { return false }
        batch.tails[vehicleId] = ProjectionBatch.Tail(key: new.key, state: state)

        var delta = Delta()
        delta.fills = 1
        delta.add(result)
        spend(batch, userId: userId, vehicleId: vehicleId, new, sign: 1)
        batch.vehicle(vehicleId, userId: userId, delta)
        return true
    }

    /// Re-walks from `start` (inclusive) until past `mustReach` and back in step with what is stored.
    private static func walk(
        _ db: Database, vehicleId: String, from start: FillKey, mustReach: FillKey, delta: inout Delta
    ) throws {
        var state =
            try Row.fetchOne(
                db,
                cached: StoredFill.select + """
                     FROM fill WHERE vehicleId = ? AND (date, odoKey, id) < (?, ?, ?)
                    ORDER BY date DESC, odoKey DESC, id DESC LIMIT 1
                    """,
                arguments: [vehicleId, start.date, start.odoKey, start.id]
            ).map(StoredFill.init(row:)).map(\.state) ?? .start
        var cursor = start
        var inclusive = true
        while true {
            let rows = try Row.fetchAll(
                db,
                cached: inclusive
                    ? StoredFill.select + """
                         FROM fill WHERE vehicleId = ? AND (date, odoKey, id) >= (?, ?, ?)
                        ORDER BY date, odoKey, id LIMIT 256
                        """
                    : StoredFill.select + """
                         FROM fill WHERE vehicleId = ? AND (date, odoKey, id) > (?, ?, ?)
                        ORDER BY date, odoKey, id LIMIT 256
                        """,
                arguments: [vehicleId, cursor.date, cursor.odoKey, cursor.id])
            for row in rows {
                let stored = StoredFill(row: row)
                let (result, after) = FuelWalk.step(state, stored.fill)
                if result == stored.result && after == stored.state {
                    if mustReach < stored.fill.key { return }
                } else {
                    delta.remove(stored.result)
                    delta.add(result)
                    try store(db, id: stored.fill.id, result, after)
                }
                state = after
            }
            guard rows.count == 256, let last = rows.last else { return }
            cursor = StoredFill(row: last).fill.key
            inclusive = false
        }
    }

    private static func store(_ db: Database, id: String, _ result: FuelResult, _ state: FuelState) throws {
        try db.execute(
            cached: """
                UPDATE fill SET outcome = ?, segmentDistance = ?, segmentVolume = ?, segmentCostMinor = ?,
                    segmentCurrency = ?, ratio = ?, anchored = ?, reading = ?, openFills = ?, openDistance = ?,
                    openVolume = ?, openCostMinor = ?, openCurrency = ?
                WHERE id = ?
                """,
            arguments: [
                result.outcome.rawValue, result.distance, result.volume, result.costMinor, result.currency,
                result.ratio,
                state.anchored, state.reading, state.openFills, state.openDistance, state.openVolume,
                state.openCostMinor, state.openCurrency, id,
            ])
    }

    /// Everything spent per vehicle and currency follows the fill-ups themselves.
    private static func spend(_ batch: ProjectionBatch, userId: String, vehicleId: String, _ fill: FuelFill, sign: Int64) {
        batch.spend(vehicleId: vehicleId, currency: fill.currency, userId: userId) {
            $0.fills += sign
            $0.totalMinor += sign * fill.totalMinor
            $0.volume += sign * fill.volume
        }
    }

    /// Sums of closed segments and closed cost per currency, as differences.
    struct Delta {
        var fills = 0
        var segments = 0
        var distance: Int64 = 0
        var volume: Int64 = 0
        var cost: [String: (cost: Int64, distance: Int64)] = [:]

        mutating func add(_ result: FuelResult?, sign: Int64 = 1) {
            guard let result, result.outcome == .closed, let d = result.distance, let v = result.volume else { return }
            segments += Int(sign)
            distance += sign * d
            volume += sign * v
            if let currency = result.currency, let c = result.costMinor {
                let current = cost[currency] ?? (0, 0)
                cost[currency] = (current.cost + sign * c, current.distance + sign * d)
            }
        }

        mutating func remove(_ result: FuelResult?) { add(result, sign: -1) }
    }

    /// The vehicle's counters by `delta` (its closed cost is in fuelSpend already), and
    /// fuelSpend rows left empty removed. Called once per vehicle when a batch ends.
    static func apply(_ db: Database, vehicleId: String, _ delta: Delta) throws {
        if delta.fills != 0 || delta.segments != 0 || delta.distance != 0 || delta.volume != 0 {
            try db.execute(
                cached: """
                    UPDATE vehicle SET fills = fills + ?, closedSegments = closedSegments + ?,
                        closedDistance = closedDistance + ?, closedVolume = closedVolume + ?
                    WHERE id = ?
                    """,
                arguments: [delta.fills, delta.segments, delta.distance, delta.volume, vehicleId])
        }
        try db.execute(
            cached: "DELETE FROM fuelSpend WHERE vehicleId = ? AND fills = 0 AND closedDistance = 0",
            arguments: [vehicleId])
    }

    /// Recomputes, from their fill-up rows, the counters, spend and summary of every
    /// vehicle a catch-up's backlog left behind (`vehicleStale`): what `apply` and the
    /// batch's spend rows sum, each fill-up counted with the result stored for it (`Delta`:
    /// a closed segment's distance and volume, and its cost in its currency), read in one
    /// pass over the vehicle's fill-ups. Run when a catch-up ends.
    static func settle(_ db: Database) throws {
        try recompute(db, vehicles: String.fetchAll(db.cachedStatement(sql: "SELECT vehicleId FROM vehicleStale")))
    }

    /// `settle` for one vehicle, when a backlog left it behind: before a live batch changes
    /// its fill-ups (`ProjectionBatch.settleFirst`).
    static func settle(_ db: Database, vehicleId: String) throws {
        let stale = try Bool.fetchOne(
            db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM vehicleStale WHERE vehicleId = ?)"),
            arguments: [vehicleId])
        if stale == true { try recompute(db, vehicles: [vehicleId]) }
    }

    /// Recomputes `vehicles`' aggregates from their fill-ups, and forgets that they were behind.
    private static func recompute(_ db: Database, vehicles ids: [String]) throws {
        guard !ids.isEmpty else { return }
        let fills = try Bound(
            db,
            """
            SELECT currency, totalMinor, volume, outcome, segmentDistance, segmentVolume, segmentCurrency,
                segmentCostMinor
            FROM fill WHERE vehicleId = ?
            """)
        let counters = try Bound(
            db,
            """
            UPDATE vehicle SET fills = ?2, closedSegments = ?3, closedDistance = ?4, closedVolume = ?5
            WHERE id = ?1 RETURNING userId
            """)
        let insert = try Bound(
            db,
            """
            INSERT INTO fuelSpend (vehicleId, currency, userId, fills, totalMinor, volume, closedCostMinor,
                closedDistance)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            """)
        for id in ids {
            var delta = Delta()
            var spend: [String: ProjectionBatch.Spend] = [:]
            fills.bind(1, id)
            try fills.each { row in
                let currency = row.string(0)
                delta.fills += 1
                spend[currency, default: ProjectionBatch.Spend(userId: "")].fills += 1
                spend[currency]!.totalMinor += row.int64(1)
                spend[currency]!.volume += row.int64(2)
                guard row.string(3) == FuelOutcome.closed.rawValue, let distance = row.int64OrNil(4),
                    let volume = row.int64OrNil(5)
                else { return }
                delta.segments += 1
                delta.distance += distance
                delta.volume += volume
                if let segmentCurrency = row.string(orNil: 6), let cost = row.int64OrNil(7) {
                    spend[segmentCurrency, default: ProjectionBatch.Spend(userId: "")].closedCostMinor += cost
                    spend[segmentCurrency]!.closedDistance += distance
                }
            }
            try db.execute(cached: "DELETE FROM fuelSpend WHERE vehicleId = ?", arguments: [id])
            counters.bind(1, id)
            counters.bind(2, delta.fills)
            counters.bind(3, delta.segments)
            counters.bind(4, delta.distance)
            counters.bind(5, delta.volume)
            try db.execute(cached: "DELETE FROM vehicleStale WHERE vehicleId = ?", arguments: [id])
            // a vehicle deleted since it was left behind has nothing to recompute
            guard let userId = try counters.first({ $0.string(0) }) else { continue }
            // rows with no fill-ups and no closed distance are not kept (`apply`)
            for (currency, sums) in spend.sorted(by: { $0.key < $1.key })
            where !(sums.fills == 0 && sums.closedDistance == 0) {
                insert.bind(1, id)
                insert.bind(2, currency)
                insert.bind(3, userId)
                insert.bind(4, sums.fills)
                insert.bind(5, sums.totalMinor)
                insert.bind(6, sums.volume)
                insert.bind(7, sums.closedCostMinor)
                insert.bind(8, sums.closedDistance)
                try insert.run()
            }
            try refreshSummary(db, vehicleId: id)
        }
    }

    /// Last, best and worst economy and the open segment, read through indexes and stored
    /// on the vehicle so the stats query reads one row. One statement: each part is a
    /// subquery of the UPDATE (a part with no fill-up is NULL; the open segment's counts
    /// are then 0). Four reads into rows and an update of fifteen bound values were a tenth
    /// of a replay's writer (docs/performance.md, "Rebuild, a second look").
    static func refreshSummary(_ db: Database, vehicleId: String) throws {
        try db.execute(
            cached: """
                UPDATE vehicle SET
                    (openFills, openDistance, openVolume) = (
                        SELECT ifnull(o.openFills, 0), ifnull(o.openDistance, 0), ifnull(o.openVolume, 0)
                        FROM (SELECT 1) LEFT JOIN (
                            SELECT openFills, openDistance, openVolume FROM fill WHERE vehicleId = ?1
                            ORDER BY date DESC, odoKey DESC, id DESC LIMIT 1) AS o),
                    (lastFillId, lastDate, lastDistance, lastVolume) = (
                        SELECT id, date, segmentDistance, segmentVolume FROM fill
                        WHERE vehicleId = ?1 AND outcome = 'closed'
                        ORDER BY date DESC, odoKey DESC, id DESC LIMIT 1),
                    (bestFillId, bestDate, bestDistance, bestVolume) = (
                        SELECT id, date, segmentDistance, segmentVolume FROM fill
                        WHERE vehicleId = ?1 AND ratio IS NOT NULL ORDER BY ratio DESC LIMIT 1),
                    (worstFillId, worstDate, worstDistance, worstVolume) = (
                        SELECT id, date, segmentDistance, segmentVolume FROM fill
                        WHERE vehicleId = ?1 AND ratio IS NOT NULL ORDER BY ratio ASC LIMIT 1)
                WHERE id = ?1
                """, arguments: [vehicleId])
    }
}

/// A fill-up row: the fill-up, its stored result (nil while pending) and the state after it.
struct StoredFill: Sendable {
    var vehicleId: String
    var fill: FuelFill
    var result: FuelResult?
    var state: FuelState

    /// The columns `init(row:)` reads, by position (reading by name costs a case-insensitive
    /// lookup per column, a tenth of a bulk replay).
    static let select = """
        SELECT id, vehicleId, date, odometer, trip, volume, totalMinor, currency, full, missed, outcome,
            segmentDistance, segmentVolume, segmentCostMinor, segmentCurrency, anchored, reading, openFills,
            openDistance, openVolume, openCostMinor, openCurrency
        """

    init(row: Row) {
        vehicleId = row[1]
        fill = FuelFill(
            id: row[0], date: row[2], odometer: row[3], trip: row[4], volume: row[5], totalMinor: row[6],
            currency: row[7], full: row[8], missed: row[9])
        result = FuelOutcome(rawValue: row[10]).map {
            FuelResult(outcome: $0, distance: row[11], volume: row[12], costMinor: row[13], currency: row[14])
        }
        state = FuelState(
            anchored: row[15], reading: row[16], openFills: row[17], openDistance: row[18], openVolume: row[19],
            openCostMinor: row[20], openCurrency: row[21])
    }

    /// A row of `select`'s columns, read through SQLite's C API.
    init(_ row: Bound.Columns) {
        vehicleId = row.string(1)
        fill = FuelFill(
            id: row.string(0), date: row.int64(2), odometer: row.int64OrNil(3), trip: row.int64OrNil(4),
            volume: row.int64(5), totalMinor: row.int64(6), currency: row.string(7), full: row.bool(8),
            missed: row.bool(9))
        result = row.string(orNil: 10).flatMap(FuelOutcome.init(rawValue:)).map {
            FuelResult(
                outcome: $0, distance: row.int64OrNil(11), volume: row.int64OrNil(12), costMinor: row.int64OrNil(13),
                currency: row.string(orNil: 14))
        }
        state = FuelState(
            anchored: row.bool(15), reading: row.int64OrNil(16), openFills: row.int(17), openDistance: row.int64(18),
            openVolume: row.int64(19), openCostMinor: row.int64(20), openCurrency: row.string(orNil: 21))
    }

    static func find(_ db: Database, userId: String, id: String, batch: ProjectionBatch) throws -> StoredFill? {
        let find = try batch.statement(
            db,
            """
            SELECT id, vehicleId, date, odometer, trip, volume, totalMinor, currency, full, missed, outcome,
                segmentDistance, segmentVolume, segmentCostMinor, segmentCurrency, anchored, reading, openFills,
                openDistance, openVolume, openCostMinor, openCurrency
            FROM fill WHERE userId = ? AND id = ?
            """)
        find.bind(1, userId)
        find.bind(2, id)
        return try find.first(StoredFill.init)
    }
}
