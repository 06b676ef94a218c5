// Earning from records' events: exact cents from the total, duplicates change nothing, a
// wiped store.sqlite replays to the same wallets and ledgers, corrections, user deletion.
import Contracts
import Foundation
import GRDB
import Logging
import Runtime
import Storage
import StoreService
import Testing
import Wire

@Suite struct EarningTests {
    @Test func timeSavedEarnsOneDollarPerHour() async throws {
        let h = try StoreHarness()
        var script = EventScript()
        script.saved("ann", "e1", ms: 2 * hour)
        script.saved("ann", "e2", ms: 30 * 60_000)
        try await h.records.apply(script.events)

        let wallet = try await h.wallet("ann")
        #expect(
            wallet == WalletView(netWorthCents: 250, netWorthMs: 2 * hour + 1_800_000, spentCents: 0, cashCents: 250))
        let ledger = try await h.ledger("ann")
        #expect(ledger.map(\.kind) == ["earning", "earning"])
        #expect(ledger.map(\.amountCents) == [50, 200])
        #expect(ledger.map(\.balanceAfterCents) == [250, 200])
        #expect(ledger.map(\.reference) == ["e2", "e1"])
        #expect(ledger[1].durationMs == 2 * hour)
        #expect(ledger[1].at == WireTime.parse("2026-04-01T08:00:00Z"))
    }

    @Test func manySmallEntriesDoNotLoseCents() async throws {
        let h = try StoreHarness()
        var script = EventScript()
        // 100 entries of 18 s: half a cent each, 50 cents in total.
        for i in 0..<100 { script.saved("ann", "e\(i)", ms: 18_000) }
        try await h.records.apply(script.events)
        let wallet = try await h.wallet("ann")
        #expect(wallet.netWorthCents == 50)
        #expect(wallet.netWorthMs == 1_800_000)
        let ledger = try await h.ledger("ann")
        #expect(ledger.count == 100)
        #expect(ledger.reduce(0) { $0 + $1.amountCents } == 50)
    }

    @Test func duplicateEventsChangeNothing() async throws {
        let h = try StoreHarness()
        var script = EventScript()
        script.saved("ann", "e1", ms: hour)
        script.saved("ann", "e2", ms: hour)
        try await h.records.apply(script.events)
        let before = try await h.ledger("ann")

        // The same events again (at-least-once delivery)…
        try await h.records.apply(script.events)
        // …and the same entry under a new sequence number (a producer that re-published it).
        var again = script.events[0]
        again.seq = 3
        try await h.records.apply([again])
        let replayed = script.events[1]
        try await h.host.database.write { db in try h.store.applyRecordsEvent(db, replayed) }

        #expect(try await h.wallet("ann").netWorthCents == 200)
        #expect(try await h.ledger("ann") == before)
    }

    @Test func replayAfterWipingGivesTheSameWalletAndLedger() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("store-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var script = EventScript()
        for i in 0..<30 {
            script.saved(
                i % 3 == 0 ? "bob" : "ann", "e\(i)", ms: Int64(i + 1) * 7 * 60_123, minutesAfterStart: Double(i))
        }
        script.add("session.created", "ann", ["x": 1])  // a type the store ignores
        script.deleted("ann", "e4")
        script.saved("ann", "e99", ms: hour)

        let path = directory + "/store.sqlite"
        let first = try StoreHarness(path: path)
        for chunk in stride(from: 0, to: script.events.count, by: 7) {
            try await first.records.apply(Array(script.events[chunk..<min(chunk + 7, script.events.count)]))
        }
        let wallets = [try await first.wallet("ann"), try await first.wallet("bob")]
        let ledgers = [try await first.ledger("ann"), try await first.ledger("bob")]
        #expect(ledgers[0].contains { $0.kind == "correction" && $0.reference == "e4" })

        // Wipe store.sqlite and replay records' whole stream from 0, in one batch this time.
        try FileManager.default.removeItem(atPath: directory)
        let second = try StoreHarness(path: path)
        #expect(try await second.records.position() == 0)
        #expect(try await second.wallet("ann").netWorthMs == 0)
        try await second.records.apply(script.events)
        #expect([try await second.wallet("ann"), try await second.wallet("bob")] == wallets)
        #expect([try await second.ledger("ann"), try await second.ledger("bob")] == ledgers)
        #expect(try await second.records.position() == Int64(script.events.count))
    }

    @Test func aDeletedEntryIsTakenBackAndItemsStayOwned() async throws {
        let h = try StoreHarness()
        var script = EventScript()
        script.saved("ann", "e1", ms: 5 * hour)
        script.saved("ann", "e2", ms: hour)
        try await h.records.apply(script.events)
        _ = try await h.buy("ann", "pencil")  // $5.00

        script.deleted("ann", "e1")
        script.deleted("ann", "e1")  // a duplicate deletion
        script.deleted("ann", "unknown")  // never credited: ignored
        try await h.records.apply(Array(script.events.suffix(3)))

        let wallet = try await h.wallet("ann")
        #expect(wallet == WalletView(netWorthCents: 100, netWorthMs: hour, spentCents: 500, cashCents: -400))
        let ledger = try await h.ledger("ann")
        #expect(ledger.map(\.kind) == ["correction", "purchase", "earning", "earning"])
        #expect(ledger[0].amountCents == -500)
        #expect(ledger[0].durationMs == -5 * hour)
        #expect(ledger[0].balanceAfterCents == -400)
        let items: ItemsResult = try await h.call("store.items", user: "ann")
        #expect(items.items.first { $0.id == "pencil" }?.owned == true)
        #expect(items.cashCents == -400)
        // With negative cash nothing more can be bought; the shortfall counts what is owed,
        // so tracking exactly that much more buys it.
        let error = try await h.error("store.buy", ["itemId": "notebook"], user: "ann")
        #expect(error.code == .failedPrecondition)
        #expect(error.details?["shortfallCents"] == .number(2_400))
        #expect(error.message.contains("short by $24.00 (24h 0m more tracked)"), "\(error.message)")
        script.saved("ann", "e3", ms: 24 * hour)
        try await h.records.apply(Array(script.events.suffix(1)))
        #expect(try await h.buy("ann", "notebook").wallet.cashCents == 0)
    }

    @Test func userDeletedPurgesThatUserOnly() async throws {
        let h = try StoreHarness()
        var script = EventScript()
        script.saved("ann", "e1", ms: 10 * hour)
        script.saved("bob", "e2", ms: 10 * hour)
        try await h.records.apply(script.events)
        _ = try await h.buy("ann", "pencil", key: "k1")
        _ = try await h.call("store.quote", user: "ann", as: QuoteResult.self)

        try await h.auth.apply([Event(seq: 1, type: "user.deleted", userId: "ann", at: Date(), data: ["userId": "ann"])]
        )

        #expect(try await h.wallet("ann") == WalletView(netWorthCents: 0, netWorthMs: 0, spentCents: 0, cashCents: 0))
        #expect(try await h.ledger("ann").isEmpty)
        let items: ItemsResult = try await h.call("store.items", user: "ann")
        #expect(items.items.allSatisfy { !$0.owned })
        #expect(try await h.wallet("bob").netWorthCents == 1_000)
        let leftovers = try await h.host.database.read { db in
            try Int.fetchOne(
                db,
                sql: """
                    SELECT (SELECT COUNT(*) FROM timeEntry WHERE userId = 'ann') + (SELECT COUNT(*) FROM visitor WHERE userId = 'ann')
                         + (SELECT COUNT(*) FROM idempotency WHERE principal = 'ann') + (SELECT COUNT(*) FROM purchase WHERE userId = 'ann')
                    """)
        }
        #expect(leftovers == 0)

        // A late or replayed records event for the deleted user does not bring the wallet back.
        var late = EventScript()
        late.saved("ann", "e3", ms: hour)
        var event = late.events[0]
        event.seq = 3
        try await h.records.apply([event])
        #expect(try await h.wallet("ann").netWorthMs == 0)
    }

    @Test func aMalformedEventIsSkippedNotBlocking() async throws {
        let h = try StoreHarness()
        var script = EventScript()
        script.add("time.saved", "ann", ["id": "bad", "durationMs": "an hour"])
        script.add("time.saved", "ann", ["id": "neg", "durationMs": -5])
        script.add("time.saved", "ann", ["id": "huge", "durationMs": .number(9e18)])
        script.add("time.saved", "ann", ["id": "huge2", "durationMs": .number(9e18)])
        script.add("time.saved", nil, ["id": "nobody", "durationMs": 5])
        script.add("time.deleted", "ann", ["nope": 1])
        script.saved("ann", "good", ms: hour)
        try await h.records.apply(script.events)
        #expect(try await h.wallet("ann").netWorthCents == 100)
        #expect(try await h.records.position() == 7)
    }

    /// A real EventConsumer, catching up from a producer's outbox through `events.since`.
    @Test func aRunningConsumerCatchesUpFromTheProducer() async throws {
        let h = try StoreHarness()
        var logger = Logger(label: "producer")
        logger.logLevel = .critical
        let producer = try ServiceHost(
            descriptor: ServiceDescriptor(name: "records"), database: .inMemory, migrator: DatabaseMigrator(),
            eventsEndpoint: nil, logger: logger)
        try await producer.database.write { db in
            for i in 1...5 {
                try Outbox.append(
                    db, type: "time.saved", userId: "ann",
                    data: [
                        "id": .string("e\(i)"), "userId": "ann", "activityId": "a", "durationMs": .number(.init(hour)),
                        "startedAt": "2026-04-01T07:00:00Z", "savedAt": "2026-04-01T08:00:00Z",
                    ]
                        as JSONValue)
            }
        }
        let consumer = EventConsumer(
            settings: .init(
                producer: "records", eventsEndpoint: "ipc:///tmp/lb-store-nobody.sock", pollInterval: .milliseconds(20)),
            producerRPC: InProcessTransport(producer.dispatcher(router: producer.makeRouter(), sessions: nil)),
            sink: h.records, logger: logger)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await consumer.run() }
            defer { group.cancelAll() }
            for _ in 0..<300 where consumer.position < 5 { try await Task.sleep(for: .milliseconds(10)) }
            #expect(consumer.position == 5)
            #expect(try await h.wallet("ann").netWorthCents == 500)
            // One more event, picked up by the next poll.
            try await producer.database.write { db in
                try Outbox.append(
                    db, type: "time.saved", userId: "ann",
                    data: [
                        "id": "e6", "userId": "ann", "activityId": "a", "durationMs": .number(.init(hour)),
                        "startedAt": "2026-04-01T09:00:00Z", "savedAt": "2026-04-01T10:00:00Z",
                    ] as JSONValue)
            }
            for _ in 0..<300 where consumer.position < 6 { try await Task.sleep(for: .milliseconds(10)) }
            #expect(try await h.wallet("ann").netWorthCents == 600)
        }
    }
}
