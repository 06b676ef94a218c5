// What auth read about sessions and users, kept in memory until a commit changes either
// table. Every `.user` request resolves its token and most read their user: from memory
// that is a lookup, where a read of the database was most of auth's part of a `whoami`.
//
// It can never answer for a session that is gone. A commit touching `sessions` or `users`
// (a logout, a password change, a deletion, a settings or shard change, a login's sweep of
// expired sessions; any write, whatever code makes it) forgets everything, synchronously
// after the commit and before the write returns (GRDB's region observation, on the writer's
// queue). A read that began before such a commit may finish after the forgetting: every
// read takes the generation before it starts and stores its result only if no commit came
// since, so what it saw is never kept. A session's expiry needs no commit, so it is checked
// at every lookup.
import Foundation
import GRDB
import Runtime
import Synchronization

final class Remembered: Sendable {
    struct Session: Sendable {
        var principal: Principal
        /// Seconds since 1970 (the column's unit).
        var expiresAt: Double
    }

    private struct State {
        var generation: UInt64 = 0
        var sessions: [String: Session] = [:]
        var users: [String: User] = [:]
    }

    private let state = Mutex(State())
    /// Entries kept at most; past it everything is forgotten and read again.
    let capacity: Int
    private let observation = Mutex<AnyDatabaseCancellable?>(nil)

    init(capacity: Int = 100_000) { self.capacity = capacity }

    /// Forgets everything after each commit that changes `sessions` or `users` in `writer`.
    func forgetOnCommits(to writer: any DatabaseWriter) throws {
        let cancellable = try DatabaseRegionObservation(tracking: Table("sessions"), Table("users"))
            .start(in: writer, onError: { [weak self] _ in self?.forget() }, onChange: { [weak self] _ in self?.forget() })
        observation.withLock { $0 = cancellable }
    }

    /// Taken before a read whose result may be kept (`keep`).
    var generation: UInt64 { state.withLock { $0.generation } }

    func forget() {
        state.withLock {
            $0.generation &+= 1
            $0.sessions = [:]
            $0.users = [:]
        }
    }

    /// The session of this token hash, unless it has expired at `now`.
    func session(_ tokenHash: String, now: Double) -> Principal? {
        state.withLock { state in
            guard let session = state.sessions[tokenHash], session.expiresAt > now else { return nil }
            return session.principal
        }
    }

    func user(_ id: String) -> User? { state.withLock { $0.users[id] } }

    /// Keeps what a read that began at `generation` found, unless a commit came since.
    func keep(session: Session, tokenHash: String, readAt generation: UInt64) {
        keep(readAt: generation) { $0.sessions[tokenHash] = session }
    }

    func keep(user: User, readAt generation: UInt64) {
        keep(readAt: generation) { $0.users[user.id] = user }
    }

    private func keep(readAt generation: UInt64, _ store: (inout State) -> Void) {
        state.withLock { state in
            guard state.generation == generation else { return }
            if state.sessions.count + state.users.count >= capacity {
                state.sessions = [:]
                state.users = [:]
            }
            store(&state)
        }
    }
}
