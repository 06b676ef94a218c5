// Attendance logbook: `records.attendance.add|list|latest|delete`. Arrivals and departures
// alternate in time order: a second arrival (or departure) next to one is refused with
// `failed_precondition` naming the open entry, unless the caller marks it a correction.
import Contracts
import Foundation
import GRDB
import Runtime
import Storage
import Wire

extension AttendanceEntry {
    init(row: Row) {
        self.init(
            id: row["id"], kind: AttendanceKind(rawValue: row["kind"]) ?? .arrival, at: Date(ms: row["at"]),
            latitude: row["latitude"], longitude: row["longitude"], accuracy: row["accuracy"],
            source: AttendanceSource(rawValue: row["source"]) ?? .cli, note: row["note"], correction: row["correction"],
            createdAt: Date(ms: row["createdAt"]))
    }
}

struct AttendanceAdd: Decodable, Sendable {
    var kind: AttendanceKind
    var at: Date?
    var latitude: Double?
    var longitude: Double?
    var accuracy: Double?
    var source: AttendanceSource
    var note: String?
    var correction: Bool?
}

struct AttendanceLatest: Codable, Sendable, Equatable {
    var arrival: AttendanceEntry?
    var departure: AttendanceEntry?
}


extension Records {
    func registerAttendance(_ router: inout Router) {
        router.write("records.attendance.add") { (body: AttendanceAdd, context, db) in
            let now = self.now()
            var entry = AttendanceEntry(
                id: ID.make(at: now), kind: body.kind, at: now, source: body.source, createdAt: now)
            if let at = body.at {
                try notInFuture(at, "at", now: now)
                entry.at = Date(ms: at.ms)
            }
            switch (body.latitude, body.longitude) {
            case (let latitude?, let longitude?):
                try checkLatitude(latitude)
                try checkLongitude(longitude)
                entry.latitude = latitude
                entry.longitude = longitude
            case (nil, nil):
                break
            case (nil, _?):
                throw ServiceError.invalid("latitude", "is required with longitude")
            case (_?, nil):
                throw ServiceError.invalid("longitude", "is required with latitude")
            }
            if let accuracy = body.accuracy {
                try require(entry.latitude != nil, "accuracy", "needs latitude and longitude", got: shown(accuracy))
                try require(accuracy.isFinite && accuracy >= 0, "accuracy", "must be 0 or more metres", got: shown(accuracy))
                entry.accuracy = accuracy
            }
            entry.note = try optionalText(body.note, "note", max: 500)
            entry.correction = body.correction ?? false
            if !entry.correction { try checkAlternates(db, userId: context.userId, entry) }
            try db.execute(
                sql: """
                    INSERT INTO attendance (id, userId, kind, at, latitude, longitude, accuracy, source, note, correction,
                        createdAt)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    entry.id, context.userId, entry.kind.rawValue, entry.at.ms, entry.latitude, entry.longitude,
                    entry.accuracy, entry.source.rawValue, entry.note, entry.correction, now.ms,
                ])
            try Outbox.append(db, type: AttendanceEvents.created, userId: context.userId, data: entry, at: now)
            return entry
        }

        router.read("records.attendance.list") { (body: ListBody, context) in
            let limit = try Pagination.limit(body.limit)
            let cursor = try Cursor.decode(body.cursor, sort: "at")
            return try await database.read { db in
                try Pagination.page(
                    db,
                    sql: """
                        SELECT * FROM attendance WHERE userId = ? AND (at, id) < (?, ?)
                        ORDER BY at DESC, id DESC LIMIT ?
                        """,
                    arguments: [context.userId, cursor?.n ?? Int64.max, cursor?.id ?? ""], limit: limit, sort: "at",
                    key: { (e: AttendanceEntry) in (e.at.ms, nil, e.id) }, row: AttendanceEntry.init(row:))
            }
        }

        router.read("records.attendance.latest") { (_: Empty, context) in
            try await database.read { db in
                func latest(_ kind: AttendanceKind) throws -> AttendanceEntry? {
                    try Row.fetchOne(
                        db,
                        sql: "SELECT * FROM attendance WHERE userId = ? AND kind = ? ORDER BY at DESC, id DESC LIMIT 1",
                        arguments: [context.userId, kind.rawValue]
                    ).map(AttendanceEntry.init(row:))
                }
                return AttendanceLatest(arrival: try latest(.arrival), departure: try latest(.departure))
            }
        }

        router.write("records.attendance.delete") { (body: IdBody, context, db) in
            guard
                let row = try Row.fetchOne(
                    db, sql: "SELECT * FROM attendance WHERE userId = ? AND id = ?", arguments: [context.userId, body.id])
            else { throw notFound("attendance entry", body.id) }
            let entry = AttendanceEntry(row: row)
            try db.execute(sql: "DELETE FROM attendance WHERE userId = ? AND id = ?", arguments: [context.userId, entry.id])
            try Outbox.append(
                db, type: AttendanceEvents.deleted, userId: context.userId,
                data: AttendanceDeleted(id: entry.id, userId: context.userId, kind: entry.kind, at: entry.at), at: now())
            return Deleted()
        }
    }

    /// The entries just before and just after `entry` in time order must be of the other kind.
    func checkAlternates(_ db: Database, userId: String, _ entry: AttendanceEntry) throws {
        let arguments: StatementArguments = [userId, entry.at.ms, entry.id]
        let previous = try Row.fetchOne(
            db,
            sql: "SELECT * FROM attendance WHERE userId = ? AND (at, id) < (?, ?) ORDER BY at DESC, id DESC LIMIT 1",
            arguments: arguments
        ).map(AttendanceEntry.init(row:))
        let next = try Row.fetchOne(
            db,
            sql: "SELECT * FROM attendance WHERE userId = ? AND (at, id) > (?, ?) ORDER BY at ASC, id ASC LIMIT 1",
            arguments: arguments
        ).map(AttendanceEntry.init(row:))
        let other = entry.kind == .arrival ? "departure" : "arrival"
        if let previous, previous.kind == entry.kind {
            let what = entry.kind == .arrival ? "an arrival is still open" : "the last entry is already a departure"
            throw ServiceError(
                .failedPrecondition,
                "\(what): entry \(previous.id) at \(WireTime.format(previous.at)); record a\(other == "arrival" ? "n" : "") \(other) first, or pass correction: true to add this \(entry.kind.rawValue) anyway",
                field: "kind",
                details: ["openEntryId": .string(previous.id), "openEntryAt": .string(WireTime.format(previous.at))])
        }
        if let next, next.kind == entry.kind {
            throw ServiceError(
                .failedPrecondition,
                "the next entry is also a\(entry.kind == .arrival ? "n" : "") \(entry.kind.rawValue): entry \(next.id) at \(WireTime.format(next.at)); pass correction: true to add this one anyway",
                field: "kind",
                details: ["openEntryId": .string(next.id), "openEntryAt": .string(WireTime.format(next.at))])
        }
    }
}
