// Slowing down password guessing without letting anyone lock the owner out
// (docs/protocol.md, "Failed-attempt throttling").
//
// Failures are counted per *key*, stored in the database so a restart forgets nothing: a
// login from an unknown client counts against the lowercased username; a login presenting
// one of the user's device tokens (Devices.swift) counts against that device only; a
// password asked of a signed-in user (password change, account deletion) counts against
// that session. So guesses from strangers back off the username, while the owner's known
// device keeps its own clean count. An attempt is counted as a failure *before* the
// password is checked and cleared when it turns out right: a burst of parallel guesses is
// throttled as surely as a sequence of them. Counters untouched for a day are dropped.
//
// On top of that, unknown clients share a global budget of failed attempts per minute
// (`FailureBudget`), so spraying guesses over many usernames is slowed to it; known devices
// and signed-in sessions do not draw on it, and hash on a lane of their own (Passwords).
import Foundation
import GRDB
import Synchronization
import Wire

/// Who is asking for a password check: what its failures count against.
enum LoginClient: Sendable, Equatable {
    /// No device token (or an unknown one): the username's count and the global budget.
    case unknown
    /// A device token of this user (its hash).
    case device(String)
    /// A signed-in session (its id).
    case session(String)

    /// The throttle key: usernames never contain `:`.
    func key(username: String) -> String {
        switch self {
        case .unknown: username
        case .device(let hash): "device:" + hash.prefix(32)
        case .session(let id): "session:" + id
        }
    }

    var trusted: Bool { self != .unknown }
}

enum LoginFailures {
    static let forgetAfter: TimeInterval = 24 * 3600

    /// Refuses the attempt with `resource_exhausted` while `key` is in its back-off window;
    /// otherwise counts it as a failure until `clear` says otherwise. `username` is only
    /// for the message.
    static func admit(_ db: Database, key: String, username: String, now: Date, throttle: LoginThrottle) throws {
        let row = try Row.fetchOne(
            db, sql: "SELECT failures, lastFailureAt FROM loginFailures WHERE username = ?", arguments: [key])
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
                    details: ["retryAfterMs": .number(.init(retryAfterMs))])
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
            arguments: [key, now.timeIntervalSince1970])
    }

    /// The password was right: the key starts afresh.
    static func clear(_ db: Database, key: String) throws {
        try db.execute(sql: "DELETE FROM loginFailures WHERE username = ?", arguments: [key])
    }

    static func clear(_ db: Database, username: String) throws {
        try clear(db, key: username)
    }
}

/// The global budget of failed attempts from unknown clients: a token bucket refilled at
/// `perMinute` a minute, holding at most a quarter minute's worth (`burst`). An attempt takes one
/// before its password is hashed and gives it back if the password was right, so only
/// failures spend it. Kept in memory: a restart refills it.
final class FailureBudget: Sendable {
    let perMinute: Int
    /// Attempts a full bucket allows at once.
    let burst: Int
    private let state: Mutex<(tokens: Double, at: Date?)>

    /// `perMinute` 0 switches the budget off.
    init(perMinute: Int) {
        self.perMinute = perMinute
        burst = max(1, (perMinute + 3) / 4)
        state = Mutex((Double(burst), nil))
    }

    /// Takes one attempt, or throws `resource_exhausted` with `retryAfterMs`.
    func take(now: Date) throws {
        guard perMinute > 0 else { return }
        let rate = Double(perMinute) / 60
        let waitSeconds: Double? = state.withLock { state in
            let elapsed = max(0, state.at.map { now.timeIntervalSince($0) } ?? 0)
            state.tokens = min(Double(burst), state.tokens + elapsed * rate)
            state.at = now
            if state.tokens >= 1 {
                state.tokens -= 1
                return nil
            }
            return (1 - state.tokens) / rate
        }
        if let waitSeconds {
            let retryAfterMs = max(1, Int((waitSeconds * 1000).rounded(.up)))
            throw ServiceError(
                .resourceExhausted,
                "too many failed sign-ins on this server: try again in \(Int((Double(retryAfterMs) / 1000).rounded(.up))) s "
                    + "(a device that signed in before is not held up)",
                details: ["retryAfterMs": .number(.init(retryAfterMs))])
        }
    }

    /// The attempt succeeded: it did not spend the budget.
    func refund() {
        guard perMinute > 0 else { return }
        state.withLock { $0.tokens = min(Double(burst), $0.tokens + 1) }
    }
}
