// The cheap per-request pieces and batched event application: the table-based hex
// encoder, and a consumer sink that applies a batch of events in one transaction with one
// checkpoint — a failure in the middle of a batch must neither lose nor double-apply any
// event, and events the sink does not handle must not be applied or written.
import Foundation
import GRDB
import Logging
import Runtime
import Storage
import Synchronization
import Testing
import Wire

@Suite struct HexTests {
    @Test func matchesFormattingEveryByte() {
        let all = (0...255).map { UInt8($0) }
        #expect(Hex.encode(all) == all.map { String(format: "%02x", $0) }.joined())
        #expect(Hex.encode([UInt8]()) == "")
        #expect(Hex.encode(Data([0xde, 0xad, 0xbe, 0xef])) == "deadbeef")
    }

    @Test func uuidsHaveTheCanonicalShape() {
        let bytes: [UInt8] = [0x01, 0x90, 0xa6, 0xb0, 0x00, 0x0f, 0x70, 0x00, 0x80, 0x00, 0xff, 0xee, 0xdd, 0xcc, 0xbb, 0xaa]
        #expect(Hex.uuid(bytes) == "0190a6b0-000f-7000-8000-ffeeddccbbaa")
        for _ in 0..<100 {
            let id = ID.make()
            #expect(ID.isValid(id), "\(id)")
        }
    }

    @Test func sha256IsTheKnownDigest() {
        #expect(Crypto.sha256Hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }
}

@Suite struct BatchCheckpointTests {
    /// A consumer database whose projection is a table keyed by seq: applying an event
    /// twice fails its PRIMARY KEY.
    static func consumerDatabase(_ path: String) throws -> any DatabaseWriter {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(sql: "CREATE TABLE seen (seq INTEGER PRIMARY KEY, type TEXT NOT NULL)")
        }
        return try ServiceDatabase.open(DatabaseSettings(path: path), migrator: migrator)
    }

    static func events(_ range: ClosedRange<Int64>, type: (Int64) -> String = { _ in "note.added" }) -> [Event] {
        range.map { Event(seq: $0, type: type($0), userId: "u", at: Date(timeIntervalSince1970: 0), data: [:]) }
    }

    static func seen(_ db: any DatabaseWriter) throws -> [Int64] {
        try db.read { try Int64.fetchAll($0, sql: "SELECT seq FROM seen ORDER BY seq") }
    }

    @Test func aFailureMidBatchLosesAndDoublesNothing() async throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let db = try Self.consumerDatabase(scratch.path + "/consumer.sqlite")
        let failAt = Locked<Int64?>(7)
        let sink = DatabaseEventSink(producer: "p", writer: db) { db, event in
            if failAt.value == event.seq { throw ServiceError(.internal, "crash while applying \(event.seq)") }
            try db.execute(sql: "INSERT INTO seen (seq, type) VALUES (?, ?)", arguments: [event.seq, event.type])
        }
        try await sink.apply(Self.events(1...3))
        // Events 4…10 in one batch; 7 fails: the whole batch is rolled back, 1…3 stay.
        await #expect(throws: ServiceError.self) { try await sink.apply(Self.events(4...10)) }
        #expect(try Self.seen(db) == [1, 2, 3])
        #expect(try await sink.position() == 3)
        // Replayed after the failure (with duplicates of what was applied): each once.
        failAt.value = nil
        try await sink.apply(Self.events(2...10))
        #expect(try Self.seen(db) == Array(1...10))
        #expect(try await sink.position() == 10)
        try await sink.apply(Self.events(1...10))  // all duplicates: nothing changes
        #expect(try Self.seen(db) == Array(1...10))
    }

    @Test func eventsOfOtherTypesAreSkippedWithoutAWriteUntilTheLimit() async throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let db = try Self.consumerDatabase(scratch.path + "/consumer.sqlite")
        let sink = DatabaseEventSink(producer: "p", writer: db, types: ["catch."]) { db, event in
            try db.execute(sql: "INSERT INTO seen (seq, type) VALUES (?, ?)", arguments: [event.seq, event.type])
        }
        func stored() throws -> Int64 { try db.read { try Checkpoint.get($0, producer: "p") } }
        #expect(try await sink.position() == 0)
        try await sink.apply(Self.events(1...5, type: { _ in "expense.created" }))
        // Nothing written: the position moved in memory only.
        #expect(try stored() == 0)
        #expect(try await sink.position() == 5)
        // A batch with an event it handles stores everything up to it, in one transaction.
        try await sink.apply(Self.events(6...8, type: { $0 == 7 ? "catch.created" : "expense.created" }))
        #expect(try Self.seen(db) == [7])
        #expect(try stored() == 8)
        // Unhandled events past the limit are checkpointed anyway.
        let far = 8 + DatabaseEventSink.lazyCheckpointLimit + 1
        try await sink.apply(Self.events(9...far, type: { _ in "expense.created" }))
        #expect(try stored() == far)
        #expect(try Self.seen(db) == [7])
        // A fresh sink (a restart) starts from the stored checkpoint: what it replays from
        // there are events it does not handle, so nothing is applied twice.
        let restarted = DatabaseEventSink(producer: "p", writer: db, types: ["catch."]) { db, event in
            try db.execute(sql: "INSERT INTO seen (seq, type) VALUES (?, ?)", arguments: [event.seq, event.type])
        }
        #expect(try await restarted.position() == far)
    }

    @Test func aLiveBurstIsAppliedInBatchesExactlyOnce() async throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        try await withRunningService { endpoint, host, dir in
            let client = try ServiceClient(service: "test", endpoint: endpoint)
            defer { client.close() }
            let db = try Self.consumerDatabase(scratch.path + "/consumer.sqlite")
            let transactions = Locked(0)
            let sink = CountingSink(
                inner: DatabaseEventSink(producer: "test", writer: db) { db, event in
                    try db.execute(sql: "INSERT INTO seen (seq, type) VALUES (?, ?)", arguments: [event.seq, event.type])
                }, applies: transactions)
            var logger = Logger(label: "consumer")
            logger.logLevel = .critical
            let consumer = EventConsumer(
                settings: .init(producer: "test", eventsEndpoint: "ipc://\(dir.path)/test.events.sock", pollInterval: .seconds(30)),
                producerRPC: client, sink: sink, logger: logger)
            let task = Task { try await consumer.run() }
            defer { task.cancel() }
            for _ in 0..<100 where !consumer.progress.status.ready { try await Task.sleep(for: .milliseconds(20)) }
            try await Task.sleep(for: .milliseconds(200))  // the SUB is connected
            let count = 200
            try await withThrowingTaskGroup(of: Void.self) { group in
                for i in 0..<count {
                    group.addTask { _ = try await client.call("test.note.add", NoteBody(text: "burst \(i)"), as: NoteResult.self) }
                }
                try await group.waitForAll()
            }
            for _ in 0..<250 where consumer.position < Int64(count) { try await Task.sleep(for: .milliseconds(20)) }
            #expect(consumer.position == Int64(count))
            #expect(try Self.seen(db) == Array(1...Int64(count)))
            // Group commit published the burst in few messages' time: far fewer transactions than events.
            let applied = transactions.value
            #expect(applied < count / 2, "\(applied) transactions for \(count) events")
        }
    }
}

/// Counts `apply` calls (each one transaction of the inner sink).
struct CountingSink: EventSink {
    let inner: DatabaseEventSink
    let applies: Locked<Int>
    func position() async throws -> Int64? { try await inner.position() }
    func apply(_ events: [Event]) async throws {
        applies.value += 1
        try await inner.apply(events)
    }
}

final class Locked<Value: Sendable>: Sendable {
    private let storage: Mutex<Value>
    init(_ value: Value) { storage = Mutex(value) }
    var value: Value {
        get { storage.withLock { $0 } }
        set { storage.withLock { $0 = newValue } }
    }
}

@Suite struct JSONValueDecodingTests {
    struct Inner: Codable, Equatable {
        var when: Date
        var tags: [String]
        var note: String?
    }

    struct Payload: Codable, Equatable {
        var id: String
        var count: Int
        var big: Int64
        var ratio: Double
        var full: Bool
        var inner: Inner
        var list: [Inner]
        var missing: Int?
        var nested: [[Int]]
        var map: [String: Int]
    }

    /// What the old path (JSON text, then WireCoding.decoder) gives, for comparison.
    static func roundTrip<T: Decodable>(_ value: JSONValue, as type: T.Type) throws -> T {
        try WireCoding.decoder.decode(T.self, from: WireCoding.encode(value))
    }

    @Test func decodesWhatTheJSONDecoderDecodes() throws {
        let value: JSONValue = [
            "id": "a1", "count": 3, "big": 4_000_000_000_000, "ratio": 1.25, "full": true,
            "inner": ["when": "2026-05-01T16:45:00+02:00", "tags": ["x", "y"]],
            "list": [["when": "2026-05-01T14:45:00.250Z", "tags": [], "note": "n"]],
            "nested": [[1, 2], []], "map": ["a": 1], "extra": "ignored",
        ]
        let direct = try value.decode(Payload.self)
        #expect(direct == (try Self.roundTrip(value, as: Payload.self)))
        #expect(direct.inner.when == Date(timeIntervalSince1970: 1_777_646_700))
        #expect(direct.missing == nil)
    }

    @Test func refusesWhatTheJSONDecoderRefuses() {
        let base: [String: JSONValue] = [
            "id": "a1", "count": 3, "big": 1, "ratio": 1, "full": false,
            "inner": ["when": "2026-05-01T14:45:00Z", "tags": []], "list": [], "nested": [], "map": [:],
        ]
        var cases: [JSONValue] = []
        for (key, bad) in [("count", JSONValue.number(1.5)), ("count", "3"), ("full", 1), ("id", .null), ("list", [:])] {
            var object = base
            object[key] = bad
            cases.append(.object(object))
        }
        var noId = base
        noId["id"] = nil
        cases.append(.object(noId))
        var badTime = base
        badTime["inner"] = ["when": "yesterday", "tags": []]
        cases.append(.object(badTime))
        for value in cases {
            #expect(throws: DecodingError.self) { try value.decode(Payload.self) }
            #expect(throws: DecodingError.self) { try Self.roundTrip(value, as: Payload.self) }
        }
    }
}
