// What a command runs with: the stack configuration, one client per service (made on first
// use), the saved session, the local store, and `send`, the one place the CLI calls a
// service. A new command group only builds a body, calls `send` (or `perform`) and renders
// the result. `send` is also where offline use happens (Offline.swift): a records write that
// cannot reach the stack, or made before any login, goes to the local queue with its
// idempotency key; a read that cannot reach it answers the last saved copy, marked stale;
// and the first call that does reach the stack replays what was queued.
import Foundation
import Runtime
import Synchronization
import Wire

public final class Context: Sendable {
    public let configuration: StackConfiguration
    public let sessions: SessionStore
    public let json: Bool
    public let timeout: Duration
    /// The process environment, with `--home` applied.
    public let environment: [String: String]
    private let clients: ServiceClients
    /// Where `local.sqlite` lives (`LocalStore.directory`).
    public let localDirectory: String
    private let state = Mutex(LocalState())

    private struct LocalState {
        var store: LocalStore?
        var usesLocalData = true
        var replayed = false
        var staleNoted = false
        /// Services this command already found unreachable (the replay before its first
        /// call): later calls fail at once instead of waiting out the timeout again.
        var unreachable: [String: ServiceError] = [:]
    }

    /// Whether `send` uses the local queue and cache and replays the queue first. On by
    /// default; the dashboard, which keeps its own deadlines, turns it off.
    public var usesLocalData: Bool {
        get { state.withLock { $0.usesLocalData } }
        set { state.withLock { $0.usesLocalData = newValue } }
    }

    /// Who a request speaks for.
    public enum Caller: Sendable {
        /// No token (register, login, `$srv.*`).
        case anonymous
        /// The saved session's token; fails with `unauthenticated` when not logged in.
        case session
        /// This token, or none.
        case token(String?)
    }

    public init(options: GlobalOptions, environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        var environment = environment
        if let home = options.home { environment["LOGBOOK_HOME"] = home }
        do {
            configuration = try StackConfiguration.load(environment: environment)
        } catch let error as ConfigurationError {
            throw ServiceError(.failedPrecondition, "configuration: \(error.description)")
        }
        clients = ServiceClients(configuration: configuration)
        self.environment = environment
        sessions = SessionStore(environment: environment)
        localDirectory = LocalStore.directory(environment: environment)
        json = options.json
        timeout = options.duration
    }

    /// The client for a service, created on first use and reused by the command.
    public func client(_ service: String) throws -> ServiceClient { try clients.client(service) }

    public func session() throws -> Session? { try sessions.load() }

    public func requireSession() throws -> Session {
        guard let session = try sessions.load() else {
            let waiting = (try? localStore(create: false)?.counts(owner: LocalStore.anonymous).total) ?? 0
            if waiting > 0 {
                throw ServiceError(
                    .unauthenticated,
                    "not logged in; \(waiting) local record\(waiting == 1 ? "" : "s") waiting: `logbook register` to keep them "
                        + "(or `logbook login`, then `logbook sync --claim-local`)")
            }
            throw ServiceError(.unauthenticated, "not logged in; run `logbook login` (or `logbook register`)")
        }
        return session
    }

    /// Whose local data a command works on: the logged-in user's id, else "anonymous".
    public func owner() throws -> String { try session()?.userId ?? LocalStore.anonymous }

    /// The local store, opened once; with `create: false`, nil when there is none yet.
    public func localStore(create: Bool = true) throws -> LocalStore? {
        if let store = state.withLock({ $0.store }) { return store }
        guard let store = try LocalStore.open(directory: localDirectory, create: create) else { return nil }
        state.withLock { $0.store = store }
        return store
    }

    /// Writes waiting to sync for `owner` (0 when there is no local store).
    public func waiting(owner: String) -> LocalStore.Counts {
        (try? localStore(create: false)?.counts(owner: owner)) ?? LocalStore.Counts(pending: 0, failed: 0)
    }

    /// Calls `method` on `service` and returns its result, or throws its `ServiceError`.
    /// A write carries a fresh idempotency key, so the client's retries never double it.
    /// With the session as caller (and `usesLocalData`): a queueable write that cannot reach
    /// the stack, or made while logged out, throws `Offline.Queued` after queueing it; a
    /// read that cannot reach the stack answers its saved copy (noted on stderr as stale).
    public func send(
        _ service: String, _ method: String, body: JSONValue = [:], caller: Caller = .session,
        write: Bool = false, idempotencyKey: String? = nil, timeout: Duration? = nil
    ) async throws -> JSONValue {
        guard case .session = caller, usesLocalData else {
            return try await direct(
                service, method, body: body, caller: caller, write: write, idempotencyKey: idempotencyKey, timeout: timeout)
        }
        let queueable = write && Offline.isQueueable(service, method)
        guard let session = try session() else {
            if queueable {
                throw try queue(
                    owner: LocalStore.anonymous, service, method, body: body, key: idempotencyKey ?? ID.make(),
                    reason: "not logged in: kept on this machine")
            }
            _ = try requireSession()
            return .null
        }
        await replayQueueOnce(session)
        let caller = Caller.token(session.token)
        if write {
            let key = idempotencyKey ?? ID.make()
            do {
                let result = try await direct(
                    service, method, body: body, caller: caller, write: true, idempotencyKey: key, timeout: timeout)
                rememberWrite(owner: session.userId, service: service, method: method, result: result)
                return result
            } catch let error as ServiceError
                where queueable && Self.isUnreachable(error.code) && error.details?["reason"]?.stringValue != "shard_move"
            {
                // (a write held while the user's records move between shards is refused, not
                // queued: it says to try again in a few seconds)
                let uncertain = error.code == .deadlineExceeded
                throw try queue(
                    owner: session.userId, service, method, body: body, key: key, uncertain: uncertain,
                    reason: uncertain
                        ? "\(service) took it but did not answer in time (\(error.message))"
                        : "the stack is unreachable (\(error.message))")
            }
        }
        do {
            let result = try await direct(service, method, body: body, caller: caller, timeout: timeout)
            try? localStore()?.remember(owner: session.userId, service: service, method: method, body: body, result: result)
            return result
        } catch let error as ServiceError where Self.isUnreachable(error.code) {
            if let cached = try? localStore(create: false)?.cached(
                owner: session.userId, service: service, method: method, body: body)
            {
                noteStale(error, savedAt: cached.fetchedAt)
                return cached.result
            }
            let waiting = self.waiting(owner: session.userId).total
            throw ServiceError(
                error.code,
                "\(error.message); no saved copy of this answer to show offline"
                    + (waiting > 0 ? " (\(waiting) write\(waiting == 1 ? "" : "s") waiting to sync)" : ""))
        }
    }

    static func isUnreachable(_ code: ErrorCode) -> Bool { code == .unavailable || code == .deadlineExceeded }

    /// `reply`, with the reply's error thrown.
    private func direct(
        _ service: String, _ method: String, body: JSONValue, caller: Caller, write: Bool = false,
        idempotencyKey: String? = nil, timeout: Duration?
    ) async throws -> JSONValue {
        let reply = try await reply(
            service, method, body: body, caller: caller, write: write, idempotencyKey: idempotencyKey,
            timeout: timeout)
        if let error = reply.error { throw error }
        if let freshness = reply.freshness { noteFreshness(service, freshness) }
        return reply.result ?? .null
    }

    /// A figure computed from a projection that is behind is shown, but marked (once).
    private func noteFreshness(_ service: String, _ freshness: Freshness) {
        let first = state.withLock { state in
            defer { state.staleNoted = true }
            return !state.staleNoted
        }
        guard first else { return }
        let producers = freshness.producers.joined(separator: " and ")
        var line = "stale: \(service) "
        if let behind = freshness.behindEvents, behind > 0 {
            line += "is \(behind) event\(behind == 1 ? "" : "s") behind \(producers)"
        } else {
            line += "has not heard from \(producers) lately"
        }
        if let asOf = freshness.asOf { line += "; figures as of \(TimeText.local(.string(WireTime.format(asOf))))" }
        Output.errorLine(line)
    }

    /// Puts a write in the queue and returns what to throw. A create gets a local id later
    /// writes may use and, unless it may already have been applied (`uncertain`: its body
    /// must stay byte-for-byte what was sent, or the replay's idempotency key would clash),
    /// its "now" fixed to the time it was made.
    private func queue(
        owner: String, _ service: String, _ method: String, body: JSONValue, key: String, uncertain: Bool = false,
        reason: String
    ) throws -> Offline.Queued {
        guard let store = try localStore() else { throw ServiceError(.internal, "no local store") }
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

    /// A write's result is the freshest copy of that record: saved as the answer of its
    /// `get`, so it can be named offline (a car added, then a fill-up while offline).
    func rememberWrite(owner: String, service: String, method: String, result: JSONValue) {
        guard let id = result["id"]?.stringValue,
            let dot = method.lastIndex(of: "."), [".add", ".update"].contains(String(method[dot...]))
        else { return }
        let get = method[..<dot] + ".get"
        try? localStore()?.remember(owner: owner, service: service, method: String(get), body: ["id": .string(id)], result: result)
    }

    private func noteStale(_ error: ServiceError, savedAt: String) {
        let first = state.withLock { state in
            defer { state.staleNoted = true }
            return !state.staleNoted
        }
        guard first else { return }
        Output.errorLine(
            "stale: the stack is unreachable (\(error.message)); showing the copy saved at \(TimeText.local(.string(savedAt)))")
    }

    /// Before the first call of a logged-in command: replay what is queued, once.
    private func replayQueueOnce(_ session: Session) async {
        let first = state.withLock { state in
            defer { state.replayed = true }
            return !state.replayed
        }
        guard first, let store = try? localStore(create: false),
            let counts = try? store.counts(owner: session.userId), counts.pending > 0,
            !isDown(recordsInstance(for: session))
        else { return }
        do {
            let outcome = try await Offline.replay(
                self, store: store, owner: session.userId, token: session.token, includeFailed: false
            ) { item, result in
                if case .failure = result { Output.errorLine(Offline.describe(item, result)) }
            }
            if let stopped = outcome.stopped, stopped.code == .unavailable {
                let instance = recordsInstance(for: session)
                state.withLock { $0.unreachable[instance] = stopped }
            }
            var line = "synced \(outcome.synced.count) queued write\(outcome.synced.count == 1 ? "" : "s")"
            if let stopped = outcome.stopped { line += "; \(outcome.remaining) still queued (\(stopped.message))" }
            if !outcome.synced.isEmpty || outcome.stopped != nil { Output.errorLine(line) }
        } catch {
            Output.errorLine("could not replay the queue: \(error)")
        }
    }

    /// `Reachability.isDown` (asked afresh each time: `stack up` may have started it since).
    func isDown(_ service: String) -> Bool { Reachability.isDown(service, configuration: configuration) }

    /// The raw reply, successful or not (`logbook call`).
    public func reply(
        _ service: String, _ method: String, body: JSONValue = [:], caller: Caller = .session,
        write: Bool = false, idempotencyKey: String? = nil, timeout: Duration? = nil
    ) async throws -> Reply {
        let token: String? =
            switch caller {
            case .anonymous: nil
            case .session: try requireSession().token
            case .token(let token): token
            }
        // A user's records calls go to their shard (Shards.swift); `records-k` named
        // outright, and `$srv.*`, go where they say.
        let saved = try? sessions.load()
        let ownSession = saved.map { $0.token == token } ?? false
        let routed = service == "records" && !method.hasPrefix("$srv.") && method != "events.since"
        let target = routed ? StackConfiguration.recordsInstance(ownSession ? saved?.shard ?? 1 : 1) : service
        if let known = state.withLock({ $0.unreachable[target] }) { throw known }
        if isDown(target) {
            throw ServiceError(
                .unavailable,
                "\(target) is not reachable: the stack is not running (nothing listens at \(configuration.endpoint(target))); "
                    + "start it with `logbook stack up`")
        }
        let options = CallOptions(
            token: token, idempotencyKey: idempotencyKey ?? (write ? ID.make() : nil),
            timeout: timeout ?? self.timeout)
        let reply = try await client(target).reply(method, body: body, options: options)
        // The user lives on another shard (moved, or a session from before): that shard is
        // named in the refusal, which came before anything was done; ask it, and remember.
        if routed, ownSession, let error = reply.error, let shard = ShardRedirect.target(error),
            shard <= configuration.recordsShards, StackConfiguration.recordsInstance(shard) != target
        {
            if var session = saved {
                session.shard = shard
                try? sessions.save(session)
            }
            return try await client(StackConfiguration.recordsInstance(shard)).reply(method, body: body, options: options)
        }
        return reply
    }

    /// The records instance the saved session's user is on.
    func recordsInstance(for session: Session) -> String { StackConfiguration.recordsInstance(session.shard ?? 1) }

    /// `send`, then print: the result as JSON with `--json`, else `human(result)`.
    public func perform(
        _ service: String, _ method: String, body: JSONValue = [:], caller: Caller = .session,
        write: Bool = false, human: (JSONValue) -> String
    ) async throws {
        let result = try await send(service, method, body: body, caller: caller, write: write)
        if json { Output.json(result) } else { Output.line(human(result)) }
    }
}
