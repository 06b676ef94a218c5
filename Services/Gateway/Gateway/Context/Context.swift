// What a command runs with, composed of one part per concern: its settings
// (CommandSettings.swift), the saved session (Session.swift), the services' clients and
// routing (ServiceRouter.swift), this machine's local data (LocalData.swift), stale-answer
// notes (StaleNotes.swift) and reachability (Reachability.swift). `send` is the one place
// the CLI calls a service; a new command group only builds a body, calls `send` (or
// `perform`) and renders the result. `send` is also where offline use happens
// (Offline.swift): a records write that cannot reach the stack, or made before any login,
// goes to the local queue with its idempotency key; a read that cannot reach it answers the
// last saved copy, marked stale; and the first call that does reach the stack replays what
// was queued.
import Foundation
import Runtime
import Wire

public final class Context: Sendable {
    public let settings: CommandSettings
    public let sessions: SessionStore
    public let local: LocalData
    let reachability: Reachability
    let router: ServiceRouter
    let stale = StaleNotes()

    public var configuration: StackConfiguration { settings.configuration }
    public var json: Bool { settings.json }
    public var timeout: Duration { settings.timeout }
    /// The process environment, with `--home` applied.
    public var environment: [String: String] { settings.environment }
    /// Where `local.sqlite` lives (`LocalStore.directory`).
    public var localDirectory: String { local.directory }

    /// Whether `send` uses the local queue and cache and replays the queue first. On by
    /// default; the dashboard, which keeps its own deadlines, turns it off.
    public var usesLocalData: Bool {
        get { local.enabled }
        set { local.enabled = newValue }
    }

    /// Who a request speaks for.
    public enum Caller: Sendable {
        /// No token (register, login, `$srv.*`).
        case anonymous
        /// The saved session's token; fails with `unauthenticated` when not logged in.
        case session
        /// This token, or none.
        case token(String?)
        /// The saved session's token, from the session as this command just read it
        /// (`send`): the call is routed by it without reading the file again.
        case loaded(Session)
    }

    public init(options: GlobalOptions, environment: [String: String] = ProcessEnvironment.current()) throws {
        settings = try CommandSettings(options: options, environment: environment)
        sessions = SessionStore(environment: settings.environment)
        local = LocalData(environment: settings.environment)
        reachability = Reachability(configuration: settings.configuration)
        router = ServiceRouter(
            configuration: settings.configuration, sessions: sessions, reachability: reachability,
            timeout: settings.timeout)
    }

    /// The client for a service, created on first use and reused by the command.
    public func client(_ service: String) throws -> ServiceClient { try router.client(service) }

    public func session() throws -> Session? { try sessions.load() }

    public func requireSession() throws -> Session {
        try sessions.require { local.waiting(owner: LocalStore.anonymous).total }
    }

    /// Whose local data a command works on: the logged-in user's id, else "anonymous".
    public func owner() throws -> String { try session()?.userId ?? LocalStore.anonymous }

    /// The local store, opened once; with `create: false`, nil when there is none yet.
    public func localStore(create: Bool = true) throws -> LocalStore? { try local.store(create: create) }

    /// Writes waiting to sync for `owner` (0 when there is no local store).
    public func waiting(owner: String) -> LocalStore.Counts { local.waiting(owner: owner) }

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
                throw try local.queue(
                    owner: LocalStore.anonymous, service, method, body: body, key: idempotencyKey ?? ID.make(),
                    reason: "not logged in: kept on this machine")
            }
            _ = try requireSession()
            return .null
        }
        // (a replay may have learnt the user's shard, and saved it: then the file is read again)
        let replayed = await Offline.replayOnce(self, session: session)
        let caller = replayed ? Caller.token(session.token) : Caller.loaded(session)
        if write {
            let key = idempotencyKey ?? ID.make()
            if queueable, let stopped = local.replayStopped {
                // Queued writes go in order: this one, sent now, would be applied before the ones
                // the replay could not send (a queued update would then undo a newer one).
                throw try local.queue(
                    owner: session.userId, service, method, body: body, key: key,
                    reason: "earlier queued writes could not be sent yet (\(stopped.message)); it waits behind them")
            }
            do {
                let result = try await direct(
                    service, method, body: body, caller: caller, write: true, idempotencyKey: key, timeout: timeout)
                local.rememberWrite(owner: session.userId, service: service, method: method, result: result)
                return result
            } catch let error as ServiceError
                where queueable && Self.isUnreachable(error.code) && error.details?["reason"]?.stringValue != "shard_move"
            {
                // (a write held while the user's records move between shards is refused, not
                // queued: it says to try again in a few seconds)
                let uncertain = error.code == .deadlineExceeded
                throw try local.queue(
                    owner: session.userId, service, method, body: body, key: key, uncertain: uncertain,
                    reason: uncertain
                        ? "\(service) took it but did not answer in time (\(error.message))"
                        : "the stack is unreachable (\(error.message))")
            }
        }
        do {
            let result = try await direct(service, method, body: body, caller: caller, timeout: timeout)
            local.remember(owner: session.userId, service: service, method: method, body: body, result: result)
            return result
        } catch let error as ServiceError where Self.isUnreachable(error.code) {
            if let cached = local.cached(owner: session.userId, service: service, method: method, body: body) {
                stale.note(unreachable: error, savedAt: cached.fetchedAt)
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
        if let freshness = reply.freshness { stale.note(service, freshness) }
        return reply.result ?? .null
    }

    /// A write's result, saved as the answer of its `get` (LocalData.rememberWrite).
    func rememberWrite(owner: String, service: String, method: String, result: JSONValue) {
        local.rememberWrite(owner: owner, service: service, method: method, result: result)
    }

    /// `Reachability.isDown` (asked afresh each time: `stack up` may have started it since).
    func isDown(_ service: String) -> Bool { reachability.isDown(service) }

    /// The raw reply, successful or not (`logbook call`).
    public func reply(
        _ service: String, _ method: String, body: JSONValue = [:], caller: Caller = .session,
        write: Bool = false, idempotencyKey: String? = nil, timeout: Duration? = nil
    ) async throws -> Reply {
        let token: String?
        var session: Session?
        switch caller {
        case .anonymous: token = nil
        case .session: token = try requireSession().token
        case .token(let given): token = given
        case .loaded(let loaded):
            token = loaded.token
            session = loaded
        }
        return try await router.reply(
            service, method, body: body, token: token, session: session, write: write, idempotencyKey: idempotencyKey,
            timeout: timeout)
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
