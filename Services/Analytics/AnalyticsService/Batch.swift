// What a batch of events adds to the stored aggregates, gathered in memory and written
// once per key when the batch ends (inside the same transaction, before the checkpoint).
// A replay applies thousands of fill-ups and catches per transaction; most of them touch
// the same few counters (a vehicle's totals, a user's catch tallies), so each is written
// once per batch instead of once per event. The aggregates are sums, so the end state is
// the one applying the events one at a time gives. Only rows nothing in the projection
// reads while applying are deferred: vehicle counters and summaries, fuelSpend and
// catchTally (the walk reads fill rows, which are written at once).
import GRDB

final class ProjectionBatch {
    /// A catchTally row's key, each text as its number in `texts` (hashing the strings per
    /// counter change was an eighth of a replay).
    struct TallyRow: Hashable, Comparable {
        var userId: UInt32
        var species: UInt32
        var water: UInt32
        var bait: UInt32

        static func < (a: TallyRow, b: TallyRow) -> Bool {
            (a.userId, a.species, a.water, a.bait) < (b.userId, b.species, b.water, b.bait)
        }
    }

    /// One count of a row in `tally`: the dimension code in the high half, the bucket's
    /// number in the low one.
    static func countKey(_ code: UInt8, _ bucket: UInt32) -> UInt64 { UInt64(code) << 32 | UInt64(bucket) }

    struct SpendKey: Hashable {
        var vehicleId: String
        var currency: String
    }

    struct Spend {
        var userId: String
        var fills: Int64 = 0
        var totalMinor: Int64 = 0
        var volume: Int64 = 0
        var closedCostMinor: Int64 = 0
        var closedDistance: Int64 = 0

        var isZero: Bool {
            fills == 0 && totalMinor == 0 && volume == 0 && closedCostMinor == 0 && closedDistance == 0
        }
    }

    /// One count's change in one catchTally row (`rows[row]`), as an event made it.
    struct Counted {
        var row: UInt32
        var delta: Int32
        /// `countKey`.
        var key: UInt64
    }

    /// The catchTally rows this batch changes, at both levels, and each one's place there.
    private var rows: [TallyRow] = []
    private var rowPlaces: [TallyRow: UInt32] = [:]
    /// Every count change of the batch, in the order the events made them: appended while
    /// events are applied, grouped by row and summed per count when the batch is written
    /// (a map of maps updated per count, then merged into the levels, was a tenth of a
    /// replay).
    private var counted: [Counted] = []
    /// The bytes of the row being written.
    private var scratch: [UInt8] = []
    /// The ids of the buckets this batch has looked up, by `countKey`.
    private var bucketIds: [UInt64: Int] = [:]
    /// The numbers of this batch's tally key texts.
    private var numbers: [String: UInt32] = [:]
    /// The texts by number, as UTF-8 held in place for the whole batch, so that a tally row
    /// binds its six texts without SQLite copying each (a malloc and a free per text, and
    /// their locks).
    private var texts: [UnsafeBufferPointer<CChar>] = []
    /// `CatchProjection.any`'s number.
    let anyName: UInt32
    /// Vehicle counter changes by vehicle id; their summaries are refreshed at the end.
    private var vehicles: [String: FuelProjection.Delta] = [:]
    private var spend: [SpendKey: Spend] = [:]
    /// Vehicle owners already read or created in this batch.
    var owners: [String: String] = [:]

    /// A vehicle's last fill-up in walk order (nil: none) and the walk's state after it.
    struct Tail {
        var key: FillKey?
        var state: FuelState
    }

    /// Vehicles' last fill-ups as this batch left them, while only appends touched them.
    var tails: [String: Tail] = [:]

    /// The statements this batch runs, by their SQL's address (the SQL is a literal).
    private var statements: [UInt: Bound] = [:]

    /// A batch of a catch-up's backlog: catch counters and vehicle aggregates (counters,
    /// spend, summary) are not changed; only the users and vehicles whose would have are
    /// recorded (`catchTallyStale`, `vehicleStale`), to be recomputed once when the catch-up
    /// ends (`CatchProjection.settle`, `FuelProjection.settle`).
    let isBacklog: Bool
    /// The users whose counters this batch left behind (`isBacklog`).
    private var staleUsers: Set<String> = []
    /// The vehicles, with their owners, whose aggregates this batch left behind (`isBacklog`).
    private var staleVehicles: [String: String] = [:]
    /// The users and vehicles this (live) batch has brought up to date (`settleFirst`).
    private var settledUsers: Set<String> = []
    private var settledVehicles: Set<String> = []
    /// None of the catchTally rows this batch counts is stored (a recount deleted them
    /// first): each is inserted without trying to merge it into a stored one.
    var tallyRowsAbsent = false

    init(backlog: Bool = false) {
        isBacklog = backlog
        numbers[CatchProjection.any] = 0
        texts = [Self.hold(CatchProjection.any)]
        anyName = 0
    }

    /// A user's counters are left behind by this (backlog) batch.
    func leaveBehind(_ userId: String) { staleUsers.insert(userId) }

    /// Whether any account deletion was applied (`deletedUser`), read once per batch: nearly
    /// always none, and then no event is looked up.
    private var anyDeleted: Bool?

    /// `userId`'s account was deleted (auth's `user.deleted`, applied by its own consumer):
    /// an event of theirs that comes after the purge (one records or weather-fetcher published
    /// before the deletion and this consumer had not applied yet) must not bring rows back.
    func isDeleted(_ db: Database, userId: String) throws -> Bool {
        if anyDeleted == nil {
            anyDeleted = try Bool.fetchOne(db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM deletedUser)")) ?? false
        }
        guard anyDeleted == true else { return false }
        return try Bool.fetchOne(
            db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM deletedUser WHERE userId = ?)"), arguments: [userId])
            ?? false
    }

    /// Before a live batch changes a user's catch counters (or the rows they are counted
    /// from): when a backlog left that user's counters behind, they are recounted first, from
    /// rows this batch has not changed yet, so the batch's own changes are then added to
    /// counters that are up to date, once. (A change to counters that are behind could take
    /// a count below zero, and a recount after it would count it twice.) Only that user's:
    /// a live answer during another consumer's long catch-up must not recount everyone.
    func settleFirst(_ db: Database, user: String) throws {
        guard !isBacklog, settledUsers.insert(user).inserted else { return }
        try CatchProjection.settle(db, userId: user)
    }

    /// The same for a vehicle's counters, spend and summary, before a live batch changes
    /// its fill-ups.
    func settleFirst(_ db: Database, vehicle: String) throws {
        guard !isBacklog, settledVehicles.insert(vehicle).inserted else { return }
        try FuelProjection.settle(db, vehicleId: vehicle)
    }

    /// `sql` prepared (from the connection's cache) once per batch.
    func statement(_ db: Database, _ sql: StaticString) throws -> Bound {
        let address = UInt(bitPattern: sql.utf8Start)
        if let statement = statements[address] { return statement }
        let statement = try Bound(db, sql.description)
        statements[address] = statement
        return statement
    }

    /// The number standing for `text` in this batch's tally keys.
    func name(_ text: String) -> UInt32 {
        if let number = numbers[text] { return number }
        let number = UInt32(texts.count)
        numbers[text] = number
        texts.append(Self.hold(text))
        return number
    }

    private static func hold(_ text: String) -> UnsafeBufferPointer<CChar> {
        let utf8 = Array(text.utf8)
        // never empty: SQLite binds a nil pointer as NULL, and '' (CatchProjection.any) is a key
        let buffer = UnsafeMutableBufferPointer<CChar>.allocate(capacity: max(1, utf8.count))
        for (i, byte) in utf8.enumerated() { buffer[i] = CChar(bitPattern: byte) }
        return UnsafeBufferPointer(start: buffer.baseAddress, count: utf8.count)
    }

    deinit {
        // no statement may keep pointing at the texts (they stay in the connection's cache)
        for statement in statements.values { statement.clear() }
        for text in texts { UnsafeMutableRawPointer(mutating: text.baseAddress!).deallocate() }
    }

    /// A catch's contribution to its row (`counts`: `countKey` values), taken out (sign
    /// -1) or put in (+1), at the catch's species and at any species in its water (`anyName`).
    func count(_ row: TallyRow, _ counts: [UInt64], _ sign: Int) {
        var any = row
        any.species = anyName
        let own = place(row), all = place(any), delta = Int32(sign)
        for count in counts {
            counted.append(Counted(row: own, delta: delta, key: count))
            counted.append(Counted(row: all, delta: delta, key: count))
        }
    }

    private func place(_ row: TallyRow) -> UInt32 {
        if let place = rowPlaces[row] { return place }
        let place = UInt32(rows.count)
        rows.append(row)
        rowPlaces[row] = place
        return place
    }

    /// A vehicle's counters change by `delta`; its closed cost per currency goes to fuelSpend.
    func vehicle(_ id: String, userId: String, _ delta: FuelProjection.Delta) {
        if isBacklog { return staleVehicles[id] = userId }
        var current = vehicles[id] ?? FuelProjection.Delta()
        current.fills += delta.fills
        current.segments += delta.segments
        current.distance += delta.distance
        current.volume += delta.volume
        vehicles[id] = current
        for (currency, change) in delta.cost where change.cost != 0 || change.distance != 0 {
            spend(vehicleId: id, currency: currency, userId: userId) {
                $0.closedCostMinor += change.cost
                $0.closedDistance += change.distance
            }
        }
    }

    func spend(vehicleId: String, currency: String, userId: String, _ change: (inout Spend) -> Void) {
        if isBacklog { return staleVehicles[vehicleId] = userId }
        change(&spend[SpendKey(vehicleId: vehicleId, currency: currency), default: Spend(userId: userId)])
    }

    private func bind(_ statement: Bound, _ row: TallyRow) {
        statement.bind(1, static: texts[Int(row.userId)])
        statement.bind(2, static: texts[Int(row.species)])
        statement.bind(3, static: texts[Int(row.water)])
        statement.bind(4, static: texts[Int(row.bait)])
    }

    /// Writes the catch counters gathered: each at the two levels `analytics.suggest` reads
    /// (its species and water, and any species in its water: `CatchProjection.any` in the
    /// species column), so a query reads the rows of its own filter or, without a water,
    /// those of both waters: at most two per bait, however many catches there are. Each row
    /// touched is merged with its changes once, in the UPDATE that writes it.
    private func flushTally(_ db: Database) throws {
        defer {
            counted.removeAll(keepingCapacity: true)
            rows.removeAll(keepingCapacity: true)
            rowPlaces.removeAll(keepingCapacity: true)
        }
        // the changes grouped by row (a counting sort): row r's are grouped[start[r]..<start[r + 1]]
        var start = [Int](repeating: 0, count: rows.count + 1)
        for change in counted { start[Int(change.row) + 1] += 1 }
        for r in rows.indices { start[r + 1] += start[r] }
        var grouped = counted
        var next = start
        for change in counted {
            grouped[next[Int(change.row)]] = change
            next[Int(change.row)] += 1
        }
        let insert = try statement(
            db, "INSERT INTO catchTally (userId, species, water, bait, counts) VALUES (?, ?, ?, ?, ?)")
        let update = try statement(
            db,
            """
            UPDATE catchTally SET counts = tally_merge(counts, ?5)
            WHERE userId = ?1 AND species = ?2 AND water = ?3 AND bait = ?4
            """)
        let delete = try statement(
            db, "DELETE FROM catchTally WHERE userId = ? AND species = ? AND water = ? AND bait = ?")
        var changes: [TallyCounts.Change] = []
        var ordered: [(bucket: Int, delta: Int32)] = []
        // each count's bucket id by dimension code and text number (-1: not looked up yet),
        // in a local array: a lookup per count change
        precondition(counted.allSatisfy { Int($0.key >> 32) < TallyCounts.dimensionKeys.count })
        var ids = [Int32](repeating: -1, count: TallyCounts.dimensionKeys.count * texts.count)
        // in key order: a user's rows are next to each other in catchTally's b-tree
        for r in rows.indices.sorted(by: { rows[$0] < rows[$1] }) {
            let row = rows[r]
            // the row's changes as the entries are sorted (by bucket id), each count's summed
            ordered.removeAll(keepingCapacity: true)
            for change in grouped[start[r]..<start[r + 1]] {
                let code = Int(change.key >> 32), text = Int(change.key & 0xffff_ffff)
                let slot = code * texts.count + text
                if ids[slot] < 0 { ids[slot] = Int32(try bucketId(db, code: code, text: text)) }
                ordered.append((Int(ids[slot]), change.delta))
            }
            ordered.sort { $0.bucket < $1.bucket }
            changes.removeAll(keepingCapacity: true)
            var i = 0
            while i < ordered.count {
                let bucket = ordered[i].bucket
                var delta = 0
                while i < ordered.count, ordered[i].bucket == bucket {
                    delta += Int(ordered[i].delta)
                    i += 1
                }
                if delta == 0 { continue }
                changes.append(TallyCounts.Change(bucket: bucket, delta: delta))
            }
            if changes.isEmpty { continue }
            // the stored row merged in place (Tally.swift, "Merged in place")
            if !tallyRowsAbsent {
                bind(update, row)
                let request = try TallyCounts.runMerge(update, parameter: 5, changes)
                if request.merged > 0 {
                    if request.empty {
                        bind(delete, row)
                        try delete.run()
                    }
                    continue
                }
            }
            // not stored yet
            scratch.removeAll(keepingCapacity: true)
            try TallyCounts.merge(UnsafeRawBufferPointer(start: nil, count: 0), changes, into: &scratch)
            if scratch.isEmpty { continue }
            bind(insert, row)
            try scratch.withUnsafeBytes { bytes in
                insert.bind(5, static: bytes)
                defer { insert.unbind(5) }
                try insert.run()
            }
        }
    }

    /// The id (`tallyBucket`) of the bucket `text` (a number in `texts`) of dimension `code`:
    /// given the first time the bucket is counted, in this transaction, so every row that
    /// names it commits with it. Looked up in the table once per batch and bucket.
    private func bucketId(_ db: Database, code: Int, text: Int) throws -> Int {
        let key = ProjectionBatch.countKey(UInt8(code), UInt32(text))
        if let id = bucketIds[key] { return id }
        let select = try statement(db, "SELECT id FROM tallyBucket WHERE code = ?1 AND name = ?2")
        select.bind(1, code)
        select.bind(2, static: texts[text])
        var id = try select.first { $0.int(0) }
        if id == nil {
            let insert = try statement(db, "INSERT INTO tallyBucket (code, name) VALUES (?1, ?2)")
            insert.bind(1, code)
            insert.bind(2, static: texts[text])
            try insert.run()
            id = Int(db.lastInsertedRowID)
        }
        guard let id, id >= 0, id <= Int(Int32.max) else { throw TallyCounts.corrupt("a bucket id out of range") }
        bucketIds[key] = id
        return id
    }

    /// Writes everything gathered and starts empty.
    func flush(_ db: Database) throws {
        if !counted.isEmpty { try flushTally(db) }
        if !staleUsers.isEmpty {
            let insert = try statement(db, "INSERT OR IGNORE INTO catchTallyStale (userId) VALUES (?)")
            for userId in staleUsers {
                insert.bind(1, userId)
                try insert.run()
            }
            staleUsers.removeAll()
        }

        if !staleVehicles.isEmpty {
            let insert = try statement(db, "INSERT OR IGNORE INTO vehicleStale (vehicleId, userId) VALUES (?, ?)")
            for (id, userId) in staleVehicles {
                insert.bind(1, id)
                insert.bind(2, userId)
                try insert.run()
            }
            staleVehicles.removeAll()
        }

        for (key, change) in spend where !change.isZero {
            try db.execute(
                cached: """
                    INSERT INTO fuelSpend (vehicleId, currency, userId, fills, totalMinor, volume, closedCostMinor,
                        closedDistance)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT (vehicleId, currency) DO UPDATE SET fills = fills + excluded.fills,
                        totalMinor = totalMinor + excluded.totalMinor, volume = volume + excluded.volume,
                        closedCostMinor = closedCostMinor + excluded.closedCostMinor,
                        closedDistance = closedDistance + excluded.closedDistance
                    """,
                arguments: [
                    key.vehicleId, key.currency, change.userId, change.fills, change.totalMinor, change.volume,
                    change.closedCostMinor, change.closedDistance,
                ])
        }
        spend.removeAll(keepingCapacity: true)

        for (id, delta) in vehicles {
            try FuelProjection.apply(db, vehicleId: id, delta)
            try FuelProjection.refreshSummary(db, vehicleId: id)
        }
        vehicles.removeAll(keepingCapacity: true)
    }
}
