// Each user's time zone, projected from auth's events (`user.registered` carries it,
// `user.settings.changed` changes it). Expense and attendance days are stored as local days
// in it; a change of zone counts that user's days again from the kept expenses and
// attendance entries, so every summary agrees with the lists the user sees. A user auth
// has not told us about yet counts in UTC until it does (then the days are recounted).
import Foundation
import GRDB
import Runtime
import Wire

enum UserZones {
    static func zone(_ db: Database, userId: String) throws -> TimeZone {
        LocalDays.zone(
            or: try String.fetchOne(db, cached: "SELECT timeZone FROM userZone WHERE userId = ?", arguments: [userId]))
    }

    /// Records the user's zone; when it differs from the one their days were counted in,
    /// counts them again.
    static func set(_ db: Database, userId: String, name: String?) throws {
        guard let name, let zone = LocalDays.zone(named: name) else { return }
        let before = try Self.zone(db, userId: userId)
        try db.execute(
            cached: """
                INSERT INTO userZone (userId, timeZone) VALUES (?, ?)
                ON CONFLICT (userId) DO UPDATE SET timeZone = excluded.timeZone
                """, arguments: [userId, LocalDays.name(of: zone)])
        guard before.identifier != zone.identifier else { return }
        try ExpenseProjection.recount(db, userId: userId, zone: zone)
        try AttendanceProjection.recount(db, userId: userId)
    }
}
