// A shard move on the source: the idempotency keys copied page by page while the hourly
// prune may run, and retries of writes while the user is held (Services/Records/RecordsService/Shards.swift).
import Foundation
import GRDB
@testable import RecordsService
import Storage
import Testing
import Wire

@Suite struct ShardMoveTests {
    @Test("keys pruned between two pages of a move do not make later keys slip past the next page")
    func pruneBetweenPagesSkipsNothing() async throws {
        let records = try Harness()
        let keys = (1...7).map { "key-\($0)" }
        for (n, key) in keys.enumerated() {
            try await records.ok("records.expense.add", #"{"name":"Coffee \#(n)","amountMinor":450}"#, key: key)
        }
        try await records.ok("records.expense.add", #"{"name":"Tea","amountMinor":300}"#, as: "bob", key: "key-2")

        let first = try await RecordsService.exportPage(
            database: records.host.database, photos: records.photos, userId: "alice", table: "idempotency", after: 0,
            limit: 2)
        var copied = first.rows.compactMap { $0["key"]?.stringValue }
        #expect(copied == ["key-1", "key-2"])

        // The janitor's prune, with a cutoff that forgets the first page's two keys (the
        // oldest): what an hourly run does to keys 30 days old.
        let pruned = try await records.host.database.write { db -> Int in
            let third = try #require(
                try Double.fetchOne(db, sql: "SELECT createdAt FROM idempotency WHERE principal = 'alice' AND key = 'key-3'"))
            return try Idempotency.prune(db, before: Date(timeIntervalSince1970: third))
        }
        #expect(pruned == 2)  // alice's key-1 and key-2 (bob's key-2 came later)

        var after = try #require(first.next)
        var afterKey = try #require(first.nextKey)
        while true {
            let page = try await RecordsService.exportPage(
                database: records.host.database, photos: records.photos, userId: "alice", table: "idempotency",
                after: after, afterKey: afterKey, limit: 2)
            copied += page.rows.compactMap { $0["key"]?.stringValue }
            guard let next = page.next else {
                #expect(page.nextKey == nil)
                break
            }
            after = next
            afterKey = try #require(page.nextKey)
        }
        #expect(copied == keys, "every key that was there when its page was read is copied, once")
    }

    @Test("a retry of a write that committed before the user's hold is answered from the log, not refused")
    func aRetryDuringAHoldIsAnsweredFromTheLog() async throws {
        let records = try Harness(guarded: true)
        let body = #"{"name":"Lunch","amountMinor":1250}"#
        let first = try await records.ok("records.expense.add", body, key: "lunch-1")
        try await records.ok("records.shard.freeze", #"{"userId":"alice","shard":2}"#, as: "operator")

        // The first attempt's answer was lost; the client's retry (same key, same request)
        // arrives while the user is held.
        #expect(try await records.ok("records.expense.add", body, key: "lunch-1") == first)
        // A new write is held, as before; the key reused for another request is refused.
        let held = try await records.fails("records.expense.add", #"{"name":"Tea","amountMinor":300}"#, key: "tea-1")
        #expect(held.code == .unavailable && held.details?["reason"]?.stringValue == "shard_move")
        let reused = try await records.fails("records.expense.add", #"{"name":"Tea","amountMinor":300}"#, key: "lunch-1")
        #expect(reused.code == .alreadyExists)
        #expect(try await records.count("expense") == 1)
    }

    @Test("the largest amounts and the oldest dates a record may hold move to another shard exactly")
    func extremeValuesMove() async throws {
        let source = try Harness(guarded: true)
        try await source.ok("records.expense.add", #"{"name":"House","amountMinor":1000000000000000,"date":"1600-01-01T00:00:00Z"}"#)
        try await source.ok("records.shard.freeze", #"{"userId":"alice","shard":2}"#, as: "operator")
        let page = try await RecordsService.exportPage(
            database: source.host.database, photos: source.photos, userId: "alice", table: "expense", after: 0, limit: 10)
        #expect(page.rows.count == 1)
        let target = try Harness(guarded: true, shard: 2)
        let rows = JSONValue.array(page.rows).jsonText
        try await target.ok(
            "records.shard.import", #"{"userId":"alice","shard":1,"table":"expense","rows":\#(rows)}"#, as: "operator")
        try await target.ok("records.shard.commit", #"{"userId":"alice","shard":1}"#, as: "operator")
        let moved = try #require(try await target.ok("records.expense.list")["items"]?.arrayValue?.first)
        #expect(moved["amountMinor"]?.int64Value == 1_000_000_000_000_000)
        #expect(moved["date"]?.stringValue == "1600-01-01T00:00:00Z")
    }
}
