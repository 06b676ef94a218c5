// Events: at-least-once delivery, exactly-once effect (docs/protocol.md, "Events").
//
// Producer: every change writes its event into the outbox in the same transaction; after
// each commit `EventPublisher` sends the new rows on a PUB socket as [type, event JSON],
// and every `heartbeatInterval` sends ["$hb", {"seq": last}] so a subscriber that lost the
// tail of the stream notices.
// Consumer: `EventConsumer` reads the SUB socket, applies events strictly in sequence
// through an `EventSink` (which stores its position with what it changed), skips
// duplicates, and on start-up, on a gap or on a heartbeat ahead of it asks the producer
// `events.since {after, limit}` for what it missed (the ZeroMQ Guide's Clone pattern).
import Foundation
import GRDB
import Logging
import ServiceLifecycle
import Storage
import Synchronization
import Wire
import ZMQ

public final class EventPublisher: Service, Sendable {
    public let endpoint: String
    let service: String
    let heartbeatInterval: Duration
    let logger: Logger
    private let pump: SocketPump
    private let lastPublished: Mutex<Int64>
    private let zap: ZAPHandler.Registration?
    private let health: ServiceHealth?
    private let failing = Atomic<Bool>(false)
    private let history: String?

    /// - Parameters:
    ///   - reader: read once, for the last sequence already in the outbox; after that the
    ///     rows to send are read on the writer after each commit (`publishPending`).
    ///   - curve: when set, the PUB is a CURVE server taking only subscribers on the
    ///     allow-list.
    public init(
        service: String, endpoint: String, reader: any DatabaseReader, heartbeatInterval: Duration = .milliseconds(200),
        curve: CurveSettings? = nil, health: ServiceHealth? = nil, logger: Logger
    ) throws {
        self.service = service
        self.health = health
        self.endpoint = endpoint
        self.heartbeatInterval = heartbeatInterval
        self.logger = logger
        try StackKeys.requireCurve(toBind: endpoint, curve: curve, name: "\(service) events")
        try ServiceServer.prepareIPC(endpoint)
        let zap = try curve?.registerServer(name: "\(service).events", logger: logger)
        self.zap = zap
        do {
            pump = try SocketPump(
                name: "pub.\(service)",
                setup: {
                    let socket = try Socket(.pub)
                    if let curve, let zap { try curve.configureServer(socket, domain: zap.domain) }
                    try socket.set(.sendHighWaterMark(100_000))
                    try socket.bind(endpoint)
                    return socket
                },
                onEvent: { _ in })
        } catch {
            zap?.cancel()
            throw error
        }
        // Events committed before this start are not re-sent: consumers replay them.
        let (last, history) = try reader.read { (try Outbox.lastSequence($0), try Outbox.history($0)) }
        lastPublished = Mutex(last)
        // (a history changes only with the database file, which a running service keeps)
        self.history = history?.id
    }

    deinit {
        pump.stop()
        zap?.cancel()
    }

    /// Sends every outbox row not yet published. Called after each commit, on the commit
    /// queue, with the writer connection (GroupCommitter's `afterCommit`).
    public func publishPending(_ db: Database) {
        do {
            while true {
                let after = lastPublished.withLock { $0 }
                let rows = try Outbox.encodedSince(db, after: after, limit: 1000)
                guard let last = rows.last else { return }
                for row in rows {
                    pump.send([Data(row.type.utf8), row.json])
                }
                lastPublished.withLock { $0 = max($0, last.seq) }
                if rows.count < 1000 { break }
            }
            if failing.exchange(false, ordering: .relaxed) {
                health?.report("publisher", nil)
                logger.notice("publishing events works again")
            }
        } catch {
            // An outbox that cannot be read (damaged pages): consumers stop getting events.
            // Logged once per episode at error level; the service reports itself degraded.
            if !failing.exchange(true, ordering: .relaxed) {
                logger.error("publishing events failed: the outbox cannot be read", metadata: ["error.detail": "\(error)"])
            }
            health?.report("publisher", "the event outbox cannot be read (\(EventConsumer.describe(error)))")
        }
    }

    /// Sends heartbeats until shutdown.
    public func run() async throws {
        while !Task.isCancelledOrShuttingDown {
            let seq = lastPublished.withLock { $0 }
            pump.send([
                Data(EventHeartbeat.topic.utf8),
                try WireCoding.encode(EventHeartbeat(service: service, seq: seq, history: history)),
            ])
            try? await Task.sleep(for: heartbeatInterval)
        }
        pump.stop()
    }
}

extension Task where Success == Never, Failure == Never {
    static var isCancelledOrShuttingDown: Bool { Task.isCancelled || Task.isShuttingDownGracefully }
}

public struct EventHeartbeat: Codable, Sendable {
    public static let topic = "$hb"
    public var service: String
    public var seq: Int64
    /// The outbox's history id (`OutboxHistory`): a consumer that knows another one asks
    /// `events.since` at once, which says where the two part.
    public var history: String?
}

/// Where a consumer applies events. Implementations store their position with the effect.
public protocol EventSink: Sendable {
    /// The last sequence applied (0 before any), or nil to start from the producer's
    /// current position without replaying history (an in-memory cache).
    func position() async throws -> Int64?
    /// Applies events in sequence order, skipping any at or below its position.
    func apply(_ events: [Event]) async throws
    /// Moves the position back to `seq` (the producer was restored to an earlier state).
    func rewind(to seq: Int64) async throws
    /// Whether events of this type change anything here. The consumer reads only the
    /// sequence number of the others (it still needs it to notice gaps), not their payload.
    func handles(_ type: String) -> Bool
    /// Applies events of a backlog: the events of a catch-up from its first full
    /// `events.since` page on (more was known to follow at once), its short last page
    /// included. A sink may leave state derived from them out of date until `settle`, when
    /// the same work for many pages costs less done once.
    func applyBacklog(_ events: [Event]) async throws
    /// Brings up to date what backlog pages left behind. Called whenever a catch-up ends
    /// (nothing more to read), so nothing stays behind once the consumer has caught up.
    func settle() async throws
    /// For a sink without history (`position()` nil): the consumer starts after `seq`, the
    /// producer's position when it first answered. Whatever the sink learned before then
    /// (an answer cached while the producer could not be reached yet) may predate events
    /// up to `seq`, which it will never see.
    func started(after seq: Int64) async throws
    /// The producer's outbox history the position counts in (`OutboxHistory`; nil: none
    /// known, or a sink that keeps no position).
    func history() async throws -> String?
    /// Takes `history` as the producer's, moving the position back to `seq` when given (the
    /// producer's history changed: the numbers after `seq` are new events), in one write.
    func adopt(history: String, rewindTo seq: Int64?) async throws
}

extension EventSink {
    public func rewind(to seq: Int64) async throws {}
    public func handles(_ type: String) -> Bool { true }
    public func applyBacklog(_ events: [Event]) async throws { try await apply(events) }
    public func settle() async throws {}
    public func started(after seq: Int64) async throws {}
    public func history() async throws -> String? { nil }
    public func adopt(history: String, rewindTo seq: Int64?) async throws {
        if let seq { try await rewind(to: seq) }
    }
}

/// The usual sink: applies a batch of events in one transaction of the consumer's own
/// database, with the checkpoint, so a crash never loses or double-applies one.
///
/// With `types`, events of other types are not given to the handler (it would ignore
/// them) and a batch made only of such events writes nothing: the position moves on in
/// memory and is stored with the next batch that changes something, or once it is
/// `lazyCheckpointLimit` events ahead. A crash before that replays only events that
/// change nothing here, so the effect is still exactly once.
///
/// With `backlog`, a catch-up's backlog (`EventSink.applyBacklog`) goes to its handler
/// instead, and its `settle` runs in a transaction of its own when the catch-up ends
/// (`EventSink.settle`). Until
/// then the writer folds its WAL back into the database less often (`backlogWALPages`).
public struct DatabaseEventSink: EventSink {
    public let producer: String
    public let writer: any DatabaseWriter
    /// Applies, inside the batch's transaction, the events past the checkpoint that `types`
    /// lets through, in sequence order.
    public let batchHandler: @Sendable (Database, [Event]) throws -> Void
    /// Event-type prefixes the handler acts on; nil: every type.
    public let types: [String]?
    /// How backlog pages are applied and settled; nil: like any other batch.
    public let backlog: Backlog?
    /// How far the stored checkpoint may trail events that changed nothing here.
    public static let lazyCheckpointLimit: Int64 = 1_000
    /// The WAL pages after which a commit folds the WAL back into the database (SQLite's
    /// `wal_autocheckpoint`) while a backlog is applied, instead of SQLite's 1,000. A
    /// backlog page spread over many users dirties most pages of its indexes, and each page
    /// was copied back into the database after nearly every page's commit; folding them
    /// back every 10,000 copies each page once for several commits. `logbook-bench rebuild
    /// --size 50000` replayed 5% more events per second, in alternated runs
    /// (docs/performance.md, "Rebuild at a million"). Each commit still syncs the WAL:
    /// durability does not change. The WAL file grows meanwhile (to 83 MB in a rebuild at
    /// 1,000,000 with transactions of 20,000), and is not cut back while the backlog lasts
    /// (`journal_size_limit` -1); the settle sets the limit again
    /// (`ServiceDatabase.walSizeLimit`), and the first write that finds the WAL folded back
    /// into the database (the settle's own commit folds it) cuts the file back.
    public static let backlogWALPages = 10_000
    /// SQLite's default, set again once the backlog is settled.
    public static let defaultWALPages = 1_000
    // A PRAGMA takes no bound parameters; the values are Ints, never text.
    static let raiseWALPages =
        "PRAGMA wal_autocheckpoint = " + String(backlogWALPages) + "; PRAGMA journal_size_limit = -1"
    static let restoreWALPages =
        "PRAGMA wal_autocheckpoint = " + String(defaultWALPages) + "; PRAGMA journal_size_limit = "
        + String(ServiceDatabase.walSizeLimit)
    /// While a backlog is settled, the writer reads the database file through a memory map
    /// of up to this many bytes (SQLite's `mmap_size`) instead of a `pread` per page. A
    /// settle reads back every row the backlog left behind, one user's or vehicle's at a
    /// time, and at 1,000,000 fill-ups and catches those rows share their pages with a
    /// thousand other users', so each page was copied out of the kernel's cache once per
    /// user on it: a third of the settle was the kernel's copies, and the settle a fifth of
    /// the rebuild (docs/performance.md, "The settle through a memory map"). The size is the
    /// most SQLite maps as built by default on Linux (`SQLITE_MAX_MMAP_SIZE`, Debian's build
    /// included), just under 2 GiB; pages past it are read the usual way. The map lasts as
    /// long as the settle: live batches and backlog pages read as before, and the process
    /// does not keep the file's pages it touched mapped (they would count in its RSS).
    public static let settleMapBytes: Int64 = 0x7fff_0000
    static let mapForSettle = "PRAGMA mmap_size = " + String(settleMapBytes)
    static let unmapAfterSettle = "PRAGMA mmap_size = 0"
    private let skipped = SkippedPosition()
    private let unsettled = Unsettled()

    /// A handler for a catch-up's backlog that may leave derived state behind, and the
    /// work that brings it up to date. Whatever `batch` leaves behind must be recorded in
    /// the database, in the batch's transaction: `settle` may run in another process (the
    /// first catch-up after a crash settles whatever the last one left), and a live batch
    /// (the plain handler) may come first, so the plain handler must not trust state a
    /// backlog batch left behind either.
    public struct Backlog: Sendable {
        public var batch: @Sendable (Database, [Event]) throws -> Void
        public var settle: @Sendable (Database) throws -> Void
        /// The other sinks of this database whose backlogs leave state behind that the same
        /// `settle` brings up to date (nil: none).
        public var group: BacklogGroup?

        public init(
            batch: @escaping @Sendable (Database, [Event]) throws -> Void,
            settle: @escaping @Sendable (Database) throws -> Void, group: BacklogGroup? = nil
        ) {
            self.batch = batch
            self.settle = settle
            self.group = group
        }
    }

    /// A handler called once per event.
    public init(
        producer: String, writer: any DatabaseWriter, types: [String]? = nil,
        handler: @escaping @Sendable (Database, Event) throws -> Void
    ) {
        self.init(producer: producer, writer: writer, types: types) { db, events in
            for event in events { try handler(db, event) }
        }
    }

    /// A handler given the whole batch at once (one call per transaction): it can gather
    /// what the events add up to and write each aggregate once. (Disfavoured so that a
    /// trailing closure still means the per-event handler.)
    @_disfavoredOverload
    public init(
        producer: String, writer: any DatabaseWriter, types: [String]? = nil,
        batch: @escaping @Sendable (Database, [Event]) throws -> Void, backlog: Backlog? = nil
    ) {
        self.producer = producer
        self.writer = writer
        self.types = types
        self.batchHandler = batch
        self.backlog = backlog
    }

    /// Whether the handler acts on events of this type.
    public func handles(_ type: String) -> Bool {
        guard let types else { return true }
        return types.contains { type.hasPrefix($0) }
    }

    public func position() async throws -> Int64? {
        let stored = try await writer.read { try Checkpoint.get($0, producer: producer) }
        return skipped.position(stored: stored)
    }

    public func rewind(to seq: Int64) async throws {
        let producer = self.producer
        try await writer.write { try Checkpoint.set($0, producer: producer, seq: seq) }
        skipped.reset(stored: seq)
    }

    public func history() async throws -> String? {
        let producer = self.producer
        return try await writer.read { try Checkpoint.history($0, producer: producer) }
    }

    public func adopt(history: String, rewindTo seq: Int64?) async throws {
        let producer = self.producer
        let moved = try await writer.write { db -> Int64 in
            let stored = try Checkpoint.get(db, producer: producer)
            let moved = seq.map { min($0, stored) } ?? stored
            try Checkpoint.set(db, producer: producer, seq: moved, history: history)
            return moved
        }
        if seq != nil { skipped.reset(stored: moved) }
    }

    public func apply(_ events: [Event]) async throws {
        try await apply(events, handler: batchHandler)
    }

    public func applyBacklog(_ events: [Event]) async throws {
        guard let backlog else { return try await apply(events) }
        // Marked before the transaction: one that fails may still have been committed.
        unsettled.set(true)
        backlog.group?.enter(ObjectIdentifier(unsettled))
        try await apply(events, handler: backlog.batch, walPages: Self.raiseWALPages)
    }

    /// Runs the backlog's `settle` when this sink may have left something behind: after a
    /// backlog batch, and once per process (an earlier one may have stopped mid-backlog).
    /// When another sink of its group is still in the middle of a backlog, it leaves the
    /// settling to that one: the other's settle, when its own catch-up ends, covers what
    /// both left behind, and settling now would only be done again after the other's next
    /// pages.
    public func settle() async throws {
        guard let backlog, unsettled.get() else { return }
        if let group = backlog.group, !group.leave(ObjectIdentifier(unsettled)) {
            unsettled.set(false)
            return
        }
        try await writer.writeWithoutTransaction { db in
            try db.execute(sql: Self.mapForSettle)
            defer { try? db.execute(sql: Self.unmapAfterSettle) }
            try db.inTransaction {
                try backlog.settle(db)
                // before the commit, so this one already folds the WAL back at the default
                try db.execute(sql: Self.restoreWALPages)
                return .commit
            }
        }
        unsettled.set(false)
    }

    /// `walPages`: a `wal_autocheckpoint` to set on the writer inside the transaction.
    private func apply(
        _ events: [Event], handler: @escaping @Sendable (Database, [Event]) throws -> Void, walPages: String? = nil
    ) async throws {
        guard let last = events.map(\.seq).max() else { return }
        if !events.contains(where: { handles($0.type) }), skipped.skip(to: last, limit: Self.lazyCheckpointLimit) {
            return
        }
        let stored = try await writer.write { db -> Int64 in
            if let walPages { try db.execute(sql: walPages) }
            var current = try Checkpoint.get(db, producer: producer)
            // `events.since` is the authority on order: apply whatever follows the checkpoint.
            var due: [Event] = []
            due.reserveCapacity(events.count)
            for event in events.sorted(by: { $0.seq < $1.seq }) where event.seq > current {
                if handles(event.type) { due.append(event) }
                current = event.seq
            }
            if !due.isEmpty { try handler(db, due) }
            try Checkpoint.set(db, producer: producer, seq: current)
            return current
        }
        skipped.reset(stored: stored)
    }
}

/// The sinks of one database whose backlogs leave behind state that one `settle` brings up
/// to date (analytics' consumers of records and weather-fetcher: catch counters and vehicle
/// aggregates). A rebuild replays both producers at once: without a group, the one that
/// ends first settles everything left behind so far, and the other's later pages leave most
/// of it behind again (docs/performance.md, "Rebuild, a last round").
public final class BacklogGroup: Sendable {
    /// The members in the middle of a backlog: a backlog page applied, not settled since.
    private let behind = Mutex<Set<ObjectIdentifier>>([])

    public init() {}

    func enter(_ member: ObjectIdentifier) { behind.withLock { _ = $0.insert(member) } }

    /// `member` is done with its backlog; true when no other member is in the middle of one.
    func leave(_ member: ObjectIdentifier) -> Bool {
        behind.withLock { members in
            members.remove(member)
            return members.isEmpty
        }
    }
}

/// Whether a `DatabaseEventSink`'s backlog may need settling (true until it first settles).
private final class Unsettled: Sendable {
    private let value = Mutex(true)
    func get() -> Bool { value.withLock { $0 } }
    func set(_ newValue: Bool) { value.withLock { $0 = newValue } }
}

/// A `DatabaseEventSink`'s position held in memory past its stored checkpoint.
private final class SkippedPosition: Sendable {
    private struct State {
        /// The last checkpoint this process stored (nil: not known yet).
        var stored: Int64?
        /// Events up to here changed nothing and are not in the stored checkpoint yet.
        var skipped: Int64 = 0
    }

    private let state = Mutex(State())

    func position(stored: Int64) -> Int64 {
        state.withLock { state in
            if state.stored == nil { state.stored = stored }
            return max(stored, state.skipped)
        }
    }

    /// Moves the in-memory position to `seq` unless that leaves the stored checkpoint more
    /// than `limit` behind; false: store it now.
    func skip(to seq: Int64, limit: Int64) -> Bool {
        state.withLock { state in
            guard let stored = state.stored, seq - stored <= limit else { return false }
            state.skipped = max(state.skipped, seq)
            return true
        }
    }

    func reset(stored: Int64) {
        state.withLock { $0 = State(stored: stored, skipped: 0) }
    }
}

public final class EventConsumer: Service, Sendable {
    public struct Settings: Sendable {
        public var producer: String
        /// The producer's PUB endpoint.
        public var eventsEndpoint: String
        /// How often to ask `events.since` even when nothing looks missing.
        public var pollInterval: Duration
        /// The most events a live batch applies in one transaction.
        public var batchSize: Int
        public static let defaultBatchSize = 500
        /// Events per `events.since` page while catching up (a rebuild from 0 included); the
        /// most a producer serves (`EventsSince.maxLimit`). Fewer, larger pages cost the
        /// producer and the wire less: `logbook-bench rebuild` replayed 13–16k events/s with
        /// pages of 500, 20–22k with 2,000 and 24–28k with 5,000 at 50,000 fill-ups
        /// (docs/performance.md, "A rebuild through the wire").
        public var catchUpPageSize: Int
        public static let defaultCatchUpPageSize = EventsSince.maxLimit
        /// The most events a catch-up applies in one transaction: consecutive full pages are
        /// gathered until they hold this many. A transaction writes every database page it
        /// dirties once, and a backlog spread over many users dirties a page of each
        /// user-keyed index per user whatever its size, so the same index pages are written
        /// again by every transaction: at 1,000,000 fill-ups and catches `logbook-bench
        /// rebuild` took 95–99 s with transactions of 5,000 events and 72–80 s with 20,000;
        /// 40,000 took no less (docs/performance.md, "Backlog transactions of 20,000"). The
        /// events of a transaction are held decoded twice over (the one applied and the next
        /// one, gathered meanwhile): memory figures are in the same paragraph. The consumer
        /// gives it back when the catch-up ends (`FreedMemory`).
        public var catchUpTransactionSize: Int
        public static let defaultCatchUpTransactionSize = 20_000
        /// How long one `events.since` call may take.
        public var rpcTimeout: Duration
        /// When set, the SUB is a CURVE client with this host's pair, expecting the
        /// producer's public key.
        public var curve: CurveSettings?

        public init(
            producer: String, eventsEndpoint: String, pollInterval: Duration = .seconds(5),
            batchSize: Int = Settings.defaultBatchSize, catchUpPageSize: Int = Settings.defaultCatchUpPageSize,
            catchUpTransactionSize: Int = Settings.defaultCatchUpTransactionSize,
            rpcTimeout: Duration = .seconds(5), curve: CurveSettings? = nil
        ) {
            self.producer = producer
            self.eventsEndpoint = eventsEndpoint
            self.pollInterval = pollInterval
            self.batchSize = batchSize
            self.catchUpPageSize = catchUpPageSize
            self.catchUpTransactionSize = catchUpTransactionSize
            self.rpcTimeout = rpcTimeout
            self.curve = curve
        }
    }

    let settings: Settings
    let producerRPC: any Transport
    let sink: any EventSink
    let logger: Logger
    /// How far it has got, for `$srv.info`/`$srv.stats` and reply freshness (Health.swift).
    public let progress: ConsumerProgress
    private let applied = Mutex<Int64>(-1)
    /// The producer's outbox history the position counts in, as far as this consumer knows.
    private let knownHistory = Mutex<String?>(nil)

    /// - Parameter feedsReplies: the sink is a projection that user-facing answers are
    ///   computed from; while it is behind, those answers carry `freshness`.
    public init(
        settings: Settings, producerRPC: any Transport, sink: any EventSink, feedsReplies: Bool = false,
        stallAfter: Duration = .seconds(10), logger: Logger
    ) {
        self.settings = settings
        self.producerRPC = producerRPC
        self.sink = sink
        progress = ConsumerProgress(producer: settings.producer, feedsReplies: feedsReplies, stallAfter: stallAfter)
        var logger = logger
        logger[metadataKey: "events.producer"] = "\(settings.producer)"
        self.logger = logger
    }

    /// The last sequence applied (-1 before the consumer started).
    public var position: Int64 { applied.withLock { $0 } }

    private enum Input: Sendable {
        /// Events are waiting in `arrived`.
        case events
        case heartbeat(Int64, history: String?)
        case tick
    }

    /// Events received and not yet taken by the consumer's loop, in arrival order. The
    /// socket's thread appends; the loop takes them all at once, so a burst (one group
    /// commit's events) is applied in one transaction with one checkpoint.
    private final class Arrivals: Sendable {
        static let limit = 100_000
        private let state = Mutex<[Event]>([])

        /// Appends; true when the list was empty (the loop needs a wake-up).
        func append(_ event: Event) -> Bool {
            state.withLock { events in
                // Beyond the limit the oldest go: the gap is noticed and replayed.
                if events.count >= Self.limit { events.removeFirst(events.count / 2) }
                events.append(event)
                return events.count == 1
            }
        }

        func take() -> [Event] {
            state.withLock { events in
                defer { events.removeAll(keepingCapacity: true) }
                return events
            }
        }
    }

    public func run() async throws {
        let (inputs, continuation) = AsyncStream.makeStream(of: Input.self, bufferingPolicy: .bufferingNewest(100_000))
        let arrivals = Arrivals()
        let endpoint = settings.eventsEndpoint
        let logger = self.logger
        let curve = settings.curve
        let producer = settings.producer
        let pump = try SocketPump(
            name: "sub.\(settings.producer)",
            setup: {
                let socket = try Socket(.sub)
                try curve?.configureClient(socket, service: producer)
                try socket.set(.receiveHighWaterMark(100_000))
                try socket.set(.maxMessageSize(16 * 1024 * 1024))
                try socket.set(.subscribe(Data()))
                try socket.connect(endpoint)
                return socket
            },
            onEvent: { [sink] event in
                guard case .message(let frames) = event, frames.count == 2 else { return }
                if frames[0] == Data(EventHeartbeat.topic.utf8) {
                    if let hb = try? WireCoding.decode(EventHeartbeat.self, from: frames[1]) {
                        continuation.yield(.heartbeat(hb.seq, history: hb.history))
                    }
                } else if let type = String(validating: frames[0], as: UTF8.self), !sink.handles(type),
                    let seq = EnvelopeScan.members(frames[1], ["seq"])["seq"].flatMap({ Int64(String(decoding: $0, as: UTF8.self)) })
                {
                    // An event this sink does not act on: only its place in the sequence matters.
                    let placeholder = Event(seq: seq, type: type, userId: nil, at: Date(timeIntervalSince1970: 0), data: .null)
                    if arrivals.append(placeholder) { continuation.yield(.events) }
                } else if let event = try? WireCoding.decode(Event.self, from: frames[1]) {
                    if arrivals.append(event) { continuation.yield(.events) }
                } else {
                    logger.warning("undecodable event dropped; it will be replayed")
                }
            })
        defer { pump.stop() }

        // Shutdown cancels the work below, so a call to a producer that is down does not
        // hold the process for its whole timeout.
        do {
            try await cancelWhenGracefulShutdown {
                try await self.consume(inputs, arrivals: arrivals, wake: continuation)
            }
        } catch is CancellationError {
            // Stopping.
        }
    }

    private func consume(
        _ inputs: AsyncStream<Input>, arrivals: Arrivals, wake continuation: AsyncStream<Input>.Continuation
    ) async throws {
        var position = try await start()
        progress.markReady()
        var stalledLogged = false
        let pollInterval = settings.pollInterval
        try await withThrowingDiscardingTaskGroup { group in
            group.addTask {
                while !Task.isCancelled {
                    try await Task.sleep(for: pollInterval)
                    continuation.yield(.tick)
                }
            }
            for await input in inputs {
                if Task.isCancelled { break }
                do {
                    switch input {
                    case .events:
                        position = try await applyArrived(arrivals.take(), from: position)
                    case .heartbeat(let seq, let history):
                        progress.heard(last: seq)
                        // (another history: the catch-up's first page says where the two part)
                        let changed = history.map { id in knownHistory.withLock { $0.map { $0 != id } ?? false } } ?? false
                        if seq > position || changed { position = try await catchUp(from: position) }
                    case .tick:
                        position = try await catchUp(from: position)
                    }
                    recordApplied(position)
                    if stalledLogged {
                        logger.notice("consumer recovered", metadata: ["events.position": "\(position)"])
                        stalledLogged = false
                    }
                } catch is CancellationError {
                    break
                } catch {
                    // The producer is unreachable or a projection failed (a full disk, a
                    // damaged producer): keep the position; the next heartbeat or tick tries
                    // again. Logged once when it starts and once more, at error level, when it
                    // has lasted past the stall limit: not on every retry.
                    if progress.failed(Self.describe(error)) {
                        logger.warning("applying events failed; will retry", metadata: ["error.detail": "\(error)"])
                    } else if !stalledLogged, let failing = progress.failingFor, failing > progress.stallAfter {
                        logger.error(
                            "consumer stalled: no progress for \(failing.components.seconds) s",
                            metadata: ["error.detail": "\(error)", "events.position": "\(position)"])
                        stalledLogged = true
                    }
                    if let stored = try? await sink.position() { position = stored }
                }
            }
            group.cancelAll()
        }
    }

    /// Applies what arrived live: the run that follows `position` without a gap, in
    /// batches of at most `batchSize` (each one transaction with its checkpoint); a gap
    /// (an event lost on the way) is filled by replaying from the producer. Duplicates and
    /// old events are skipped. Returns the new position.
    private func applyArrived(_ arrived: [Event], from position: Int64) async throws -> Int64 {
        var position = position
        var run: [Event] = []
        var gap = false
        for event in arrived.sorted(by: { $0.seq < $1.seq }) {
            if event.seq <= position + Int64(run.count) { continue }  // a duplicate or an old one
            if event.seq != position + Int64(run.count) + 1 {
                gap = true
                break
            }
            run.append(event)
        }
        var start = 0
        while start < run.count {
            let batch = Array(run[start..<min(run.count, start + max(1, settings.batchSize))])
            try await progress.working { try await sink.apply(batch) }
            position = batch.last!.seq
            recordApplied(position)
            start += batch.count
        }
        if gap { position = try await catchUp(from: position) }
        return position
    }

    /// The starting position: the sink's stored one (then catch up), or the producer's
    /// current one for sinks that keep no history.
    private func start() async throws -> Int64 {
        var waitLogged = false
        while !Task.isCancelled {
            do {
                if let stored = try await sink.position() {
                    recordApplied(stored)
                    let known = try await sink.history()
                    knownHistory.withLock { $0 = known }
                    let position = try await catchUp(from: stored)
                    recordApplied(position)
                    return position
                }
                // `last` is the producer's current position; the event that comes with it is
                // history this sink does not want.
                let answer = try await producerRPC.call(
                    "events.since", EventsSince(after: 0, limit: 1), as: EventsSinceResult.self,
                    options: CallOptions(timeout: settings.rpcTimeout))
                progress.heard(last: answer.last)
                knownHistory.withLock { $0 = answer.history?.id }
                try await sink.started(after: answer.last)
                recordApplied(answer.last)
                return answer.last
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                if progress.failed(Self.describe(error)) {
                    logger.warning("waiting for the producer", metadata: ["error.detail": "\(error)"])
                } else if !waitLogged, let failing = progress.failingFor, failing > progress.stallAfter {
                    logger.error(
                        "consumer cannot start: the producer has not answered for \(failing.components.seconds) s",
                        metadata: ["error.detail": "\(error)"])
                    waitLogged = true
                }
                try await Task.sleep(for: .milliseconds(500))
            }
        }
        throw CancellationError()
    }

    private func recordApplied(_ position: Int64) {
        applied.withLock { $0 = position }
        progress.applied(position)
    }

    /// A failure as a health line: its code and the producer, never user data.
    static func describe(_ error: any Error) -> String {
        if let error = error as? ServiceError { return "\(error.code.rawValue): \(error.message)" }
        if let error = error as? DatabaseError {
            return error.resultCode == .SQLITE_FULL ? "the disk is full" : "database error \(error.resultCode)"
        }
        return "\(type(of: error))"
    }

    /// Replays everything after `position` from the producer, then lets the sink settle
    /// what its backlog pages left behind; returns the new position. A catch-up that fails
    /// (the producer went away mid-way) settles too before the error is passed on: what it
    /// left behind, and what other sinks of its group left for it to settle
    /// (`BacklogGroup`), must not wait for the producer to come back.
    private func catchUp(from position: Int64) async throws -> Int64 {
        let caughtUp: Int64
        do {
            caughtUp = try await replay(from: position)
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            do {
                try await progress.working { try await sink.settle() }
            } catch {
                // Still unsettled: the next catch-up's end tries again.
                logger.warning("settling after a failed catch-up failed", metadata: ["error.detail": "\(error)"])
            }
            throw error
        }
        try await progress.working { try await sink.settle() }
        return caughtUp
    }

    /// A backlog (a transaction that gathered a full page, and every transaction after it
    /// in the same catch-up) goes to the sink with `applyBacklog`, a catch-up of one short
    /// page with `apply`, like any other events. A catch-up's last transaction can hold
    /// only its short last page (when the pages before it filled whole transactions);
    /// applied as plain events, it brought every user and vehicle it touched up to date
    /// one at a time before changing them (`settleFirst` in analytics), which in a rebuild
    /// was most of them: at 1,000,000 fill-ups and catches the last thousand events took
    /// about 8 s, before a settle of 5 s (docs/performance.md, "The last page of a
    /// catch-up"). As a backlog, it leaves them to that settle. The
    /// next transaction's pages are asked for while this one is applied: the producer reads
    /// and sends them, and this process reads them, while the sink's transaction runs, where
    /// each waited for the other (docs/performance.md, "A rebuild through the wire").
    private func replay(from position: Int64) async throws -> Int64 {
        var position = position
        var replayed = 0
        // A transaction of this catch-up was a backlog: the rest of it is one too.
        var inBacklog = false
        // The decoded events are freed, but the C allocator keeps what they took.
        defer { if replayed > settings.catchUpPageSize { FreedMemory.release() } }
        var pending = try await gather(after: position)
        while true {
            var batch = pending
            if batch.after != position {
                // Events reached the sink from elsewhere meanwhile (a duplicate delivery), so
                // the pages asked for ahead no longer begin at its position: ask from there.
                batch = try await gather(after: position)
            }
            let followed = try await follow(batch.history, from: position)
            if followed != position {
                position = followed
                pending = try await gather(after: position)
                continue
            }
            guard let ahead = batch.events.last?.seq else {
                if batch.last < position {
                    // The producer's history was rolled back (restored from a backup taken
                    // before this consumer's): the sequence numbers above `last` will be
                    // used again for new events, which must not be skipped as duplicates.
                    logger.error(
                        "producer's sequence is behind this consumer's checkpoint (was its database restored?); continuing from the producer's position",
                        metadata: ["events.position": "\(position)", "events.last": "\(batch.last)"])
                    try await sink.rewind(to: batch.last)
                    progress.reset(to: batch.last)
                    position = batch.last
                    applied.withLock { $0 = position }
                }
                return position
            }
            let more = batch.more
            inBacklog = inBacklog || batch.backlog
            async let next = more ? gather(after: ahead) : nil
            try await progress.working { [inBacklog] in
                if inBacklog { try await sink.applyBacklog(batch.events) } else { try await sink.apply(batch.events) }
            }
            replayed += batch.events.count
            position = try await sink.position() ?? ahead
            recordApplied(position)
            guard more, let following = try await next else { return position }
            pending = following
        }
    }

    /// Takes the producer's outbox history a page named (`OutboxHistory`). One this consumer
    /// knows changes nothing; the first it hears of is adopted; another one means the
    /// producer's database was made again or restored, and numbers it has used again would
    /// be skipped as duplicates: the position goes back to where the two histories part (or
    /// stays, when it is behind that), and the events after it are applied again (every
    /// handler is idempotent). Returns the position to go on from.
    private func follow(_ history: OutboxHistory?, from position: Int64) async throws -> Int64 {
        guard let history else { return position }
        let known = knownHistory.withLock { $0 }
        guard known != history.id else { return position }
        guard known != nil else {
            try await sink.adopt(history: history.id, rewindTo: nil)
            knownHistory.withLock { $0 = history.id }
            return position
        }
        let target = min(position, history.forkedAt)
        logger.error(
            "the producer's event history changed (its database was rebuilt or restored); applying its events again after \(target)",
            metadata: ["events.position": "\(position)", "events.forkedAt": "\(history.forkedAt)"])
        try await sink.adopt(history: history.id, rewindTo: target)
        knownHistory.withLock { $0 = history.id }
        // (a sink whose stored checkpoint trailed its position goes back to that)
        let moved = min(target, try await sink.position() ?? target)
        progress.reset(to: moved)
        applied.withLock { $0 = moved }
        return moved
    }

    /// The events of one catch-up transaction.
    private struct Gathered: Sendable {
        /// The position the pages were asked for after.
        var after: Int64
        var events: [Event]
        /// The producer's highest sequence number, from the last page.
        var last: Int64
        /// The last page was full: more may follow.
        var more: Bool
        /// A full page is among them: a backlog, which the sink may settle later.
        var backlog: Bool
        /// The producer's outbox history, as its first page named it.
        var history: OutboxHistory? = nil
    }

    /// Pages after `after`, asked for one after another until they hold
    /// `catchUpTransactionSize` events or one comes back short.
    private func gather(after: Int64) async throws -> Gathered {
        let pageSize = settings.catchUpPageSize
        var gathered = Gathered(after: after, events: [], last: after, more: false, backlog: false)
        var cursor = after
        repeat {
            let answer = try await page(after: cursor)
            progress.heard(last: answer.last)
            if gathered.history == nil { gathered.history = answer.history }
            // (a page from another history than the first's: the rest is asked again)
            if let history = answer.history, history != gathered.history { break }
            gathered.last = answer.last
            gathered.more = answer.events.count >= pageSize
            gathered.backlog = gathered.backlog || gathered.more
            let fresh = answer.events.filter { $0.seq > cursor }
            guard let end = fresh.last?.seq else { break }
            if gathered.events.isEmpty {
                gathered.events = fresh
                if gathered.more { gathered.events.reserveCapacity(settings.catchUpTransactionSize + pageSize) }
            } else {
                gathered.events.append(contentsOf: fresh)
            }
            cursor = end
        } while gathered.more && gathered.events.count < settings.catchUpTransactionSize
        return gathered
    }

    /// One `events.since` call: the page after `after`.
    private func page(after: Int64) async throws -> EventsSinceResult {
        try await producerRPC.call(
            "events.since", EventsSince(after: after, limit: settings.catchUpPageSize),
            options: CallOptions(timeout: settings.rpcTimeout), read: EventsSinceResult.read)
    }
}

/// Returns the memory a finished burst of work freed to the system. glibc's allocator keeps
/// freed memory for the process's next allocations, so a service that replayed its history
/// would otherwise hold the peak of that replay for the rest of its life.
/// (`malloc_trim` is looked up, not called by name: Swift's Glibc module leaves malloc.h out.)
enum FreedMemory {
    static func release() {
        #if canImport(Glibc)
            // RTLD_DEFAULT: the process's own symbols, glibc's among them.
            guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") else { return }
            let trim = unsafeBitCast(symbol, to: (@convention(c) (Int) -> Int32).self)
            _ = trim(0)
        #endif
    }
}
