// Attendance logbook: `records.attendance.add|list|latest|delete`. Arrivals and departures
// alternate in time order: a second arrival (or departure) next to one is refused with
// `failed_precondition` naming the open entry, unless the caller marks it a correction.
import Contracts
import Foundation
import GRDB
import Runtime
import Storage
import Wire


extension Records {
    func registerAttendance(_ router: inout Router) {
        router.write(AttendanceMethods.add) { body, context, db in
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
            try AttendanceRow(entry, userId: context.userId).insertRow(db)
            try Outbox.append(db, type: AttendanceEvents.created, userId: context.userId, data: entry, at: now)
            return entry
        }

        router.read(AttendanceMethods.list) { body, context in
            let limit = try Pagination.limit(body.limit)
            let list = ListKey(AttendanceMethods.list.name, sort: "at")
            let cursor = try Cursor.decode(body.cursor, for: list)
            return try await database.read { db in
                try Pagination.page(
                    db,
                    sql: """
                        SELECT * FROM attendance WHERE userId = ? AND (at, id) < (?, ?)
                        ORDER BY at DESC, id DESC LIMIT ?
                        """,
                    arguments: [context.userId, cursor?.n ?? Int64.max, cursor?.id ?? ""], limit: limit, list: list,
                    key: { (e: AttendanceEntry) in (e.at.ms, nil, e.id) }, row: { try AttendanceRow(row: $0).entry })
            }
        }

        router.read(AttendanceMethods.latest) { _, context in
            try await database.read { db in
                func latest(_ kind: AttendanceKind) throws -> AttendanceEntry? {
                    try AttendanceRow.owned(by: context.userId).filter(AttendanceRow.Columns.kind == kind.rawValue)
                        .order(AttendanceRow.Columns.at.desc, AttendanceRow.Columns.id.desc).fetchOne(db)?.entry
                }
                return AttendanceLatest(arrival: try latest(.arrival), departure: try latest(.departure))
            }
        }

        router.write(AttendanceMethods.delete) { body, context, db in
            guard let entry = try AttendanceRow.find(db, userId: context.userId, id: body.id)?.entry else {
                throw notFound("attendance entry", body.id)
            }
            try AttendanceRow.delete(db, userId: context.userId, id: entry.id)
            try Outbox.append(
                db, type: AttendanceEvents.deleted, userId: context.userId,
                data: AttendanceDeleted(id: entry.id, userId: context.userId, kind: entry.kind, at: entry.at), at: now())
            return Deleted()
        }
    }

    /// The entries just before and just after `entry` in time order must be of the other kind.
    func checkAlternates(_ db: Database, userId: String, _ entry: AttendanceEntry) throws {
        let arguments: StatementArguments = [userId, entry.at.ms, entry.id]
        let previous = try AttendanceRow.fetchOne(
            db,
            sql: "SELECT * FROM attendance WHERE userId = ? AND (at, id) < (?, ?) ORDER BY at DESC, id DESC LIMIT 1",
            arguments: arguments
        )?.entry
        let next = try AttendanceRow.fetchOne(
            db,
            sql: "SELECT * FROM attendance WHERE userId = ? AND (at, id) > (?, ?) ORDER BY at ASC, id ASC LIMIT 1",
            arguments: arguments
        )?.entry
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
