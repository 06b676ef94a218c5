// A shard move copies the user's idempotency keys page by page while the hourly prune may
// run (Services/Records/RecordsService/Shards.swift, `exportPage`).
import Foundation
import GRDB
@testable import RecordsService
import Storage
import Testing

@Suite struct ShardExportTests {
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
}
