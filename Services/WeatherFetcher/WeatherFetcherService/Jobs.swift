// The weather-fetcher's database: one fetch job per catch (it is also where the catch's
// conditions are kept once fetched) and the provider cache. Jobs are created by the
// records-event consumer in the same transaction as its checkpoint, so an event is turned
// into exactly one job whatever crashes; results are stored with their outbox event in one
// transaction, and only if the job was not changed or deleted while it was being fetched
// (`revision`).
import Contracts
import Foundation
import GRDB
import Storage
import Wire

struct Job: Sendable, Equatable {
    var catchId: String
    var userId: String
    var latitude: Double
    var longitude: Double
    var at: Date
    var water: String?
    var revision: Int64
    var attempts: Int
    var queuedAt: Date

    init(row: Row) {
        catchId = row["catchId"]
        userId = row["userId"]
        latitude = row["latitude"]
        longitude = row["longitude"]
        at = Date(timeIntervalSince1970: row["at"])
        water = row["water"]
        revision = row["revision"]
        attempts = row["attempts"]
        queuedAt = Date(timeIntervalSince1970: row["queuedAt"])
    }
}

enum Jobs {
    static let migrator: DatabaseMigrator = {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("weather.v1") { db in
            try db.execute(
                sql: """
                    CREATE TABLE fetchJob (
                        catchId TEXT PRIMARY KEY NOT NULL,
                        userId TEXT NOT NULL,
                        latitude DOUBLE NOT NULL,
                        longitude DOUBLE NOT NULL,
                        at DOUBLE NOT NULL,
                        water TEXT,
                        state TEXT NOT NULL CHECK (state IN ('pending', 'ready', 'unavailable')),
                        revision INTEGER NOT NULL CHECK (revision >= 1),
                        attempts INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),
                        nextAttemptAt DOUBLE,
                        queuedAt DOUBLE NOT NULL,
                        lastError TEXT,
                        reason TEXT,
                        summary TEXT,
                        conditions BLOB,
                        updatedAt DOUBLE NOT NULL,
                        CHECK ((state = 'pending') = (nextAttemptAt IS NOT NULL)),
                        CHECK (state <> 'ready' OR (summary IS NOT NULL AND conditions IS NOT NULL)),
                        CHECK (state <> 'unavailable' OR reason IS NOT NULL)
                    );
                    CREATE INDEX fetchJob_due ON fetchJob (nextAttemptAt) WHERE state = 'pending';
                    CREATE INDEX fetchJob_user ON fetchJob (userId);
                    CREATE TABLE providerCache (
                        kind TEXT NOT NULL CHECK (kind IN ('weather', 'marine')),
                        latitudeKey INTEGER NOT NULL,
                        longitudeKey INTEGER NOT NULL,
                        hour INTEGER NOT NULL,
                        data BLOB NOT NULL,
                        fetchedAt DOUBLE NOT NULL,
                        PRIMARY KEY (kind, latitudeKey, longitudeKey, hour)
                    ) WITHOUT ROWID;
                    """)
        }
        migrator.registerMigration("weather.v2-noaa") { db in
            // NOAA's tide-prediction stations (refreshed at most once a day) and their
            // high/low predictions per station and first day asked. Public data, like
            // providerCache: `user.deleted` leaves it.
            try db.execute(
                sql: """
                    CREATE TABLE tideStation (
                        id TEXT PRIMARY KEY NOT NULL,
                        name TEXT NOT NULL,
                        latitude DOUBLE NOT NULL,
                        longitude DOUBLE NOT NULL
                    ) WITHOUT ROWID;
                    CREATE TABLE tideStationList (
                        id INTEGER PRIMARY KEY CHECK (id = 1),
                        fetchedAt DOUBLE NOT NULL
                    );
                    CREATE TABLE tidePredictions (
                        station TEXT NOT NULL,
                        beginDay TEXT NOT NULL,
                        data BLOB NOT NULL,
                        fetchedAt DOUBLE NOT NULL,
                        PRIMARY KEY (station, beginDay)
                    ) WITHOUT ROWID;
                    """)
        }
        migrator.registerMigration("weather.v3-redactDeleted") { db in
            // Until this version `user.deleted` left the conditions published for the user's
            // catches in the outbox, under the user's id. Auth keeps its `user.deleted` events,
            // so reading auth's stream again from the start applies each past deletion once
            // more: its jobs are gone already, and its events are redacted (`purge`). On a new
            // database the shared tables come after this (ServiceDatabase.open): no checkpoint yet.
            if try db.tableExists("eventCheckpoint") {
                try db.execute(sql: "DELETE FROM eventCheckpoint WHERE producer = 'auth'")
            }
        }
        migrator.registerMigration("weather.v4-deletedUser") { db in
            // The users whose `user.deleted` was applied: the records stream is read apart
            // from auth's, so a catch event of theirs may come after the purge, and would
            // queue a fetch and publish their place and hour under their id again. Auth's
            // stream is read again from the start (as in v3) to fill it from past deletions.
            try db.execute(sql: DeletedUsers.table)
            if try db.tableExists("eventCheckpoint") {
                try db.execute(sql: "DELETE FROM eventCheckpoint WHERE producer = 'auth'")
            }
        }
        return migrator
    }()


    // MARK: Writes from the records consumer (inside its checkpointed transaction)

    /// A catch to fetch conditions for. A catch already known keeps its job (and its
    /// result) unless the place, time or water changed, in which case it starts again.
    /// A catch whose hour is not over yet (logged as it happens) is due once it is, as an
    /// answer is kept (`Fetcher.save`): its conditions are the weather that came, not a
    /// forecast. Its 48 hours count from then.
    /// - Returns: whether a fetch was (re)queued.
    @discardableResult
    static func enqueue(
        _ db: Database, catchId: String, userId: String, latitude: Double, longitude: Double, at: Date, water: String?,
        now: Date
    ) throws -> Bool {
        let hourOver = Date(timeIntervalSince1970: TimeInterval(CatchHour.of(at) * 3600 + 3600))
        let due = max(now, hourOver)
        if let row = try Row.fetchOne(
            db, sql: "SELECT userId, latitude, longitude, at, water FROM fetchJob WHERE catchId = ?", arguments: [catchId])
        {
            let same =
                (row["userId"] as String) == userId && (row["latitude"] as Double) == latitude
                && (row["longitude"] as Double) == longitude && (row["at"] as Double) == at.timeIntervalSince1970
                && (row["water"] as String?) == water
            if same { return false }
            try db.execute(
                sql: """
                    UPDATE fetchJob SET userId = ?, latitude = ?, longitude = ?, at = ?, water = ?, state = 'pending',
                        revision = revision + 1, attempts = 0, nextAttemptAt = ?, queuedAt = ?, lastError = NULL,
                        reason = NULL, summary = NULL, conditions = NULL, updatedAt = ?
                    WHERE catchId = ?
                    """,
                arguments: [
                    userId, latitude, longitude, at.timeIntervalSince1970, water, due.timeIntervalSince1970,
                    due.timeIntervalSince1970, now.timeIntervalSince1970, catchId,
                ])
            return true
        }
        try db.execute(
            sql: """
                INSERT INTO fetchJob (catchId, userId, latitude, longitude, at, water, state, revision, attempts,
                    nextAttemptAt, queuedAt, updatedAt)
                VALUES (?, ?, ?, ?, ?, ?, 'pending', 1, 0, ?, ?, ?)
                """,
            arguments: [
                catchId, userId, latitude, longitude, at.timeIntervalSince1970, water, due.timeIntervalSince1970,
                due.timeIntervalSince1970, now.timeIntervalSince1970,
            ])
        return true
    }

    static func exists(_ db: Database, catchId: String) throws -> Bool {
        try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM fetchJob WHERE catchId = ?)", arguments: [catchId])
            ?? false
    }

    /// A deleted catch: its job and its conditions go.
    static func delete(_ db: Database, catchId: String) throws {
        try db.execute(sql: "DELETE FROM fetchJob WHERE catchId = ?", arguments: [catchId])
    }

    /// A deleted account: every job and result of that user goes, and the conditions
    /// published for their catches (where and when they fished, under their id) are blanked,
    /// as every producer blanks them (`Outbox.redact`, docs/protocol.md "Events").
    static func purge(_ db: Database, userId: String, at: Date) throws {
        try DeletedUsers.remember(db, userId: userId, at: at)
        try db.execute(sql: "DELETE FROM fetchJob WHERE userId = ?", arguments: [userId])
        try Idempotency.purge(db, principal: userId)
        try Outbox.redact(db, userId: userId)
    }

    // MARK: The job runner

    static func due(_ db: Database, now: Date, limit: Int) throws -> [Job] {
        try Row.fetchAll(
            db,
            sql: """
                SELECT * FROM fetchJob WHERE state = 'pending' AND nextAttemptAt <= ?
                ORDER BY nextAttemptAt, catchId LIMIT ?
                """,
            arguments: [now.timeIntervalSince1970, limit]
        ).map(Job.init(row:))
    }

    /// When the next pending job is due, nil when none is pending.
    static func nextDue(_ db: Database) throws -> Date? {
        try Double.fetchOne(db, sql: "SELECT MIN(nextAttemptAt) FROM fetchJob WHERE state = 'pending'")
            .map { Date(timeIntervalSince1970: $0) }
    }

    /// Stores the conditions and appends `conditions.ready`, unless the job changed meanwhile.
    static func complete(_ db: Database, job: Job, conditions: Conditions, now: Date) throws -> Bool {
        let summary = conditions.summary
        try db.execute(
            sql: """
                UPDATE fetchJob SET state = 'ready', nextAttemptAt = NULL, summary = ?, conditions = ?, reason = NULL,
                    updatedAt = ?
                WHERE catchId = ? AND revision = ? AND state = 'pending'
                """,
            arguments: [summary, try WireCoding.encode(conditions), now.timeIntervalSince1970, job.catchId, job.revision])
        guard db.changesCount == 1 else { return false }
        try Outbox.append(
            db, type: WeatherEvents.conditionsReady, userId: job.userId,
            data: ConditionsReady(catchId: job.catchId, summary: summary, conditions: conditions), at: now)
        return true
    }

    /// Marks the job unavailable and appends `conditions.unavailable`, unless it changed.
    static func giveUp(_ db: Database, job: Job, reason: String, now: Date) throws -> Bool {
        try db.execute(
            sql: """
                UPDATE fetchJob SET state = 'unavailable', nextAttemptAt = NULL, reason = ?, updatedAt = ?
                WHERE catchId = ? AND revision = ? AND state = 'pending'
                """,
            arguments: [reason, now.timeIntervalSince1970, job.catchId, job.revision])
        guard db.changesCount == 1 else { return false }
        try Outbox.append(
            db, type: WeatherEvents.conditionsUnavailable, userId: job.userId,
            data: ConditionsUnavailable(
                catchId: job.catchId, reason: reason, latitude: job.latitude, longitude: job.longitude, hour: job.at,
                water: job.water.flatMap(Water.init(rawValue:))),
            at: now)
        return true
    }

    /// Schedules another attempt.
    static func retry(_ db: Database, job: Job, attempts: Int, at next: Date, error: String, now: Date) throws {
        try db.execute(
            sql: """
                UPDATE fetchJob SET attempts = ?, nextAttemptAt = ?, lastError = ?, updatedAt = ?
                WHERE catchId = ? AND revision = ? AND state = 'pending'
                """,
            arguments: [
                attempts, next.timeIntervalSince1970, error, now.timeIntervalSince1970, job.catchId, job.revision,
            ])
    }

    /// The user's share of provider calls is spent: the job waits for it without counting
    /// an attempt. The user's jobs all hear the same wait, so each is put at a random place
    /// in the time the user's whole backlog needs (`backlog` jobs at `perHour`), rather
    /// than all coming due together again and again; and a wait for the budget is no
    /// provider failure, so the job's 48 hours count from when it is due again.
    static func deferForBudget(
        _ db: Database, job: Job, wait: Duration, perHour: Int, draw: Double, error: String, now: Date
    ) throws {
        let backlog = try Int.fetchOne(
            db.cachedStatement(sql: "SELECT COUNT(*) FROM fetchJob WHERE userId = ? AND state = 'pending'"),
            arguments: [job.userId]) ?? 1
        let spread = perHour > 0 ? Double(max(0, backlog - 1)) * 3600 / Double(perHour) : 0
        let next = now.addingTimeInterval(wait.seconds + spread * min(max(draw, 0), 1))
        try db.execute(
            sql: """
                UPDATE fetchJob SET nextAttemptAt = ?, queuedAt = ?, lastError = ?, updatedAt = ?
                WHERE catchId = ? AND revision = ? AND state = 'pending'
                """,
            arguments: [
                next.timeIntervalSince1970, next.timeIntervalSince1970, error, now.timeIntervalSince1970, job.catchId,
                job.revision,
            ])
    }

    // MARK: Reads for methods

    static func status(_ db: Database, userId: String, catchId: String) throws -> CatchWeather? {
        guard
            let row = try Row.fetchOne(
                db, sql: "SELECT * FROM fetchJob WHERE catchId = ? AND userId = ?", arguments: [catchId, userId])
        else { return nil }
        let state = ConditionsStatus(rawValue: row["state"]) ?? .pending
        let conditions = (row["conditions"] as Data?).flatMap { try? WireCoding.decode(Conditions.self, from: $0) }
        return CatchWeather(
            catchId: catchId, status: state, reason: row["reason"], summary: row["summary"], conditions: conditions,
            attempts: row["attempts"], lastError: state == .pending ? row["lastError"] : nil)
    }
}
