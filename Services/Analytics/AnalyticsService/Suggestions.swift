// Fishing suggestions: counters of the user's catches per species, water, condition bucket
// and bait (`catchTally`), adjusted by each catch and conditions event: the catch's old
// contribution is taken out and its new one put in, so replays and out-of-order arrivals
// between the records and weather-fetcher streams end in the same counts. Each count is
// kept at two levels (its species and water; any species in its water), one row per bait
// holding every bucket's count (Tally.swift), so a query reads the rows of its filter (of
// both waters when it names none), never a sum over a user's catches.
//
// A catch's conditions are the weather-fetcher's latest answer for it, when that answer was
// made for the catch's current place and hour (an answer for the place before an edit
// counts as pending until the new one comes). Catches still pending, or whose conditions
// are unavailable, are counted under the `status` dimension and reported.
import Contracts
import Foundation
import GRDB
import Runtime
import Wire

enum CatchProjection {
    /// The conditions counted, in the order suggestions list them.
    static let dimensions: [(key: String, label: String)] = [
        ("temperatureBand", "temperature"),
        ("pressureBand", "pressure"),
        ("pressureTrend", "pressure trend (3 h)"),
        ("windForce", "wind force"),
        ("windDirection", "wind direction"),
        ("sky", "sky"),
        ("timeOfDay", "time of day"),
        ("moonPhase", "moon phase"),
        ("tidePhase", "tide phase"),
        ("tideHeight", "tide height"),
    ]

    struct Fish {
        var id: String
        var userId: String
        var species: String
        var water: String
        var bait: String
        var caughtAt: Int64?
        var latitude: Double?
        var longitude: Double?

        /// The fishCatch columns of `stored`'s row.
        init(_ row: Bound.Columns) {
            id = row.string(0)
            userId = row.string(1)
            species = row.string(2)
            water = row.string(3)
            bait = row.string(4)
            caughtAt = row.int64OrNil(5)
            latitude = row.double(6)
            longitude = row.double(7)
        }

        init(userId: String, _ fish: CatchRead) {
            id = fish.id
            self.userId = userId
            species = CatchProjection.key(fish.species)
            water = fish.water.rawValue
            bait = CatchProjection.key(fish.bait)
            caughtAt = fish.caughtAt.ms
            latitude = fish.latitude
            longitude = fish.longitude
        }

        var placeAndTime: [Double?] { [caughtAt.map(Double.init), latitude, longitude] }
    }

    /// A `catchConditions` row: the weather-fetcher's latest answer for a catch.
    struct Answer {
        var ready: Bool
        var reason: String? = nil
        var hour: Int64?
        var latitude: Double?
        var longitude: Double?
        var water: String?
        /// By `dimensions`' order.
        var buckets: [String?]

        init(
            ready: Bool, reason: String?, hour: Int64?, latitude: Double?, longitude: Double?, water: String?,
            buckets: [String?]
        ) {
            self.ready = ready
            self.reason = reason
            self.hour = hour
            self.latitude = latitude
            self.longitude = longitude
            self.water = water
            self.buckets = buckets
        }

        /// The catchConditions columns of `stored`'s row.
        init(_ row: Bound.Columns) {
            ready = row.string(0) == "ready"
            reason = row.string(orNil: 1)
            hour = row.int64OrNil(2)
            latitude = row.double(3)
            longitude = row.double(4)
            water = row.string(orNil: 5)
            buckets = (0..<Int32(CatchProjection.dimensions.count)).map { row.string(orNil: 6 + $0) }
        }

        var placed: Bool { hour != nil || latitude != nil || longitude != nil }

        /// Made for this catch's place, hour and water: the fetcher rounds the time to the
        /// nearest hour (`CatchHour`) and the place to 2 decimals (the rule records applies
        /// too); an answer for the other water (fresh has no tide) waits for the refetch the
        /// change caused.
        func matches(_ fish: Fish) -> Bool {
            if let water, water != fish.water { return false }
            if let hour, let caught = fish.caughtAt, !CatchHour.same(hour, caught) { return false }
            if let latitude, let other = fish.latitude, Self.rounded(latitude) != Self.rounded(other) { return false }
            if let longitude, let other = fish.longitude, Self.rounded(longitude) != Self.rounded(other) {
                return false
            }
            return true
        }

        static func rounded(_ value: Double) -> Double { (value * 100).rounded() / 100 }
    }

    /// The species of a catchTally row counting every species in its water (never a key:
    /// an empty species is "(none)").
    static let any = ""

    /// Species and baits are grouped case-insensitively (`foldedForComparison`, as records
    /// groups bests); a name that folds to nothing is "(none)".
    static func key(_ text: String) -> String {
        let folded = text.foldedForComparison
        return folded.isEmpty ? "(none)" : folded
    }

    /// What one catch adds to the counters: its status and, when ready, its buckets (each
    /// a `dimensions` index and a bucket).
    static func contribution(_ fish: Fish, _ answer: Answer?, _ each: (_ status: String?, Int, String) -> Void) {
        guard let answer, answer.matches(fish) else { return each("pending", 0, "") }
        guard answer.ready else { return each("unavailable", 0, "") }
        each("ready", 0, "")
        for (i, bucket) in answer.buckets.enumerated() {
            if let bucket { each(nil, i, bucket) }
        }
    }

    /// Each dimension's code in the stored counts (`TallyCounts.dimensionKeys`), in `dimensions`' order.
    static let dimensionCodes: [UInt8] = dimensions.map { dimension in
        guard let code = TallyCounts.dimensionKeys.firstIndex(of: dimension.key) else {
            preconditionFailure("\(dimension.key) has no code in TallyCounts.dimensionKeys")
        }
        return UInt8(code)
    }

    /// Takes the catch's contribution out (sign -1) or puts it in (+1); written when the
    /// batch ends. A backlog batch only records that the owner's counters are behind.
    private static func count(_ batch: ProjectionBatch, _ fish: Fish, _ answer: Answer?, sign: Int) {
        if batch.isBacklog { return batch.leaveBehind(fish.userId) }
        let row = ProjectionBatch.TallyRow(
            userId: batch.name(fish.userId), species: batch.name(fish.species), water: batch.name(fish.water),
            bait: batch.name(fish.bait))
        var counts: [UInt64] = []
        counts.reserveCapacity(dimensions.count + 1)
        contribution(fish, answer) { status, dimension, bucket in
            counts.append(
                status.map { ProjectionBatch.countKey(TallyCounts.statusCode, batch.name($0)) }
                    ?? ProjectionBatch.countKey(dimensionCodes[dimension], batch.name(bucket)))
        }
        batch.count(row, counts, sign)
    }

    // MARK: Counters left behind

    /// Recounts the counters of every user a backlog left behind (`catchTallyStale`) from
    /// their catches and answers, as counting them one event at a time would have left them:
    /// each catch counted with the answer stored for it (`contribution`). Run when a
    /// catch-up ends (DatabaseEventSink's `settle`).
    static func settle(_ db: Database) throws {
        try recount(db, users: String.fetchAll(db.cachedStatement(sql: "SELECT userId FROM catchTallyStale")))
    }

    /// `settle` for one user, when a backlog left that user's counters behind: before a live
    /// batch changes them (`ProjectionBatch.settleFirst`).
    static func settle(_ db: Database, userId: String) throws {
        let stale = try Bool.fetchOne(
            db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM catchTallyStale WHERE userId = ?)"),
            arguments: [userId])
        if stale == true { try recount(db, users: [userId]) }
    }

    /// Recounts `users`' counters from their catches and answers, and forgets that they were behind.
    private static func recount(_ db: Database, users: [String]) throws {
        guard !users.isEmpty else { return }
        // The counts are gathered in memory and written in parts, so a recount of many users
        // holds at most about `part` catches' worth at a time.
        let part = 20_000
        func fresh() -> ProjectionBatch {
            let batch = ProjectionBatch()
            batch.tallyRowsAbsent = true
            return batch
        }
        var batch = fresh()
        var gathered = 0
        for userId in users {
            try db.execute(cached: "DELETE FROM catchTally WHERE userId = ?", arguments: [userId])
            let select = try batch.statement(
                db,
                """
                SELECT f.id, f.userId, f.species, f.water, f.bait, f.caughtAt, f.latitude, f.longitude,
                    c.status, c.reason, c.hour, c.latitude, c.longitude, c.water, c.temperatureBand, c.pressureBand,
                    c.pressureTrend, c.windForce, c.windDirection, c.sky, c.timeOfDay, c.moonPhase, c.tidePhase,
                    c.tideHeight
                FROM fishCatch AS f
                LEFT JOIN catchConditions AS c ON c.catchId = f.id
                WHERE f.userId = ?1
                """)
            select.bind(1, userId)
            try select.each { row in
                count(batch, Fish(row), row.isNull(8) ? nil : Answer(row.from(8)), sign: 1)
                gathered += 1
            }
            try db.execute(cached: "DELETE FROM catchTallyStale WHERE userId = ?", arguments: [userId])
            if gathered >= part {
                try batch.flush(db)
                batch = fresh()
                gathered = 0
            }
        }
        try batch.flush(db)
    }

    /// A catch's row and its answer (each nil when there is none), read with one statement:
    /// nearly every catch event needs both. (`recount` reads the same columns for a user.)
    private static func stored(_ db: Database, catchId: String, batch: ProjectionBatch) throws -> (Fish?, Answer?) {
        let select = try batch.statement(
            db,
            """
            SELECT f.id, f.userId, f.species, f.water, f.bait, f.caughtAt, f.latitude, f.longitude,
                c.status, c.reason, c.hour, c.latitude, c.longitude, c.water, c.temperatureBand, c.pressureBand,
                c.pressureTrend, c.windForce, c.windDirection, c.sky, c.timeOfDay, c.moonPhase, c.tidePhase,
                c.tideHeight
            FROM (SELECT ?1 AS id) AS k
            LEFT JOIN fishCatch AS f ON f.id = k.id
            LEFT JOIN catchConditions AS c ON c.catchId = k.id
            """)
        select.bind(1, catchId)
        // the id and the status are NOT NULL in their tables: NULL there means no such row
        return try select.first { row in
            (row.isNull(0) ? nil : Fish(row), row.isNull(8) ? nil : Answer(row.from(8)))
        } ?? (nil, nil)
    }

    private static func forget(_ db: Database, catchId: String, batch: ProjectionBatch) throws {
        let delete = try batch.statement(db, "DELETE FROM catchConditions WHERE catchId = ?")
        delete.bind(1, catchId)
        try delete.run()
    }

    // MARK: Events

    static func putCatch(_ db: Database, userId: String, _ payload: CatchRead, batch: ProjectionBatch) throws {
        let new = Fish(userId: userId, payload)
        let (old, found) = try stored(db, catchId: new.id, batch: batch)
        var answer = found
        try batch.settleFirst(db, user: userId)
        if let old {
            guard old.userId == userId else { return }
            count(batch, old, answer, sign: -1)
            // An unavailable answer without a place cannot be checked against an edit: it
            // was for the old place or time, so the catch waits for the new answer.
            if let stale = answer, !stale.ready, !stale.placed,
                old.placeAndTime != new.placeAndTime || old.water != new.water
            {
                try forget(db, catchId: new.id, batch: batch)
                answer = nil
            }
        }
        let upsert = try batch.statement(
            db,
            """
            INSERT INTO fishCatch (id, userId, species, water, bait, caughtAt, latitude, longitude)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (id) DO UPDATE SET species = excluded.species, water = excluded.water, bait = excluded.bait,
                caughtAt = excluded.caughtAt, latitude = excluded.latitude, longitude = excluded.longitude
            """)
        upsert.bind(1, new.id)
        upsert.bind(2, userId)
        upsert.bind(3, new.species)
        upsert.bind(4, new.water)
        upsert.bind(5, new.bait)
        upsert.bind(6, new.caughtAt)
        upsert.bind(7, new.latitude)
        upsert.bind(8, new.longitude)
        try upsert.run()
        count(batch, new, answer, sign: 1)
    }

    static func deleteCatch(_ db: Database, userId: String, id: String, batch: ProjectionBatch) throws {
        let (old, answer) = try stored(db, catchId: id, batch: batch)
        guard let old, old.userId == userId else { return }
        try batch.settleFirst(db, user: userId)
        count(batch, old, answer, sign: -1)
        try db.execute(cached: "DELETE FROM fishCatch WHERE id = ?", arguments: [id])
        try forget(db, catchId: id, batch: batch)
    }

    static func conditionsReady(
        _ db: Database, userId: String?, _ payload: ConditionsReadyRead, batch: ProjectionBatch
    ) throws {
        let c = payload.conditions
        try replaceAnswer(
            db, catchId: payload.catchId, userId: userId, batch: batch,
            Answer(
                ready: true, reason: nil, hour: c.hour.ms, latitude: c.latitude, longitude: c.longitude,
                water: c.water?.rawValue,
                buckets: [
                    c.temperatureBand, c.pressureBand, c.pressureTrend, c.beaufort.map { "\($0) Bft" }, c.windDirection,
                    c.sky, c.timeOfDay, c.moonPhase, c.tidePhase, c.tideHeightBand,
                ]))
    }

    static func conditionsUnavailable(
        _ db: Database, userId: String?, _ payload: ConditionsUnavailable, batch: ProjectionBatch
    ) throws {
        try replaceAnswer(
            db, catchId: payload.catchId, userId: userId, batch: batch,
            Answer(
                ready: false, reason: payload.reason, hour: payload.hour?.ms, latitude: payload.latitude,
                longitude: payload.longitude, water: payload.water?.rawValue,
                buckets: Array(repeating: nil, count: dimensions.count)))
    }

    private static func replaceAnswer(
        _ db: Database, catchId: String, userId: String?, batch: ProjectionBatch, _ new: Answer
    ) throws {
        var fish: Fish?
        if batch.isBacklog, let userId {
            // A backlog page counts nothing, and the catch and its old answer were read only
            // to be counted: the user is marked for the recount instead (when the catch is
            // gone or another user's, that recount finds nothing to change). Reading them was
            // a third of applying an answer in a rebuild (docs/performance.md, "Rebuild, a
            // last round").
            batch.leaveBehind(userId)
        } else {
            // (the event's user too: a backlog may have marked it for an answer to a catch
            // that is gone or another user's)
            if let userId { try batch.settleFirst(db, user: userId) }
            let (found, old) = try stored(db, catchId: catchId, batch: batch)
            fish = found
            if let f = fish, let userId, f.userId != userId { fish = nil }
            if let fish {
                try batch.settleFirst(db, user: fish.userId)
                count(batch, fish, old, sign: -1)
            }
        }
        let replace = try batch.statement(
            db,
            """
            INSERT OR REPLACE INTO catchConditions (catchId, userId, status, reason, hour, latitude, longitude,
                temperatureBand, pressureBand, pressureTrend, windForce, windDirection, sky, timeOfDay, moonPhase,
                tidePhase, tideHeight, water)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """)
        replace.bind(1, catchId)
        replace.bind(2, userId ?? fish?.userId)
        replace.bind(3, new.ready ? "ready" : "unavailable")
        replace.bind(4, new.reason)
        replace.bind(5, new.hour)
        replace.bind(6, new.latitude)
        replace.bind(7, new.longitude)
        for (i, bucket) in new.buckets.enumerated() { replace.bind(8 + Int32(i), bucket) }
        replace.bind(18, new.water)
        try replace.run()
        if let fish { count(batch, fish, new, sign: 1) }
    }
}

// MARK: Suggest

// The request and result are `SuggestRequest` and `Suggestions` (Shared/Contracts/Suggestions.swift).

enum SuggestQueries {
    static func confidence(_ n: Int) -> String {
        switch n {
        case 0: "none"
        case ..<5: "low"
        case ..<20: "medium"
        default: "high"
        }
    }

    static func basis(_ n: Int) -> String {
        n == 0
            ? "no catches with weather conditions yet"
            : "based on \(n) catch\(n == 1 ? "" : "es"): \(confidence(n)) confidence"
    }

    /// count / total to 3 decimals, half away from zero, in integers: the value dividing
    /// and rounding Decimals gives, without Decimal's division and rounding (about 3 µs
    /// each; a suggestion has a share for every bucket and bait it lists). In 64 bits for a
    /// part of any whole a user has; otherwise in 128, so no pair of Ints overflows, and a
    /// quotient past what Milli holds (never a share) is saturated.
    static func share(_ count: Int, _ total: Int) -> Milli {
        if total == 0 { return Milli(thousandths: 0) }
        if count >= 0, count <= total, total < 1 << 40 {  // a part of any whole a user has: in 64 bits
            return Milli(thousandths: Int64((count * 2000 + total) / (2 * total)))
        }
        let n = Int128(count).magnitude, d = Int128(total).magnitude
        let thousandths = (n * 2000 + d) / (2 * d)
        let negative = (count < 0) != (total < 0) && thousandths != 0
        return Milli(thousandths: Int64(clamping: negative ? -Int128(thousandths) : Int128(thousandths)))
    }

    /// `buckets`: the names of the bucket ids this process has read (one per service).
    static func suggest(_ db: Database, userId: String, body: SuggestRequest, buckets: TallyBuckets) throws
        -> Suggestions
    {
        let species = body.species.map(CatchProjection.key)
        if let text = body.species, text.trimmingWhitespace.isEmpty {
            throw ServiceError.invalid("species", "must not be empty when given")
        }
        // The rows counted at this filter's level, one per bait and water (both waters when
        // none is given), their counts copied into one buffer.
        var gathered: [String] = []
        var baitOfName: [String: Int] = [:]
        var rowBaits: [Int] = []
        var rowRanges: [Range<Int>] = []
        var stored: [UInt8] = []
        let select = try Bound(
            db, "SELECT bait, counts FROM catchTally WHERE userId = ?1 AND species = ?2 AND (?3 IS NULL OR water = ?3)")
        select.bind(1, userId)
        select.bind(2, species ?? CatchProjection.any)
        select.bind(3, body.water?.rawValue)
        stored.reserveCapacity(4_096)
        try select.each { row in
            let bait = row.string(0)
            let index: Int
            if let known = baitOfName[bait] {
                index = known
            } else {
                index = gathered.count
                baitOfName[bait] = index
                gathered.append(bait)
            }
            let start = stored.count
            stored.append(contentsOf: row.blob(1))
            rowBaits.append(index)
            rowRanges.append(start..<stored.count)
        }
        // Baits are ranked by how many catches they hold, then by name: each is given its
        // place in name order before the merge, so that a tie goes to the bait seen first
        // and no names are compared while ranking (a bucket's top baits are picked in one
        // pass over its counts).
        let byName = gathered.indices.sorted { gathered[$0] < gathered[$1] }
        var rank = [Int](repeating: 0, count: gathered.count)
        for (place, bait) in byName.enumerated() { rank[bait] = place }
        let baitNames = byName.map { gathered[$0] }  // (a constant: the functions below capture it without a box)
        let tallies = try TallyCounts.merged(
            stored, rows: rowRanges, baits: rowBaits.map { rank[$0] }, baitCount: baitNames.count, names: buckets, db)
        let statuses = tallies.buckets(of: TallyCounts.statusCode)

        func total(_ status: String) -> Int {
            statuses.first { tallies.names[$0] == status }.map { tallies.totals[$0] } ?? 0
        }
        let ready = total("ready")
        let pending = total("pending")
        let unavailable = total("unavailable")
        let catches = ready + pending + unavailable

        /// The first `limit` baits of `perBait` (counts by bait, in name order), most caught
        /// first (ties: by name), each with its share of `perBait`'s sum. Picked in one pass,
        /// as sorting every bait and taking the first would (a bucket lists 3).
        func topBaits(_ perBait: ArraySlice<Int>, limit: Int) -> [BaitCount] {
            guard limit > 0 else { return [] }
            return perBait.withUnsafeBufferPointer { counts in
                withUnsafeTemporaryAllocation(of: Int.self, capacity: limit) { top in
                    var picked = 0
                    var sum = 0
                    for bait in counts.indices where counts[bait] > 0 {
                        let n = counts[bait]
                        sum += n
                        // (a later bait is after every one picked by name: it goes before one only with more catches)
                        guard picked < limit || n > counts[top[picked - 1]] else { continue }
                        var at = min(picked, limit - 1)  // (the last one drops out when all are picked)
                        while at > 0, n > counts[top[at - 1]] {
                            top[at] = top[at - 1]
                            at -= 1
                        }
                        top[at] = bait
                        picked = min(picked + 1, limit)
                    }
                    return (0..<picked).map {
                        let n = counts[top[$0]]
                        return BaitCount(bait: baitNames[top[$0]], count: n, share: share(n, sum))
                    }
                }
            }
        }
        var allBaits = [Int](repeating: 0, count: baitNames.count)
        for status in statuses {
            for (bait, n) in tallies.baits(status).enumerated() { allBaits[bait] += n }
        }

        var conditions: [ConditionSuggestion] = []
        conditions.reserveCapacity(CatchProjection.dimensions.count)
        // (most conditions have a value for every ready catch, so one basis serves them)
        let readyBasis = basis(ready)
        var lastBasis = (n: ready, text: readyBasis)
        for i in CatchProjection.dimensions.indices {
            let (key, label) = CatchProjection.dimensions[i]
            let code = CatchProjection.dimensionCodes[i]
            // Buckets are told apart as Swift compares text (canonically equivalent spellings
            // are one bucket), as baits are. The merge told them apart by their bytes, which
            // is the same thing while every bucket is ASCII (the usual case: each bucket is
            // one of the merge's); once one is not, each is looked for among those before it,
            // and the counts of one text are added up.
            let run = tallies.buckets(of: code)
            var list: [BucketCount] = []
            list.reserveCapacity(run.count)
            let withData = run.reduce(0) { $0 + tallies.totals[$1] }
            if run.allSatisfy({ tallies.ascii[$0] }) {
                for b in run {
                    list.append(
                        BucketCount(
                            bucket: tallies.names[b], count: tallies.totals[b],
                            share: share(tallies.totals[b], withData), baits: topBaits(tallies.baits(b), limit: 3)))
                }
            } else {
                var names: [String] = []
                var totals: [Int] = []
                var perBait: [[Int]] = []
                for b in run {
                    if let known = names.firstIndex(of: tallies.names[b]) {
                        totals[known] += tallies.totals[b]
                        for (bait, n) in tallies.baits(b).enumerated() { perBait[known][bait] += n }
                    } else {
                        names.append(tallies.names[b])
                        totals.append(tallies.totals[b])
                        perBait.append(Array(tallies.baits(b)))
                    }
                }
                for i in names.indices {
                    list.append(
                        BucketCount(
                            bucket: names[i], count: totals[i], share: share(totals[i], withData),
                            baits: topBaits(perBait[i][...], limit: 3)))
                }
            }
            list.sort { ($0.count, $1.bucket) > ($1.count, $0.bucket) }
            if lastBasis.n != withData { lastBasis = (withData, basis(withData)) }
            conditions.append(
                ConditionSuggestion(
                    condition: key, label: label, catches: withData, best: list.first, buckets: list,
                    confidence: confidence(withData), basis: lastBasis.text))
        }
        var notes: [String] = []
        if pending > 0 { notes.append("\(pending) still waiting for weather conditions") }
        if unavailable > 0 { notes.append("\(unavailable) without conditions (unavailable)") }
        return Suggestions(
            species: species, water: body.water, catches: catches, ready: ready, pending: pending,
            unavailable: unavailable, confidence: confidence(ready), basis: readyBasis,
            note: notes.isEmpty ? nil : "not counted: " + notes.joined(separator: "; "), conditions: conditions,
            baits: topBaits(allBaits[...], limit: 10))
    }
}
