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
    /// A catchTally row's key, each text as its number in `texts` (hashing six strings per
    /// counter change was an eighth of a replay).
    struct TallyKey: Hashable, Comparable {
        var userId: UInt32
        var species: UInt32
        var water: UInt32
        var dimension: UInt32
        var bucket: UInt32
        var bait: UInt32

        static func < (a: TallyKey, b: TallyKey) -> Bool {
            (a.userId, a.species, a.water, a.dimension, a.bucket, a.bait)
                < (b.userId, b.species, b.water, b.dimension, b.bucket, b.bait)
        }
    }

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

    /// catchTally changes by key.
    private(set) var tally: [TallyKey: Int] = [:]
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

    /// The numbers of "status" and of `CatchProjection.dimensions`' keys, in its order.
    let statusName: UInt32
    let dimensionNames: [UInt32]
    /// The statements this batch runs, by their SQL's address (the SQL is a literal).
    private var statements: [UInt: Bound] = [:]

    init() {
        let fixed = [CatchProjection.any, "status"] + CatchProjection.dimensions.map(\.key)
        for (number, text) in fixed.enumerated() { numbers[text] = UInt32(number) }
        texts = fixed.map(Self.hold)
        anyName = 0
        statusName = 1
        dimensionNames = (2..<UInt32(fixed.count)).map { $0 }
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

    /// A catch's contribution to one counter, at the four levels `analytics.suggest` reads:
    /// its species and water, its species in any water, any species in its water, and all
    /// (`CatchProjection.any` in the column summed over). A query then reads its own rows,
    /// as many as there are buckets and baits, however many catches there are.
    func count(_ key: TallyKey, _ sign: Int) {
        let any = anyName
        var k = key
        tally[k, default: 0] += sign
        k.water = any
        tally[k, default: 0] += sign
        k.species = any
        tally[k, default: 0] += sign
        k.water = key.water
        tally[k, default: 0] += sign
    }

    /// A vehicle's counters change by `delta`; its closed cost per currency goes to fuelSpend.
    func vehicle(_ id: String, userId: String, _ delta: FuelProjection.Delta) {
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
        change(&spend[SpendKey(vehicleId: vehicleId, currency: currency), default: Spend(userId: userId)])
    }

    private func bind(_ statement: Bound, _ key: TallyKey, from first: Int32) {
        statement.bind(first, static: texts[Int(key.userId)])
        statement.bind(first + 1, static: texts[Int(key.species)])
        statement.bind(first + 2, static: texts[Int(key.water)])
        statement.bind(first + 3, static: texts[Int(key.dimension)])
        statement.bind(first + 4, static: texts[Int(key.bucket)])
        statement.bind(first + 5, static: texts[Int(key.bait)])
    }

    /// Writes everything gathered and starts empty.
    func flush(_ db: Database) throws {
        if !tally.isEmpty {
            // in key order: a user's rows are next to each other in catchTally's b-tree
            let changes = tally.filter { $0.value != 0 }.sorted { $0.key < $1.key }
            for (key, n) in changes {
                if n > 0 {
                    let s = try statement(
                        db,
                        """
                        INSERT INTO catchTally (userId, species, water, dimension, bucket, bait, n)
                        VALUES (?, ?, ?, ?, ?, ?, ?)
                        ON CONFLICT (userId, species, water, dimension, bucket, bait) DO UPDATE SET n = n + excluded.n
                        """)
                    bind(s, key, from: 1)
                    s.bind(7, n)
                    try s.run()
                } else {
                    // the CHECK (n >= 0) is evaluated on an upsert's candidate row, so take away with UPDATE
                    let t = try statement(
                        db,
                        """
                        UPDATE catchTally SET n = n + ? WHERE userId = ? AND species = ? AND water = ?
                            AND dimension = ? AND bucket = ? AND bait = ?
                        """)
                    let d = try statement(
                        db,
                        """
                        DELETE FROM catchTally WHERE userId = ? AND species = ? AND water = ? AND dimension = ?
                            AND bucket = ? AND bait = ? AND n = 0
                        """)
                    t.bind(1, n)
                    bind(t, key, from: 2)
                    try t.run()
                    bind(d, key, from: 1)
                    try d.run()
                }
            }
        }
        tally.removeAll(keepingCapacity: true)

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
