// Attendance: worked time comes from adjacent arrival → departure pairs in time order. An
// entry added or deleted changes only the pairs next to it (the one it splits or joins), so
// the projection adjusts per-day totals (`attendanceDay`, split at the user's local midnight) for those
// pairs and re-flags the three entries involved: an arrival not followed by a departure or
// a departure not preceded by an arrival is "open" and reported, never guessed at.
import Contracts
import Foundation
import GRDB
import Runtime
import Wire

enum AttendanceProjection {
    struct Entry {
        var id: String
        var arrival: Bool
        var at: Int64

        init(id: String, arrival: Bool, at: Int64) {
            self.id = id
            self.arrival = arrival
            self.at = at
        }

        init(row: Row) {
            id = row["id"]
            arrival = (row["kind"] as String) == "arrival"
            at = row["at"]
        }
    }

    static func add(_ db: Database, userId: String, _ payload: AttendanceEntry) throws {
        try remove(db, userId: userId, id: payload.id)
        let at = payload.at.ms
        let before = try previous(db, userId: userId, at: at, id: payload.id)
        let after = try next(db, userId: userId, at: at, id: payload.id)
        if let before, let after { try span(db, userId: userId, before, after, sign: -1) }
        try db.execute(
            cached: "INSERT INTO attendance (id, userId, kind, at) VALUES (?, ?, ?, ?)",
            arguments: [payload.id, userId, payload.kind.rawValue, at])
        let entry = Entry(id: payload.id, arrival: payload.kind == .arrival, at: at)
        if let before { try span(db, userId: userId, before, entry, sign: 1) }
        if let after { try span(db, userId: userId, entry, after, sign: 1) }
        for e in [before, entry, after].compactMap({ $0 }) { try reflag(db, userId: userId, e) }
    }

    static func remove(_ db: Database, userId: String, id: String) throws {
        guard
            let row = try Row.fetchOne(
                db, cached: "SELECT id, kind, at FROM attendance WHERE userId = ? AND id = ?", arguments: [userId, id])
        else { return }
        let entry = Entry(row: row)
        let before = try previous(db, userId: userId, at: entry.at, id: id)
        let after = try next(db, userId: userId, at: entry.at, id: id)
        if let before { try span(db, userId: userId, before, entry, sign: -1) }
        if let after { try span(db, userId: userId, entry, after, sign: -1) }
        try db.execute(cached: "DELETE FROM attendance WHERE id = ?", arguments: [id])
        if let before, let after { try span(db, userId: userId, before, after, sign: 1) }
        for e in [before, after].compactMap({ $0 }) { try reflag(db, userId: userId, e) }
    }

    static func previous(_ db: Database, userId: String, at: Int64, id: String) throws -> Entry? {
        try Row.fetchOne(
            db,
            cached: """
                SELECT id, kind, at FROM attendance WHERE userId = ? AND (at, id) < (?, ?)
                ORDER BY at DESC, id DESC LIMIT 1
                """, arguments: [userId, at, id]
        ).map(Entry.init(row:))
    }

    static func next(_ db: Database, userId: String, at: Int64, id: String) throws -> Entry? {
        try Row.fetchOne(
            db,
            cached:
                "SELECT id, kind, at FROM attendance WHERE userId = ? AND (at, id) > (?, ?) ORDER BY at, id LIMIT 1",
            arguments: [userId, at, id]
        ).map(Entry.init(row:))
    }

    /// Adds (or with sign -1 removes) the worked time of `a` → `b` when they pair.
    private static func span(_ db: Database, userId: String, _ a: Entry, _ b: Entry, sign: Int64) throws {
        guard a.arrival, !b.arrival, b.at > a.at else { return }
        let zone = try UserZones.zone(db, userId: userId)
        var day = LocalDays.day(ms: a.at, in: zone)
        var dayStart = LocalDays.start(ofDay: day, in: zone)
        while dayStart < b.at {
            let nextStart = LocalDays.start(ofDay: day + 1, in: zone)
            let start = max(a.at, dayStart)
            let end = min(b.at, nextStart)
            if end > start {
                try db.execute(
                    cached: """
                        INSERT INTO attendanceDay (userId, day, workedMs) VALUES (?, ?, ?)
                        ON CONFLICT (userId, day) DO UPDATE SET workedMs = workedMs + excluded.workedMs
                        """,
                    arguments: [userId, day, sign * (end - start)])
                if sign < 0 {
                    try db.execute(
                        cached: "DELETE FROM attendanceDay WHERE userId = ? AND day = ? AND workedMs = 0",
                        arguments: [userId, day])
                }
            }
            day += 1
            dayStart = nextStart
        }
    }

    /// Counts the user's worked days again after a change of time zone.
    static func recount(_ db: Database, userId: String) throws {
        try db.execute(sql: "DELETE FROM attendanceDay WHERE userId = ?", arguments: [userId])
        let entries = try Row.fetchAll(
            db, sql: "SELECT id, kind, at FROM attendance WHERE userId = ? ORDER BY at, id", arguments: [userId]
        ).map(Entry.init(row:))
        for (a, b) in zip(entries, entries.dropFirst()) { try span(db, userId: userId, a, b, sign: 1) }
    }

    private static func reflag(_ db: Database, userId: String, _ entry: Entry) throws {
        let open: Bool
        if entry.arrival {
            open = try next(db, userId: userId, at: entry.at, id: entry.id).map(\.arrival) ?? true
        } else {
            open = try previous(db, userId: userId, at: entry.at, id: entry.id).map { !$0.arrival } ?? true
        }
        try db.execute(cached: "UPDATE attendance SET open = ? WHERE id = ?", arguments: [open, entry.id])
    }
}

// MARK: Hours

enum AttendanceQueries {
    static func hours(_ db: Database, userId: String, body: SummaryRequest) throws -> AttendanceHours {
        let by = body.by ?? "day"
        guard by == "day" || by == "week", let period = Period(rawValue: by) else {
            throw ServiceError.invalid("by", "must be day or week (got \"\(by)\")")
        }
        let zone = try UserZones.zone(db, userId: userId)
        let range = try DayRange(from: body.from, to: body.to, zone: zone)
        let rows = try Row.fetchAll(
            db,
            cached: "SELECT day, workedMs FROM attendanceDay WHERE userId = ? AND day >= ? AND day < ? ORDER BY day",
            arguments: [userId, range.lower, range.upper])
        var groups: [WorkedGroup] = []
        for row in rows {
            let key = Day.label(row["day"], by: period)
            let ms: Int64 = row["workedMs"]
            if groups.last?.key == key {
                groups[groups.count - 1].workedMs += ms
            } else {
                groups.append(WorkedGroup(key: key, workedMs: ms, hours: 0))
            }
        }
        for i in groups.indices { groups[i].hours = hours(groups[i].workedMs) }
        let total = groups.reduce(Int64(0)) { $0 + $1.workedMs }
        let lowerMs = range.lowerMs
        let upperMs = range.upperMs
        let latest = try latest(db, userId: userId)
        let open = try Row.fetchAll(
            db,
            cached: """
                SELECT id, kind, at FROM attendance WHERE userId = ? AND open = 1 AND at >= ? AND at < ?
                ORDER BY at DESC, id DESC LIMIT 100
                """, arguments: [userId, lowerMs, upperMs]
        ).map { row -> OpenEntry in
            let kind = AttendanceKind(rawValue: row["kind"]) ?? .arrival
            let id: String = row["id"]
            let reason =
                kind == .departure
                ? "departure without an arrival before it"
                : (latest.newest == id ? "still open: no departure yet" : "arrival without a departure after it")
            return OpenEntry(id: id, kind: kind, at: Date(ms: row["at"]), reason: reason)
        }
        return AttendanceHours(
            by: by, groups: groups, totalMs: total, totalHours: hours(total), open: open,
            latestArrival: latest.arrival, latestDeparture: latest.departure, timeZone: LocalDays.name(of: zone))
    }

    static func hours(_ ms: Int64) -> Decimal { (Decimal(ms) / 3_600_000).rounded(2) }

    private static func latest(_ db: Database, userId: String) throws -> (
        arrival: LatestEntry?, departure: LatestEntry?, newest: String?
    ) {
        func one(_ kind: String) throws -> LatestEntry? {
            try Row.fetchOne(
                db,
                cached: "SELECT id, at FROM attendance WHERE userId = ? AND kind = ? ORDER BY at DESC, id DESC LIMIT 1",
                arguments: [userId, kind]
            ).map { LatestEntry(id: $0["id"], at: Date(ms: $0["at"])) }
        }
        let newest = try String.fetchOne(
            db, cached: "SELECT id FROM attendance WHERE userId = ? ORDER BY at DESC, id DESC LIMIT 1",
            arguments: [userId])
        return (try one("arrival"), try one("departure"), newest)
    }
}
