// Time logbook, activities and their logs: `records.activity.add|get|list|delete`,
// `records.time.list`, `records.networth`. The goal is 10,000 hours shown as money:
// 1 hour = $1.00 = 100 cents, so one cent is 36 seconds. A deleted activity is only marked
// deleted: its saved time stays in net worth, which never drops.
import Contracts
import Foundation
import GRDB
import Runtime
import Storage
import Wire


struct Activity: Codable, Sendable, Equatable {
    var id: String
    var name: String
    var createdAt: Date
    /// All time saved to this activity.
    var totalMs: Int64
    /// `totalMs` as money: 1 hour = 100 cents.
    var cents: Int64
    var amount: String
    /// Share of the 10,000-hour goal reached (`TimeValue.progress`).
    var progress: Decimal
    /// The activity's timer (state `idle` when it has none): the list's running marker.
    var timer: TimerState

    init(row: Row, totalMs: Int64, timer: TimerState) {
        id = row["id"]
        name = row["name"]
        createdAt = Date(ms: row["createdAt"])
        self.totalMs = totalMs
        cents = TimeValue.cents(totalMs)
        amount = TimeValue.dollars(cents)
        progress = TimeValue.progress(totalMs)
        self.timer = timer
    }
}

struct ActivityAdd: Decodable, Sendable {
    var name: String
}

struct TimeEntry: Codable, Sendable, Equatable {
    var id: String
    var activityId: String
    var durationMs: Int64
    var startedAt: Date
    var savedAt: Date

    init(id: String, activityId: String, durationMs: Int64, startedAt: Date, savedAt: Date) {
        self.id = id
        self.activityId = activityId
        self.durationMs = durationMs
        self.startedAt = startedAt
        self.savedAt = savedAt
    }

    init(row: Row) {
        id = row["id"]
        activityId = row["activityId"]
        durationMs = row["durationMs"]
        startedAt = Date(ms: row["startedAt"])
        savedAt = Date(ms: row["savedAt"])
    }
}

/// `records.time.add`: time practised without the timer.
struct TimeAdd: Decodable, Sendable {
    var activityId: String
    var durationMs: Int64
    /// When the practice began; default: `durationMs` before now.
    var startedAt: Date?
}

extension TimeEntry {
    /// Writes the entry and its `time.saved` event (what analytics and the store count).
    func save(_ db: Database, userId: String, at: Date) throws {
        try db.execute(
            sql: "INSERT INTO timeEntry (id, userId, activityId, durationMs, startedAt, savedAt) VALUES (?, ?, ?, ?, ?, ?)",
            arguments: [id, userId, activityId, durationMs, startedAt.ms, savedAt.ms])
        try Outbox.append(
            db, type: TimeEvents.timeSaved, userId: userId,
            data: TimeSavedEvent(
                id: id, userId: userId, activityId: activityId, durationMs: durationMs, startedAt: startedAt,
                savedAt: savedAt),
            at: at)
    }
}

struct TimeList: Decodable, Sendable {
    var activityId: String
    var cursor: String?
    var limit: Int?
}

struct NetWorth: Codable, Sendable, Equatable {
    /// Every millisecond ever saved, deleted activities included.
    var totalMs: Int64
    var cents: Int64
    var amount: String
    var goalMs: Int64
    var goalCents: Int64
    var progress: Decimal
}

extension Records {
    func registerActivities(_ router: inout Router) {
        router.write("records.activity.add") { (body: ActivityAdd, context, db) in
            let at = now()
            let name = try requiredText(body.name, "name", max: 60)
            if try Bool.fetchOne(
                db, sql: "SELECT 1 FROM activity WHERE userId = ? AND deletedAt IS NULL AND name = ? COLLATE NOCASE",
                arguments: [context.userId, name]) != nil
            {
                throw ServiceError(.alreadyExists, "activity \"\(name)\" already exists", field: "name")
            }
            let id = ID.make(at: at)
            try db.execute(
                sql: "INSERT INTO activity (id, userId, name, createdAt) VALUES (?, ?, ?, ?)",
                arguments: [id, context.userId, name, at.ms])
            try Outbox.append(
                db, type: TimeEvents.activityCreated, userId: context.userId, data: ActivityCreated(id: id, name: name, createdAt: at),
                at: at)
            return try activity(db, userId: context.userId, id: id, now: at)
        }

        router.read("records.activity.get") { (body: IdBody, context) in
            let at = now()
            return try await database.read { db in try activity(db, userId: context.userId, id: body.id, now: at) }
        }

        router.read("records.activity.list") { (body: ListBody, context) in
            let limit = try Pagination.limit(body.limit)
            let cursor = try Cursor.decode(body.cursor, sort: "created")
            let at = now()
            return try await database.read { db in
                let ids = try Pagination.page(
                    db,
                    sql: """
                        SELECT id, createdAt FROM activity WHERE userId = ? AND deletedAt IS NULL AND (createdAt, id) < (?, ?)
                        ORDER BY createdAt DESC, id DESC LIMIT ?
                        """,
                    arguments: [context.userId, cursor?.n ?? Int64.max, cursor?.id ?? ""], limit: limit, sort: "created",
                    key: { (row: ActivityKey) in (row.createdAt, nil, row.id) },
                    row: { ActivityKey(id: $0["id"], createdAt: $0["createdAt"]) })
                return Page(
                    items: try ids.items.map { try activity(db, userId: context.userId, id: $0.id, now: at) },
                    nextCursor: ids.nextCursor)
            }
        }

        router.write("records.activity.delete") { (body: IdBody, context, db) in
            let at = now()
            let found = try activity(db, userId: context.userId, id: body.id, now: at)
            // Its timer goes with it; its saved time stays (net worth never drops).
            try db.execute(sql: "DELETE FROM timer WHERE userId = ? AND activityId = ?", arguments: [context.userId, found.id])
            try db.execute(
                sql: "UPDATE activity SET deletedAt = ? WHERE userId = ? AND id = ?", arguments: [at.ms, context.userId, found.id])
            try Outbox.append(
                db, type: TimeEvents.activityDeleted, userId: context.userId,
                data: ActivityDeleted(id: found.id, userId: context.userId, name: found.name, totalMs: found.totalMs), at: at)
            return Deleted()
        }

        // Time practised away from the timer (a lesson, a forgotten start), as a time
        // tracker's manual entry. At most a day per entry, ending no later than now.
        router.write("records.time.add") { (body: TimeAdd, context, db) in
            let at = now()
            _ = try activeActivityName(db, userId: context.userId, id: body.activityId, field: "activityId")
            try require(
                body.durationMs > 0 && body.durationMs <= 24 * TimeValue.msPerHour, "durationMs",
                "must be more than 0 and at most 24 hours (86400000)", got: "\(body.durationMs)")
            let startedAt = body.startedAt ?? at.addingTimeInterval(-Double(body.durationMs) / 1000)
            try notInFuture(startedAt.addingTimeInterval(Double(body.durationMs) / 1000), "startedAt", now: at)
            // the same practice counted twice: an entry of this activity already covers part of it
            let start = startedAt.ms
            let end = start + body.durationMs
            if let other = try Row.fetchOne(
                db,
                sql: """
                    SELECT id, startedAt, durationMs FROM timeEntry
                    WHERE userId = ? AND activityId = ? AND startedAt < ? AND startedAt + durationMs > ?
                    ORDER BY startedAt LIMIT 1
                    """, arguments: [context.userId, body.activityId, end, start])
            {
                let otherStart = Date(ms: other["startedAt"])
                let otherEnd = Date(ms: (other["startedAt"] as Int64) + (other["durationMs"] as Int64))
                throw ServiceError(
                    .failedPrecondition,
                    "that time overlaps an entry already saved for this activity (\(WireTime.format(otherStart)) to "
                        + "\(WireTime.format(otherEnd)), id \(other["id"] as String)): it would be counted twice; "
                        + "give the time it started (startedAt) if it was another session",
                    field: "startedAt")
            }
            let entry = TimeEntry(
                id: ID.make(at: at), activityId: body.activityId, durationMs: body.durationMs, startedAt: startedAt,
                savedAt: at)
            try entry.save(db, userId: context.userId, at: at)
            return entry
        }

        router.read("records.time.list") { (body: TimeList, context) in
            let limit = try Pagination.limit(body.limit)
            let cursor = try Cursor.decode(body.cursor, sort: "saved")
            return try await database.read { db in
                _ = try activeActivityName(db, userId: context.userId, id: body.activityId, field: "activityId")
                return try Pagination.page(
                    db,
                    sql: """
                        SELECT * FROM timeEntry WHERE userId = ? AND activityId = ? AND (savedAt, id) < (?, ?)
                        ORDER BY savedAt DESC, id DESC LIMIT ?
                        """,
                    arguments: [context.userId, body.activityId, cursor?.n ?? Int64.max, cursor?.id ?? ""], limit: limit,
                    sort: "saved", key: { (e: TimeEntry) in (e.savedAt.ms, nil, e.id) }, row: TimeEntry.init(row:))
            }
        }

        router.read("records.networth") { (_: Empty, context) in
            try await database.read { db in
                let total =
                    try Int64.fetchOne(
                        db, sql: "SELECT COALESCE(SUM(durationMs), 0) FROM timeEntry WHERE userId = ?",
                        arguments: [context.userId]) ?? 0
                let cents = TimeValue.cents(total)
                return NetWorth(
                    totalMs: total, cents: cents, amount: TimeValue.dollars(cents), goalMs: TimeValue.goalMs, goalCents: TimeValue.cents(TimeValue.goalMs),
                    progress: TimeValue.progress(total))
            }
        }
    }

    /// The caller's active activity with its total and timer, or `not_found`.
    func activity(_ db: Database, userId: String, id: String, now: Date) throws -> Activity {
        guard
            let row = try Row.fetchOne(
                db, sql: "SELECT * FROM activity WHERE userId = ? AND id = ? AND deletedAt IS NULL", arguments: [userId, id])
        else { throw notFound("activity", id) }
        let total =
            try Int64.fetchOne(
                db, sql: "SELECT COALESCE(SUM(durationMs), 0) FROM timeEntry WHERE userId = ? AND activityId = ?",
                arguments: [userId, id]) ?? 0
        return Activity(row: row, totalMs: total, timer: try TimerState.load(db, userId: userId, activityId: id, now: now))
    }

    /// The name of the caller's active activity `id`, or `not_found` naming `field`.
    func activeActivityName(_ db: Database, userId: String, id: String, field: String) throws -> String {
        guard
            let name = try String.fetchOne(
                db, sql: "SELECT name FROM activity WHERE userId = ? AND id = ? AND deletedAt IS NULL",
                arguments: [userId, id])
        else { throw ServiceError(.notFound, "activity \(id) not found", field: field) }
        return name
    }
}

/// A list row before the activity is loaded whole.
struct ActivityKey: Encodable, Sendable {
    var id: String
    var createdAt: Int64
}
