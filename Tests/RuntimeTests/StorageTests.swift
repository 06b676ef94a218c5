// Group commit, idempotency and the outbox, through the real dispatcher in process.
import Foundation
import GRDB
import Logging
import Runtime
import Storage
import Synchronization
import Testing
import Wire

struct InProcess {
    let host: ServiceHost
    let transport: InProcessTransport

    init(path: String? = nil) throws {
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        host = try ServiceHost(
            descriptor: ServiceDescriptor(name: "test"), database: DatabaseSettings(path: path),
            migrator: TestService.migrator, eventsEndpoint: nil, logger: logger)
        transport = InProcessTransport(host.dispatcher(router: TestService.router(host: host), sessions: FakeSessions()))
    }

    func count(_ table: String) throws -> Int {
        try host.database.read { db in
            switch table {
            case "note": try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM note") ?? -1
            case "outbox": try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM outbox") ?? -1
            default: -1
            }
        }
    }
}

@Suite struct StorageTests {
    @Test func concurrentWritesShareTransactionsAndAFailureStaysAlone() async throws {
        let service = try InProcess()
        let outcomes = await withTaskGroup(of: Bool.self) { group in
            for i in 0..<200 {
                group.addTask {
                    let text = i % 10 == 0 ? "" : "note \(i)"  // every tenth is invalid
                    return (try? await service.transport.call("test.note.add", NoteBody(text: text), as: NoteResult.self)) != nil
                }
            }
            var ok = 0
            for await success in group where success { ok += 1 }
            return ok
        }
        #expect(outcomes == 180)
        #expect(try service.count("note") == 180)
        #expect(try service.count("outbox") == 180, "one event per committed write, none for refused ones")
        let stats = service.host.commits.statistics
        #expect(stats.writes == 200)
        #expect(stats.transactions < 200, "writes waiting together were committed together (\(stats.transactions) transactions)")
    }

    /// One write at a time: each is a batch of one, committed without a savepoint, and one
    /// that fails is rolled back whole (no row, no event, no transaction committed for it).
    @Test func loneWritesCommitAloneAndAFailureLeavesNothing() async throws {
        let service = try InProcess()
        for i in 0..<20 {
            let text = i % 2 == 0 ? "" : "note \(i)"
            let result = try? await service.transport.call("test.note.add", NoteBody(text: text), as: NoteResult.self)
            #expect((result != nil) == (i % 2 == 1), "write \(i)")
        }
        #expect(try service.count("note") == 10)
        #expect(try service.count("outbox") == 10)
        let stats = service.host.commits.statistics
        #expect(stats.writes == 20 && stats.transactions == 10 && stats.largestBatch == 1)
    }

    @Test func idempotencyKeyReturnsTheFirstResult() async throws {
        let service = try InProcess()
        let options = CallOptions(idempotencyKey: "same")
        let first = try await service.transport.call("test.note.add", NoteBody(text: "a"), as: NoteResult.self, options: options)
        // Same body written with other key order and spacing is the same request.
        let replay = try await service.transport.reply(
            "test.note.add", body: try JSONValue.parse(#"{ "text" : "a" }"#), options: options)
        #expect(replay.result?["id"]?.stringValue == first.id)
        #expect(try service.count("note") == 1)
        let different = try await service.transport.reply("test.note.add", body: ["text": "b"], options: options)
        #expect(different.error?.code == .alreadyExists)
        #expect(different.error?.field == "idempotencyKey")
        #expect(try service.count("note") == 1)
        // An empty key is refused rather than silently ignored.
        let empty = try await service.transport.reply("test.note.add", body: ["text": "b"], options: CallOptions(idempotencyKey: ""))
        #expect(empty.error?.code == .invalidArgument)
        #expect(try service.count("note") == 1)
    }

    @Test func eventsSinceReplaysTheOutboxInOrder() async throws {
        let service = try InProcess()
        for i in 1...7 {
            _ = try await service.transport.call("test.note.add", NoteBody(text: "n\(i)"), as: NoteResult.self)
        }
        let all = try await service.transport.call("events.since", EventsSince(after: 0), as: EventsSinceResult.self)
        #expect(all.events.map(\.seq) == Array(1...7))
        #expect(all.last == 7)
        #expect(all.events.allSatisfy { $0.type == "note.created" })
        #expect(all.events[2].data["text"]?.stringValue == "n3")
        let page = try await service.transport.call("events.since", EventsSince(after: 3, limit: 2), as: EventsSinceResult.self)
        #expect(page.events.map(\.seq) == [4, 5])
        let bad = try await service.transport.reply("events.since", body: ["after": -1])
        #expect(bad.error?.code == .invalidArgument)
        #expect(bad.error?.field == "after")
    }

    @Test func aLateConsumerReplaysEverythingExactlyOnce() async throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        // A producer over real ZeroMQ that already wrote events before the consumer started.
        try await withNotes(5, text: "early ") { client, dir in
            // The consumer: its own database, a projection counting notes, a checkpoint.
            var migrator = DatabaseMigrator()
            migrator.registerMigration("v1") { db in
                try db.execute(sql: "CREATE TABLE seen (seq INTEGER PRIMARY KEY, text TEXT NOT NULL)")
            }
            let consumerDB = try ServiceDatabase.open(DatabaseSettings(path: scratch.path + "/consumer.sqlite"), migrator: migrator)
            let sink = DatabaseEventSink(producer: "test", writer: consumerDB) { db, event in
                // A plain INSERT: applying an event twice would fail the PRIMARY KEY.
                try db.execute(sql: "INSERT INTO seen (seq, text) VALUES (?, ?)", arguments: [event.seq, event.data["text"]?.stringValue ?? ""])
            }
            var logger = Logger(label: "consumer")
            logger.logLevel = .critical
            let consumer = EventConsumer(
                settings: .init(producer: "test", eventsEndpoint: "ipc://\(dir.path)/test.events.sock", pollInterval: .milliseconds(300)),
                producerRPC: client, sink: sink, logger: logger)
            let task = Task { try await consumer.run() }
            defer { task.cancel() }
            for i in 6...10 {
                _ = try await client.call("test.note.add", NoteBody(text: "live \(i)"), as: NoteResult.self)
            }
            // Duplicate deliveries: replay everything into the sink again.
            let again = try await client.call("events.since", EventsSince(after: 0), as: EventsSinceResult.self)
            try await sink.apply(again.events)
            for _ in 0..<200 where consumer.position < 10 {
                try await Task.sleep(for: .milliseconds(20))
            }
            #expect(consumer.position == 10)
            let seen = try await consumerDB.read { try Int64.fetchAll($0, sql: "SELECT seq FROM seen ORDER BY seq") }
            #expect(seen == Array(1...10))
            let checkpoint = try await consumerDB.read { try Checkpoint.get($0, producer: "test") }
            #expect(checkpoint == 10)
        }
    }

    /// A catch-up of many pages, each asked for while the one before it is applied, applies
    /// every event once and in order; so does one whose sink is moved ahead of the page
    /// asked for (a duplicate delivery applied meanwhile): the page that no longer follows
    /// on is dropped and asked for again from the sink's position.
    @Test func aPagedCatchUpAppliesEveryEventOnceInOrder() async throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        try await withNotes(23) { client, dir in
            for (name, ahead) in [("plain", false), ("moved-ahead", true)] {
                var migrator = DatabaseMigrator()
                migrator.registerMigration("v1") { db in
                    // AUTOINCREMENT-free rowid order is the order of application.
                    try db.execute(sql: "CREATE TABLE seen (n INTEGER PRIMARY KEY, seq INTEGER NOT NULL UNIQUE)")
                }
                let consumerDB = try ServiceDatabase.open(
                    DatabaseSettings(path: "\(scratch.path)/\(name).sqlite"), migrator: migrator)
                let pages = Mutex(0)
                let sink = DatabaseEventSink(producer: "test", writer: consumerDB) { db, events in
                    pages.withLock { $0 += 1 }
                    // UNIQUE: an event applied twice fails the batch.
                    for event in events {
                        try db.execute(sql: "INSERT INTO seen (seq) VALUES (?)", arguments: [event.seq])
                    }
                }
                if ahead {
                    // Events 1–4 applied before the consumer starts, 5–9 while it runs.
                    let early = try await client.call("events.since", EventsSince(after: 0, limit: 9), as: EventsSinceResult.self)
                    try await sink.apply(Array(early.events.prefix(4)))
                    Task { try await sink.apply(Array(early.events.dropFirst(4))) }
                }
                var logger = Logger(label: "consumer")
                logger.logLevel = .critical
                let consumer = EventConsumer(
                    settings: .init(
                        producer: "test", eventsEndpoint: "ipc://\(dir.path)/test.events.sock",
                        pollInterval: .milliseconds(300), catchUpPageSize: 3, catchUpTransactionSize: 3),
                    producerRPC: client, sink: sink, logger: logger)
                let task = Task { try await consumer.run() }
                for _ in 0..<300 where consumer.position < 23 {
                    try await Task.sleep(for: .milliseconds(20))
                }
                task.cancel()
                _ = await task.result
                #expect(consumer.position == 23, "\(name)")
                let seen = try await consumerDB.read { try Int64.fetchAll($0, sql: "SELECT seq FROM seen ORDER BY n") }
                #expect(seen == Array(1...23), "\(name): every event once, in order")
                // Pages of 3: at least 23 / 3 transactions for the plain run.
                if !ahead { #expect(pages.withLock { $0 } >= 8) }
            }
        }
    }
}

/// A catch-up gives its pages to the sink as a backlog from its first full page on, its
/// last, shorter one included (whether gathered with full pages into one transaction or in
/// a transaction of its own), then lets the sink settle, in a transaction of its own, also
/// when the last page was full (the page after it is empty). A catch-up of one short page
/// is plain events. A sink settles once per process and after backlog batches, not after
/// live ones.
@Suite struct BacklogCatchUpTests {
    /// What the sink's handlers saw, in order: "backlog 1-3", "live 25-26", "settle".
    final class Calls: Sendable {
        let log = Mutex<[String]>([])
        func add(_ entry: String) { log.withLock { $0.append(entry) } }
        var entries: [String] { log.withLock { $0 } }
    }

    /// The first sequence numbers of the pages still to fail.
    final class Failing: Sendable {
        let seqs: Mutex<Set<Int64>>
        init(_ seqs: Set<Int64>) { self.seqs = Mutex(seqs) }
        func take(_ seq: Int64) -> Bool { seqs.withLock { $0.remove(seq) != nil } }
    }

    /// - Parameters:
    ///   - name: the producer, and the prefix of its entries when it is not "test".
    ///   - failing: backlog pages that fail (their entry says so), once each.
    func sink(
        _ db: any DatabaseWriter, _ calls: Calls, name: String = "test", group: BacklogGroup? = nil,
        failing: Set<Int64> = []
    ) -> DatabaseEventSink {
        let failing = Failing(failing)
        let prefix = name == "test" ? "" : "\(name) "
        @Sendable func range(_ events: [Event]) -> String { "\(events.first!.seq)-\(events.last!.seq)" }
        @Sendable func seen(_ db: Database, _ events: [Event]) throws {
            for event in events { try db.execute(sql: "INSERT INTO seen (seq) VALUES (?)", arguments: [event.seq]) }
        }
        return DatabaseEventSink(
            producer: name, writer: db,
            batch: { db, events in
                calls.add("\(prefix)live \(range(events))")
                try seen(db, events)
            },
            backlog: DatabaseEventSink.Backlog(
                batch: { db, events in
                    if failing.take(events.first!.seq) {
                        calls.add("\(prefix)failed \(range(events))")
                        throw ServiceError(.unavailable, "the page failed")
                    }
                    calls.add("\(prefix)backlog \(range(events))")
                    try seen(db, events)
                },
                settle: { db in
                    // its own transaction: nothing of a page is pending in it
                    #expect(db.isInsideTransaction)
                    calls.add("\(prefix)settle")
                }, group: group))
    }

    /// Runs a consumer of the test service's events (pages of 3, by default one page per
    /// transaction) into `sink` until `done` holds or 6 s have passed, then stops it.
    func consume(
        _ sink: DatabaseEventSink, from client: ServiceClient, in dir: ScratchDirectory, pollInterval: Duration,
        transactionSize: Int = 3, until done: () -> Bool
    ) async throws {
        var logger = Logger(label: "consumer")
        logger.logLevel = .critical
        let consumer = EventConsumer(
            settings: .init(
                producer: "test", eventsEndpoint: "ipc://\(dir.path)/test.events.sock", pollInterval: pollInterval,
                catchUpPageSize: 3, catchUpTransactionSize: transactionSize),
            producerRPC: client, sink: sink, logger: logger)
        let task = Task { try await consumer.run() }
        for _ in 0..<300 where !done() {
            try await Task.sleep(for: .milliseconds(20))
        }
        task.cancel()
        _ = await task.result
    }

    func database(_ path: String) throws -> any DatabaseWriter {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(sql: "CREATE TABLE seen (n INTEGER PRIMARY KEY, seq INTEGER NOT NULL UNIQUE)")
        }
        return try ServiceDatabase.open(DatabaseSettings(path: path), migrator: migrator)
    }

    /// A fresh consumer catches up with 23 events ("partial"), then another with 24 ("full":
    /// the 24th is added first, so the last page is full and the page after it empty), in
    /// pages of 3 and transactions of `transactionSize`; `expected(last)` is what the sink's
    /// handlers see. `more` runs after, with the same producer.
    func catchUpTwice(
        transactionSize: Int, expected: @Sendable (Int64) -> [String],
        more: @Sendable (ServiceClient, ScratchDirectory, ScratchDirectory) async throws -> Void = { _, _, _ in }
    ) async throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        try await withNotes(23) { client, dir in
            for (name, last) in [("partial", Int64(23)), ("full", 24)] {
                if last == 24 {
                    _ = try await client.call("test.note.add", NoteBody(text: "n24"), as: NoteResult.self)
                }
                let consumerDB = try database("\(scratch.path)/\(name).sqlite")
                let calls = Calls()
                try await consume(
                    sink(consumerDB, calls), from: client, in: dir, pollInterval: .seconds(30),
                    transactionSize: transactionSize
                ) { calls.entries.contains("settle") }
                #expect(calls.entries == expected(last), "\(name)")
                let seen = try await consumerDB.read { try Int64.fetchAll($0, sql: "SELECT seq FROM seen ORDER BY n") }
                #expect(seen == Array(1...last), "\(name)")
            }
            try await more(client, dir, scratch)
        }
    }

    @Test func fullPagesAreABacklogAndTheCatchUpSettles() async throws {
        // Transactions of one page: seven full pages, then 22-23 in a transaction of its own,
        // still a backlog (or an eighth full page, 22-24).
        let pages = stride(from: Int64(1), through: 22, by: 3).map { "backlog \($0)-\($0 + 2)" }
        try await catchUpTwice(transactionSize: 3) { last in
            last == 23 ? Array(pages.prefix(7)) + ["backlog 22-23", "settle"] : pages + ["settle"]
        }
    }

    /// Full pages are gathered until a transaction holds `catchUpTransactionSize` events
    /// (7 here, pages of 3: three pages, 9 events); a transaction that gathered a full page
    /// is a backlog even when it ends with the short last page, and a catch-up that begins
    /// with a short page is plain events.
    @Test func aCatchUpGathersPagesIntoTransactions() async throws {
        // 19-21 and 22-23 (or 22-24, whose next page is empty) hold fewer than 7.
        try await catchUpTwice(transactionSize: 7) { last in
            ["backlog 1-9", "backlog 10-18", "backlog 19-\(last)", "settle"]
        } more: { client, dir, scratch in
            // Two more events, after a consumer that is up to date: one short page, plain.
            for text in ["n25", "n26"] {
                _ = try await client.call("test.note.add", NoteBody(text: text), as: NoteResult.self)
            }
            let consumerDB = try database("\(scratch.path)/short.sqlite")
            try await consumerDB.write { try Checkpoint.set($0, producer: "test", seq: 24) }
            let calls = Calls()
            try await consume(
                sink(consumerDB, calls), from: client, in: dir, pollInterval: .seconds(30), transactionSize: 7
            ) { calls.entries.contains("settle") }
            // (A sink settles once per process: see the next test.)
            #expect(calls.entries == ["live 25-26", "settle"])
        }
    }

    @Test func aSinkSettlesOncePerProcessAndAfterABacklog() async throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let db = try database("\(scratch.path)/c.sqlite")
        let calls = Calls()
        let sink = sink(db, calls)
        func event(_ seq: Int64) -> Event { Event(seq: seq, type: "note.added", userId: nil, at: Date(), data: [:]) }
        try await sink.settle()  // a process's first: an earlier one may have left a backlog
        try await sink.settle()
        try await sink.apply([event(1)])
        try await sink.settle()
        try await sink.applyBacklog([event(2), event(3)])
        try await sink.settle()
        try await sink.settle()
        #expect(calls.entries == ["settle", "live 1-1", "backlog 2-3", "settle"])

        // Without a backlog handler, a backlog is a batch like any other and nothing settles.
        let plain = DatabaseEventSink(producer: "plain", writer: db) { _, events in calls.add("plain \(events.count)") }
        try await plain.applyBacklog([event(1), event(2)])
        try await plain.settle()
        #expect(calls.entries.suffix(1) == ["plain 2"])
    }

    /// Sinks of one group (one database, one settle) leave the settling to the last of them
    /// still in the middle of a backlog; a sink alone in its backlog settles as before.
    @Test func sinksOfAGroupSettleWhenTheLastBacklogEnds() async throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let db = try database("\(scratch.path)/c.sqlite")
        let calls = Calls()
        let group = BacklogGroup()
        let a = sink(db, calls, name: "a", group: group), b = sink(db, calls, name: "b", group: group)
        func event(_ seq: Int64) -> Event { Event(seq: seq, type: "note.added", userId: nil, at: Date(), data: [:]) }
        try await a.applyBacklog([event(1)])
        try await b.applyBacklog([event(2)])
        try await a.settle()  // b is mid-backlog: b's settle covers a's pages
        try await a.settle()
        try await b.applyBacklog([event(3)])
        try await b.settle()
        #expect(calls.entries == ["a backlog 1-1", "b backlog 2-2", "b backlog 3-3", "b settle"])
        // the other way round, and then one alone
        try await a.applyBacklog([event(4)])
        try await b.applyBacklog([event(5)])
        try await b.settle()
        try await a.settle()
        try await a.applyBacklog([event(6)])
        try await a.settle()
        try await b.settle()
        #expect(
            calls.entries.dropFirst(4) == ["a backlog 4-4", "b backlog 5-5", "a settle", "a backlog 6-6", "a settle"])
    }

    /// One table of blobs, for the tests that fill database pages.
    static let blobs: DatabaseMigrator = {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in try db.execute(sql: "CREATE TABLE blob (data BLOB NOT NULL)") }
        return migrator
    }()

    /// While a backlog is applied, the writer folds its WAL back into the database every
    /// 10,000 pages instead of 1,000; the settle puts SQLite's default back. Read on the
    /// writer connection inside each transaction, and seen in the WAL file: three backlog
    /// pages of about 600 database pages each stay in it, where with the default the third
    /// would have started it over after the second's commit had folded it back. The WAL's
    /// size limit is lifted meanwhile and set again by the settle, and a write after it cuts
    /// the file back.
    @Test func aBacklogFoldsTheWALBackLessOften() async throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let path = "\(scratch.path)/c.sqlite"
        let db = try ServiceDatabase.open(DatabaseSettings(path: path), migrator: Self.blobs)
        let calls = Calls()
        // The checkpoint interval and the WAL's size limit, read on the writer's connection.
        @Sendable func walPages(_ db: Database) throws -> String {
            let pages = try Int.fetchOne(db, sql: "PRAGMA wal_autocheckpoint") ?? -1
            let limit = try Int.fetchOne(db, sql: "PRAGMA journal_size_limit") ?? -2
            return "\(pages)" + (limit == ServiceDatabase.walSizeLimit ? "" : " limit \(limit)")
        }
        @Sendable func fill(_ db: Database) throws {
            // about one database page per row
            for _ in 0..<600 { try db.execute(sql: "INSERT INTO blob (data) VALUES (zeroblob(3000))") }
        }
        let sink = DatabaseEventSink(
            producer: "test", writer: db,
            batch: { db, _ in calls.add("live \(try walPages(db))") },
            backlog: DatabaseEventSink.Backlog(
                batch: { db, _ in
                    calls.add("backlog \(try walPages(db))")
                    try fill(db)
                },
                settle: { db in calls.add("settle \(try walPages(db))") }))
        func event(_ seq: Int64) -> Event { Event(seq: seq, type: "note.added", userId: nil, at: Date(), data: [:]) }
        func walFrames() throws -> Int {
            let size = try FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int ?? 0
            return max(0, size - 32) / (4096 + 24)  // the WAL header, then a 24-byte header per frame
        }
        try await sink.settle()  // a process's first
        try await sink.apply([event(1)])
        for seq in Int64(2)...4 { try await sink.applyBacklog([event(seq)]) }
        let framesAfterBacklog = try walFrames()
        try await sink.apply([event(5)])  // a catch-up's last page, before its settle
        try await sink.settle()
        let afterSettle = try await db.writeWithoutTransaction { try walPages($0) }
        try await sink.apply([event(6)])
        // This settle wrote nothing, so event 6's commit was the one that folded the WAL back
        // (a real settle's own commit does); the write after that starts the file over.
        try await sink.apply([event(7)])
        let walAfter = try FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int ?? -1
        #expect(DatabaseEventSink.backlogWALPages == 10_000 && DatabaseEventSink.defaultWALPages == 1_000)
        #expect(
            calls.entries == [
                "settle 1000", "live 1000", "backlog 10000 limit -1", "backlog 10000 limit -1",
                "backlog 10000 limit -1", "live 10000 limit -1", "settle 10000 limit -1", "live 1000", "live 1000",
            ])
        #expect(afterSettle == "1000")
        #expect(framesAfterBacklog >= 1_700, "the three pages' frames are all in the WAL: \(framesAfterBacklog)")
        // Cut back to the limit from about 7 MB.
        #expect(ServiceDatabase.walSizeLimit == 4 * 1024 * 1024)
        #expect((0...ServiceDatabase.walSizeLimit).contains(walAfter), "WAL file after the settle: \(walAfter) bytes")
    }

    /// `DatabaseSettings.pageSize` makes a new file's pages that size, seen where it takes
    /// effect: on the writer and a reader connection, and in the page size the file's own
    /// header records (bytes 16-17, big-endian). A file that exists keeps its size, and
    /// opens as before.
    @Test func aNewFileTakesThePageSizeAndAnOldOneKeepsItsOwn() async throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        func sizes(_ path: String, asking pageSize: Int?) throws -> (writer: Int, reader: Int, file: Int) {
            var settings = DatabaseSettings(path: path)
            settings.pageSize = pageSize
            let db = try ServiceDatabase.open(settings, migrator: Self.blobs)
            try db.write { try $0.execute(sql: "INSERT INTO blob (data) VALUES (zeroblob(20000))") }
            let writer = try db.writeWithoutTransaction { try Int.fetchOne($0, sql: "PRAGMA page_size") } ?? -1
            let reader = try db.read { try Int.fetchOne($0, sql: "PRAGMA page_size") } ?? -1
            try (db as? DatabasePool)?.close()
            let header = try #require(FileManager.default.contents(atPath: path)?.prefix(18))
            let file = Int(header[header.startIndex + 16]) << 8 | Int(header[header.startIndex + 17])
            return (writer, reader, file)
        }
        let made = try sizes("\(scratch.path)/new.sqlite", asking: 8_192)
        #expect(made.writer == 8_192 && made.reader == 8_192 && made.file == 8_192, "\(made)")
        let reopened = try sizes("\(scratch.path)/new.sqlite", asking: 16_384)
        #expect(reopened.writer == 8_192 && reopened.file == 8_192, "an existing file keeps its size: \(reopened)")
        let plain = try sizes("\(scratch.path)/plain.sqlite", asking: nil)
        #expect(plain.writer == 4_096 && plain.file == 4_096, "SQLite's default: \(plain)")
        let old = try sizes("\(scratch.path)/plain.sqlite", asking: 8_192)
        #expect(old.writer == 4_096 && old.file == 4_096, "\(old)")
    }

    /// A settle reads the database file through a memory map, seen where it takes effect:
    /// `mmap_size` on the writer inside a live batch, a backlog page and the settle; the
    /// file among this process's mappings after the settle has read it; and gone from them
    /// once the settle is over.
    @Test func aSettleReadsThroughAMap() async throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let path = "\(scratch.path)/m.sqlite"
        let migrator = Self.blobs
        // Rows in the database file itself, for the settle to read: written by a first pool,
        // folded into the file, and that pool closed, so that the WAL does not hold them and
        // the settle's connection did not write them.
        do {
            let first = try ServiceDatabase.open(DatabaseSettings(path: path), migrator: migrator)
            try await first.write { db in
                for _ in 0..<200 { try db.execute(sql: "INSERT INTO blob (data) VALUES (zeroblob(3000))") }
            }
            let busy = try await first.writeWithoutTransaction {
                try Int.fetchOne($0, sql: "PRAGMA wal_checkpoint(TRUNCATE)")
            }
            #expect(busy == 0, "the checkpoint was blocked")
            try #require(first as? DatabasePool).close()
        }
        let db = try ServiceDatabase.open(DatabaseSettings(path: path), migrator: migrator)
        // Read to its end: `String(contentsOfFile:)` reads a /proc file's first 4 KiB only,
        // which beside other tests' threads stopped short of the database file's line.
        @Sendable func mapped() throws -> Bool {
            let maps = try #require(FileHandle(forReadingAtPath: "/proc/self/maps")).readDataToEndOfFile()
            return String(decoding: maps, as: UTF8.self).contains(path + "\n")
        }
        @Sendable func state(_ db: Database) throws -> String {
            let size = try Int64.fetchOne(db, sql: "PRAGMA mmap_size") ?? -1
            return size == 0 ? "no map" : size == DatabaseEventSink.settleMapBytes ? "map" : "map \(size)"
        }
        let calls = Calls()
        let sink = DatabaseEventSink(
            producer: "test", writer: db,
            batch: { db, _ in calls.add("live \(try state(db))") },
            backlog: DatabaseEventSink.Backlog(
                batch: { db, _ in calls.add("backlog \(try state(db))") },
                settle: { db in
                    let bytes = try Int.fetchOne(db, sql: "SELECT sum(length(data)) FROM blob") ?? 0
                    calls.add("settle \(try state(db)), read \(bytes), mapped \(try mapped())")
                }))
        func event(_ seq: Int64) -> Event { Event(seq: seq, type: "note.added", userId: nil, at: Date(), data: [:]) }
        try await sink.apply([event(1)])
        try await sink.applyBacklog([event(2)])
        try await sink.settle()
        let after = try await db.writeWithoutTransaction { try state($0) }
        try await sink.apply([event(3)])
        #expect(DatabaseEventSink.settleMapBytes == 0x7fff_0000)
        #expect(calls.entries == ["live no map", "backlog no map", "settle map, read 600000, mapped true", "live no map"])
        #expect(after == "no map")
        #expect(try !mapped(), "the database file is still mapped after the settle")
    }

    /// A catch-up that fails mid-way settles what it left behind before the error goes back
    /// to the consumer (which tries again at its next tick): the producer may be gone for long.
    @Test func aFailedCatchUpSettlesToo() async throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        try await withNotes(10) { client, dir in
            let consumerDB = try database("\(scratch.path)/failing.sqlite")
            let calls = Calls()
            try await consume(
                sink(consumerDB, calls, failing: [4]), from: client, in: dir, pollInterval: .milliseconds(200)
            ) { calls.entries.filter { $0 == "settle" }.count >= 2 }
            // the page 4-6 fails: what 1-3 left is settled; the next tick's catch-up goes on from 3
            #expect(
                calls.entries == [
                    "backlog 1-3", "failed 4-6", "settle", "backlog 4-6", "backlog 7-9", "backlog 10-10", "settle",
                ])
            let seen = try await consumerDB.read { try Int64.fetchAll($0, sql: "SELECT seq FROM seen ORDER BY n") }
            #expect(seen == Array(1...10))
        }
    }
}

@Suite struct IdempotencyRetentionTests {
    @Test func keysOlderThanTheRetentionArePruned() async throws {
        let service = try InProcess()
        _ = try await service.transport.call("test.note.add", NoteBody(text: "a"), as: NoteResult.self, options: CallOptions(idempotencyKey: "old"))
        _ = try await service.transport.call("test.note.add", NoteBody(text: "b"), as: NoteResult.self, options: CallOptions(idempotencyKey: "new"))
        try await service.host.database.write { db in
            try db.execute(sql: "UPDATE idempotency SET createdAt = createdAt - ? WHERE key = 'old'", arguments: [31 * 86_400.0])
        }
        let cutoff = Date().addingTimeInterval(-IdempotencyJanitor.retention)
        let pruned = try await service.host.database.write { try Idempotency.prune($0, before: cutoff) }
        #expect(pruned == 1)
        let left = try await service.host.database.read { try String.fetchAll($0, sql: "SELECT key FROM idempotency") }
        #expect(left == ["new"])
    }
}

@Suite struct OutboxEncodingTests {
    /// The publisher's hand-built JSON must decode to exactly the Event that events.since returns.
    @Test func publishedJSONMatchesTheEvent() async throws {
        let service = try InProcess()
        for text in ["plain", "quote \" and \\ and ünïcode 🎣"] {
            _ = try await service.transport.call("test.note.add", NoteBody(text: text), as: NoteResult.self)
        }
        let (events, encoded) = try await service.host.database.read { db in
            (try Outbox.since(db, after: 0, limit: 10), try Outbox.encodedSince(db, after: 0, limit: 10))
        }
        #expect(encoded.count == 2)
        for (event, row) in zip(events, encoded) {
            // Compared as the event travels (times on the wire carry milliseconds).
            let travelled = try WireCoding.decode(Event.self, from: WireCoding.encode(event))
            #expect(try WireCoding.decode(Event.self, from: row.json) == travelled)
            #expect(row.json == (try WireCoding.encode(event)), "byte for byte what encoding the Event gives")
            #expect(row.type == event.type && row.seq == event.seq)
        }
    }

    /// `events.since` writes its page around the stored payloads: byte for byte what
    /// Foundation's encoder writes for the same events decoded, and the same after a redaction.
    @Test func anEventsSincePageIsWhatEncodingTheEventsGives() async throws {
        let service = try InProcess()
        for text in ["plain", "quote \" and \\ and ünïcode 🎣", "slash / and tab \t", "last"] {
            _ = try await service.transport.call("test.note.add", NoteBody(text: text), as: NoteResult.self)
            if text == "plain" {
                // Another user's event, then blanked as an account deletion blanks it.
                try await service.host.database.write { db in
                    try Outbox.append(db, type: "thing.added", userId: "gone", data: ["n": 1] as JSONValue)
                    try Outbox.redact(db, userId: "gone")
                }
            }
        }
        for (after, limit) in [(0, 500), (1, 2), (4, 10)] {
            let frame = try await service.transport.replyFrame(
                "events.since", EventsSince(after: Int64(after), limit: limit), options: CallOptions())
            let page = try #require(EnvelopeScan.successResult(frame))
            let (events, last, history) = try await service.host.database.read { db in
                (try Outbox.since(db, after: Int64(after), limit: limit), try Outbox.lastSequence(db), try Outbox.history(db))
            }
            #expect(events.count == min(limit, 5 - after))
            #expect(events.contains { $0.type == Outbox.redactedType } == (after < 2))
            #expect(history != nil)
            let expected = try WireCoding.encoder.encode(EventsSinceResult(events: events, last: last, history: history))
            #expect(page == expected, "page after \(after): \(String(decoding: page, as: UTF8.self))")
            // A consumer's reader gives what the decoder gives, a redacted event among them.
            let read = try EventsSinceResult.read(page), decoded = try WireCoding.decode(EventsSinceResult.self, from: page)
            #expect(read.events == decoded.events && read.last == decoded.last && read.events.count == events.count)
            #expect(read.history == history && decoded.history == history)
        }
    }

    /// `EventsSinceResult.read` reads the pages `encodedPage` writes; any other shape is the
    /// decoder's to read or refuse, with the decoder's own error.
    @Test func aPageIsReadAsTheDecoderReadsIt() throws {
        let event = #"{"seq":7,"type":"a.b","userId":"u1","at":"2026-05-01T14:45:00.250Z","data":{"x":[1,2.5,"s",null]}}"#
        let pages = [
            #"{"events":[\#(event)],"last":9}"#,
            #"{"events":[],"last":0}"#,
            #"{"events":[{"seq":1,"type":"t","at":"2026-05-01T14:45:00Z","data":{}}],"last":1}"#,  // no userId
            #"{"events":[{"seq":1,"type":"t","userId":null,"at":"2026-05-01T14:45:00+02:00","data":null}],"last":1}"#,
            #"{"extra":true,"events":[{"seq":1,"type":"t","at":"2026-05-01T14:45:00Z","data":1,"more":2}],"last":1}"#,
            #"{"events":[{"seq":1e2,"type":"t","at":"2026-05-01T14:45:00Z","data":{}}],"last":100}"#,
        ]
        for page in pages {
            let read = try EventsSinceResult.read(Data(page.utf8))
            let decoded = try WireCoding.decode(EventsSinceResult.self, from: Data(page.utf8))
            #expect(read.events == decoded.events && read.last == decoded.last, "\(page)")
        }
        let read = try EventsSinceResult.read(Data(pages[0].utf8))
        #expect(read.last == 9 && read.events.map(\.seq) == [7] && read.events[0].userId == "u1")
        #expect(read.events[0].data == (try JSONValue.parse(#"{"x":[1,2.5,"s",null]}"#)))
        let refused = [
            #"{"events":[{"seq":"7","type":"t","at":"2026-05-01T14:45:00Z","data":{}}],"last":7}"#,
            #"{"events":[{"seq":7,"type":"t","userId":5,"at":"2026-05-01T14:45:00Z","data":{}}],"last":7}"#,
            #"{"events":[{"seq":7,"type":"t","at":"yesterday","data":{}}],"last":7}"#,
            #"{"events":[{"seq":7,"type":"t","at":"2026-05-01T14:45:00Z"}],"last":7}"#,
            #"{"events":[{"seq":7,"type":"t","at":"2026-05-01T14:45:00Z","data":{}}]}"#,
            #"{"events":{},"last":7}"#,
            #"[1]"#,
            #"{"events":[{"seq":7.5,"type":"t","at":"2026-05-01T14:45:00Z","data":{}}],"last":7}"#,
        ]
        for page in refused {
            let decoderError = WireCoding.describe(
                #expect(throws: (any Error).self) { try WireCoding.decode(EventsSinceResult.self, from: Data(page.utf8)) }
                    ?? ServiceError(.internal, "none"))
            let readerError = WireCoding.describe(
                #expect(throws: (any Error).self) { try EventsSinceResult.read(Data(page.utf8)) }
                    ?? ServiceError(.internal, "none"))
            #expect(readerError == decoderError, "\(page)")
        }
    }
}

/// Runs `body` against a TestService over real ZeroMQ that has already recorded `count`
/// notes ("n1", "n2", …: events 1 to `count`), with a client of it and its scratch directory.
func withNotes(
    _ count: Int, text prefix: String = "n",
    _ body: @Sendable (_ client: ServiceClient, _ dir: ScratchDirectory) async throws -> Void
) async throws {
    try await withRunningService { endpoint, _, dir in
        let client = try ServiceClient(service: "test", endpoint: endpoint)
        for i in 1...count {
            _ = try await client.call("test.note.add", NoteBody(text: "\(prefix)\(i)"), as: NoteResult.self)
        }
        try await body(client, dir)
    }
}
