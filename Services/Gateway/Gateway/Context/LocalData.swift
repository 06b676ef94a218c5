// This machine's own data for a command (local.sqlite and the cache/ directory, LocalStore.swift):
// opened on first use; writes queued while the stack cannot take them; every answer saved
// (in cache/ alone), so a read can be answered offline; and whether this command
// already replayed the queue.
import Foundation
import Runtime
import Synchronization
import Wire

public final class LocalData: Sendable {
    /// Where `local.sqlite` lives (`LocalStore.directory`).
    public let directory: String
    /// The read cache (`cache/`), shared with the store: saving or reading an answer
    /// does not open the queue's file.
    private let cache: CacheFile
    private let state = Mutex(State())

    private struct State {
        var store: LocalStore?
        var enabled = true
        var replayed = false
        /// Why this command's replay stopped with writes still queued.
        var replayStopped: ServiceError?
    }

    init(environment: [String: String]) {
        directory = LocalStore.directory(environment: environment)
        cache = CacheFile(path: directory + "/" + LocalStore.cacheFileName)
    }

    /// Whether `Context.send` uses the queue and the saved answers (and replays first).
    var enabled: Bool {
        get { state.withLock { $0.enabled } }
        set { state.withLock { $0.enabled = newValue } }
    }

    /// The local store, opened once; with `create: false`, nil when there is none yet.
    func store(create: Bool = true) throws -> LocalStore? {
        if let store = state.withLock({ $0.store }) { return store }
        guard let store = try LocalStore.open(directory: directory, create: create, cache: cache) else { return nil }
        state.withLock { $0.store = store }
        return store
    }

    /// Writes waiting to sync for `owner` (0 when there is no local store), counted without
    /// opening the store when it is not open yet (LocalStore.counts(directory:owner:)).
    func waiting(owner: String) -> LocalStore.Counts {
        if state.withLock({ $0.store }) == nil, let counts = LocalStore.counts(directory: directory, owner: owner) {
            return counts
        }
        return (try? store(create: false)?.counts(owner: owner)) ?? LocalStore.Counts(pending: 0, failed: 0)
    }

    /// Why this command's replay stopped before the queue was empty, if it did: a write of
    /// the command then waits behind the queued ones (`Context.send`).
    var replayStopped: ServiceError? {
        get { state.withLock { $0.replayStopped } }
        set { state.withLock { $0.replayStopped = newValue } }
    }

    /// True the first time only: the queue is replayed once per command.
    func claimReplay() -> Bool {
        state.withLock { state in
            defer { state.replayed = true }
            return !state.replayed
        }
    }

    /// Puts a write in the queue and returns what to throw. A create gets a local id later
    /// writes may use and, unless it may already have been applied (`uncertain`: its body
    /// must stay byte-for-byte what was sent, or the replay's idempotency key would clash),
    /// its "now" fixed to the time it was made.
    func queue(
        owner: String, _ service: String, _ method: String, body: JSONValue, key: String, uncertain: Bool = false,
        reason: String
    ) throws -> Offline.Queued {
        guard let store = try store() else { throw ServiceError(.internal, "no local store") }
        var body = body
        if !uncertain, let field = Offline.timeFields[method], case .object(var object) = body, object[field] == nil {
            object[field] = .string(WireTime.format(Date()))
            body = .object(object)
        }
        let localId = Offline.isCreate(method) ? LocalStore.localPrefix + ID.make() : nil
        let item = try store.enqueue(
            owner: owner, service: service, method: method, body: body, idempotencyKey: key, localId: localId,
            uncertain: uncertain)
        return Offline.Queued(item: item, reason: reason, waiting: (try? store.counts(owner: owner).total) ?? 1)
    }

    /// Saves a read's answer, to show when the stack cannot be reached.
    func remember(owner: String, service: String, method: String, body: JSONValue, result: JSONValue) {
        try? cache.remember(owner: owner, service: service, method: method, body: body, result: result)
    }

    /// A write's result is the freshest copy of that record: saved as the answer of its
    /// `get`, so it can be named offline (a car added, then a fill-up while offline).
    func rememberWrite(owner: String, service: String, method: String, result: JSONValue) {
        guard let id = result["id"]?.stringValue,
            let dot = method.lastIndex(of: "."), [".add", ".update"].contains(String(method[dot...]))
        else { return }
        let get = method[..<dot] + ".get"
        remember(owner: owner, service: service, method: String(get), body: ["id": .string(id)], result: result)
    }

    /// Forgets everything kept here for `owner`: queued writes, local ids, saved answers.
    func removeAll(owner: String) throws {
        if let store = try store(create: false) {
            try store.removeAll(owner: owner)
        } else if cache.exists {
            try cache.removeAll(owner: owner)
        }
    }

    /// The saved answer of this read, if any.
    func cached(owner: String, service: String, method: String, body: JSONValue) -> LocalStore.Cached? {
        guard cache.exists else { return nil }
        return try? cache.cached(owner: owner, service: service, method: method, body: body)
    }
}
