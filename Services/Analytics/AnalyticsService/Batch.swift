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
    struct TallyKey: Hashable {
        var userId: String
        var species: String
        var water: String
        var dimension: String
        var bucket: String
        var bait: String
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
    /// Vehicle counter changes by vehicle id; their summaries are refreshed at the end.
    private var vehicles: [String: FuelProjection.Delta] = [:]
    private var spend: [SpendKey: Spend] = [:]
    /// Vehicle owners already read or created in this batch.
    var owners: [String: String] = [:]

    /// A catch's contribution to one counter, at the four levels `analytics.suggest` reads:
    /// its species and water, its species in any water, any species in its water, and all
    /// (`CatchProjection.any` in the column summed over). A query then reads its own rows,
    /// as many as there are buckets and baits, however many catches there are.
    func count(_ key: TallyKey, _ sign: Int) {
        let any = CatchProjection.any
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

    /// Writes everything gathered and starts empty.
    func flush(_ db: Database) throws {
        for (key, n) in tally where n != 0 {
            let arguments: StatementArguments = [key.userId, key.species, key.water, key.dimension, key.bucket, key.bait]
            if n > 0 {
                try db.execute(
                    cached: """
                        INSERT INTO catchTally (userId, species, water, dimension, bucket, bait, n) VALUES (?, ?, ?, ?, ?, ?, ?)
                        ON CONFLICT (userId, species, water, dimension, bucket, bait) DO UPDATE SET n = n + excluded.n
                        """,
                    arguments: arguments + [n])
            } else {
                // the CHECK (n >= 0) is evaluated on an upsert's candidate row, so take away with UPDATE
                try db.execute(
                    cached: """
                        UPDATE catchTally SET n = n + ? WHERE userId = ? AND species = ? AND water = ? AND dimension = ?
                            AND bucket = ? AND bait = ?
                        """,
                    arguments: [n] + arguments)
                try db.execute(
                    cached: """
                        DELETE FROM catchTally WHERE userId = ? AND species = ? AND water = ? AND dimension = ?
                            AND bucket = ? AND bait = ? AND n = 0
                        """,
                    arguments: arguments)
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
