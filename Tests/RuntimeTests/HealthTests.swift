// Durability and health inside one service process: the writer connection's synchronous
// level read back from that connection (both settings), and a consumer whose projection
// fails (a full disk, say) marks the replies of its service's reads with `freshness` and
// the service degraded, until it recovers.
import Foundation
import GRDB
import Logging
import Runtime
import Storage
import Synchronization
import Testing
import Wire

@Suite struct HealthTests {
    @Test(arguments: [Durability.full, .normal])
    func writerRunsTheConfiguredLevel(durability: Durability) throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let writer = try ServiceDatabase.open(
            DatabaseSettings(path: scratch.path + "/d.sqlite", durability: durability), migrator: DatabaseMigrator())
        // Read on the writer connection itself: GRDB's WAL set-up used to leave it at NORMAL.
        let settings = try ServiceDatabase.writerSettings(writer)
        #expect(settings.synchronous == durability.rawValue)
        #expect(settings.journalMode == "wal")
        // SQLite's memory counting is off if this process had opened no connection before
        // its first ServiceDatabase (a test process may have), and reported as it is.
        #expect(SQLiteProcess.memoryStatus == (SQLiteProcess.memoryCountingOff ? "off" : "on"))
    }

    @Test func damagedFileIsRefusedWithItsName() throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let path = scratch.path + "/d.sqlite"
        try Data(repeating: 0x5A, count: 8192).write(to: URL(fileURLWithPath: path))
        let error = #expect(throws: DamagedDatabase.self) {
            _ = try ServiceDatabase.open(DatabaseSettings(path: path), migrator: DatabaseMigrator())
        }
        #expect(error?.path == path)
    }

    /// A producer holding five `thing.added` events and a consumer's host, both in memory.
    func hosts() async throws -> (producer: ServiceHost, consumer: ServiceHost, logger: Logger) {
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        let producer = try ServiceHost(
            descriptor: ServiceDescriptor(name: "producer"), database: .inMemory, migrator: DatabaseMigrator(),
            eventsEndpoint: nil, logger: logger)
        try await producer.database.write { db in
            for i in 1...5 { try Outbox.append(db, type: "thing.added", userId: "u", data: ["n": .number(.init(i))] as JSONValue) }
        }
        let consumer = try ServiceHost(
            descriptor: ServiceDescriptor(name: "consumer"), database: .inMemory, migrator: DatabaseMigrator(),
            eventsEndpoint: nil, logger: logger)
        return (producer, consumer, logger)
    }

    /// A consumer of `producer` into `sink`, polling every 50 ms, stalled after 300 ms.
    func consumer(
        of producer: ServiceHost, into sink: DatabaseEventSink, feedsReplies: Bool = false, pageSize: Int = 2_000,
        logger: Logger
    ) -> EventConsumer {
        EventConsumer(
            settings: .init(
                producer: "producer", eventsEndpoint: "ipc:///tmp/lb-health-nobody.sock", pollInterval: .milliseconds(50),
                catchUpPageSize: pageSize, catchUpTransactionSize: pageSize),
            producerRPC: InProcessTransport(producer.dispatcher(router: producer.makeRouter(), sessions: nil)),
            sink: sink, feedsReplies: feedsReplies, stallAfter: .milliseconds(300), logger: logger)
    }

    @Test func laggingProjectionMarksRepliesAndRecovers() async throws {
        let (producer, consumerHost, logger) = try await hosts()
        // The projection fails (as on a full disk) until `broken` is cleared.
        let broken = Atomic<Bool>(true)
        let sink = DatabaseEventSink(producer: "producer", writer: consumerHost.database) { _, _ in
            if broken.load(ordering: .relaxed) { throw DatabaseError(resultCode: .SQLITE_FULL) }
        }
        let consumer = consumer(of: producer, into: sink, feedsReplies: true, logger: logger)
        consumerHost.health.register(consumer.progress)
        var router = consumerHost.makeRouter()
        router.read("thing.count", access: .public) { (_: Empty, _) in ["n": 1] as JSONValue }
        let service = InProcessTransport(consumerHost.dispatcher(router: router, sessions: nil))

        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await consumer.run() }
            defer { group.cancelAll() }
            let clock = ContinuousClock()
            var reply = try await service.reply("thing.count")
            let deadline = clock.now + .seconds(10)
            while reply.freshness?.behindEvents != 5, clock.now < deadline {
                try await Task.sleep(for: .milliseconds(50))
                reply = try await service.reply("thing.count")
            }
            #expect(reply.ok, "the answer is still given")
            #expect(reply.freshness?.behindEvents == 5, "\(String(describing: reply.freshness))")
            #expect(reply.freshness?.producers == ["producer"])
            try await Task.sleep(for: .milliseconds(400))
            let degraded = try await service.call("$srv.info", Empty(), as: Info.self)
            #expect(degraded.health.state == .degraded)
            #expect(degraded.health.consumers.first?.state == .stalled)
            #expect(degraded.health.problems.contains { $0.contains("the disk is full") }, "\(degraded.health.problems)")

            broken.store(false, ordering: .relaxed)
            var recovered = false
            while !recovered, clock.now < deadline + .seconds(10) {
                try await Task.sleep(for: .milliseconds(50))
                let info = try await service.call("$srv.info", Empty(), as: Info.self)
                recovered = info.health.state == .ok && info.health.consumers.first?.position == 5
            }
            #expect(recovered, "the consumer caught up and the service is ok again")
            #expect(try await service.reply("thing.count").freshness == nil)
        }
    }

    /// A consumer busy on its own sink for longer than the stall limit (the settle at the
    /// end of a large rebuild took more than 10 s) has asked nothing of its producer: it is
    /// catching up, not stalled, and says what it is doing; after its first catch-up too,
    /// with nothing left behind, when it is not live either.
    @Test func longWorkOnTheSinkIsNotAStall() async throws {
        let (producer, consumerHost, logger) = try await hosts()
        // A slow settle takes 1.5 s on the writer's thread, five times the stall limit. Pages
        // of 2: the five events are two backlog pages and one more, then the settle.
        let phase = Atomic<Int>(0)  // 0: the next settle is slow; 1: during it; 2: after it
        let sink = DatabaseEventSink(
            producer: "producer", writer: consumerHost.database, batch: { _, _ in },
            backlog: DatabaseEventSink.Backlog(
                batch: { _, _ in },
                settle: { _ in
                    guard phase.load(ordering: .relaxed) == 0 else { return }
                    phase.store(1, ordering: .relaxed)
                    Thread.sleep(forTimeInterval: 1.5)
                    phase.store(2, ordering: .relaxed)
                }))
        let consumer = consumer(of: producer, into: sink, pageSize: 2, logger: logger)
        consumerHost.health.register(consumer.progress)

        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await consumer.run() }
            defer { group.cancelAll() }
            let clock = ContinuousClock()
            let deadline = clock.now + .seconds(30)
            /// The reports seen during one slow batch, by how long it had run.
            func watchSlowBatch() async throws -> [(after: Duration, report: HealthReport)] {
                while phase.load(ordering: .relaxed) == 0, clock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
                let began = clock.now
                var seen: [(after: Duration, report: HealthReport)] = []
                while phase.load(ordering: .relaxed) == 1, clock.now < deadline {
                    seen.append((clock.now - began, consumerHost.health.report))
                    try await Task.sleep(for: .milliseconds(50))
                }
                #expect(phase.load(ordering: .relaxed) == 2)
                return seen
            }
            func waitLive(at position: Int64) async throws -> Bool {
                while clock.now < deadline {
                    let status = consumerHost.health.report.consumers.first
                    if status?.state == .live && status?.position == position { return true }
                    try await Task.sleep(for: .milliseconds(50))
                }
                return false
            }
            for round in ["first catch-up", "live"] {
                if round == "live" {
                    #expect(try await waitLive(at: 5))
                    phase.store(0, ordering: .relaxed)
                    try await producer.database.write { db in
                        for n in 6...8 { try Outbox.append(db, type: "thing.added", userId: "u", data: ["n": .number(.init(n))] as JSONValue) }
                    }
                }
                let seen = try await watchSlowBatch()
                #expect(!seen.isEmpty, "\(round)")
                for (after, report) in seen {
                    #expect(report.consumers.first?.state != .stalled, "\(round), at \(after): \(report.consumers)")
                    #expect(report.state == .ok, "\(round), at \(after): \(report.problems)")
                }
                // Past the limit it is catching up, and the problem says what it is busy with.
                let late = seen.filter { $0.after > .milliseconds(700) }
                #expect(!late.isEmpty, "\(round)")
                for (after, report) in late {
                    #expect(report.consumers.first?.state == .catchingUp, "\(round), at \(after): \(report.consumers)")
                    #expect(
                        report.problems.contains {
                            $0.hasPrefix("catching up with producer") && $0.contains("applying and settling events for")
                        }, "\(round), at \(after): \(report.problems)")
                }
            }
            // Done, it is live.
            #expect(try await waitLive(at: 8))
        }
    }
}

extension InProcessTransport {
    func reply(_ method: String) async throws -> Reply {
        let frame = try WireCoding.encode(RequestHeader(id: ID.make(), method: method))
        return try WireCoding.decode(Reply.self, from: try await exchange(frame, id: "", timeout: .seconds(5)))
    }
}
