// Slowing down password guessing, per lowercased username, stored in the database so a
// restart forgets nothing. An attempt is counted as a failure *before* the password is
// checked and the count is cleared when the password turns out right: a burst of parallel
// guesses is therefore throttled as surely as a sequence of them. Counters untouched for a
// day are dropped.
import Foundation
import GRDB
import Wire

enum LoginFailures {
    static let forgetAfter: TimeInterval = 24 * 3600

    /// Refuses the attempt with `resource_exhausted` while `username` is in its back-off
    /// window; otherwise counts it as a failure until `clear` says otherwise.
    static func admit(_ db: Database, username: String, now: Date, throttle: LoginThrottle) throws {
        let row = try Row.fetchOne(
            db, sql: "SELECT failures, lastFailureAt FROM loginFailures WHERE username = ?", arguments: [username])
        if let row {
            let failures: Int = row["failures"]
            let last = Date(timeIntervalSince1970: row["lastFailureAt"])
            let retryAt = last.addingTimeInterval(throttle.wait(afterFailures: failures))
            if now < retryAt {
                let retryAfterMs = Int((retryAt.timeIntervalSince(now) * 1000).rounded(.up))
                let seconds = Int((Double(retryAfterMs) / 1000).rounded(.up))
                throw ServiceError(
                    .resourceExhausted,
                    "too many failed sign-ins for \"\(username)\": try again in \(seconds) s (after \(WireTime.format(retryAt)))",
                    details: ["retryAfterMs": .number(Double(retryAfterMs))])
            }
        }
        try db.execute(
            sql: "DELETE FROM loginFailures WHERE lastFailureAt < ?",
            arguments: [now.timeIntervalSince1970 - forgetAfter])
        try db.execute(
            sql: """
                INSERT INTO loginFailures (username, failures, lastFailureAt) VALUES (?, 1, ?)
                ON CONFLICT(username) DO UPDATE SET failures = failures + 1, lastFailureAt = excluded.lastFailureAt
                """,
            arguments: [username, now.timeIntervalSince1970])
    }

    /// The password was right: the username starts afresh.
    static func clear(_ db: Database, username: String) throws {
        try db.execute(sql: "DELETE FROM loginFailures WHERE username = ?", arguments: [username])
    }
}
