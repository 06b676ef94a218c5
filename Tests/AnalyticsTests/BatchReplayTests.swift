// A replay applies thousands of events per transaction and writes each aggregate once at
// the end of the batch (Batch.swift). These tests hold it to the same stored state as the
// live path, one event per transaction: every row of every projection table, on a
// generated history with out-of-order fill-ups, edits, deletes, a vehicle deleted and
// recreated, and catches edited before and after their conditions.
import Foundation
import GRDB
import Runtime
import Storage
import Testing
import TestSupport
import Wire

@testable import AnalyticsService

@Suite struct BatchReplayTests {
    /// A seeded history: (producer, event type, user, payload), in the order they happen.
    func history(seed: UInt64) -> [(String, String, String, JSONValue)] {
        var random = SplitMix(seed: seed)
        var out: [(String, String, String, JSONValue)] = []
        let users = ["alice", "bob", "carol"]
        var fills: [String: [(id: String, date: Double, odometer: Double)]] = [:]
        var catches: [String: [String]] = [:]
        for user in users { out.append(("records", "vehicle.created", user, vehicle("v-\(user)"))) }
        for step in 0..<400 {
            let user = users[random.next(below: users.count)]
            let vehicleId = "v-\(user)"
            switch random.next(below: 20) {
            case 0..<8:  // a fill-up, sometimes dated before the last one
                let n = fills[user, default: []].count
                let date = Double(n) * 3 + (random.next(below: 6) == 0 ? -4.5 : 0) + Double(random.next(below: 3))
                let odometer = 1000 + date * 100 + Double(random.next(below: 50))
                let id = "f\(step)"
                fills[user, default: []].append((id, date, odometer))
                out.append(
                    (
                        "records", "fillup.created", user,
                        fillup(
                            id, vehicle: vehicleId, date: day(date), odometer: random.next(below: 9) == 0 ? nil : odometer,
                            volume: Double(20 + random.next(below: 30)), totalMinor: Int64(3000 + random.next(below: 4000)),
                            currency: random.next(below: 7) == 0 ? "EUR" : "USD", full: random.next(below: 4) != 0,
                            missed: random.next(below: 30) == 0)
                    ))
            case 8:  // an edit of an earlier fill-up
                guard let old = random.pick(fills[user]) else { continue }
                out.append(
                    (
                        "records", "fillup.updated", user,
                        fillup(
                            old.id, vehicle: vehicleId, date: day(old.date + 0.5), odometer: old.odometer + 7,
                            volume: Double(15 + random.next(below: 30)), totalMinor: Int64(2000 + random.next(below: 4000)),
                            full: random.next(below: 3) != 0)
                    ))
            case 9:  // a delete
                guard var list = fills[user], !list.isEmpty else { continue }
                let gone = list.remove(at: random.next(below: list.count))
                fills[user] = list
                out.append(
                    ("records", "fillup.deleted", user, ["id": .string(gone.id), "userId": .string(user), "vehicleId": .string(vehicleId)]))
            case 10 where step % 5 == 0:  // the vehicle goes, with its fill-ups, and comes back
                fills[user] = []
                out.append(("records", "vehicle.deleted", user, ["id": .string(vehicleId), "userId": .string(user), "fillupsDeleted": 0]))
                out.append(("records", "vehicle.created", user, vehicle(vehicleId, distance: "km", volume: "l")))
            case 11..<16:  // a catch, its conditions now or later
                let id = "c\(step)"
                catches[user, default: []].append(id)
                out.append(
                    (
                        "records", "catch.created", user,
                        fish(id, species: ["Pike", "perch", "Trout"][random.next(below: 3)], bait: ["worm", "jig"][random.next(below: 2)])
                    ))
                if random.next(below: 3) != 0 {
                    out.append(("weather-fetcher", "conditions.ready", user, conditions(id, &random)))
                }
            case 16:  // conditions for an earlier catch (a late or repeated answer)
                guard let id = random.pick(catches[user]) else { continue }
                if random.next(below: 4) == 0 {
                    out.append(
                        ("weather-fetcher", "conditions.unavailable", user, ["catchId": .string(id), "reason": "timeout"]))
                } else {
                    out.append(("weather-fetcher", "conditions.ready", user, conditions(id, &random)))
                }
            case 17:  // a catch edited: other bait, sometimes another place (its answer goes stale)
                guard let id = random.pick(catches[user]) else { continue }
                out.append(
                    (
                        "records", "catch.updated", user,
                        fish(id, species: "Pike", bait: "spinner", latitude: random.next(below: 2) == 0 ? 59.33 : 60.1)
                    ))
            case 18:  // a catch deleted
                guard var list = catches[user], !list.isEmpty else { continue }
                let gone = list.remove(at: random.next(below: list.count))
                catches[user] = list
                out.append(("records", "catch.deleted", user, ["id": .string(gone), "userId": .string(user)]))
            default:  // a type analytics does not project
                out.append(("records", "photo.attached", user, ["id": .string("p\(step)")]))
            }
        }
        return out
    }

    func conditions(_ id: String, _ random: inout SplitMix) -> JSONValue {
        ready(
            id, temperature: ["5 to 10 °C", "10 to 15 °C"][random.next(below: 2)],
            pressure: ["1000 to 1010 hPa", "1010 to 1020 hPa"][random.next(below: 2)], beaufort: random.next(below: 5),
            sky: ["clear", "rain"][random.next(below: 2)])
    }

    /// Every row of the tables the fuel and catch projections write, as text; catchTally's
    /// rows also as the counts their bytes hold (`catchCounts`), one per line.
    func dump(_ h: Harness) async throws -> [String: [String]] {
        try await h.read { db in
            var tables: [String: [String]] = [:]
            let queries = [
                ("vehicle", "SELECT * FROM vehicle"), ("fill", "SELECT * FROM fill"),
                ("fuelSpend", "SELECT * FROM fuelSpend"), ("fishCatch", "SELECT * FROM fishCatch"),
                ("catchConditions", "SELECT * FROM catchConditions"),
            ]
            for (table, sql) in queries {
                tables[table] = try Row.fetchAll(db, sql: sql).map(\.description).sorted()
            }
            // each row's counts by dimension and bucket text: the ids (tallyBucket) are given
            // in the order buckets were first counted, which differs between two databases
            tables["catchTally"] = try Row.fetchAll(
                db, sql: "SELECT userId, species, water, bait, counts FROM catchTally"
            ).map { row in
                let counts = try TallyCounts.named(db, row[4]).map { "\($0.code)|\($0.bucket)=\($0.n)" }.sorted()
                return "\(row[0] as String)|\(row[1] as String)|\(row[2] as String)|\(row[3] as String): "
                    + counts.joined(separator: ",")
            }.sorted()
            tables["catchCounts"] = try tallyCounts(db).map(\.description).sorted()
            return tables
        }
    }

    /// Feeds the history to a live harness one event per transaction, as it happened.
    func live(_ events: [(String, String, String, JSONValue)]) async throws -> Harness {
        let h = try Harness()
        for (producer, type, user, data) in events { try await h.feed(type, data, user: user, from: producer) }
        return h
    }

    /// Delivers the streams in `schedule`'s order (producer, events), through the batch
    /// path or one event at a time inside the same transactions.
    func replay(_ schedule: [(String, [Event])], batched: Bool) async throws -> Harness {
        let h = try Harness()
        for (producer, events) in schedule {
            let sink =
                batched
                ? DatabaseEventSink(
                    producer: producer, writer: h.service.host.database, batch: AnalyticsService.applyBatch(producer))
                : DatabaseEventSink(
                    producer: producer, writer: h.service.host.database, handler: AnalyticsService.apply(producer))
            try await sink.apply(events)
        }
        return h
    }

    @Test(arguments: [1, 2, 3] as [UInt64])
    func replayInLargeBatchesStoresWhatOneEventAtATimeStores(seed: UInt64) async throws {
        let h = try await live(history(seed: seed))
        let expected = try await dump(h)
        #expect((expected["fill"]?.count ?? 0) > 20)
        #expect((expected["catchTally"]?.count ?? 0) > 20)
        let records = h.events["records"] ?? [], weather = h.events["weather-fetcher"] ?? []

        // Everything in one batch per producer, weather-fetcher's stream first; then batches
        // of 50 with the two streams interleaved.
        var chunks: [(String, [Event])] = []
        for start in stride(from: 0, to: max(records.count, weather.count), by: 50) {
            if start < records.count { chunks.append(("records", Array(records[start..<min(start + 50, records.count)]))) }
            if start < weather.count {
                chunks.append(("weather-fetcher", Array(weather[start..<min(start + 50, weather.count)])))
            }
        }
        for schedule in [[("weather-fetcher", weather), ("records", records)], chunks] {
            try await expectBatchedMatches(schedule, live: expected)
        }
    }

    /// `schedule` through the batch path stores what it stores one event at a time, every
    /// table; fuel comes from records' stream alone, so it is also what the live history stored.
    func expectBatchedMatches(_ schedule: [(String, [Event])], live expected: [String: [String]]) async throws {
        let batched = try await dump(replay(schedule, batched: true))
        let single = try await dump(replay(schedule, batched: false))
        for table in expected.keys.sorted() {
            #expect(batched[table] == single[table], "\(table)")
        }
        for table in ["vehicle", "fill", "fuelSpend"] {
            #expect(batched[table] == expected[table], "\(table)")
        }
    }

    /// Property: whatever the batch sizes and however the two streams interleave, a batch
    /// stores what one event at a time stores (fixed budget: four histories, random cuts).
    @Test(arguments: [5, 6, 7, 8] as [UInt64])
    func anyCutIntoBatchesStoresWhatOneEventAtATimeStores(seed: UInt64) async throws {
        let h = try await live(history(seed: seed))
        let expected = try await dump(h)
        var streams = [("records", h.events["records"] ?? []), ("weather-fetcher", h.events["weather-fetcher"] ?? [])]
        var random = SplitMix(seed: seed &* 31)
        var schedule: [(String, [Event])] = []
        while streams.contains(where: { !$0.1.isEmpty }) {
            let i = streams[0].1.isEmpty ? 1 : streams[1].1.isEmpty ? 0 : random.next(below: 2)
            let size = min(streams[i].1.count, [1, 2, 7, 40, 150][random.next(below: 5)])
            schedule.append((streams[i].0, Array(streams[i].1.prefix(size))))
            streams[i].1.removeFirst(size)
        }
        try await expectBatchedMatches(schedule, live: expected)
    }

    /// One vehicle's fill-ups in one batch, going in and out of the append path: appends,
    /// fill-ups on the same day and odometer ordered by id as SQLite orders them (bytes: "f10"
    /// before "f9"), one dated before the last, an edit and a delete of the last one, appends
    /// again, a fill-up for a vehicle of another user, a volume of 0, and an unreadable one.
    @Test func appendsAndEverythingElseInOneBatch() async throws {
        func event(_ seq: Int64, _ type: String, _ data: JSONValue, user: String = "alice") -> Event {
            Event(seq: seq, type: type, userId: user, at: day(10), data: data)
        }
        let events = [
            event(1, "vehicle.created", vehicle("v1")),
            event(2, "vehicle.created", vehicle("v2"), user: "bob"),
            event(3, "fillup.created", fillup("f1", date: day(1), odometer: 1000, volume: 10, totalMinor: 400)),
            event(4, "fillup.created", fillup("f2", date: day(2), odometer: 1300, volume: 12, totalMinor: 500, full: false)),
            event(5, "fillup.created", fillup("f9", date: day(3), odometer: 1600, volume: 11, totalMinor: 450)),
            event(6, "fillup.created", fillup("f10", date: day(3), odometer: 1600, volume: 3, totalMinor: 90)),
            event(7, "fillup.created", fillup("f11", date: day(3), odometer: 1600, volume: 2, totalMinor: 80)),
            event(8, "fillup.created", fillup("f3", date: day(2.5), odometer: 1450, volume: 5, totalMinor: 200)),
            event(9, "fillup.created", fillup("f4", date: day(4), odometer: 1900, volume: 10, totalMinor: 420)),
            event(10, "fillup.updated", fillup("f4", date: day(4), odometer: 1950, volume: 9, totalMinor: 400)),
            event(11, "fillup.created", fillup("f5", date: day(5), odometer: 2200, volume: 10, totalMinor: 410)),
            event(12, "fillup.deleted", ["id": "f5", "userId": "alice", "vehicleId": "v1"]),
            event(13, "fillup.created", fillup("f6", date: day(6), odometer: 2500, volume: 0, totalMinor: 0)),
            event(14, "fillup.created", fillup("f7", vehicle: "v2", date: day(6), odometer: 2600, volume: 8, totalMinor: 300)),
            event(15, "fillup.created", ["id": "f8", "vehicleId": "v1", "volume": "a lot"]),
            event(16, "fillup.created", fillup("f12", date: day(7), trip: 300, volume: 10, totalMinor: 420)),
            event(17, "fillup.created", fillup("f13", date: day(8), odometer: 3100, volume: 10, totalMinor: 430, missed: true)),
            event(18, "fillup.created", fillup("f14", date: day(9), odometer: 3400, volume: 10, totalMinor: 430, currency: "EUR")),
        ]
        let batched = try Harness(), single = try Harness()
        try await DatabaseEventSink(
            producer: "records", writer: batched.service.host.database, batch: batched.service.batchHandler(for: "records")
        ).apply(events)
        let one = single.service.handler(for: "records")
        for event in events {
            try await DatabaseEventSink(producer: "records", writer: single.service.host.database, handler: one).apply([event])
        }
        let got = try await dump(batched), want = try await dump(single)
        #expect(got == want)
        // the fill-ups that count: f1, f2, f9, f10, f11, f3, f4, f12, f13, f14
        #expect(want["fill"]?.count == 10)
        #expect(try await batched.call("analytics.fuel.stats", ["vehicleId": "v1"]) == (try await single.call("analytics.fuel.stats", ["vehicleId": "v1"])))
    }

    /// The consumer's handler (with its skip-unreadable rule) gives the same state as the
    /// live path, and a database error in a batch leaves nothing of it behind.
    @Test func consumerHandlerMatchesAndAFailedBatchLeavesNothing() async throws {
        let events = history(seed: 9)
        let h = try await live(events)
        let expected = try await dump(h)
        let replayed = try Harness()
        for producer in ["weather-fetcher", "records"] {
            try await DatabaseEventSink(
                producer: producer, writer: replayed.service.host.database,
                batch: replayed.service.batchHandler(for: producer)
            ).apply(h.events[producer] ?? [])
        }
        #expect(try await dump(replayed) == expected)

        // A batch whose last statement fails rolls back the events before it too.
        let failing = try Harness()
        let handler = failing.service.batchHandler(for: "records")
        await #expect(throws: DatabaseError.self) {
            try await DatabaseEventSink(producer: "records", writer: failing.service.host.database) { db, batch in
                try handler(db, batch)
                try db.execute(sql: "INSERT INTO no_such_table VALUES (1)")
            }.apply(h.events["records"] ?? [])
        }
        let left = try await dump(failing)
        #expect(left.values.allSatisfy { $0.isEmpty })
        #expect(try await failing.read { db in try Checkpoint.get(db, producer: "records") } == 0)
    }

    /// A database made before the four tally levels gets them from its rows on upgrade (and
    /// then the two levels of one row per bait): the same counters the projection keeps, so
    /// the same suggestions.
    @Test func upgradeBuildsTheTallyLevelsFromTheRows() async throws {
        let h = try await live(history(seed: 4))
        let expected = try await dump(h)
        let base = try await h.read { db in try tallyCounts(db).filter { $0.species != "" && $0.water != "" } }
        #expect(base.count < expected["catchCounts"]?.count ?? 0)
        let (directory, path) = try await oldDatabase(upTo: "analytics.userZone") { db in
            try insertOneCountRows(db, base)
        }
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let upgraded = try Harness(path: path)
        let after = try await dump(upgraded)
        #expect(after["catchCounts"] == expected["catchCounts"])
        #expect(after["catchTally"] == expected["catchTally"])
        for user in ["alice", "bob", "carol"] {
            for body: JSONValue in [[:], ["species": "pike"], ["water": "fresh"], ["species": "Trout", "water": "fresh"]] {
                #expect(
                    try await upgraded.call("analytics.suggest", body, user: user)
                        == (try await h.call("analytics.suggest", body, user: user)))
            }
        }
    }
}

extension SplitMix {
    mutating func pick<T>(_ list: [T]?) -> T? {
        guard let list, !list.isEmpty else { return nil }
        return list[next(below: list.count)]
    }
}

/// A catch-up's full pages leave the catch counters and the vehicle aggregates behind (only
/// the users and vehicles they would have changed are recorded), and those are recomputed
/// once when it ends, or by a live batch that changes them (AnalyticsService.backlog,
/// CatchProjection.settle, FuelProjection.settle). Whatever the cuts, and with live batches
/// in between, the end state is what one event at a time stores.
@Suite struct BacklogReplayTests {
    let replays = BatchReplayTests()

    /// A sink per producer with the consumer's backlog handling (throwing on an unreadable
    /// payload), the two settling as one group, as the service's do.
    func sinks(_ h: Harness) -> [String: DatabaseEventSink] {
        Dictionary(
            uniqueKeysWithValues: ["records", "weather-fetcher"].map { producer in
                (
                    producer,
                    DatabaseEventSink(
                        producer: producer, writer: h.service.host.database,
                        batch: AnalyticsService.applyBatch(producer),
                        backlog: AnalyticsService.applyBacklog(producer, group: h.service.host.backlogs))
                )
            })
    }

    func staleUsers(_ h: Harness) async throws -> [String] {
        try await h.read { try String.fetchAll($0, sql: "SELECT userId FROM catchTallyStale ORDER BY userId") }
    }

    func staleVehicles(_ h: Harness) async throws -> [String] {
        try await h.read { try String.fetchAll($0, sql: "SELECT vehicleId FROM vehicleStale ORDER BY vehicleId") }
    }

    @Test(arguments: [1, 2, 3] as [UInt64])
    func aBacklogSettledStoresWhatOneEventAtATimeStores(seed: UInt64) async throws {
        let live = try await replays.live(replays.history(seed: seed))
        let expected = try await replays.dump(live)
        var streams = [("records", live.events["records"] ?? []), ("weather-fetcher", live.events["weather-fetcher"] ?? [])]
        var random = SplitMix(seed: seed &* 131)
        // Random cuts, each one a backlog page, or (one in four) a live batch.
        var schedule: [(producer: String, events: [Event], backlog: Bool)] = []
        while streams.contains(where: { !$0.1.isEmpty }) {
            let i = streams[0].1.isEmpty ? 1 : streams[1].1.isEmpty ? 0 : random.next(below: 2)
            let size = min(streams[i].1.count, [1, 3, 20, 90][random.next(below: 4)])
            schedule.append((streams[i].0, Array(streams[i].1.prefix(size)), random.next(below: 4) != 0))
            streams[i].1.removeFirst(size)
        }
        #expect(schedule.contains { !$0.backlog } && schedule.contains { $0.backlog })
        // How the two streams interleave decides which answer a catch ends with, so the
        // reference is the same schedule one event at a time (fuel is records' alone).
        let single = try await replays.dump(replays.replay(schedule.map { ($0.producer, $0.events) }, batched: false))
        for table in ["vehicle", "fill", "fuelSpend"] { #expect(single[table] == expected[table], "\(table)") }

        // Every page a backlog: the counters stay behind until the sinks settle.
        let behind = try Harness()
        let behindSinks = sinks(behind)
        for part in schedule { try await behindSinks[part.producer]!.applyBacklog(part.events) }
        #expect(try await staleUsers(behind) == ["alice", "bob", "carol"])
        #expect(try await staleVehicles(behind) == ["v-alice", "v-bob", "v-carol"])
        let before = try await replays.dump(behind)
        for table in ["catchTally", "vehicle", "fuelSpend"] { #expect(before[table] != single[table], "\(table)") }
        for sink in behindSinks.values { try await sink.settle() }
        #expect(try await staleUsers(behind).isEmpty)
        #expect(try await staleVehicles(behind).isEmpty)
        #expect(try await replays.dump(behind) == single)

        // Backlog pages and live batches mixed: a live batch that counts recounts first.
        let mixed = try Harness()
        let mixedSinks = sinks(mixed)
        for part in schedule {
            let sink = mixedSinks[part.producer]!
            if part.backlog {
                try await sink.applyBacklog(part.events)
            } else {
                try await sink.apply(part.events)
                // a live batch brings the counters it changes up to date first: those of the
                // users of its catches and answers, and the vehicles of its fill-ups
                let users = Set(
                    part.events.filter { $0.type.hasPrefix("catch.") || $0.type.hasPrefix("conditions.") }
                        .compactMap(\.userId))
                let vehicles = Set(
                    part.events.filter { $0.type.hasPrefix("fillup.") }.compactMap { $0.data["vehicleId"]?.stringValue })
                #expect(try await Set(staleUsers(mixed)).isDisjoint(with: users))
                #expect(try await Set(staleVehicles(mixed)).isDisjoint(with: vehicles))
            }
        }
        for sink in mixedSinks.values { try await sink.settle() }
        #expect(try await replays.dump(mixed) == single)
    }

    /// Two consumers catching up at once (a rebuild) settle once: the one whose catch-up ends
    /// first leaves everything behind to the other, whose later pages would have left most
    /// of it behind again, and whose settle then covers both.
    @Test func consumersCatchingUpTogetherSettleOnceTheLastEnds() async throws {
        let live = try await replays.live(replays.history(seed: 5))
        let records = live.events["records"] ?? [], weather = live.events["weather-fetcher"] ?? []
        let half = records.count / 2
        let schedule = [
            ("records", Array(records.prefix(half))), ("weather-fetcher", weather), ("records", Array(records.dropFirst(half))),
        ]
        let single = try await replays.dump(replays.replay(schedule, batched: false))

        let h = try Harness()
        let both = sinks(h)
        try await both["records"]!.applyBacklog(schedule[0].1)
        try await both["weather-fetcher"]!.applyBacklog(weather)
        // weather-fetcher's catch-up ends while records' goes on: nothing is settled yet
        try await both["weather-fetcher"]!.settle()
        #expect(try await staleUsers(h) == ["alice", "bob", "carol"])
        #expect(try await !staleVehicles(h).isEmpty)
        try await both["records"]!.applyBacklog(schedule[2].1)
        try await both["records"]!.settle()
        #expect(try await staleUsers(h).isEmpty)
        #expect(try await staleVehicles(h).isEmpty)
        #expect(try await replays.dump(h) == single)
    }

    /// Counters left behind by a process that stopped mid-backlog are recomputed by the next
    /// one: by its first settle, or, for what it changes, first by a live batch (here a
    /// fill-up, whose changes must be added once, and the delete of a catch counted only by
    /// the recount, which would otherwise take a count below zero or leave it counted).
    @Test func countersLeftBehindSurviveARestart() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("backlog-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let live = try await replays.live(replays.history(seed: 11))
        let records = live.events["records"] ?? [], weather = live.events["weather-fetcher"] ?? []
        let catches = records.filter { $0.type == "catch.created" }
        #expect(catches.count > 5)
        // the history, then one live batch: a fill-up after all of alice's (its changes must
        // be added once) and the delete of a catch still there
        let deleted = Set(records.filter { $0.type == "catch.deleted" }.compactMap { $0.data["id"]?.stringValue })
        let gone = try #require(catches.first { !deleted.contains($0.data["id"]?.stringValue ?? "") })
        let delete = [
            Event(
                seq: Int64(records.count + 1), type: "fillup.created", userId: "alice", at: day(10),
                data: fillup("f-late", vehicle: "v-alice", date: day(400), odometer: 99_000, volume: 40, totalMinor: 6000)),
            Event(
                seq: Int64(records.count + 2), type: "catch.deleted", userId: gone.userId, at: day(10),
                data: ["id": gone.data["id"] ?? .null, "userId": .string(gone.userId ?? "")]),
        ]
        let expected = try await {
            let h = try Harness()
            for producer in ["weather-fetcher", "records"] {
                try await DatabaseEventSink(
                    producer: producer, writer: h.service.host.database, handler: AnalyticsService.apply(producer)
                ).apply(producer == "records" ? records + delete : weather)
            }
            return try await replays.dump(h)
        }()

        for settleFirst in [true, false] {
            let path = "\(directory)/analytics-\(settleFirst).sqlite"
            do {
                let first = try Harness(path: path)
                let firstSinks = sinks(first)
                try await firstSinks["weather-fetcher"]!.applyBacklog(weather)
                try await firstSinks["records"]!.applyBacklog(records)
                // stops here, before its catch-up ends
            }
            let second = try Harness(path: path)
            #expect(try await staleUsers(second) == ["alice", "bob", "carol"])
            #expect(try await staleVehicles(second) == ["v-alice", "v-bob", "v-carol"])
            let secondSinks = sinks(second)
            if settleFirst { try await secondSinks["records"]!.settle() }
            try await secondSinks["records"]!.apply(delete)
            // the live batch brought what it changed up to date, and only that
            #expect(try await !staleUsers(second).contains(gone.userId ?? ""))
            #expect(try await !staleVehicles(second).contains("v-alice"))
            if !settleFirst {
                #expect(try await staleVehicles(second) == ["v-bob", "v-carol"])
                // the catch-up that ends settles the rest
                try await secondSinks["records"]!.settle()
            }
            #expect(try await staleUsers(second).isEmpty)
            #expect(try await staleVehicles(second).isEmpty)
            #expect(try await replays.dump(second) == expected, "settle first: \(settleFirst)")
        }
    }
}
