// The one shape of a service library. A service says what it is (name, schema, whether it
// publishes) and, on a host the runtime opened for it, what it adds: its routes, where
// tokens resolve, the events it consumes and anything else it runs. The runtime does the
// rest the same way for every service: the host on the stack's database and endpoints, the
// auth session cache and its consumer, one consumer per producer (per records shard for
// records), the server, the publisher and the idempotency janitor. A main is then
// `ProcessMain.run { await ServiceMain.run(TheService.self) }`.
import GRDB
import Logging
import ServiceLifecycle
import Storage
import Wire

public protocol LogbookService {
    /// The service's name: its settings' prefix, its log label, its instance by default.
    static var name: String { get }
    /// Its schema (the runtime adds its shared tables).
    static var migrator: DatabaseMigrator { get }
    /// Whether it publishes an outbox (analytics only reads). Default: yes.
    static var publishesEvents: Bool { get }
    /// The instance this process runs as: its endpoints and database. Default: `name`;
    /// records: its shard's `records`, `records-2`, … (Shards.swift).
    static func instance(in configuration: StackConfiguration) throws -> String
    /// Its domain on `host` (opened by the runtime on this instance's database).
    static func assemble(on host: ServiceHost, configuration: StackConfiguration) throws -> ServiceAssembly
    /// Its database settings, given the stack's (the file and its durability): what the
    /// service asks of SQLite beyond them, such as a larger writer cache or a page size.
    /// Default: the stack's as they are.
    static func database(_ settings: DatabaseSettings) -> DatabaseSettings
}

/// Where a service's `.user` routes resolve tokens.
public enum SessionSource: Sendable {
    /// Auth's sessions, through a cache kept honest by auth's events (every service but auth).
    case auth
    /// Its own resolver (auth reads its own database).
    case own(any SessionResolver)
}

/// Events a service applies to its database, from one producer, inside the consumer's
/// transaction with its checkpoint.
public struct Subscription: Sendable {
    /// The producer's name; `records` stands for every records shard, each consumed with its
    /// own checkpoint.
    public var producer: String
    /// Event-type prefixes the handler acts on (nil: all); others cost no transaction.
    public var types: [String]?
    /// A projection users read: replies carry `freshness` while it is behind.
    public var feedsReplies: Bool
    /// Given each batch whole, in the batch's transaction, before its checkpoint.
    public var batch: @Sendable (Database, [Event]) throws -> Void
    /// How a catch-up's backlog is applied and settled (`DatabaseEventSink.Backlog`);
    /// nil: like any other batch.
    public var backlog: DatabaseEventSink.Backlog?

    /// A handler that takes one event at a time.
    public init(
        _ producer: String, types: [String]? = nil, feedsReplies: Bool = false,
        handler: @escaping @Sendable (Database, Event) throws -> Void
    ) {
        self.init(producer, types: types, feedsReplies: feedsReplies) { db, events in
            for event in events { try handler(db, event) }
        }
    }

    /// A handler that takes a whole batch (one that gathers aggregates and writes them once).
    public init(
        _ producer: String, types: [String]? = nil, feedsReplies: Bool = false,
        batch: @escaping @Sendable (Database, [Event]) throws -> Void, backlog: DatabaseEventSink.Backlog? = nil
    ) {
        self.producer = producer
        self.types = types
        self.feedsReplies = feedsReplies
        self.batch = batch
        self.backlog = backlog
    }
}

/// What a service adds to its host.
public struct ServiceAssembly: Sendable {
    public var router: Router
    public var sessions: SessionSource
    public var subscriptions: [Subscription]
    /// Anything else it runs (fetch loops, sweepers).
    public var extra: [any Service]

    public init(
        router: Router, sessions: SessionSource = .auth, subscriptions: [Subscription] = [], extra: [any Service] = []
    ) {
        self.router = router
        self.sessions = sessions
        self.subscriptions = subscriptions
        self.extra = extra
    }
}

extension LogbookService {
    public static var publishesEvents: Bool { true }

    public static func instance(in configuration: StackConfiguration) throws -> String { name }
    public static func database(_ settings: DatabaseSettings) -> DatabaseSettings { settings }

    /// Everything this service's process runs, from the stack configuration.
    public static func services(configuration: StackConfiguration, logger: Logger) throws -> [any Service] {
        let instance = try instance(in: configuration)
        let host = try ServiceHost(
            descriptor: ServiceDescriptor(name: instance), database: database(configuration.databaseSettings(instance)),
            migrator: migrator, eventsEndpoint: publishesEvents ? configuration.eventsEndpoint(instance) : nil,
            curve: configuration.curve, logger: logger)
        let assembly = try assemble(on: host, configuration: configuration)
        return try host.services(assembly, configuration: configuration, endpoint: configuration.endpoint(instance))
    }
}

extension ServiceHost {
    /// The assembly wired to the stack: sessions, one consumer per producer, the server.
    func services(
        _ assembly: ServiceAssembly, configuration: StackConfiguration, endpoint: String
    ) throws -> [any Service] {
        var running: [any Service] = []
        let resolver: any SessionResolver
        switch assembly.sessions {
        case .own(let own):
            resolver = own
        case .auth:
            let sessions = try AuthSessions(configuration: configuration, logger: logger)
            resolver = sessions.cache
            running.append(sessions.consumer)
        }
        for subscription in assembly.subscriptions {
            let producers =
                subscription.producer == "records" ? configuration.recordsInstances : [subscription.producer]
            for producer in producers {
                running.append(
                    try consumer(
                        of: producer, configuration: configuration, feedsReplies: subscription.feedsReplies,
                        types: subscription.types, batch: subscription.batch, backlog: subscription.backlog))
            }
        }
        return services(
            dispatcher: dispatcher(router: assembly.router, sessions: resolver), endpoint: endpoint,
            extra: running + assembly.extra)
    }

    /// In-process (tests, benchmarks): the assembly's routes with `sessions` standing in for
    /// auth's cache (its own resolver when nil). No consumer runs: tests feed events through
    /// a sink.
    public func dispatcher(for assembly: ServiceAssembly, sessions: (any SessionResolver)? = nil) -> Dispatcher {
        var resolver = sessions
        if resolver == nil, case .own(let own) = assembly.sessions { resolver = own }
        return dispatcher(router: assembly.router, sessions: resolver)
    }
}

/// Sessions for a service other than auth: the cache plus the consumer of auth's events
/// that keeps it honest.
struct AuthSessions: Sendable {
    let cache: SessionCache
    let consumer: EventConsumer

    init(configuration: StackConfiguration, logger: Logger) throws {
        let client = try ServiceClient(
            service: "auth", endpoint: configuration.endpoint("auth"), settings: ClientSettings(configuration: configuration))
        cache = SessionCache(auth: client)
        consumer = EventConsumer(
            settings: .init(
                producer: "auth", eventsEndpoint: configuration.eventsEndpoint("auth"), pollInterval: .seconds(2),
                curve: configuration.curve),
            producerRPC: client, sink: cache, logger: logger)
    }
}
