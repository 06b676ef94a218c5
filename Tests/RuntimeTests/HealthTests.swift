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

    @Test func laggingProjectionMarksRepliesAndRecovers() async throws {
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        let producer = try ServiceHost(
            descriptor: ServiceDescriptor(name: "producer"), database: .inMemory, migrator: DatabaseMigrator(),
            eventsEndpoint: nil, logger: logger)
        try await producer.database.write { db in
            for i in 1...5 { try Outbox.append(db, type: "thing.added", userId: "u", data: ["n": .number(.init(i))] as JSONValue) }
        }
        let consumerHost = try ServiceHost(
            descriptor: ServiceDescriptor(name: "consumer"), database: .inMemory, migrator: DatabaseMigrator(),
            eventsEndpoint: nil, logger: logger)
        // The projection fails (as on a full disk) until `broken` is cleared.
        let broken = Atomic<Bool>(true)
        let sink = DatabaseEventSink(producer: "producer", writer: consumerHost.database) { _, _ in
            if broken.load(ordering: .relaxed) { throw DatabaseError(resultCode: .SQLITE_FULL) }
        }
        let consumer = EventConsumer(
            settings: .init(producer: "producer", eventsEndpoint: "ipc:///tmp/lb-health-nobody.sock", pollInterval: .milliseconds(50)),
            producerRPC: InProcessTransport(producer.dispatcher(router: producer.makeRouter(), sessions: nil)),
            sink: sink, feedsReplies: true, stallAfter: .milliseconds(300), logger: logger)
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
}

extension InProcessTransport {
    func reply(_ method: String) async throws -> Reply {
        let frame = try WireCoding.encode(RequestHeader(id: ID.make(), method: method))
        return try WireCoding.decode(Reply.self, from: try await exchange(frame, id: "", timeout: .seconds(5)))
    }
}
