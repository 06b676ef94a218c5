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


extension Activity {
    init(_ row: ActivityRow, totalMs: Int64, timer: TimerState) {
        self.init(id: row.id, name: row.name, createdAt: Date(ms: row.createdAt), totalMs: totalMs, timer: timer)
    }
}

extension TimeEntry {
    /// Writes the entry and its `time.saved` event (what analytics and the store count).
    /// - Parameter fromTimer: the timer's time, which leaves the timer idle (`timer.save`),
    ///   rather than time added by hand beside it (`time.add`).
    func save(_ db: Database, userId: String, at: Date, fromTimer: Bool) throws {
        try TimeEntryRow(self, userId: userId).insertRow(db)
        try Outbox.append(
            db, type: TimeEvents.timeSaved, userId: userId,
            data: TimeSavedEvent(
                id: id, userId: userId, activityId: activityId, durationMs: durationMs, startedAt: startedAt,
                savedAt: savedAt, fromTimer: fromTimer),
            at: at)
    }
}

extension Records {
    func registerActivities(_ router: inout Router) {
        router.write(TimeMethods.activityAdd) { body, context, db in
            let at = now()
            let name = try requiredText(body.name, "name", max: 60)
            // (unique without case as names are compared: `logbook_fold`; the index's NOCASE
            // holds A–Z only)
            if try !ActivityRow.active(of: context.userId).filter(
                sql: "logbook_fold(name) = ?", arguments: [name.foldedForComparison]
            ).isEmpty(db)
            {
                throw ServiceError(.alreadyExists, "activity \"\(name)\" already exists", field: "name")
            }
            let id = ID.make(at: at)
            try ActivityRow(id: id, userId: context.userId, name: name, createdAt: at.ms).insertRow(db)
            try Outbox.append(
                db, type: TimeEvents.activityCreated, userId: context.userId, data: ActivityCreated(id: id, name: name, createdAt: at),
                at: at)
            return try activity(db, userId: context.userId, id: id, now: at)
        }

        router.read(TimeMethods.activityGet) { body, context in
            let at = now()
            return try await database.read { db in try activity(db, userId: context.userId, id: body.id, now: at) }
        }

        router.read(TimeMethods.activityList) { body, context in
            let limit = try Pagination.limit(body.limit)
            let list = ListKey(TimeMethods.activityList.name, sort: "created")
            let cursor = try Cursor.decode(body.cursor, for: list)
            let at = now()
            return try await database.read { db in
                let ids = try Pagination.page(
                    db,
                    sql: """
                        SELECT id, createdAt FROM activity WHERE userId = ? AND deletedAt IS NULL AND (createdAt, id) < (?, ?)
                        ORDER BY createdAt DESC, id DESC LIMIT ?
                        """,
                    arguments: [context.userId, cursor?.n ?? Int64.max, cursor?.id ?? ""], limit: limit, list: list,
                    key: { (row: ActivityKey) in (row.createdAt, nil, row.id) },
                    row: { ActivityKey(id: $0["id"], createdAt: $0["createdAt"]) })
                return Page(
                    items: try ids.items.map { try activity(db, userId: context.userId, id: $0.id, now: at) },
                    nextCursor: ids.nextCursor)
            }
        }

        router.write(TimeMethods.activityDelete) { body, context, db in
            let at = now()
            let found = try activity(db, userId: context.userId, id: body.id, now: at)
            // Its timer goes with it; its saved time stays (net worth never drops).
            try db.execute(sql: "DELETE FROM timer WHERE userId = ? AND activityId = ?", arguments: [context.userId, found.id])
            try ActivityRow.owned(by: context.userId).filter(ActivityRow.Columns.id == found.id)
                .updateAll(db, ActivityRow.Columns.deletedAt.set(to: at.ms))
            try Outbox.append(
                db, type: TimeEvents.activityDeleted, userId: context.userId,
                data: ActivityDeleted(id: found.id, userId: context.userId, name: found.name, totalMs: found.totalMs), at: at)
            return Deleted()
        }

        // Time practised away from the timer (a lesson, a forgotten start), as a time
        // tracker's manual entry. At most a day per entry, ending no later than now.
        router.write(TimeMethods.timeAdd) { body, context, db in
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
            // ...or this activity's timer, not saved yet: from its start to now (or to its stop),
            // its time becomes an entry once saved, and this one would be counted with it
            if let timer = try Row.fetchOne(
                db,
                sql: """
                    SELECT state, startedAt, updatedAt FROM timer
                    WHERE userId = ? AND activityId = ? AND startedAt < ?
                    """, arguments: [context.userId, body.activityId, end])
            {
                let state: String = timer["state"]
                let sessionEnd: Int64 = state == "stopped" ? timer["updatedAt"] : at.ms
                if sessionEnd > start {
                    throw ServiceError(
                        .failedPrecondition,
                        "that time overlaps this activity's timer (\(state), started \(WireTime.format(Date(ms: timer["startedAt"])))): "
                            + "it would be counted twice; save or clear the timer first, or give the time it started "
                            + "(startedAt) if it was another session",
                        field: "startedAt")
                }
            }
            let entry = TimeEntry(
                id: ID.make(at: at), activityId: body.activityId, durationMs: body.durationMs, startedAt: startedAt,
                savedAt: at)
            try entry.save(db, userId: context.userId, at: at, fromTimer: false)
            return entry
        }

        router.read(TimeMethods.timeList) { body, context in
            let limit = try Pagination.limit(body.limit)
            let list = ListKey(TimeMethods.timeList.name, sort: "saved", filters: [body.activityId])
            let cursor = try Cursor.decode(body.cursor, for: list)
            return try await database.read { db in
                _ = try activeActivityName(db, userId: context.userId, id: body.activityId, field: "activityId")
                return try Pagination.page(
                    db,
                    sql: """
                        SELECT * FROM timeEntry WHERE userId = ? AND activityId = ? AND (savedAt, id) < (?, ?)
                        ORDER BY savedAt DESC, id DESC LIMIT ?
                        """,
                    arguments: [context.userId, body.activityId, cursor?.n ?? Int64.max, cursor?.id ?? ""], limit: limit,
                    list: list, key: { (e: TimeEntry) in (e.savedAt.ms, nil, e.id) }, row: { try TimeEntryRow(row: $0).entry })
            }
        }

        router.read(TimeMethods.networth) { _, context in
            try await database.read { db in NetWorth(totalMs: try TimeEntryRow.totalMs(db, userId: context.userId)) }
        }
    }

    /// The caller's active activity with its total and timer, or `not_found`.
    func activity(_ db: Database, userId: String, id: String, now: Date) throws -> Activity {
        guard let row = try ActivityRow.active(of: userId).filter(ActivityRow.Columns.id == id).fetchOne(db) else {
            throw notFound("activity", id)
        }
        let total = try TimeEntryRow.totalMs(db, userId: userId, activityId: id)
        return Activity(row, totalMs: total, timer: try TimerState.load(db, userId: userId, activityId: id, now: now))
    }

    /// The name of the caller's active activity `id`, or `not_found` naming `field`.
    func activeActivityName(_ db: Database, userId: String, id: String, field: String) throws -> String {
        guard let name = try ActivityRow.active(of: userId).filter(ActivityRow.Columns.id == id).fetchOne(db)?.name else { throw ServiceError(.notFound, "activity \(id) not found", field: field) }
        return name
    }
}

/// A list row before the activity is loaded whole.
struct ActivityKey: Encodable, Sendable {
    var id: String
    var createdAt: Int64
}
