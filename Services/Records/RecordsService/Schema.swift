// The records database: the five logbooks' tables, one migration in code. The schema holds
// the rules it can (NOT NULL, CHECK, foreign keys that cascade, the unique name of an
// active activity) so that a bug in a handler cannot store what the handlers refuse.
// Times are INTEGER milliseconds since 1970 (UTC); volumes, distances and weights are
// INTEGER thousandths (`Milli`); money is INTEGER minor units with a currency.
// Child rows reference (userId, id) of their parent, so a row can never point at another
// user's parent.
import GRDB
import Storage

enum Schema {
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("records.v1") { db in
            try db.execute(sql: v1)
        }
        migrator.registerMigration("records.v2.photos") { db in
            try db.execute(sql: v2)
        }
        // Pump prices have a tenth of a cent ($3.459/gal): the price per unit is kept in
        // thousandths of a minor unit from now on.
        migrator.registerMigration("records.v3.price-thousandths") { db in
            try db.execute(
                sql: """
                    ALTER TABLE fillup RENAME COLUMN pricePerUnitMinor TO pricePerUnitMilliMinor;
                    UPDATE fillup SET pricePerUnitMilliMinor = pricePerUnitMilliMinor * 1000;
                    """)
        }
        // `expense list --sort amount` orders within each currency
        migrator.registerMigration("records.v4.expense-amount-by-currency") { db in
            try db.execute(
                sql: """
                    DROP INDEX expense_by_amount;
                    CREATE INDEX expense_by_amount ON expense (userId, currency, amountMinor DESC, id DESC);
                    """)
        }
        // Records sharded by user (Shards.swift): a user moving away, moved away or arriving.
        migrator.registerMigration("records.v5.shard-users") { db in
            try db.execute(
                sql: """
                    CREATE TABLE shardUser (
                        userId TEXT PRIMARY KEY NOT NULL,
                        state TEXT NOT NULL CHECK (state IN ('moving', 'moved', 'arriving', 'arrived')),
                        shard INTEGER NOT NULL CHECK (shard >= 1),
                        since INTEGER NOT NULL
                    ) WITHOUT ROWID;
                    """)
        }
        // the users whose deletion was applied: a write of theirs already under way (its
        // session resolved before the deletion) is refused when it commits
        migrator.registerMigration("records.v6.deleted-users") { db in try db.execute(sql: DeletedUsers.table) }
        return migrator
    }

    static let v1 = """
        CREATE TABLE vehicle (
            id TEXT PRIMARY KEY NOT NULL,
            userId TEXT NOT NULL,
            nickname TEXT NOT NULL CHECK (length(nickname) BETWEEN 1 AND 60),
            make TEXT CHECK (make IS NULL OR length(make) BETWEEN 1 AND 60),
            model TEXT CHECK (model IS NULL OR length(model) BETWEEN 1 AND 60),
            year INTEGER CHECK (year IS NULL OR year >= 1886),
            distanceUnit TEXT NOT NULL CHECK (distanceUnit IN ('mi', 'km')),
            volumeUnit TEXT NOT NULL CHECK (volumeUnit IN ('gal', 'l', 'ukgal')),
            createdAt INTEGER NOT NULL,
            updatedAt INTEGER NOT NULL,
            UNIQUE (userId, id)
        );
        CREATE INDEX vehicle_list ON vehicle (userId, createdAt DESC, id DESC);

        CREATE TABLE fillup (
            id TEXT PRIMARY KEY NOT NULL,
            userId TEXT NOT NULL,
            vehicleId TEXT NOT NULL,
            date INTEGER NOT NULL,
            odometer INTEGER CHECK (odometer IS NULL OR odometer > 0),
            trip INTEGER CHECK (trip IS NULL OR trip > 0),
            volume INTEGER NOT NULL CHECK (volume > 0),
            pricePerUnitMinor INTEGER NOT NULL CHECK (pricePerUnitMinor >= 0),
            totalMinor INTEGER NOT NULL CHECK (totalMinor >= 0),
            derived TEXT NOT NULL CHECK (derived IN ('none', 'price', 'total')),
            currency TEXT NOT NULL CHECK (length(currency) = 3),
            full INTEGER NOT NULL CHECK (full IN (0, 1)),
            missed INTEGER NOT NULL CHECK (missed IN (0, 1)),
            note TEXT CHECK (note IS NULL OR length(note) <= 500),
            createdAt INTEGER NOT NULL,
            updatedAt INTEGER NOT NULL,
            CHECK (odometer IS NOT NULL OR trip IS NOT NULL),
            FOREIGN KEY (userId, vehicleId) REFERENCES vehicle (userId, id) ON DELETE CASCADE
        );
        CREATE INDEX fillup_list ON fillup (userId, vehicleId, date DESC, id DESC);

        CREATE TABLE fishCatch (
            id TEXT PRIMARY KEY NOT NULL,
            userId TEXT NOT NULL,
            species TEXT NOT NULL COLLATE NOCASE CHECK (length(species) BETWEEN 1 AND 80),
            weight INTEGER NOT NULL CHECK (weight > 0),
            weightUnit TEXT NOT NULL CHECK (weightUnit IN ('kg', 'lb')),
            weightMg INTEGER NOT NULL CHECK (weightMg > 0),
            length INTEGER CHECK (length IS NULL OR length > 0),
            lengthUnit TEXT CHECK (lengthUnit IN ('cm', 'in')),
            bait TEXT NOT NULL CHECK (length(bait) BETWEEN 1 AND 80),
            water TEXT NOT NULL CHECK (water IN ('fresh', 'salt')),
            latitude REAL NOT NULL CHECK (latitude BETWEEN -90 AND 90),
            longitude REAL NOT NULL CHECK (longitude BETWEEN -180 AND 180),
            caughtAt INTEGER NOT NULL,
            note TEXT CHECK (note IS NULL OR length(note) <= 500),
            released INTEGER NOT NULL CHECK (released IN (0, 1)),
            photoHash TEXT,
            conditionsStatus TEXT NOT NULL CHECK (conditionsStatus IN ('pending', 'ready', 'unavailable')),
            conditionsReason TEXT,
            conditionsSummary TEXT,
            createdAt INTEGER NOT NULL,
            updatedAt INTEGER NOT NULL,
            CHECK ((length IS NULL) = (lengthUnit IS NULL))
        );
        CREATE INDEX catch_by_date ON fishCatch (userId, caughtAt DESC, id DESC);
        CREATE INDEX catch_by_weight ON fishCatch (userId, weightMg DESC, id DESC);
        CREATE INDEX catch_by_species ON fishCatch (userId, species, id);

        CREATE TABLE expense (
            id TEXT PRIMARY KEY NOT NULL,
            userId TEXT NOT NULL,
            name TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 80),
            description TEXT CHECK (description IS NULL OR length(description) <= 500),
            amountMinor INTEGER NOT NULL CHECK (amountMinor > 0),
            currency TEXT NOT NULL CHECK (length(currency) = 3),
            date INTEGER NOT NULL,
            category TEXT CHECK (category IS NULL OR length(category) BETWEEN 1 AND 40),
            createdAt INTEGER NOT NULL,
            updatedAt INTEGER NOT NULL
        );
        CREATE INDEX expense_by_date ON expense (userId, date DESC, id DESC);
        CREATE INDEX expense_by_amount ON expense (userId, amountMinor DESC, id DESC);

        CREATE TABLE attendance (
            id TEXT PRIMARY KEY NOT NULL,
            userId TEXT NOT NULL,
            kind TEXT NOT NULL CHECK (kind IN ('arrival', 'departure')),
            at INTEGER NOT NULL,
            latitude REAL CHECK (latitude IS NULL OR latitude BETWEEN -90 AND 90),
            longitude REAL CHECK (longitude IS NULL OR longitude BETWEEN -180 AND 180),
            accuracy REAL CHECK (accuracy IS NULL OR accuracy >= 0),
            source TEXT NOT NULL CHECK (source IN ('ios', 'android', 'web', 'cli', 'company')),
            note TEXT CHECK (note IS NULL OR length(note) <= 500),
            correction INTEGER NOT NULL CHECK (correction IN (0, 1)),
            createdAt INTEGER NOT NULL,
            CHECK ((latitude IS NULL) = (longitude IS NULL)),
            CHECK (accuracy IS NULL OR latitude IS NOT NULL)
        );
        CREATE INDEX attendance_list ON attendance (userId, at DESC, id DESC);
        CREATE INDEX attendance_latest ON attendance (userId, kind, at DESC, id DESC);

        CREATE TABLE activity (
            id TEXT PRIMARY KEY NOT NULL,
            userId TEXT NOT NULL,
            name TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 60),
            createdAt INTEGER NOT NULL,
            -- Deleted activities are kept (soft-deleted): their saved time stays in net worth.
            deletedAt INTEGER,
            UNIQUE (userId, id)
        );
        CREATE INDEX activity_list ON activity (userId, createdAt DESC, id DESC);
        CREATE UNIQUE INDEX activity_active_name ON activity (userId, name COLLATE NOCASE)
            WHERE deletedAt IS NULL;

        -- The timer of an activity, held by the server. No row: idle.
        CREATE TABLE timer (
            activityId TEXT PRIMARY KEY NOT NULL,
            userId TEXT NOT NULL,
            state TEXT NOT NULL CHECK (state IN ('running', 'paused', 'stopped')),
            accumulatedMs INTEGER NOT NULL CHECK (accumulatedMs >= 0),
            runningSince INTEGER,
            startedAt INTEGER NOT NULL,
            updatedAt INTEGER NOT NULL,
            CHECK ((state = 'running') = (runningSince IS NOT NULL)),
            FOREIGN KEY (userId, activityId) REFERENCES activity (userId, id) ON DELETE CASCADE
        );

        CREATE TABLE timeEntry (
            id TEXT PRIMARY KEY NOT NULL,
            userId TEXT NOT NULL,
            activityId TEXT NOT NULL,
            durationMs INTEGER NOT NULL CHECK (durationMs > 0),
            startedAt INTEGER NOT NULL,
            savedAt INTEGER NOT NULL,
            FOREIGN KEY (userId, activityId) REFERENCES activity (userId, id) ON DELETE CASCADE
        );
        CREATE INDEX timeEntry_list ON timeEntry (userId, activityId, savedAt DESC, id DESC);
        CREATE INDEX timeEntry_user ON timeEntry (userId, durationMs);
        """

    /// Catch photos (docs/photos.md): one `photo` row per stored original, referenced by
    /// `fishCatch.photoHash`, which becomes a foreign key — SQLite adds one only by
    /// rebuilding the table (its documented 12-step procedure; the migrator checks foreign
    /// keys before committing). `catchView` is a catch with its photo's columns.
    static let v2 = """
        CREATE TABLE photo (
            hash TEXT PRIMARY KEY NOT NULL CHECK (length(hash) = 64),
            contentType TEXT NOT NULL CHECK (contentType IN ('image/jpeg', 'image/png', 'image/webp', 'image/heic')),
            bytes INTEGER NOT NULL CHECK (bytes > 0),
            width INTEGER NOT NULL CHECK (width > 0),
            height INTEGER NOT NULL CHECK (height > 0),
            thumbHash TEXT NOT NULL CHECK (length(thumbHash) = 64),
            thumbWidth INTEGER NOT NULL CHECK (thumbWidth > 0),
            thumbHeight INTEGER NOT NULL CHECK (thumbHeight > 0)
        ) WITHOUT ROWID;
        CREATE INDEX photo_thumb ON photo (thumbHash);

        CREATE TABLE fishCatch_v2 (
            id TEXT PRIMARY KEY NOT NULL,
            userId TEXT NOT NULL,
            species TEXT NOT NULL COLLATE NOCASE CHECK (length(species) BETWEEN 1 AND 80),
            weight INTEGER NOT NULL CHECK (weight > 0),
            weightUnit TEXT NOT NULL CHECK (weightUnit IN ('kg', 'lb')),
            weightMg INTEGER NOT NULL CHECK (weightMg > 0),
            length INTEGER CHECK (length IS NULL OR length > 0),
            lengthUnit TEXT CHECK (lengthUnit IN ('cm', 'in')),
            bait TEXT NOT NULL CHECK (length(bait) BETWEEN 1 AND 80),
            water TEXT NOT NULL CHECK (water IN ('fresh', 'salt')),
            latitude REAL NOT NULL CHECK (latitude BETWEEN -90 AND 90),
            longitude REAL NOT NULL CHECK (longitude BETWEEN -180 AND 180),
            caughtAt INTEGER NOT NULL,
            note TEXT CHECK (note IS NULL OR length(note) <= 500),
            released INTEGER NOT NULL CHECK (released IN (0, 1)),
            photoHash TEXT REFERENCES photo (hash),
            conditionsStatus TEXT NOT NULL CHECK (conditionsStatus IN ('pending', 'ready', 'unavailable')),
            conditionsReason TEXT,
            conditionsSummary TEXT,
            createdAt INTEGER NOT NULL,
            updatedAt INTEGER NOT NULL,
            CHECK ((length IS NULL) = (lengthUnit IS NULL))
        );
        -- No photo was ever stored before this version: photoHash was always NULL.
        INSERT INTO fishCatch_v2 (id, userId, species, weight, weightUnit, weightMg, length, lengthUnit, bait, water,
            latitude, longitude, caughtAt, note, released, photoHash, conditionsStatus, conditionsReason,
            conditionsSummary, createdAt, updatedAt)
        SELECT id, userId, species, weight, weightUnit, weightMg, length, lengthUnit, bait, water,
            latitude, longitude, caughtAt, note, released, NULL, conditionsStatus, conditionsReason,
            conditionsSummary, createdAt, updatedAt
        FROM fishCatch;
        DROP TABLE fishCatch;
        ALTER TABLE fishCatch_v2 RENAME TO fishCatch;
        CREATE INDEX catch_by_date ON fishCatch (userId, caughtAt DESC, id DESC);
        CREATE INDEX catch_by_weight ON fishCatch (userId, weightMg DESC, id DESC);
        CREATE INDEX catch_by_species ON fishCatch (userId, species, id);
        CREATE INDEX catch_by_photo ON fishCatch (photoHash) WHERE photoHash IS NOT NULL;

        CREATE VIEW catchView AS
            SELECT fishCatch.*, photo.contentType AS photoContentType, photo.bytes AS photoBytes,
                photo.width AS photoWidth, photo.height AS photoHeight, photo.thumbHash AS photoThumbHash,
                photo.thumbWidth AS photoThumbWidth, photo.thumbHeight AS photoThumbHeight
            FROM fishCatch LEFT JOIN photo ON photo.hash = fishCatch.photoHash;
        """

    /// Every table holding a user's rows, children first (for the account-deletion purge).
    static let userTables = [
        "DELETE FROM timer WHERE userId = ?",
        "DELETE FROM timeEntry WHERE userId = ?",
        "DELETE FROM activity WHERE userId = ?",
        "DELETE FROM attendance WHERE userId = ?",
        "DELETE FROM expense WHERE userId = ?",
        "DELETE FROM fishCatch WHERE userId = ?",
        "DELETE FROM fillup WHERE userId = ?",
        "DELETE FROM vehicle WHERE userId = ?",
    ]
}
