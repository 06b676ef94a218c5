// Time toward 10,000 hours: per activity the time saved (`time.saved`), the timer's state
// (`timer.changed`; a save leaves it idle), and per user the net worth, which counts every
// saved millisecond, deleted activities included, and so never drops. 1 hour = $1.00 = 100
// cents; cents are whole (never rounded up), as records shows them.
import Contracts
import Foundation
import GRDB
import Runtime
import Wire

enum TimeProjection {
    static func activityCreated(_ db: Database, userId: String, _ payload: ActivityCreated, at: Date) throws {
        try db.execute(
            cached: """
                INSERT INTO activity (id, userId, name, createdAt) VALUES (?, ?, ?, ?)
                ON CONFLICT (id) DO UPDATE SET name = excluded.name WHERE activity.userId = excluded.userId
                """,
            arguments: [payload.id, userId, payload.name, payload.createdAt.ms])
    }

    static func activityDeleted(_ db: Database, userId: String, _ payload: ActivityDeleted, at: Date) throws {
        try ensureActivity(db, userId: userId, id: payload.id, name: payload.name, at: at)
        try db.execute(
            cached: "UPDATE activity SET deleted = 1 WHERE userId = ? AND id = ?", arguments: [userId, payload.id])
        try db.execute(
            cached: "DELETE FROM timer WHERE userId = ? AND activityId = ?", arguments: [userId, payload.id])
    }

    static func timeSaved(_ db: Database, userId: String, _ payload: TimeSavedEvent, at: Date) throws {
        try db.execute(
            cached: "INSERT OR IGNORE INTO timeEntry (id, userId, activityId, durationMs) VALUES (?, ?, ?, ?)",
            arguments: [payload.id, userId, payload.activityId, payload.durationMs])
        let counted = db.changesCount == 0
        // records leaves the timer idle after the timer's save, without a `timer.changed`; time
        // added by hand (`fromTimer: false`) leaves it running, paused or stopped
        if payload.fromTimer != false {
            try db.execute(
                cached: "DELETE FROM timer WHERE userId = ? AND activityId = ?", arguments: [userId, payload.activityId])
        }
        guard !counted else { return }
        try ensureActivity(db, userId: userId, id: payload.activityId, name: nil, at: at)
        try db.execute(
            cached: "UPDATE activity SET totalMs = totalMs + ? WHERE userId = ? AND id = ?",
            arguments: [payload.durationMs, userId, payload.activityId])
        try db.execute(
            cached: """
                INSERT INTO netWorth (userId, totalMs) VALUES (?, ?)
                ON CONFLICT (userId) DO UPDATE SET totalMs = totalMs + excluded.totalMs
                """,
            arguments: [userId, payload.durationMs])
    }

    static func timerChanged(_ db: Database, userId: String, _ payload: TimerState) throws {
        if payload.state == .idle {
            try db.execute(
                cached: "DELETE FROM timer WHERE userId = ? AND activityId = ?",
                arguments: [userId, payload.activityId])
            return
        }
        try db.execute(
            cached: """
                INSERT INTO timer (activityId, userId, state, accumulatedMs, runningSince) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT (activityId) DO UPDATE SET state = excluded.state, accumulatedMs = excluded.accumulatedMs,
                    runningSince = excluded.runningSince
                WHERE timer.userId = excluded.userId
                """,
            arguments: [
                payload.activityId, userId, payload.state.rawValue, payload.accumulatedMs,
                payload.state == .running ? payload.runningSince?.ms : nil,
            ])
    }

    /// An activity this projection has not seen gets a row, so its time still counts.
    private static func ensureActivity(_ db: Database, userId: String, id: String, name: String?, at: Date) throws {
        try db.execute(
            cached: "INSERT OR IGNORE INTO activity (id, userId, name, createdAt) VALUES (?, ?, ?, ?)",
            arguments: [id, userId, name ?? "", at.ms])
    }
}

// MARK: Summary

enum TimeQueries {
    static func summary(_ db: Database, userId: String, now: Date) throws -> TimeSummary {
        let rows = try Row.fetchAll(
            db,
            cached: """
                SELECT a.id, a.name, a.createdAt, a.totalMs, t.state, t.accumulatedMs, t.runningSince
                FROM activity a LEFT JOIN timer t ON t.activityId = a.id AND t.userId = a.userId
                WHERE a.userId = ? AND a.deleted = 0 ORDER BY a.createdAt, a.id
                """, arguments: [userId])
        let activities = rows.map { row -> ActivitySummary in
            let state = TimerPhase(rawValue: (row["state"] as String?) ?? "") ?? .idle
            var elapsed: Int64 = row["accumulatedMs"] ?? 0
            if state == .running, let since = row["runningSince"] as Int64? { elapsed += max(0, now.ms - since) }
            return ActivitySummary(
                id: row["id"], name: row["name"], createdAt: Date(ms: row["createdAt"]), totalMs: row["totalMs"],
                timer: state, timerElapsedMs: elapsed)
        }
        let total =
            try Int64.fetchOne(db, cached: "SELECT totalMs FROM netWorth WHERE userId = ?", arguments: [userId]) ?? 0
        return TimeSummary(activities: activities, netWorth: NetWorth(totalMs: total), at: now)
    }
}
