// Argon2id password hashing with libsodium. Hashing is deliberately slow and memory-hungry,
// so it never runs on Swift's cooperative pool (it would starve every other request) nor
// inside a database transaction (it would hold up the group commit): it runs on a few
// serial dispatch queues, at most `hashingConcurrency` hashes at once, so a burst of logins
// cannot ask for more than that many × memlimit bytes. One of those queues is kept for
// checks from known devices and signed-in sessions (`priority`), so a flood of guesses from
// strangers never leaves the owner's login waiting behind it (with a limit of one, the one
// queue serves both). On that lane the checks take turns by user (`FairLane`): anyone with
// an account can send checks there (their own device's logins), and a burst of one user's
// waits behind itself, not in front of another owner's.
import CSodium
import Dispatch
import Foundation
import Synchronization
import Wire

final class Passwords: Sendable {
    let cost: Argon2Cost
    private let queues: [DispatchQueue]
    private let priorityLane: FairLane
    private let next = Atomic<Int>(0)
    /// A hash of a random password, verified against when the username is unknown so that
    /// "no such user" takes as long as "wrong password".
    private let dummyHash: String

    init(cost: Argon2Cost, concurrency: Int) throws {
        guard sodium_init() >= 0 else { throw ServiceError.internal("libsodium failed to initialize") }
        self.cost = cost
        // (one lane in all when the limit is one: it then serves every check, none is kept)
        queues = (0..<max(1, concurrency - 1)).map { DispatchQueue(label: "auth.argon2.\($0)") }
        priorityLane = FairLane(queue: concurrency > 1 ? DispatchQueue(label: "auth.argon2.priority") : queues[0])
        dummyHash = try Self.hashNow(Crypto.base64URL(Crypto.random(count: 32)), cost: cost)
    }

    /// A libsodium `$argon2id$…` string holding salt, cost and hash (`priorityFor` as for
    /// `verify`).
    func hash(_ password: String, priorityFor user: String? = nil) async throws -> String {
        let cost = self.cost
        return try await offPool(priorityFor: user) { try Self.hashNow(password, cost: cost) }
    }

    /// True when `password` matches `hash`; with a nil hash (unknown user) checks against
    /// the dummy hash and returns false.
    /// `priorityFor`: on the lane kept for known devices and sessions, in turn with other
    /// users' checks there (the user's id or lowercased name).
    func verify(_ password: String, against hash: String?, priorityFor user: String? = nil) async -> Bool {
        let stored = hash ?? dummyHash
        let matches = (try? await offPool(priorityFor: user) { Self.verifyNow(password, stored) }) ?? false
        return hash != nil && matches
    }

    private func offPool<T: Sendable>(priorityFor user: String? = nil, _ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            let job: @Sendable () -> Void = { continuation.resume(with: Result { try work() }) }
            if let user {
                priorityLane.submit(user, job)
            } else {
                queues[next.add(1, ordering: .relaxed).oldValue % queues.count].async(execute: job)
            }
        }
    }

    static func hashNow(_ password: String, cost: Argon2Cost) throws -> String {
        var out = [CChar](repeating: 0, count: crypto_pwhash_strbytes())
        let bytes = Array(password.utf8)
        let status = withPointer(to: bytes) { chars in
            crypto_pwhash_str_alg(
                &out, chars, UInt64(bytes.count), cost.opslimit, cost.memlimit, crypto_pwhash_alg_argon2id13())
        }
        // Fails only when memory cannot be allocated.
        guard status == 0 else { throw ServiceError(.resourceExhausted, "not enough memory to hash the password; try again") }
        return String(decoding: out.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// True when `hash` was made with another cost than the one configured now (an
    /// operator changed LOGBOOK_AUTH_ARGON2_*): a login then stores a new hash at this cost.
    func needsRehash(_ hash: String) -> Bool {
        crypto_pwhash_str_needs_rehash(hash, cost.opslimit, cost.memlimit) != 0
    }

    static func verifyNow(_ password: String, _ hash: String) -> Bool {
        let bytes = Array(password.utf8)
        return withPointer(to: bytes) { chars in
            crypto_pwhash_str_verify(hash, chars, UInt64(bytes.count)) == 0
        }
    }

    /// A non-null pointer to the bytes even when there are none (libsodium wants one).
    private static func withPointer<T>(to bytes: [UInt8], _ body: (UnsafePointer<CChar>) -> T) -> T {
        (bytes + [0]).withUnsafeBufferPointer { raw in
            raw.withMemoryRebound(to: CChar.self) { body($0.baseAddress!) }
        }
    }
}

/// A serial queue whose jobs take turns by key: each key's jobs in their order, the keys in
/// rotation, one job at a time (each handed to `queue` on its own, so a queue shared with
/// other work interleaves with it as before).
final class FairLane: Sendable {
    private struct State {
        var waiting: [String: [@Sendable () -> Void]] = [:]
        /// Keys with jobs waiting, in the order they are served.
        var turns: [String] = []
        var running = false
    }

    private let queue: DispatchQueue
    private let state = Mutex(State())

    init(queue: DispatchQueue) { self.queue = queue }

    func submit(_ key: String, _ job: @escaping @Sendable () -> Void) {
        let start = state.withLock { state -> Bool in
            if state.waiting[key] == nil { state.turns.append(key) }
            state.waiting[key, default: []].append(job)
            guard !state.running else { return false }
            state.running = true
            return true
        }
        if start { queue.async { self.runOne() } }
    }

    private func runOne() {
        let job = state.withLock { state -> (@Sendable () -> Void)? in
            guard !state.turns.isEmpty else { return nil }
            let key = state.turns.removeFirst()
            var jobs = state.waiting[key] ?? []
            let job = jobs.isEmpty ? nil : jobs.removeFirst()
            if jobs.isEmpty {
                state.waiting[key] = nil
            } else {
                state.waiting[key] = jobs
                state.turns.append(key)  // its next job after the others' next
            }
            return job
        }
        job?()
        let more = state.withLock { state -> Bool in
            if state.turns.isEmpty { state.running = false }
            return state.running
        }
        if more { queue.async { self.runOne() } }
    }
}
