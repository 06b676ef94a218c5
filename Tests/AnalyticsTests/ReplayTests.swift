// Exactly-once effect: a wiped database replaying the same streams (in any interleaving of
// producers) gives identical answers; an event delivered twice changes nothing, whether the
// checkpoint skips it or a handler sees it again; `user.deleted` purges one user only.
import Foundation
import GRDB
import Runtime
import Storage
import Testing
import Wire

@testable import AnalyticsService

@Suite struct ReplayTests {
    /// Every domain, two users, edits and deletes.
    func scenario(_ h: Harness) async throws {
        for user in ["alice", "bob"] {
            try await h.feed("vehicle.created", vehicle("v-\(user)", distance: "km", volume: "l"), user: user)
            try await h.feed(
                "fillup.created",
                fillup("f1-\(user)", vehicle: "v-\(user)", date: day(0), odometer: 1000, volume: 30, totalMinor: 5000),
                user: user)
            try await h.feed(
                "fillup.created",
                fillup("f3-\(user)", vehicle: "v-\(user)", date: day(8), odometer: 1900, volume: 50, totalMinor: 8000),
                user: user)
            try await h.feed(
                "fillup.created",
                fillup(
                    "f2-\(user)", vehicle: "v-\(user)", date: day(4), odometer: 1400, volume: 20.5, totalMinor: 3300,
                    full: false),
                user: user)
            try await h.feed(
                "fillup.updated",
                fillup("f3-\(user)", vehicle: "v-\(user)", date: day(8), odometer: 1950, volume: 48, totalMinor: 7900),
                user: user)
            try await h.feed("expense.created", expense("e1-\(user)", 1200, on: day(0), category: "food"), user: user)
            try await h.feed("expense.created", expense("e2-\(user)", 900, on: day(9)), user: user)
            try await h.feed("expense.updated", expense("e2-\(user)", 950, on: day(9), category: "fun"), user: user)
            try await h.feed("attendance.created", entry("a1-\(user)", "arrival", day(0, hour: 9)), user: user)
            try await h.feed("attendance.created", entry("d1-\(user)", "departure", day(0, hour: 17)), user: user)
            try await h.feed("attendance.created", entry("a2-\(user)", "arrival", day(1, hour: 9)), user: user)
            try await h.feed(
                "activity.created", ["id": .string("act-\(user)"), "name": "Piano", "createdAt": time(day(0))], user: user)
            try await h.feed(
                "time.saved",
                [
                    "id": .string("t-\(user)"), "userId": .string(user), "activityId": .string("act-\(user)"),
                    "durationMs": 3_600_000, "startedAt": time(day(1)), "savedAt": time(day(1)),
                ], user: user)
            try await h.feed("catch.created", fish("c1-\(user)", species: "Pike", bait: "worm"), user: user)
            try await h.feed("catch.created", fish("c2-\(user)", species: "Perch", bait: "jig"), user: user)
            try await h.weather(
                "conditions.ready", ready("c1-\(user)", temperature: "10 to 15 °C", pressure: "1010 to 1020 hPa"),
                user: user)
            try await h.weather(
                "conditions.unavailable", ["catchId": .string("c2-\(user)"), "reason": "timeout"], user: user)
        }
        try await h.feed("fillup.deleted", ["id": "f2-bob", "userId": "bob", "vehicleId": "v-bob"], user: "bob")
        try await h.feed("catch.deleted", ["id": "c2-bob", "userId": "bob"], user: "bob")
    }

    /// Every answer the service gives for a user, as JSON.
    func answers(_ h: Harness, user: String) async throws -> [JSONValue] {
        var all: [JSONValue] = []
        for units in ["l_per_100km", "mpg_us"] {
            all.append(
                try await h.call(
                    "analytics.fuel.stats", ["vehicleId": .string("v-\(user)"), "units": .string(units)], user: user))
        }
        all.append(try await h.call("analytics.fuel.economy", ["vehicleId": .string("v-\(user)")], user: user))
        for by in ["day", "week", "month", "year", "category"] {
            all.append(try await h.call("analytics.expense.summary", ["by": .string(by)], user: user))
        }
        for by in ["day", "week"] {
            all.append(try await h.call("analytics.attendance.hours", ["by": .string(by)], user: user))
        }
        all.append(try await h.call("analytics.time.summary", [:], user: user))
        all.append(try await h.call("analytics.suggest", [:], user: user))
        all.append(try await h.call("analytics.suggest", ["species": "pike"], user: user))
        return all
    }

    @Test func theWriterConnectionRunsTheLargerCache() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("lb-cache-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let harness = try Harness(path: directory.appendingPathComponent("analytics.sqlite").path)
        // Read on the writer connection, the one the projections run on.
        let size = try await harness.service.host.database.write { db in try Int.fetchOne(db, sql: "PRAGMA cache_size") }
        #expect(size == -AnalyticsService.writerCacheKiB)
        #expect(AnalyticsService.writerCacheKiB > 2_000)
    }

    @Test func aWipedDatabaseRebuildsIdenticalAnswers() async throws {
        let directory = "/tmp/lb-an-\(UUID().uuidString.prefix(8).lowercased())"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let original = try Harness(path: directory + "/analytics.sqlite")
        try await scenario(original)
        let expected = [try await answers(original, user: "alice"), try await answers(original, user: "bob")]
        #expect(expected[0][0]["average"] != nil)

        // A new, empty file; the weather stream is replayed before the records stream, in batches.
        let rebuilt = try Harness(path: directory + "/rebuilt.sqlite")
        let events = original.events
        try await rebuilt.deliver(events["weather-fetcher"]!, from: "weather-fetcher")
        let records = events["records"]!
        for start in stride(from: 0, to: records.count, by: 7) {
            try await rebuilt.deliver(Array(records[start..<min(start + 7, records.count)]), from: "records")
        }
        #expect([try await answers(rebuilt, user: "alice"), try await answers(rebuilt, user: "bob")] == expected)

        // One event at a time, the streams interleaved the other way round.
        let interleaved = try Harness()
        for event in records { try await interleaved.deliver([event], from: "records") }
        for event in events["weather-fetcher"]! { try await interleaved.deliver([event], from: "weather-fetcher") }
        #expect(
            [try await answers(interleaved, user: "alice"), try await answers(interleaved, user: "bob")] == expected)
    }

    @Test func anEventDeliveredTwiceChangesNothing() async throws {
        let h = try Harness()
        try await scenario(h)
        let expected = try await answers(h, user: "alice")
        // Through the sink: the checkpoint skips what was applied.
        for (producer, events) in h.events { try await h.deliver(events, from: producer) }
        #expect(try await answers(h, user: "alice") == expected)
        // Straight to the handlers, bypassing the checkpoint: each handler is idempotent on its own.
        let repeated = try Harness()
        for (producer, events) in h.events.sorted(by: { $0.key < $1.key }) {
            for event in events {
                let apply = AnalyticsService.apply(producer)
                try await repeated.service.host.database.write { db in
                    try apply(db, event)
                    try apply(db, event)
                }
            }
        }
        #expect(try await answers(repeated, user: "alice") == expected)
    }

    @Test func userDeletedPurgesThatUserOnly() async throws {
        let h = try Harness()
        try await scenario(h)
        let bob = try await answers(h, user: "bob")
        // what a catch-up's backlog would have left behind for each of them
        try await h.service.host.database.write { db in
            try db.execute(sql: "INSERT INTO catchTallyStale (userId) VALUES ('alice'), ('bob')")
            try db.execute(sql: "INSERT INTO vehicleStale (vehicleId, userId) VALUES ('v-alice', 'alice'), ('v-bob', 'bob')")
        }
        let fills = "SELECT COUNT(*) FROM fill WHERE userId = ?"
        #expect(try await h.read { try Int.fetchOne($0, sql: fills, arguments: ["alice"]) } == 3)
        try await h.feed("user.deleted", ["userId": "alice", "username": "alice"], user: "alice", from: "auth")
        // fill-ups go through the user's vehicles, so their count by user is checked here
        #expect(try await h.read { try Int.fetchOne($0, sql: fills, arguments: ["alice"]) } == 0)
        #expect(try await h.read { try Int.fetchOne($0, sql: fills, arguments: ["bob"]) } == 2)
        #expect(try await h.failure("analytics.fuel.stats", ["vehicleId": "v-alice"]).code == .notFound)
        #expect(try await h.call("analytics.suggest")["catches"] == 0)
        #expect(try await h.call("analytics.time.summary")["netWorth"]?["totalMs"] == 0)
        #expect(try await h.call("analytics.expense.summary")["currencies"]?.arrayValue == [])
        // the purge statements, turned into counts
        for sql in Schema.userTables.map({ $0.replacingOccurrences(of: "DELETE FROM", with: "SELECT COUNT(*) FROM") }) {
            let left = try await h.read { db in try Int.fetchOne(db, sql: sql, arguments: ["alice"]) }
            #expect(left == 0, "\(sql)")
        }
        #expect(try await h.read { try String.fetchAll($0, sql: "SELECT userId FROM catchTallyStale") } == ["bob"])
        #expect(try await h.read { try String.fetchAll($0, sql: "SELECT vehicleId FROM vehicleStale") } == ["v-bob"])
        #expect(try await answers(h, user: "bob") == bob)
        // Her events published before the deletion and applied after it (records' and
        // weather-fetcher's streams are not ordered with auth's) bring nothing back.
        try await h.feed("expense.created", expense("e-late", 500, on: day(2)), user: "alice")
        for sql in Schema.userTables.map({ $0.replacingOccurrences(of: "DELETE FROM", with: "SELECT COUNT(*) FROM") }) {
            let left = try await h.read { db in try Int.fetchOne(db, sql: sql, arguments: ["alice"]) }
            #expect(left == 0, "after a late event: \(sql)")
        }
        #expect(try await h.call("analytics.expense.summary")["currencies"]?.arrayValue == [])
    }

    /// Deleting an account finds every table's rows through an index: a scan would read the
    /// whole store in the consumer's transaction, and grow with it. (vehicleStale is scanned:
    /// it holds a row per vehicle only between a catch-up's backlog and its settle, empty
    /// otherwise.)
    @Test func accountDeletionScansNoTable() async throws {
        let h = try Harness()
        for sql in Schema.userTables where !sql.hasPrefix("DELETE FROM vehicleStale ") {
            let plan = try await h.read { db in
                try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + sql, arguments: ["alice"]).map { $0["detail"] as String }
            }
            #expect(!plan.isEmpty, "\(sql)")
            #expect(!plan.contains { $0.hasPrefix("SCAN ") }, "\(sql): \(plan)")
        }
    }

    @Test func unreadablePayloadIsSkippedNotRetriedForever() async throws {
        let h = try Harness()
        let handler = h.service.handler(for: "records")
        let bad = Event(seq: 1, type: "fillup.created", userId: "alice", at: day(0), data: ["id": "x"])
        let good = Event(
            seq: 2, type: "expense.created", userId: "alice", at: day(0), data: expense("e1", 100, on: day(0)))
        try await DatabaseEventSink(producer: "records", writer: h.service.host.database, handler: handler).apply([
            bad, good,
        ])
        #expect(try await h.call("analytics.expense.summary")["currencies"]?.arrayValue?.count == 1)
        #expect(try await h.read { db in try Checkpoint.get(db, producer: "records") } == 2)
    }
}
