// The analytics schema: projections of other services' events, each kept current inside the
// event consumer's transaction (with its checkpoint). Every table of a user's data carries
// `userId` so a `user.deleted` purges it with one statement per table, and every query is
// scoped by it (`tallyBucket` names condition buckets, nobody's own data).
//
// Fuel keeps the fill-ups themselves plus, per fill-up, the result of the full-to-full walk
// and the walk's state after it, so a change recomputes from the first affected position
// and stops as soon as the walk matches what was stored (docs/fuel-economy.md).
import Foundation
import GRDB

enum Schema {
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("analytics.v1") { db in
            try db.execute(
                sql: """
                    CREATE TABLE vehicle (
                        id TEXT PRIMARY KEY NOT NULL,
                        userId TEXT NOT NULL,
                        nickname TEXT NOT NULL DEFAULT '',
                        distanceUnit TEXT NOT NULL CHECK (distanceUnit IN ('mi', 'km')),
                        volumeUnit TEXT NOT NULL CHECK (volumeUnit IN ('gal', 'l', 'ukgal')),
                        fills INTEGER NOT NULL DEFAULT 0 CHECK (fills >= 0),
                        closedSegments INTEGER NOT NULL DEFAULT 0 CHECK (closedSegments >= 0),
                        closedDistance INTEGER NOT NULL DEFAULT 0,
                        closedVolume INTEGER NOT NULL DEFAULT 0,
                        -- partial fill-ups after the last closed segment, waiting for a full one
                        openFills INTEGER NOT NULL DEFAULT 0,
                        openDistance INTEGER NOT NULL DEFAULT 0,
                        openVolume INTEGER NOT NULL DEFAULT 0,
                        lastFillId TEXT, lastDate INTEGER, lastDistance INTEGER, lastVolume INTEGER,
                        bestFillId TEXT, bestDate INTEGER, bestDistance INTEGER, bestVolume INTEGER,
                        worstFillId TEXT, worstDate INTEGER, worstDistance INTEGER, worstVolume INTEGER
                    );
                    CREATE INDEX vehicle_user ON vehicle(userId);

                    CREATE TABLE fill (
                        id TEXT PRIMARY KEY NOT NULL,
                        userId TEXT NOT NULL,
                        vehicleId TEXT NOT NULL REFERENCES vehicle(id) ON DELETE CASCADE,
                        date INTEGER NOT NULL,
                        odometer INTEGER,
                        -- the odometer or -1: a non-null sort key (date, odoKey, id)
                        odoKey INTEGER NOT NULL,
                        trip INTEGER,
                        volume INTEGER NOT NULL CHECK (volume > 0),
                        totalMinor INTEGER NOT NULL,
                        currency TEXT NOT NULL,
                        full INTEGER NOT NULL,
                        missed INTEGER NOT NULL,
                        -- the walk's result for this fill-up
                        outcome TEXT NOT NULL DEFAULT 'pending',
                        segmentDistance INTEGER,
                        segmentVolume INTEGER,
                        segmentCostMinor INTEGER,
                        segmentCurrency TEXT,
                        ratio REAL,
                        -- the walk's state after this fill-up
                        anchored INTEGER NOT NULL DEFAULT 0,
                        reading INTEGER,
                        openFills INTEGER NOT NULL DEFAULT 0,
                        openDistance INTEGER NOT NULL DEFAULT 0,
                        openVolume INTEGER NOT NULL DEFAULT 0,
                        openCostMinor INTEGER NOT NULL DEFAULT 0,
                        openCurrency TEXT
                    );
                    CREATE INDEX fill_order ON fill(vehicleId, date, odoKey, id);
                    CREATE INDEX fill_ratio ON fill(vehicleId, ratio) WHERE ratio IS NOT NULL;
                    CREATE INDEX fill_user ON fill(userId);

                    -- per vehicle and currency: everything spent, and the cost and distance of
                    -- closed single-currency segments (cost per distance)
                    CREATE TABLE fuelSpend (
                        vehicleId TEXT NOT NULL REFERENCES vehicle(id) ON DELETE CASCADE,
                        currency TEXT NOT NULL,
                        userId TEXT NOT NULL,
                        fills INTEGER NOT NULL DEFAULT 0,
                        totalMinor INTEGER NOT NULL DEFAULT 0,
                        volume INTEGER NOT NULL DEFAULT 0,
                        closedCostMinor INTEGER NOT NULL DEFAULT 0,
                        closedDistance INTEGER NOT NULL DEFAULT 0,
                        PRIMARY KEY (vehicleId, currency)
                    ) WITHOUT ROWID;
                    CREATE INDEX fuelSpend_user ON fuelSpend(userId);

                    CREATE TABLE expense (
                        id TEXT PRIMARY KEY NOT NULL,
                        userId TEXT NOT NULL,
                        name TEXT NOT NULL,
                        amountMinor INTEGER NOT NULL,
                        currency TEXT NOT NULL,
                        date INTEGER NOT NULL,
                        day INTEGER NOT NULL,
                        category TEXT
                    );
                    CREATE INDEX expense_day ON expense(userId, currency, day);
                    CREATE INDEX expense_amount ON expense(userId, currency, amountMinor);

                    -- the aggregate every expense summary reads: one row per day, currency and
                    -- category ('' when none)
                    CREATE TABLE expenseDay (
                        userId TEXT NOT NULL,
                        day INTEGER NOT NULL,
                        currency TEXT NOT NULL,
                        category TEXT NOT NULL,
                        totalMinor INTEGER NOT NULL,
                        count INTEGER NOT NULL CHECK (count >= 0),
                        PRIMARY KEY (userId, day, currency, category)
                    ) WITHOUT ROWID;

                    CREATE TABLE attendance (
                        id TEXT PRIMARY KEY NOT NULL,
                        userId TEXT NOT NULL,
                        kind TEXT NOT NULL CHECK (kind IN ('arrival', 'departure')),
                        at INTEGER NOT NULL,
                        -- an arrival not followed by a departure, or a departure not preceded
                        -- by an arrival
                        open INTEGER NOT NULL DEFAULT 0
                    );
                    CREATE INDEX attendance_order ON attendance(userId, at, id);
                    CREATE INDEX attendance_latest ON attendance(userId, kind, at);
                    CREATE INDEX attendance_open ON attendance(userId, at) WHERE open = 1;

                    CREATE TABLE attendanceDay (
                        userId TEXT NOT NULL,
                        day INTEGER NOT NULL,
                        workedMs INTEGER NOT NULL,
                        PRIMARY KEY (userId, day)
                    ) WITHOUT ROWID;

                    CREATE TABLE activity (
                        id TEXT PRIMARY KEY NOT NULL,
                        userId TEXT NOT NULL,
                        name TEXT NOT NULL,
                        createdAt INTEGER NOT NULL,
                        deleted INTEGER NOT NULL DEFAULT 0,
                        totalMs INTEGER NOT NULL DEFAULT 0
                    );
                    CREATE INDEX activity_user ON activity(userId, createdAt);

                    -- saved times already counted, so a replayed one is never counted twice
                    CREATE TABLE timeEntry (
                        id TEXT PRIMARY KEY NOT NULL,
                        userId TEXT NOT NULL,
                        activityId TEXT NOT NULL,
                        durationMs INTEGER NOT NULL
                    );
                    CREATE INDEX timeEntry_user ON timeEntry(userId);

                    CREATE TABLE timer (
                        activityId TEXT PRIMARY KEY NOT NULL,
                        userId TEXT NOT NULL,
                        state TEXT NOT NULL,
                        accumulatedMs INTEGER NOT NULL,
                        runningSince INTEGER
                    );
                    CREATE INDEX timer_user ON timer(userId);

                    CREATE TABLE netWorth (
                        userId TEXT PRIMARY KEY NOT NULL,
                        totalMs INTEGER NOT NULL
                    );

                    CREATE TABLE fishCatch (
                        id TEXT PRIMARY KEY NOT NULL,
                        userId TEXT NOT NULL,
                        species TEXT NOT NULL,
                        water TEXT NOT NULL,
                        bait TEXT NOT NULL,
                        caughtAt INTEGER,
                        latitude DOUBLE,
                        longitude DOUBLE
                    );
                    CREATE INDEX fishCatch_user ON fishCatch(userId);

                    -- the weather-fetcher's answer for a catch; may arrive before the catch
                    CREATE TABLE catchConditions (
                        catchId TEXT PRIMARY KEY NOT NULL,
                        userId TEXT,
                        status TEXT NOT NULL CHECK (status IN ('ready', 'unavailable')),
                        reason TEXT,
                        hour INTEGER,
                        latitude DOUBLE,
                        longitude DOUBLE,
                        temperatureBand TEXT, pressureBand TEXT, pressureTrend TEXT, windForce TEXT,
                        windDirection TEXT, sky TEXT, timeOfDay TEXT, moonPhase TEXT, tidePhase TEXT,
                        tideHeight TEXT
                    );
                    CREATE INDEX catchConditions_user ON catchConditions(userId);

                    -- suggestion counters: catches per (species, water, condition, bucket, bait);
                    -- dimension 'status' counts pending | ready | unavailable
                    CREATE TABLE catchTally (
                        userId TEXT NOT NULL,
                        species TEXT NOT NULL,
                        water TEXT NOT NULL,
                        dimension TEXT NOT NULL,
                        bucket TEXT NOT NULL,
                        bait TEXT NOT NULL,
                        n INTEGER NOT NULL CHECK (n >= 0),
                        PRIMARY KEY (userId, species, water, dimension, bucket, bait)
                    ) WITHOUT ROWID;
                    CREATE INDEX catchTally_water ON catchTally(userId, water);
                    """)
        }
        // the water (fresh | salt) an answer was made for: a change of water waits for a new one
        migrator.registerMigration("analytics.conditionsWater") { db in
            try db.execute(sql: "ALTER TABLE catchConditions ADD COLUMN water TEXT")
        }
        // each user's IANA time zone (from auth's events); days are counted in it
        migrator.registerMigration("analytics.userZone") { db in
            try db.execute(
                sql: """
                    CREATE TABLE userZone (
                        userId TEXT PRIMARY KEY NOT NULL,
                        timeZone TEXT NOT NULL
                    ) WITHOUT ROWID;
                    """)
        }
        // catchTally at four levels: rows with species and/or water '' (CatchProjection.any)
        // count every species and/or water, so `analytics.suggest` reads one level's rows
        // instead of summing a user's whole tally
        migrator.registerMigration("analytics.tallyLevels") { db in
            try db.execute(
                sql: """
                    DROP INDEX catchTally_water;
                    INSERT INTO catchTally (userId, species, water, dimension, bucket, bait, n)
                        SELECT userId, species, '', dimension, bucket, bait, SUM(n) FROM catchTally
                        WHERE species <> '' AND water <> '' GROUP BY userId, species, dimension, bucket, bait;
                    INSERT INTO catchTally (userId, species, water, dimension, bucket, bait, n)
                        SELECT userId, '', water, dimension, bucket, bait, SUM(n) FROM catchTally
                        WHERE species <> '' AND water <> '' GROUP BY userId, water, dimension, bucket, bait;
                    INSERT INTO catchTally (userId, species, water, dimension, bucket, bait, n)
                        SELECT userId, '', '', dimension, bucket, bait, SUM(n) FROM catchTally
                        WHERE species <> '' AND water <> '' GROUP BY userId, dimension, bucket, bait;
                    """)
        }
        // catchTally as one row per (userId, species, water, bait), every dimension and
        // bucket count of the row in one `counts` BLOB (Tally.swift has its format), at two
        // levels: the catch's species, and species '' (CatchProjection.any) for every species
        // in that water; a query without a water adds the rows of both waters, so the levels
        // with water '' are dropped. A catch and its conditions change two rows instead of
        // forty-odd, and a replay's batch writes each row once. The one-count rows are
        // converted, so suggestions stay as they were without a rebuild.
        migrator.registerMigration("analytics.tallyRows") { db in
            try db.execute(
                sql: """
                    ALTER TABLE catchTally RENAME TO catchTallyCounts;
                    CREATE TABLE catchTally (
                        userId TEXT NOT NULL,
                        species TEXT NOT NULL,
                        water TEXT NOT NULL,
                        bait TEXT NOT NULL,
                        counts BLOB NOT NULL,
                        PRIMARY KEY (userId, species, water, bait)
                    ) WITHOUT ROWID;
                    """)
            let rows = try Row.fetchCursor(
                db,
                sql: """
                    SELECT userId, species, water, bait, dimension, bucket, n FROM catchTallyCounts
                    WHERE n > 0 AND water <> '' ORDER BY userId, species, water, bait
                    """)
            var key: [String]? = nil
            var entries: [TallyText.Entry] = []
            func write() throws {
                guard let key, !entries.isEmpty else { return }
                try db.execute(
                    sql: "INSERT INTO catchTally (userId, species, water, bait, counts) VALUES (?, ?, ?, ?, ?)",
                    arguments: [key[0], key[1], key[2], key[3], Data(try TallyText.encode(entries))])
            }
            while let row = try rows.next() {
                let rowKey: [String] = [row[0], row[1], row[2], row[3]]
                if rowKey != key {
                    try write()
                    key = rowKey
                    entries = []
                }
                // only the dimensions the projection writes (and suggestions read) have a code
                let dimension: String = row[4]
                guard let code = TallyCounts.dimensionKeys.firstIndex(of: dimension) else { continue }
                entries.append(TallyText.Entry(code: UInt8(code), bucket: Array((row[5] as String).utf8), n: row[6]))
            }
            try write()
            try db.execute(sql: "DROP TABLE catchTallyCounts")
        }
        // the users whose catch counters a catch-up's backlog left behind, recounted from
        // their catches and answers when it ends (CatchProjection.settle)
        migrator.registerMigration("analytics.tallyStale") { db in
            try db.execute(sql: "CREATE TABLE catchTallyStale (userId TEXT PRIMARY KEY NOT NULL) WITHOUT ROWID")
        }
        // the vehicles whose counters, spend and summary a catch-up's backlog left behind,
        // recomputed from their fill-ups when it ends (FuelProjection.settle)
        migrator.registerMigration("analytics.vehicleStale") { db in
            try db.execute(
                sql: "CREATE TABLE vehicleStale (vehicleId TEXT PRIMARY KEY NOT NULL, userId TEXT NOT NULL) WITHOUT ROWID")
        }
        // An account's fill-ups are found through its vehicles (fill_order leads with
        // vehicleId, vehicle_user finds the vehicles): a fill-up is stored only for a vehicle
        // of its own user (FuelProjection.ensureVehicle), and a vehicle never changes hands.
        // The index by user served account deletion alone, and a replay paid for it on
        // every fill-up: at a million of them, each user's entries sit on leaf pages of their
        // own, and every page of a catch-up dirtied and wrote one per user
        // (docs/performance.md, "Fill-ups found by vehicle").
        migrator.registerMigration("analytics.fillByVehicle") { db in
            try db.execute(sql: "DROP INDEX fill_user")
        }
        // The accounts deleted (auth's `user.deleted`): records' and weather-fetcher's events
        // come through consumers of their own, so one of the user's published before the
        // deletion can be applied after the purge; it is skipped (ProjectionBatch.isDeleted).
        // An id only, never purged (the user is gone for good; ids are not reused).
        migrator.registerMigration("analytics.deletedUser") { db in
            try db.execute(sql: "CREATE TABLE deletedUser (userId TEXT PRIMARY KEY NOT NULL) WITHOUT ROWID")
        }
        // A bucket in catchTally's counts is its id in `tallyBucket` (its dimension code and
        // text, held once), not its text in every row that counts it: every bait's row of a
        // user repeats nearly the same forty-odd bucket texts, three quarters of the rows'
        // bytes (Tally.swift; docs/performance.md, "Buckets by number"). Every row is
        // converted, so suggestions stay as they were without a rebuild. Ids are never
        // reused: nothing deletes a bucket. The one table without `userId`: a bucket is the
        // weather-fetcher's label or a catch's status, nobody's own data.
        migrator.registerMigration("analytics.tallyBucketIds") { db in
            try db.execute(
                sql: """
                    CREATE TABLE tallyBucket (
                        id INTEGER PRIMARY KEY,
                        code INTEGER NOT NULL,
                        name TEXT NOT NULL,
                        UNIQUE (code, name)
                    );
                    ALTER TABLE catchTally RENAME TO catchTallyText;
                    CREATE TABLE catchTally (
                        userId TEXT NOT NULL,
                        species TEXT NOT NULL,
                        water TEXT NOT NULL,
                        bait TEXT NOT NULL,
                        counts BLOB NOT NULL,
                        PRIMARY KEY (userId, species, water, bait)
                    ) WITHOUT ROWID;
                    """)
            var ids: [TallyText.Bucket: Int] = [:]
            let insertBucket = try db.cachedStatement(sql: "INSERT INTO tallyBucket (code, name) VALUES (?, ?)")
            let insertRow = try db.cachedStatement(
                sql: "INSERT INTO catchTally (userId, species, water, bait, counts) VALUES (?, ?, ?, ?, ?)")
            let behind = try db.cachedStatement(sql: "INSERT OR IGNORE INTO catchTallyStale (userId) VALUES (?)")
            let rows = try Row.fetchCursor(db, sql: "SELECT userId, species, water, bait, counts FROM catchTallyText")
            while let row = try rows.next() {
                let userId: String = row[0]
                let text: Data = row[4]
                let counts: [UInt8]
                do {
                    var entries: [TallyCounts.Entry] = []
                    for entry in try TallyText.decode(text) {
                        let bucket = TallyText.Bucket(code: entry.code, text: entry.bucket)
                        if ids[bucket] == nil {
                            try insertBucket.execute(
                                arguments: [Int(entry.code), String(decoding: entry.bucket, as: UTF8.self)])
                            ids[bucket] = Int(db.lastInsertedRowID)
                        }
                        entries.append(TallyCounts.Entry(bucket: ids[bucket]!, n: entry.n))
                    }
                    counts = try TallyCounts.encode(entries)
                } catch let error as DatabaseError where error.resultCode == .SQLITE_CORRUPT {
                    // a row that cannot be read (it made that user's suggestions an error): its
                    // user's counters are recounted from the catches (CatchProjection.settle),
                    // rather than the whole service refusing to start
                    try behind.execute(arguments: [userId])
                    continue
                }
                guard !counts.isEmpty else { continue }
                try insertRow.execute(arguments: [userId, row[1], row[2], row[3], Data(counts)])
            }
            try db.execute(sql: "DROP TABLE catchTallyText")
        }
        return migrator
    }

    /// One statement per table deleting a user's rows (account deletion).
    static let userTables: [String] = [
        "DELETE FROM fill WHERE vehicleId IN (SELECT id FROM vehicle WHERE userId = ?)",
        "DELETE FROM fuelSpend WHERE userId = ?",
        "DELETE FROM vehicle WHERE userId = ?",
        "DELETE FROM vehicleStale WHERE userId = ?",
        "DELETE FROM expense WHERE userId = ?",
        "DELETE FROM expenseDay WHERE userId = ?",
        "DELETE FROM attendance WHERE userId = ?",
        "DELETE FROM attendanceDay WHERE userId = ?",
        "DELETE FROM activity WHERE userId = ?",
        "DELETE FROM timeEntry WHERE userId = ?",
        "DELETE FROM timer WHERE userId = ?",
        "DELETE FROM netWorth WHERE userId = ?",
        "DELETE FROM catchConditions WHERE userId = ? OR catchId IN (SELECT id FROM fishCatch WHERE userId = ?1)",
        "DELETE FROM fishCatch WHERE userId = ?",
        "DELETE FROM catchTally WHERE userId = ?",
        "DELETE FROM catchTallyStale WHERE userId = ?",
        "DELETE FROM userZone WHERE userId = ?",
    ]
}

/// catchTally's counts as "analytics.tallyRows" wrote them, before "analytics.tallyBucketIds":
/// entries sorted by dimension code, then by the bucket's UTF-8 bytes (shorter first when one
/// is a prefix of the other), no zero counts; each entry is
///     dimension code (1 byte, a position in `TallyCounts.dimensionKeys`)
///     bucket length in bytes (unsigned LEB128), the bucket's UTF-8 bytes
///     count (unsigned LEB128, at least 1)
/// Kept for those two migrations only: each writes and reads the format of its time.
enum TallyText {
    struct Entry: Equatable {
        var code: UInt8
        var bucket: [UInt8]
        var n: Int
    }

    struct Bucket: Hashable {
        var code: UInt8
        var text: [UInt8]
    }

    static func encode(_ entries: [Entry]) throws -> [UInt8] {
        let sorted = entries.filter { $0.n != 0 }.sorted { a, b in
            a.code != b.code ? a.code < b.code : TallyCounts.compare(a.bucket, b.bucket) < 0
        }
        var out: [UInt8] = []
        for (i, entry) in sorted.enumerated() {
            guard entry.n > 0 else { throw TallyCounts.corrupt("a negative count") }
            if i > 0, sorted[i - 1].code == entry.code, sorted[i - 1].bucket == entry.bucket {
                throw TallyCounts.corrupt("a bucket twice")
            }
            out.append(entry.code)
            TallyCounts.appendVarint(entry.bucket.count, to: &out)
            out.append(contentsOf: entry.bucket)
            TallyCounts.appendVarint(entry.n, to: &out)
        }
        return out
    }

    static func decode(_ data: Data) throws -> [Entry] {
        try data.withUnsafeBytes { bytes in
            var offset = 0
            var entries: [Entry] = []
            while offset < bytes.count {
                let code = bytes[offset]
                offset += 1
                let length = try TallyCounts.varint(bytes, at: &offset)
                guard length <= bytes.count - offset else { throw TallyCounts.corrupt("bucket past the end") }
                let bucket = Array(bytes[offset..<(offset + length)])
                offset += length
                let n = try TallyCounts.varint(bytes, at: &offset)
                guard n > 0 else { throw TallyCounts.corrupt("a zero count") }
                entries.append(Entry(code: code, bucket: bucket, n: n))
            }
            return entries
        }
    }
}
