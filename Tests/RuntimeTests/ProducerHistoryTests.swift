// A producer whose database was made again (`logbook stack rebuild`) or put back from a
// backup (`logbook restore`) uses sequence numbers again that its consumers have applied
// from the history before. Its outbox says which history it is (`OutboxHistory`), and a
// consumer that sees it change goes back to where the two part and applies the new events:
// they used to be dropped as duplicates (docs/protocol.md, "Health and freshness").
import Foundation
import GRDB
import Logging
import Storage
import Synchronization
import Testing
import Wire

@testable import Runtime

@Suite struct ProducerHistoryTests {
    /// A transport whose producer can be replaced, as a restarted service replaces its file.
    final class Switchable: Transport {
        let current: Mutex<InProcessTransport>
        init(_ first: ServiceHost) { current = Mutex(Self.transport(first)) }
        static func transport(_ host: ServiceHost) -> InProcessTransport {
            InProcessTransport(host.dispatcher(router: host.makeRouter(), sessions: nil))
        }
        func replace(with host: ServiceHost) { current.withLock { $0 = Self.transport(host) } }
        var service: String { "producer" }
        var stackKey: String? { nil }
        func exchange(_ frame: Data, id: String, timeout: Duration) async throws -> Data {
            try await current.withLock { $0 }.exchange(frame, id: id, timeout: timeout)
        }
    }

    static let logger: Logger = {
        var logger = Logger(label: "history-test")
        logger.logLevel = .critical
        return logger
    }()

    func host(_ name: String) throws -> ServiceHost {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("seen") { db in
            try db.execute(sql: "CREATE TABLE seen (seq INTEGER NOT NULL, type TEXT NOT NULL)")
        }
        return try ServiceHost(
            descriptor: ServiceDescriptor(name: name), database: .inMemory, migrator: migrator, eventsEndpoint: nil,
            logger: Self.logger)
    }

    func publish(_ host: ServiceHost, _ type: String, count: Int) async throws {
        try await host.database.write { db in
            for i in 0..<count { try Outbox.append(db, type: type, userId: "u", data: ["n": .number(.init(i))] as JSONValue) }
        }
    }

    /// Runs a consumer of `transport` into `consumerHost`'s `seen` table while `body` runs.
    func consuming(
        _ transport: Switchable, into consumerHost: ServiceHost, _ body: @Sendable (EventConsumer) async throws -> Void
    ) async throws {
        let sink = DatabaseEventSink(producer: "producer", writer: consumerHost.database) { db, event in
            try db.execute(sql: "INSERT INTO seen (seq, type) VALUES (?, ?)", arguments: [event.seq, event.type])
        }
        let consumer = EventConsumer(
            settings: .init(
                producer: "producer", eventsEndpoint: "ipc:///tmp/lb-history-nobody.sock", pollInterval: .milliseconds(20)),
            producerRPC: transport, sink: sink, logger: Self.logger)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await consumer.run() }
            defer { group.cancelAll() }
            try await body(consumer)
        }
    }

    func seen(_ host: ServiceHost, _ type: String) async throws -> [Int64] {
        try await host.database.read { try Int64.fetchAll($0, sql: "SELECT seq FROM seen WHERE type = ? ORDER BY seq", arguments: [type]) }
    }

    func waitFor(_ condition: () async throws -> Bool) async throws -> Bool {
        for _ in 0..<300 {
            if try await condition() { return true }
            try await Task.sleep(for: .milliseconds(10))
        }
        return false
    }

    /// A consumer that has applied a producer's five events; `then` swaps the producer.
    func afterFiveEvents(_ then: @Sendable (ServiceHost, Switchable) async throws -> Void) async throws {
        let first = try host("producer")
        try await publish(first, "old", count: 5)
        let consumerHost = try host("consumer")
        let transport = Switchable(first)
        try await consuming(transport, into: consumerHost) { consumer in
            let caughtUp = try await waitFor { consumer.position == 5 }
            #expect(caughtUp)
            try await then(consumerHost, transport)
        }
    }

    /// A rebuilt producer: a new file, numbered from 1 again, with fewer events than the
    /// consumer applied, or more.
    @Test(arguments: [3, 8])
    func aRebuiltProducersEventsAreApplied(count: Int) async throws {
        try await afterFiveEvents { consumerHost, transport in
            let rebuilt = try host("producer")
            try await publish(rebuilt, "new", count: count)
            transport.replace(with: rebuilt)
            let applied = try await waitFor { try await seen(consumerHost, "new").count == count }
            let got = try await seen(consumerHost, "new")
            #expect(applied, "applied of the rebuilt producer's: \(got)")
            #expect(try await seen(consumerHost, "new") == (1...Int64(count)).map { $0 })
        }
    }

    /// A restored producer: the backup's events (up to 3) and new ones after them, under
    /// numbers the consumer applied from the history the restore replaced (4 and 5).
    @Test func aRestoredProducersNewEventsAreAppliedFromWhereTheHistoriesPart() async throws {
        try await afterFiveEvents { consumerHost, transport in
            let restored = try host("producer")
            try await publish(restored, "old", count: 3)
            try await restored.database.write { db in try Outbox.startHistory(db) }  // as `logbook restore` does
            #expect(try await restored.database.read { try Outbox.history($0)?.forkedAt } == 3)
            try await publish(restored, "after", count: 2)
            transport.replace(with: restored)
            #expect(try await waitFor { try await seen(consumerHost, "after").count == 2 })
            #expect(try await seen(consumerHost, "after") == [4, 5])
            // what both histories share is not applied again
            #expect(try await seen(consumerHost, "old") == [1, 2, 3, 4, 5])
        }
    }

    /// The checkpoint keeps the history it counts in: a consumer started again later, on a
    /// producer made again meanwhile, still notices.
    @Test func theHistoryIsKeptWithTheCheckpoint() async throws {
        let first = try host("producer")
        try await publish(first, "old", count: 4)
        let consumerHost = try host("consumer")
        try await consuming(Switchable(first), into: consumerHost) { consumer in
            let caughtUp = try await waitFor { consumer.position == 4 }
            #expect(caughtUp)
        }
        let stored = try await consumerHost.database.read { try Checkpoint.history($0, producer: "producer") }
        let firstHistory = try await first.database.read { try Outbox.history($0)?.id }
        #expect(stored != nil && stored == firstHistory)
        let rebuilt = try host("producer")
        try await publish(rebuilt, "new", count: 2)
        try await consuming(Switchable(rebuilt), into: consumerHost) { _ in
            let applied = try await waitFor { try await seen(consumerHost, "new") == [1, 2] }
            #expect(applied)
        }
    }
}
