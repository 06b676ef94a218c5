// What a command runs with: the stack configuration, one client per service (made on first
// use), the saved session, and `send`, the one place the CLI calls a service. A new command
// group only builds a body, calls `send` (or `perform`) and renders the result.
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
    private let clients = Mutex<[String: ServiceClient]>([:])

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
        self.environment = environment
        sessions = SessionStore(environment: environment)
        json = options.json
        timeout = options.duration
    }

    /// The client for a service, created on first use and reused by the command.
    public func client(_ service: String) throws -> ServiceClient {
        try clients.withLock { clients in
            if let client = clients[service] { return client }
            let client = try ServiceClient(service: service, endpoint: configuration.endpoint(service))
            clients[service] = client
            return client
        }
    }

    public func session() throws -> Session? { try sessions.load() }

    public func requireSession() throws -> Session {
        guard let session = try sessions.load() else {
            throw ServiceError(.unauthenticated, "not logged in; run `logbook login` (or `logbook register`)")
        }
        return session
    }

    /// Calls `method` on `service` and returns its result, or throws its `ServiceError`.
    /// A write carries a fresh idempotency key, so the client's retries never double it.
    public func send(
        _ service: String, _ method: String, body: JSONValue = [:], caller: Caller = .session,
        write: Bool = false, idempotencyKey: String? = nil, timeout: Duration? = nil
    ) async throws -> JSONValue {
        let reply = try await reply(
            service, method, body: body, caller: caller, write: write, idempotencyKey: idempotencyKey,
            timeout: timeout)
        if let error = reply.error { throw error }
        return reply.result ?? .null
    }

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
        let options = CallOptions(
            token: token, idempotencyKey: idempotencyKey ?? (write ? ID.make() : nil),
            timeout: timeout ?? self.timeout)
        return try await client(service).reply(method, body: body, options: options)
    }

    /// `send`, then print: the result as JSON with `--json`, else `human(result)`.
    public func perform(
        _ service: String, _ method: String, body: JSONValue = [:], caller: Caller = .session,
        write: Bool = false, human: (JSONValue) -> String
    ) async throws {
        let result = try await send(service, method, body: body, caller: caller, write: write)
        if json { Output.json(result) } else { Output.line(human(result)) }
    }
}
