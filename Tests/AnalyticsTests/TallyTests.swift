// The catch counters' stored form (Services/Analytics/AnalyticsService/Tally.swift): one
// row per user, species, water and bait, its counts in one BLOB, each bucket by its id in
// `tallyBucket`. Held here: the bytes round-trip and are the same however the counts were
// reached, a merge is the arithmetic of the counts, damaged bytes are an error (never a
// wrong answer), the counters always equal a recount of the stored catches and answers, a
// bucket first counted after a service read the names is named, and a database with the
// earlier one-count rows or with bucket texts in the rows keeps every count and suggestion
// through the upgrade (a text row it cannot read is recounted instead).
import Foundation
import GRDB
import Testing
import TestSupport
import Wire

@testable import AnalyticsService

/// One count of catchTally as the earlier schema stored it, one row each.
struct TallyCount: Hashable, Comparable, CustomStringConvertible {
    var userId: String
    var species: String
    var water: String
    var dimension: String
    var bucket: String
    var bait: String
    var n: Int

    var fields: [String] { [userId, species, water, dimension, bucket, bait] }
    static func < (a: TallyCount, b: TallyCount) -> Bool {
        a.fields != b.fields ? a.fields.lexicographicallyPrecedes(b.fields) : a.n < b.n
    }
    var description: String { (fields + ["\(n)"]).joined(separator: "|") }
}

/// Every count catchTally's rows hold, decoded.
func tallyCounts(_ db: Database) throws -> [TallyCount] {
    var out: [TallyCount] = []
    for row in try Row.fetchAll(db, sql: "SELECT userId, species, water, bait, counts FROM catchTally") {
        let data: Data = row[4]
        for entry in try TallyCounts.named(db, data) {
            out.append(
                TallyCount(
                    userId: row[0], species: row[1], water: row[2], dimension: TallyCounts.dimensionKeys[Int(entry.code)],
                    bucket: entry.bucket, bait: row[3], n: entry.n))
        }
    }
    return out.sorted()
}

/// The counts of the species-and-water level at the four levels the schema before
/// "analytics.tallyRows" kept (species and/or water '' summed over).
func fourLevels(_ counts: [TallyCount]) -> [TallyCount] {
    var totals: [TallyCount: Int] = [:]
    for c in counts where c.species != "" && c.water != "" {
        for (species, water) in [(c.species, c.water), (c.species, ""), ("", c.water), ("", "")] {
            var key = c
            key.species = species
            key.water = water
            key.n = 0
            totals[key, default: 0] += c.n
        }
    }
    return totals.map { key, n in
        var c = key
        c.n = n
        return c
    }.sorted()
}

/// A database file at the schema up to `migration`, filled by `fill` and closed: (its
/// directory, to remove; its path).
func oldDatabase(upTo migration: String, _ fill: @escaping @Sendable (Database) throws -> Void) async throws
    -> (String, String)
{
    let directory = "/tmp/lb-an-\(UUID().uuidString.prefix(8).lowercased())"
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    let path = directory + "/analytics.sqlite"
    let old = try DatabaseQueue(path: path)
    try Schema.migrator.migrate(old, upTo: migration)
    try await old.write(fill)
    try old.close()
    return (directory, path)
}

/// Writes counts as the one-count rows of the schema before "analytics.tallyRows".
func insertOneCountRows(_ db: Database, _ counts: [TallyCount]) throws {
    for c in counts {
        try db.execute(
            sql: "INSERT INTO catchTally (userId, species, water, dimension, bucket, bait, n) VALUES (?, ?, ?, ?, ?, ?, ?)",
            arguments: [c.userId, c.species, c.water, c.dimension, c.bucket, c.bait, c.n])
    }
}

@Suite struct TallyTests {
    typealias Entry = TallyCounts.Entry

    /// Random entries, each bucket at most once, ids and counts from 1 to beyond one byte.
    func entries(_ random: inout SplitMix) -> [Entry] {
        var seen: [Int: Entry] = [:]
        for _ in 0..<random.next(below: 25) {
            let bucket = [0, 1, 2, 3, 5, 127, 128, 300, 70_000][random.next(below: 9)] + random.next(below: 3)
            seen[bucket] = Entry(bucket: bucket, n: 1 + random.next(below: [3, 200, 70_000][random.next(below: 3)]))
        }
        return Array(seen.values)
    }

    func counts(_ entries: [Entry]) -> [Int: Int] {
        Dictionary(entries.map { ($0.bucket, $0.n) }, uniquingKeysWith: +)
    }

    @Test func bytesRoundTripAndDoNotDependOnOrder() throws {
        var random = SplitMix(seed: 11)
        for _ in 0..<300 {
            let list = entries(&random)
            let bytes = try TallyCounts.encode(list)
            let back = try TallyCounts.decode(Data(bytes))
            #expect(counts(back) == counts(list))
            #expect(try TallyCounts.encode(list.reversed()) == bytes)
            #expect(try TallyCounts.encode(list.sorted { $0.n < $1.n }) == bytes)
            // decoded in the stored order: by bucket id
            for (a, b) in zip(back, back.dropFirst()) { #expect(a.bucket < b.bucket) }
        }
        #expect(try TallyCounts.encode([]) == [])
        #expect(try TallyCounts.encode([Entry(bucket: 1, n: 0)]) == [])
        #expect(throws: DatabaseError.self) { try TallyCounts.encode([Entry(bucket: 1, n: -1)]) }
        #expect(throws: DatabaseError.self) { try TallyCounts.encode([Entry(bucket: -1, n: 1)]) }
        #expect(throws: DatabaseError.self) {
            try TallyCounts.encode([Entry(bucket: 1, n: 1), Entry(bucket: 1, n: 2)])
        }
    }

    /// Property: a merge gives the counts' sum, zeros left out; taking from a bucket the row
    /// lacks changes nothing, taking a count below zero is an error.
    @Test func mergeIsTheCountsArithmetic() throws {
        var random = SplitMix(seed: 12)
        for _ in 0..<400 {
            let stored = entries(&random)
            var expected = counts(stored)
            var changes: [TallyCounts.Change] = []
            var below = false
            for change in entries(&random) {
                let have = expected[change.bucket] ?? 0
                // take some out: sometimes all of it, sometimes from a bucket not there
                let delta = random.next(below: 2) == 0 ? change.n : -[have, max(1, have / 2), change.n][random.next(below: 3)]
                if delta == 0 { continue }
                changes.append(TallyCounts.Change(bucket: change.bucket, delta: delta))
                if have == 0 && delta < 0 { continue }
                if have + delta < 0 { below = true }
                expected[change.bucket] = have + delta == 0 ? nil : have + delta
            }
            changes.sort { $0.bucket < $1.bucket }
            var out: [UInt8] = []
            let bytes = try TallyCounts.encode(stored)
            let merge = { try bytes.withUnsafeBytes { stored in try TallyCounts.merge(stored, changes, into: &out) } }
            if below {
                #expect(throws: DatabaseError.self) { try merge() }
            } else {
                try merge()
                #expect(counts(try TallyCounts.decode(Data(out))) == expected)
                // the same bytes as encoding the result
                #expect(out == (try TallyCounts.encode(try TallyCounts.decode(Data(out)))))
                #expect(try TallyCounts.encode(expected.map { Entry(bucket: $0, n: $1) }) == out)
            }
        }
    }

    /// `tally_merge` merges only changes the projection binds as a pointer: from SQL (a
    /// blob, a text, NULL) it is an error, never a write; through the pointer it merges, and
    /// a count taken below zero fails the UPDATE with the merge's own error.
    @Test func tallyMergeTakesOnlyTheProjectionsPointer() async throws {
        let h = try Harness()
        let stored = try TallyCounts.encode([Entry(bucket: 7, n: 2)])
        try await h.service.host.database.write { db in
            try db.execute(
                sql: "INSERT INTO catchTally (userId, species, water, bait, counts) VALUES ('u', 's', 'fresh', 'b', ?)",
                arguments: [Data(stored)])
            let values: [(any DatabaseValueConvertible)?] = [Data([0]), "text", nil]
            for value in values {
                let refused = #expect(throws: DatabaseError.self) {
                    try db.execute(sql: "UPDATE catchTally SET counts = tally_merge(counts, ?)", arguments: [value])
                }
                #expect(refused?.message?.contains("merge request") == true)
            }
            let update = try Bound(db, "UPDATE catchTally SET counts = tally_merge(counts, ?) WHERE userId = 'u'")
            func merge(_ delta: Int) throws -> TallyCounts.MergeRequest {
                try TallyCounts.runMerge(update, parameter: 1, [TallyCounts.Change(bucket: 7, delta: delta)])
            }
            let added = try merge(3)
            #expect(added.merged == 1 && !added.empty)
            let counts = try Data.fetchOne(db, sql: "SELECT counts FROM catchTally")
            #expect(try counts.map(TallyCounts.decode) == [Entry(bucket: 7, n: 5)])
            let error = #expect(throws: DatabaseError.self) { try merge(-6) }
            #expect(error?.resultCode == .SQLITE_CONSTRAINT)
            let emptied = try merge(-5)
            #expect(emptied.merged == 1 && emptied.empty)
        }
    }

    @Test func damagedBytesAreAnErrorNotAnAnswer() throws {
        let good = try TallyCounts.encode([Entry(bucket: 3, n: 300), Entry(bucket: 200, n: 1)])
        #expect(try TallyCounts.decode(Data(good)).count == 2)
        // cut anywhere but between the two entries (id 3, then 300 in two bytes)
        let between = 1 + 2
        for cut in 1..<good.count where cut != between {
            #expect(throws: DatabaseError.self) { try TallyCounts.decode(Data(good.prefix(cut))) }
        }
        // a zero count, a number that never ends, ids out of order or twice
        for bad: [UInt8] in [[3, 0], [3] + Array(repeating: 0xff, count: 12), [5, 1, 3, 1], [5, 1, 5, 2]] {
            #expect(throws: DatabaseError.self) { try TallyCounts.decode(Data(bad)) }
            var out: [UInt8] = []
            #expect(throws: DatabaseError.self) {
                try bad.withUnsafeBytes { try TallyCounts.merge($0, [TallyCounts.Change(bucket: 9, delta: 1)], into: &out) }
            }
        }
    }

    /// A row naming a bucket id `tallyBucket` lacks, or naming its ids out of order or twice
    /// (which would list a bucket twice), is an error, not an answer.
    @Test func aBucketWithoutANameOrTwiceIsAnError() async throws {
        let h = try Harness()
        try await h.feed("catch.created", fish("c1", species: "Pike", bait: "worm"))
        try await h.weather("conditions.ready", ready("c1", temperature: "5 to 10 °C", pressure: "1000 to 1010 hPa"))
        #expect(try await h.suggest()["ready"] == 1)
        let stored = try await h.read { db in try Data.fetchOne(db, sql: "SELECT counts FROM catchTally LIMIT 1") }
        let entries = try TallyCounts.decode(try #require(stored))
        #expect(entries.count > 3)
        var twice: [UInt8] = []
        for entry in [entries[1], entries[0], entries[1]] { TallyCounts.append(entry.bucket, entry.n, to: &twice) }
        for bad in [try TallyCounts.encode([Entry(bucket: 999, n: 1)]), twice] {
            try await h.service.host.database.write { db in
                try db.execute(sql: "UPDATE catchTally SET counts = ?", arguments: [Data(bad)])
            }
            let error = try await h.failure("analytics.suggest")
            #expect(error.code == .internal)
        }
    }

    /// The names a service has read serve its later suggestions; a bucket first counted after
    /// them (a new band from the weather-fetcher) is named too, and each id stands for the
    /// bucket it was given for (read back with plain SQL, not through `TallyBuckets`).
    @Test func aBucketCountedAfterTheNamesWereReadIsNamed() async throws {
        let h = try Harness()
        try await h.feed("catch.created", fish("c1", species: "Pike", bait: "worm"))
        try await h.weather("conditions.ready", ready("c1", temperature: "5 to 10 °C", pressure: "1000 to 1010 hPa"))
        let first = try await h.suggest()
        #expect(first.condition("temperatureBand")?["buckets"]?.arrayValue?.compactMap { $0["bucket"]?.stringValue } == ["5 to 10 °C"])
        try await h.feed("catch.created", fish("c2", species: "Pike", bait: "fly"))
        try await h.weather("conditions.ready", ready("c2", temperature: "40 to 45 °C", pressure: "1000 to 1010 hPa"))
        let second = try await h.suggest()
        #expect(
            second.condition("temperatureBand")?["buckets"]?.arrayValue?.compactMap { $0["bucket"]?.stringValue }.sorted()
                == ["40 to 45 °C", "5 to 10 °C"])
        // each dimension's bucket once in tallyBucket, however many rows count it
        let buckets = try await h.read { db in
            try Row.fetchAll(db, sql: "SELECT code, name FROM tallyBucket").map { "\($0[0] as Int)|\($0[1] as String)" }
        }
        #expect(Set(buckets).count == buckets.count)
        #expect(buckets.contains("1|40 to 45 °C"))
        let fly = try await h.read { db in
            let counts = try #require(
                try Data.fetchOne(
                    db, sql: "SELECT counts FROM catchTally WHERE userId = 'alice' AND species = '' AND bait = 'fly'"))
            return try TallyCounts.decode(counts).map { entry in
                let name = try Row.fetchOne(db, sql: "SELECT code, name FROM tallyBucket WHERE id = ?", arguments: [entry.bucket])
                return "\(name?[0] as Int? ?? -1)|\(name?[1] as String? ?? "?")=\(entry.n)"
            }
        }
        #expect(fly.contains("0|ready=1") && fly.contains("1|40 to 45 °C=1") && fly.contains("2|1000 to 1010 hPa=1"))
        #expect(!fly.contains("1|5 to 10 °C=1") && !fly.contains("0|pending=1"))
    }

    /// A database whose counts hold bucket texts (before "analytics.tallyBucketIds") is
    /// converted; a row that cannot be read does not stop the upgrade: its user is left to be
    /// recounted from the catches, which the consumer's first catch-up ends with.
    @Test func anUnreadableTextRowIsRecountedNotFatal() async throws {
        let (directory, path) = try await oldDatabase(upTo: "analytics.deletedUser") { db in
            let good = try TallyText.encode([
                TallyText.Entry(code: 0, bucket: Array("ready".utf8), n: 2),
                TallyText.Entry(code: 6, bucket: Array("fog".utf8), n: 2),
            ])
            try db.execute(
                sql: "INSERT INTO catchTally (userId, species, water, bait, counts) VALUES ('alice', '', 'fresh', 'worm', ?)",
                arguments: [Data(good)])
            try db.execute(
                sql: "INSERT INTO catchTally (userId, species, water, bait, counts) VALUES ('bob', '', 'fresh', 'worm', ?)",
                arguments: [Data(good.prefix(good.count - 1))])
        }
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let upgraded = try Harness(path: path)
        let (alice, bob, stale) = try await upgraded.read { db in
            (
                try tallyCounts(db).filter { $0.userId == "alice" }.map(\.description),
                try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM catchTally WHERE userId = 'bob'"),
                try String.fetchAll(db, sql: "SELECT userId FROM catchTallyStale")
            )
        }
        #expect(alice == ["alice||fresh|sky|fog|worm|2", "alice||fresh|status|ready|worm|2"])
        #expect(bob == 0 && stale == ["bob"])
    }

    /// Every dimension the projection counts has its code, and the codes are the stored
    /// ones: status 0, then the dimensions in their first order.
    @Test func dimensionCodesAreFixed() {
        #expect(TallyCounts.dimensionKeys.first == "status")
        #expect(CatchProjection.dimensionCodes == CatchProjection.dimensions.indices.map { UInt8($0 + 1) })
        #expect(CatchProjection.dimensions.map(\.key) == Array(TallyCounts.dimensionKeys.dropFirst()))
    }

    /// The counters as a count from scratch gives them: every stored catch's contribution
    /// with its stored answer, at the two levels (its species; any species).
    func recount(_ db: Database) throws -> [TallyCount] {
        var totals: [[String]: Int] = [:]
        let catches = try Bound(db, "SELECT id, userId, species, water, bait, caughtAt, latitude, longitude FROM fishCatch")
        let answers = try Bound(
            db,
            """
            SELECT status, reason, hour, latitude, longitude, water, temperatureBand, pressureBand, pressureTrend,
                windForce, windDirection, sky, timeOfDay, moonPhase, tidePhase, tideHeight
            FROM catchConditions WHERE catchId = ?
            """)
        try catches.each { row in
            let fish = CatchProjection.Fish(row)
            answers.bind(1, fish.id)
            let answer = try answers.first(CatchProjection.Answer.init)
            CatchProjection.contribution(fish, answer) { status, dimension, bucket in
                let counted = status.map { ("status", $0) } ?? (CatchProjection.dimensions[dimension].key, bucket)
                for species in [fish.species, ""] {
                    totals[[fish.userId, species, fish.water, counted.0, counted.1, fish.bait], default: 0] += 1
                }
            }
        }
        return totals.map { key, n in
            TallyCount(userId: key[0], species: key[1], water: key[2], dimension: key[3], bucket: key[4], bait: key[5], n: n)
        }.sorted()
    }

    /// Property: after any history (edits, deletes, late, repeated and stale answers), live
    /// or replayed in batches, the counters are what counting the stored catches again gives.
    @Test(arguments: [1, 2, 3, 4] as [UInt64])
    func countersEqualARecount(seed: UInt64) async throws {
        let replays = BatchReplayTests()
        let h = try await replays.live(replays.history(seed: seed))
        let live = try await h.read { db in (try tallyCounts(db), try self.recount(db)) }
        #expect(live.0.count > 50)
        #expect(live.0 == live.1)
        let batched = try await replays.replay(
            [("weather-fetcher", h.events["weather-fetcher"] ?? []), ("records", h.events["records"] ?? [])], batched: true)
        let replayed = try await batched.read { db in (try tallyCounts(db), try self.recount(db)) }
        // (not the live counts: an answer before its catch can end otherwise than after it)
        #expect(replayed.0 == replayed.1)
        #expect(replayed.0.count > 50)
    }

    /// A database at the schema before "analytics.tallyRows", holding one-count rows at
    /// four levels, keeps every count (at the two levels now kept) and every suggestion
    /// through the upgrade, and the projection goes on from the converted rows as from its own.
    @Test func upgradeFromOneCountRowsKeepsEveryCountAndSuggestion() async throws {
        let replays = BatchReplayTests()
        let h = try await replays.live(replays.history(seed: 6))
        let counts = try await h.read { db in try tallyCounts(db) }
        #expect(counts.count > 50)
        let (directory, path) = try await oldDatabase(upTo: "analytics.tallyLevels") { db in
            #expect(try db.columns(in: "catchTally").map(\.name).contains("dimension"))
            let rows = fourLevels(counts)
            #expect(rows.count > counts.count)
            try insertOneCountRows(db, rows.shuffled())
            // a zero count (the projection deleted those) is not carried over
            try insertOneCountRows(
                db, [TallyCount(userId: "alice", species: "", water: "", dimension: "sky", bucket: "fog", bait: "worm", n: 0)])
        }
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let upgraded = try Harness(path: path)
        #expect(try await upgraded.read { db in try db.columns(in: "catchTally").map(\.name) } == [
            "userId", "species", "water", "bait", "counts",
        ])
        #expect(try await upgraded.read { db in try tallyCounts(db) } == counts)
        // through the bucket texts in every row ("analytics.tallyRows") to ids ("analytics.tallyBucketIds")
        let (tables, buckets) = try await upgraded.read { db in
            (
                try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table'"),
                try Row.fetchAll(db, sql: "SELECT code, name FROM tallyBucket").map { "\($0[0] as Int)|\($0[1] as String)" }
            )
        }
        #expect(!tables.contains("catchTallyText") && !tables.contains("catchTallyCounts"))
        #expect(Set(buckets).count == buckets.count && buckets.count > 10)
        func expectSameSuggestions() async throws {
            for user in ["alice", "bob", "carol", "dave"] {
                for body: JSONValue in [
                    [:], ["species": "pike"], ["species": "Perch"], ["water": "fresh"], ["water": "salt"],
                    ["species": "Trout", "water": "fresh"], ["species": "carp"],
                ] {
                    #expect(
                        try await upgraded.call("analytics.suggest", body, user: user)
                            == (try await h.call("analytics.suggest", body, user: user)))
                }
            }
        }
        try await expectSameSuggestions()
        // new catches and answers, to both
        var random = SplitMix(seed: 66)
        for i in 0..<12 {
            let user = ["alice", "bob", "dave"][i % 3]
            for store in [h, upgraded] {
                try await store.feed(
                    "catch.created", fish("n\(i)", species: ["Pike", "perch"][i % 2], bait: ["worm", "fly"][i % 2]), user: user)
            }
            let answer = replays.conditions("n\(i)", &random)
            for store in [h, upgraded] where i % 4 != 3 {
                try await store.feed("conditions.ready", answer, user: user, from: "weather-fetcher")
            }
        }
        #expect(try await upgraded.read { db in try tallyCounts(db) } == (try await h.read { db in try tallyCounts(db) }))
        try await expectSameSuggestions()
    }
}
