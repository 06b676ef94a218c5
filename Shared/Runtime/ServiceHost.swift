// What every service process is made of, assembled once: its database with group commit,
// the event publisher fed after each commit, the dispatcher, the ZeroMQ server, consumers
// of other services' events, and a ServiceGroup that stops all of it on SIGTERM/SIGINT.
// A service library builds its routes on a `ServiceHost` (LogbookService.swift); its
// executable's main is one `ServiceMain.run`, inside `ProcessMain.run`.
import Foundation
import GRDB
import Logging
import ServiceLifecycle
import Storage
import Synchronization
import Wire

public final class ServiceHost: Sendable {
    public let descriptor: ServiceDescriptor
    public let logger: Logger
    public let database: any DatabaseWriter
    public let commits: GroupCommitter
    /// Set when the service publishes events (an events endpoint was given).
    public let publisher: EventPublisher?
    /// CURVE for this service's server and publisher (nil: plain, the local default).
    public let curve: CurveSettings?
    /// Its consumers' progress and its parts' problems, for `$srv.info`/`$srv.stats`.
    public let health = ServiceHealth()
    /// Its consumers whose catch-up backlogs one settle brings up to date (`BacklogGroup`).
    public let backlogs = BacklogGroup()
    let databasePath: String?
    private let backupExtras = Mutex<[String]>([])
    private let backupHolds = Mutex<[FileHold]>([])

    /// - Parameters:
    ///   - eventsEndpoint: where to publish the outbox; nil publishes nothing (in-process
    ///     tests read events with `events.since` instead).
    ///   - curve: the stack's CURVE settings (`StackConfiguration.curve`); nil serves plain.
    public init(
        descriptor: ServiceDescriptor, database settings: DatabaseSettings, migrator: DatabaseMigrator,
        eventsEndpoint: String?, curve: CurveSettings? = nil, logger: Logger
    ) throws {
        // Before anything starts: a service with CURVE on and no allow-list stops here.
        try curve?.requireAllowList(descriptor.name)
        self.curve = curve
        self.descriptor = descriptor
        var logger = logger
        logger[metadataKey: "service.name"] = "\(descriptor.name)"
        self.logger = logger
        let database: any DatabaseWriter
        do {
            database = try ServiceDatabase.open(settings, migrator: migrator)
        } catch let damaged as DamagedDatabase {
            throw ConfigurationError(Self.advice(for: damaged, service: descriptor.name))
        }
        self.database = database
        databasePath = settings.path
        let health = self.health
        health.probeStorage {
            let settings = try ServiceDatabase.writerSettings(database)
            return StorageReport(
                synchronous: settings.synchronous, journalMode: settings.journalMode,
                memoryStatus: SQLiteProcess.memoryStatus)
        }
        let publisher = try eventsEndpoint.map {
            try EventPublisher(
                service: descriptor.name, endpoint: $0, reader: database, curve: curve, health: health, logger: logger)
        }
        self.publisher = publisher
        commits = GroupCommitter(writer: database) { db, _ in publisher?.publishPending(db) }
    }

    /// A router whose write routes commit through this host's group committer.
    public func makeRouter() -> Router { Router(commits: commits) }

    public func dispatcher(router: Router, sessions: (any SessionResolver)?) -> Dispatcher {
        let backup = databasePath.map {
            ServiceBackup(
                service: descriptor.name, database: database, databasePath: $0, extras: backupExtras.withLock { $0 },
                holds: backupHolds.withLock { $0 })
        }
        return Dispatcher(
            descriptor: descriptor, router: router, sessions: sessions, events: database, health: health,
            backup: backup, logger: logger)
    }

    /// A directory of files the database refers to, copied with it by `$srv.backup` (call
    /// before `dispatcher`).
    /// - Parameter hold: what the service's deletions in it wait on while a backup runs.
    public func backUpAlso(_ directory: String, hold: FileHold? = nil) {
        backupExtras.withLock { $0.append(directory) }
        if let hold { backupHolds.withLock { $0.append(hold) } }
    }

    /// The one-line reason a service with a damaged database stops with: the file and the fix.
    static func advice(for damaged: DamagedDatabase, service: String) -> String {
        var fix = "restore it from a backup (`logbook stack down`, then `logbook restore DIR`)"
        if StackConfiguration.rebuildable.contains(service) {
            fix += ", or rebuild it from the other services' events: `logbook stack rebuild \(service)`"
        }
        return "\(damaged.description); \(service) will not start on it: \(fix)"
    }

    /// Everything to run for this service: its server, its publisher's heartbeat, `extra`
    /// (consumers, fetch loops).
    public func services(dispatcher: Dispatcher, endpoint: String, extra: [any Service] = []) -> [any Service] {
        var services: [any Service] = [
            ServiceServer(dispatcher: dispatcher, settings: ServerSettings(endpoint: endpoint, curve: curve), logger: logger),
            IdempotencyJanitor(writer: database, logger: logger),
        ]
        if let publisher { services.append(publisher) }
        services.append(contentsOf: extra)
        return services
    }

    /// A consumer of another service's events, applied to this service's database. Its
    /// progress shows in `$srv.info`; with `feedsReplies` (a projection users read), replies
    /// carry `freshness` while it is behind. `types`: the event-type prefixes the handler
    /// acts on (nil: all); events of other types cost no transaction (DatabaseEventSink).
    public func consumer(
        of producer: String, configuration: StackConfiguration, feedsReplies: Bool = false, types: [String]? = nil,
        handler: @escaping @Sendable (Database, Event) throws -> Void
    ) throws -> EventConsumer {
        try consumer(
            of: producer, configuration: configuration, feedsReplies: feedsReplies, types: types,
            batch: { db, events in for event in events { try handler(db, event) } })
    }

    /// The same with a handler given each batch whole (`DatabaseEventSink(batch:)`), and
    /// optionally one for a catch-up's backlog (`DatabaseEventSink.Backlog`).
    @_disfavoredOverload
    public func consumer(
        of producer: String, configuration: StackConfiguration, feedsReplies: Bool = false, types: [String]? = nil,
        batch: @escaping @Sendable (Database, [Event]) throws -> Void, backlog: DatabaseEventSink.Backlog? = nil
    ) throws -> EventConsumer {
        let client = try ServiceClient(
            service: producer, endpoint: configuration.endpoint(producer), settings: ClientSettings(configuration: configuration))
        let consumer = EventConsumer(
            settings: .init(
                producer: producer, eventsEndpoint: configuration.eventsEndpoint(producer), curve: configuration.curve),
            producerRPC: client, sink: DatabaseEventSink(producer: producer, writer: database, types: types, batch: batch, backlog: backlog),
            feedsReplies: feedsReplies, stallAfter: try configuration.stallAfter(), logger: logger)
        health.register(consumer.progress)
        return consumer
    }
}

/// A service process's main thread.
///
/// An async top-level `main` runs on Swift's main executor, which on Linux is libdispatch's
/// `dispatch_main`: it ends the main thread with `pthread_exit` (a thread-specific
/// destructor then traps it in `sigsuspend`). glibc's `pthread_exit` unwinds the thread's
/// stack (a forced unwind, for cleanup handlers), and the unwinder binary-searches the
/// executable's 1.1 MB `.eh_frame_hdr` and reads `.eh_frame` for each frame. The kernel
/// maps 16 pages around every page a process touches, so those few lookups left 0.7-0.9 MiB
/// of unwind tables resident in every idle service for the rest of its life
/// (docs/performance.md, "The main thread that unwound"). `ProcessMain.run` starts `body`
/// on the global executor and parks the main thread without ending it, with the signals
/// blocked that libdispatch blocks on its own threads, so that a SIGTERM is left to
/// ServiceLifecycle's signal source (Tests/EndToEndTests/StackTests.swift sees each service
/// stop with status 0). Nothing in the services uses the main actor or the main queue,
/// which no longer run. (The `logbook` CLI keeps its async main: its supervisor runs on the
/// main thread, with a signal handler of its own.)
public enum ProcessMain {
    public static func run(_ body: @escaping @Sendable () async -> Void) -> Never {
        // The task first, as an async main enqueues its task before `dispatch_main`.
        Task.detached {
            await body()
            exit(0)
        }
        // libdispatch's `_dispatch_sigmask`: every signal but those a fault raises in the
        // thread that faulted (and SIGPIPE and SIGPROF), which must stay deliverable.
        var blocked = sigset_t()
        sigfillset(&blocked)
        for signal in [SIGILL, SIGTRAP, SIGFPE, SIGBUS, SIGSEGV, SIGSYS, SIGPIPE, SIGPROF] {
            sigdelset(&blocked, signal)
        }
        pthread_sigmask(SIG_BLOCK, &blocked, nil)
        while true { pause() }
    }
}

public enum ServiceMain {
    /// A service's main: `ProcessMain.run { await ServiceMain.run(RecordsService.self) }`.
    public static func run<S: LogbookService>(_ service: S.Type) async {
        await run(S.name) { configuration, logger in try S.services(configuration: configuration, logger: logger) }
    }

    /// Reads the stack configuration, sets up logging, builds the service and runs it until
    /// SIGTERM or SIGINT. Exits non-zero with a one-line reason if it cannot start.
    /// A service takes no arguments but `--version` and `--help`; anything else is refused
    /// (exit 2) rather than starting a service the caller did not mean to start.
    /// `otherUsage` adds lines to `--help` for an executable that reads more arguments first.
    public static func run(
        _ name: String, otherUsage: [String] = [], build: (StackConfiguration, Logger) async throws -> [any Service]
    ) async {
        answerArguments(name, Array(CommandLine.arguments.dropFirst()), otherUsage: otherUsage)
        // Everything a service creates under the stack's directory (databases, WAL, photos,
        // sockets, the key files) is its owner's alone.
        umask(0o077)
        do {
            let configuration = try StackConfiguration.load(createKeys: true)
            guard let stackKey = configuration.stackKey else {
                throw ConfigurationError("no stack key: \(StackKeys.setting) is empty and no \(StackKeys.keyFileName) was made")
            }
            // Before any dispatcher exists: every one in this process checks members by it.
            StackKeys.setProcessKey(stackKey)
            let logger = bootstrapLogging(name, level: configuration.logLevel)
            let services = try await build(configuration, logger)
            let group = ServiceGroup(
                configuration: .init(
                    services: services.map { .init(service: $0) },
                    gracefulShutdownSignals: [.sigterm, .sigint],
                    logger: logger))
            try await group.run()
        } catch {
            FileHandle.standardError.write(Data("\(name): cannot start: \(error)\n".utf8))
            exit(1)
        }
    }

    /// `--version` and `--help` answer and exit 0; no argument returns; any other exits 2.
    static func answerArguments(_ name: String, _ arguments: [String], otherUsage: [String]) {
        func say(_ text: String, to handle: FileHandle = .standardOutput) { handle.write(Data((text + "\n").utf8)) }
        switch arguments {
        case []:
            return
        case ["--version"]:
            say("\(name) \(LogbookVersion.current)")
            exit(0)
        case ["--help"], ["-h"]:
            say(
                ([
                    "USAGE: \(name)",
                    "",
                    "The Logbook \(name) process. It takes no arguments: it reads the stack's configuration",
                    "from the environment and logbook.conf (LOGBOOK_HOME, default ~/.local/share/logbook;",
                    "LOGBOOK_CONFIG; see docs/operations.md), listens, and runs until SIGTERM or SIGINT.",
                    "`logbook stack up`, systemd or Kubernetes start it; by hand, `logbook stack up` is",
                    "what you want.",
                ] + (otherUsage.isEmpty ? [] : ["", "OTHER USES (each does its one thing and exits):"] + otherUsage) + [
                    "",
                    "OPTIONS:",
                    "  --version   Print the version and exit.",
                    "  -h, --help  Show this help and exit.",
                ]).joined(separator: "\n"))
            exit(0)
        default:
            say(
                "\(name): unknown argument '\(arguments[0])'; a service takes no arguments (see \(name) --help)",
                to: .standardError)
            exit(2)
        }
    }

    public static func bootstrapLogging(_ label: String, level: String) -> Logger {
        let parsed = Logger.Level(rawValue: level) ?? .info
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = parsed
            return handler
        }
        return Logger(label: label)
    }
}

/// Keeps the idempotency log from growing forever: once an hour, keys older than the
/// retention (30 days) are forgotten. A request replayed after that is a new request.
public struct IdempotencyJanitor: Service {
    public static let retention: TimeInterval = 30 * 86_400
    let writer: any DatabaseWriter
    let logger: Logger
    let interval: Duration

    public init(writer: any DatabaseWriter, logger: Logger, interval: Duration = .seconds(3600)) {
        self.writer = writer
        self.logger = logger
        self.interval = interval
    }

    public func run() async throws {
        try? await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do {
                    let cutoff = Date().addingTimeInterval(-Self.retention)
                    let pruned = try await writer.write { try Idempotency.prune($0, before: cutoff) }
                    if pruned > 0 { logger.info("idempotency keys pruned", metadata: ["idempotency.pruned": "\(pruned)"]) }
                } catch {
                    logger.warning("pruning idempotency keys failed", metadata: ["error.detail": "\(error)"])
                }
                try await Task.sleep(for: interval)
            }
        }
    }
}
