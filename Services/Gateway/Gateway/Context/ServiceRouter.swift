// One client per service (made on first use), and where a call goes: a user's records calls
// to their shard (Shards.swift), following a shard's redirect when the user has moved (and
// remembering it in the session); everything else to the service named.
import Foundation
import Runtime
import Wire

final class ServiceRouter: Sendable {
    let configuration: StackConfiguration
    let sessions: SessionStore
    let reachability: Reachability
    let timeout: Duration
    private let clients: ServiceClients

    init(configuration: StackConfiguration, sessions: SessionStore, reachability: Reachability, timeout: Duration) {
        self.configuration = configuration
        self.sessions = sessions
        self.reachability = reachability
        self.timeout = timeout
        clients = ServiceClients(configuration: configuration)
    }

    /// The client for a service, created on first use and reused by the command.
    func client(_ service: String) throws -> ServiceClient { try clients.client(service) }

    /// The raw reply of `method` on `service`, as the user of `token` (none: anonymous).
    /// `session`: the saved session as the caller just read it (else it is read here).
    func reply(
        _ service: String, _ method: String, body: JSONValue, token: String?, session: Session? = nil, write: Bool,
        idempotencyKey: String?, timeout: Duration?
    ) async throws -> Reply {
        // A user's records calls go to their shard (Shards.swift); `records-k` named
        // outright, and `$srv.*`, go where they say.
        let saved = session ?? (try? sessions.load())
        let ownSession = saved.map { $0.token == token } ?? false
        let routed = service == "records" && !method.hasPrefix("$srv.") && method != "events.since"
        let options = CallOptions(
            token: token, idempotencyKey: idempotencyKey ?? (write ? ID.make() : nil),
            timeout: timeout ?? self.timeout)
        guard routed else {
            try reachability.check(service)
            return try await client(service).reply(method, body: body, options: options)
        }
        // The user lives on another shard (moved, or a session from before): that shard is
        // named in the refusal, which came before anything was done; ask it, and remember.
        // (`error` is a closure, not the key path `\.error`: a key path is built at run time,
        // which cost a scan of the runtime's conformance records per command)
        return try await ShardRedirect.follow(
            from: ownSession ? saved?.shard ?? 1 : 1, shards: ownSession ? configuration.recordsShards : 1, error: { $0.error },
            learnt: { shard in
                if var session = saved {
                    session.shard = shard
                    try? sessions.save(session)
                }
            }
        ) { shard in
            let target = StackConfiguration.recordsInstance(shard)
            try reachability.check(target)
            return try await client(target).reply(method, body: body, options: options)
        }
    }
}
