// Fishing suggestions on a fixed set of catches with known conditions: expected buckets,
// shares, confidence, pending and unavailable catches counted, and counters that follow
// edits, deletes and conditions arriving before their catch.
import Contracts
import Foundation
import GRDB
import TestSupport
import Testing
import Wire

@testable import AnalyticsService

func fish(
    _ id: String, species: String, bait: String, water: String = "fresh", latitude: Double = 59.33,
    longitude: Double = 18.06, caughtAt: Date = day(1, hour: 6)
) -> JSONValue {
    [
        "id": .string(id), "species": .string(species), "weight": 1.5, "weightUnit": "kg", "bait": .string(bait),
        "water": .string(water), "latitude": .number(.init(latitude)), "longitude": .number(.init(longitude)),
        "caughtAt": time(caughtAt), "released": false, "conditions": ["status": "pending"],
        "createdAt": time(caughtAt), "updatedAt": time(caughtAt),
    ]
}

func ready(
    _ catchId: String, temperature: String, pressure: String, trend: String = "steady", beaufort: Int = 2,
    direction: String = "SW", sky: String = "cloudy", timeOfDay: String = "dawn", moon: String = "full moon",
    tide: String? = nil, latitude: Double = 59.33, longitude: Double = 18.06, hour: Date = day(1, hour: 6),
    water: String? = nil
) -> JSONValue {
    var conditions: [String: JSONValue] = [
        "source": "archive", "hour": time(hour), "latitude": .number(.init(latitude)), "longitude": .number(.init(longitude)),
        "temperatureC": 12.3, "temperatureBand": .string(temperature), "pressureHpa": 1015,
        "pressureBand": .string(pressure),
        "pressureTrend": .string(trend), "beaufort": .number(.init(beaufort)), "windDirection": .string(direction),
        "sky": .string(sky), "timeOfDay": .string(timeOfDay), "moonPhase": .string(moon), "moonAgeDays": 14.2,
        "moonIllumination": 0.99, "tide": tide == nil ? "skipped" : "measured",
    ]
    if let tide {
        conditions["tidePhase"] = .string(tide)
        conditions["tideHeightBand"] = "mid"
    }
    if let water { conditions["water"] = .string(water) }
    return ["catchId": .string(catchId), "summary": "12°C, overcast", "conditions": .object(conditions)]
}

extension Harness {
    func weather(_ type: String, _ data: JSONValue, user: String = "alice") async throws {
        try await feed(type, data, user: user, from: "weather-fetcher")
    }

    func suggest(_ body: JSONValue = [:]) async throws -> JSONValue {
        try await call("analytics.suggest", body)
    }
}

extension JSONValue {
    func condition(_ key: String) -> JSONValue? {
        self["conditions"]?.arrayValue?.first { $0["condition"]?.stringValue == key }
    }
}

@Suite struct SuggestTests {
    @Test func aChangeOfWaterWaitsForTheNewWatersAnswer() async throws {
        let h = try Harness()
        try await h.feed("catch.created", fish("c1", species: "Bass", bait: "squid", water: "fresh"))
        try await h.weather(
            "conditions.ready", ready("c1", temperature: "10 to 15 °C", pressure: "1010 to 1020 hPa", water: "fresh"))
        #expect(try await h.suggest(["water": "fresh"])["ready"] == 1)
        // fresh → salt: the freshwater answer has no tide; the catch is pending in salt water
        try await h.feed("catch.updated", fish("c1", species: "Bass", bait: "squid", water: "salt"))
        var salt = try await h.suggest(["water": "salt"])
        #expect(salt["pending"] == 1)
        #expect(salt["ready"] == 0)
        #expect(try await h.suggest(["water": "fresh"])["catches"] == 0)
        // the salt-water answer brings the tide
        try await h.weather(
            "conditions.ready",
            ready("c1", temperature: "10 to 15 °C", pressure: "1010 to 1020 hPa", tide: "rising", water: "salt"))
        salt = try await h.suggest(["water": "salt"])
        #expect(salt["ready"] == 1)
        #expect(salt.condition("tidePhase")?["best"]?["bucket"] == "rising")
    }

    /// Four catches with conditions, one pending, one unavailable.
    func stocked() async throws -> Harness {
        let h = try Harness()
        try await h.feed("catch.created", fish("c1", species: "Pike", bait: "Worm"))
        try await h.feed("catch.created", fish("c2", species: "pike", bait: "spinner"))
        try await h.feed("catch.created", fish("c3", species: "Perch", bait: "worm"))
        try await h.feed("catch.created", fish("c4", species: "Bass", bait: "worm", water: "salt"))
        try await h.feed("catch.created", fish("c5", species: "Pike", bait: "worm"))
        try await h.feed("catch.created", fish("c6", species: "Pike", bait: "worm "))
        try await h.weather("conditions.ready", ready("c1", temperature: "10 to 15 °C", pressure: "1010 to 1020 hPa"))
        try await h.weather(
            "conditions.ready",
            ready(
                "c2", temperature: "10 to 15 °C", pressure: "1020 to 1030 hPa", trend: "falling slowly", beaufort: 3,
                timeOfDay: "day"))
        try await h.weather(
            "conditions.ready",
            ready(
                "c3", temperature: "15 to 20 °C", pressure: "1010 to 1020 hPa", direction: "W", sky: "clear",
                moon: "new moon"))
        try await h.weather(
            "conditions.ready", ready("c4", temperature: "10 to 15 °C", pressure: "1010 to 1020 hPa", tide: "rising"))
        try await h.weather("conditions.unavailable", ["catchId": "c6", "reason": "weather archive unreachable"])
        return h
    }

    @Test func bucketsSharesAndConfidence() async throws {
        let h = try await stocked()
        let s = try await h.suggest()
        #expect(s["catches"] == 6)
        #expect(s["ready"] == 4)
        #expect(s["pending"] == 1)
        #expect(s["unavailable"] == 1)
        #expect(s["confidence"] == "low")
        #expect(s["basis"] == "based on 4 catches: low confidence")
        #expect(
            s["note"]?.stringValue
                == "not counted: 1 still waiting for weather conditions; 1 without conditions (unavailable)")
        let temperature = try #require(s.condition("temperatureBand"))
        #expect(temperature["best"]?["bucket"] == "10 to 15 °C")
        #expect(temperature["best"]?["count"] == 3)
        #expect(temperature["best"]?.decimal("share") == dec("0.75"))
        #expect(temperature["best"]?["baits"]?.arrayValue?.first?["bait"] == "worm")
        #expect(temperature["best"]?["baits"]?.arrayValue?.first?["count"] == 2)
        #expect(temperature["buckets"]?.arrayValue?.count == 2)
        #expect(s.condition("pressureBand")?["best"]?["bucket"] == "1010 to 1020 hPa")
        #expect(s.condition("windForce")?["best"]?["bucket"] == "2 Bft")
        #expect(s.condition("windDirection")?["best"]?["bucket"] == "SW")
        #expect(s.condition("timeOfDay")?["best"]?.decimal("share") == dec("0.75"))
        #expect(s.condition("moonPhase")?["best"]?["bucket"] == "full moon")
        let tide = try #require(s.condition("tidePhase"))
        #expect(tide["catches"] == 1)
        #expect(tide["best"]?["bucket"] == "rising")
        #expect(tide["basis"] == "based on 1 catch: low confidence")
        // Every catch's bait, pending and unavailable ones included; grouped case-insensitively.
        let baits = try #require(s["baits"]?.arrayValue)
        #expect(baits.first?["bait"] == "worm")
        #expect(baits.first?["count"] == 5)
        #expect(baits.last?["bait"] == "spinner")
    }

    @Test func filteredBySpeciesAndWater() async throws {
        let h = try await stocked()
        let pike = try await h.suggest(["species": "PIKE"])
        #expect(pike["species"] == "pike")
        #expect(pike["catches"] == 4)
        #expect(pike["ready"] == 2)
        #expect(pike.condition("temperatureBand")?["best"]?.decimal("share") == 1)
        // a tie (1 and 1) is broken alphabetically
        #expect(pike.condition("pressureBand")?["best"]?["bucket"] == "1010 to 1020 hPa")
        let salt = try await h.suggest(["water": "salt"])
        #expect(salt["catches"] == 1)
        #expect(salt.condition("tidePhase")?["best"]?["bucket"] == "rising")
        let both = try await h.suggest(["species": "pike", "water": "salt"])
        #expect(both["catches"] == 0)
        #expect(both["basis"] == "no catches with weather conditions yet")
        #expect(both.condition("sky")?["best"] == nil)
        let invalid = try await h.failure("analytics.suggest", ["water": "brackish"])
        #expect(invalid.code == .invalidArgument)
        #expect(invalid.field == "water")
        #expect(try await h.failure("analytics.suggest", ["species": "  "]).field == "species")
        // another user sees nothing of these
        let bob = try await h.call("analytics.suggest", [:], user: "bob")
        #expect(bob["catches"] == 0)
    }

    @Test func countersFollowConditionsEditsAndDeletes() async throws {
        let h = try await stocked()
        try await h.weather("conditions.ready", ready("c5", temperature: "5 to 10 °C", pressure: "below 1000 hPa"))
        var s = try await h.suggest()
        #expect(s["pending"] == 0)
        #expect(s["ready"] == 5)
        // Moving c1 makes its conditions stale: pending until the new answer.
        try await h.feed(
            "catch.updated",
            fish("c1", species: "Pike", bait: "Worm", latitude: 57.7, longitude: 11.97).merging([
                "placeOrTimeChanged": true
            ]))
        s = try await h.suggest()
        #expect(s["pending"] == 1)
        #expect(s.condition("temperatureBand")?["best"]?["count"] == 2)
        try await h.weather(
            "conditions.ready",
            ready("c1", temperature: "20 to 25 °C", pressure: "1010 to 1020 hPa", latitude: 57.7, longitude: 11.97))
        s = try await h.suggest()
        #expect(s["pending"] == 0)
        #expect(s.condition("temperatureBand")?["buckets"]?.arrayValue?.count == 4)
        // An edit that keeps place and time keeps the conditions; the bait moves.
        try await h.feed(
            "catch.updated", fish("c1", species: "Pike", bait: "jig", latitude: 57.7, longitude: 11.97))
        s = try await h.suggest()
        #expect(s["ready"] == 5)
        #expect(s["baits"]?.arrayValue?.contains { $0["bait"] == "jig" } == true)
        try await h.feed("catch.deleted", ["id": "c3", "userId": "alice"])
        s = try await h.suggest()
        #expect(s["catches"] == 5)
        #expect(s.condition("sky")?["buckets"]?.arrayValue?.contains { $0["bucket"] == "clear" } == false)
        // An edited place drops an unavailable answer (it carries no place to compare).
        try await h.feed("catch.updated", fish("c6", species: "Pike", bait: "worm", latitude: 50))
        s = try await h.suggest()
        #expect(s["unavailable"] == 0)
        #expect(s["pending"] == 1)
        // Nothing is left over once every catch is gone.
        for id in ["c1", "c2", "c4", "c5", "c6"] {
            try await h.feed("catch.deleted", ["id": .string(id), "userId": "alice"])
        }
        let rows = try await h.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM catchTally") }
        #expect(rows == 0)
    }

    @Test func conditionsBeforeTheirCatch() async throws {
        let h = try Harness()
        try await h.weather("conditions.ready", ready("c9", temperature: "0 to 5 °C", pressure: "1030 hPa and above"))
        #expect(try await h.suggest()["catches"] == 0)
        try await h.feed("catch.created", fish("c9", species: "Trout", bait: "fly"))
        let s = try await h.suggest()
        #expect(s["ready"] == 1)
        #expect(s.condition("temperatureBand")?["best"]?["bucket"] == "0 to 5 °C")
    }

    @Test func confidenceGrowsWithTheSample() async throws {
        let h = try Harness()
        for i in 0..<20 {
            try await h.feed("catch.created", fish("c\(i)", species: "Pike", bait: "worm"))
            try await h.weather(
                "conditions.ready", ready("c\(i)", temperature: "10 to 15 °C", pressure: "1010 to 1020 hPa"))
            if i == 4 { #expect(try await h.suggest()["basis"] == "based on 5 catches: medium confidence") }
            if i == 18 { #expect(try await h.suggest()["confidence"] == "medium") }
        }
        #expect(try await h.suggest()["basis"] == "based on 20 catches: high confidence")
    }

    /// A species' or bait's key is read from its bytes when it is plain ASCII; every name
    /// must get the key trimming and lowercasing gives.
    @Test func keysAreTheTrimmedLowercasedName() {
        func reference(_ text: String) -> String {
            let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
            return trimmed.isEmpty ? "(none)" : trimmed
        }
        var names = [
            "", " ", "pike", "Pike", " pike", "pike ", "live bait", "LIVE BAIT", "\tworm\n", "worm\u{7F}", "\u{7F}",
            "abborre", "Äbborre", "gädda", "fly\u{A0}", "\u{2003}jig", "x\u{1C}", "\u{1C}x", "a\u{0}b", "\u{0}", "ß", "ǅ",
            "fly~", "@", "[Z]", "z",
        ]
        var random = SystemRandomNumberGenerator()
        let alphabet = Array(" \t\naZAz09~\u{7F}\u{1C}é\u{A0}ẞ\u{2003}-")
        for _ in 0..<20_000 {
            names.append(String((0..<Int.random(in: 0...6, using: &random)).map { _ in alphabet.randomElement(using: &random)! }))
        }
        let wrong = names.filter { CatchProjection.key($0) != reference($0) }
        #expect(wrong.isEmpty, "\(wrong.prefix(5).map { Array($0.unicodeScalars) })")
    }

    /// An answer writes its own JSON (Contracts' `Suggestions: JSONWritable`): byte for byte
    /// what the shared encoder writes, over generated answers and the ones the queries give.
    @Test func answersWriteWhatTheEncoderWrites() async throws {
        var random = SystemRandomNumberGenerator()
        let texts = ["pike", "", "Gädda", "a \"quoted\" bait", "back\\slash", "tab\tand\nline", "slash/ok", "\u{1}", "🐟", "z"]
        func text() -> String { texts.randomElement(using: &random)! }
        func share() -> Milli {
            SuggestQueries.share(Int.random(in: 0...50, using: &random), Int.random(in: 0...60, using: &random))
        }
        func baits() -> [BaitCount] {
            (0..<Int.random(in: 0...3, using: &random)).map { _ in
                BaitCount(bait: text(), count: Int.random(in: 0...1000, using: &random), share: share())
            }
        }
        func bucket() -> BucketCount {
            BucketCount(bucket: text(), count: Int.random(in: -1...99, using: &random), share: share(), baits: baits())
        }
        var answers: [Suggestions] = []
        for _ in 0..<300 {
            let conditions = (0..<Int.random(in: 0...4, using: &random)).map { _ in
                let buckets = (0..<Int.random(in: 0...3, using: &random)).map { _ in bucket() }
                // `best` as the service gives it (the first bucket: the writer copies its text),
                // a bucket of its own, or none
                let best = [buckets.first, bucket(), nil].randomElement(using: &random)!
                return ConditionSuggestion(
                    condition: text(), label: text(), catches: Int.random(in: 0...9, using: &random),
                    best: best, buckets: buckets, confidence: text(), basis: text())
            }
            answers.append(
                Suggestions(
                    species: Bool.random(using: &random) ? text() : nil, water: [nil, .fresh, .salt].randomElement(using: &random)!,
                    catches: Int.random(in: 0...Int.max, using: &random), ready: 1, pending: 0, unavailable: -3,
                    confidence: text(), basis: text(), note: Bool.random(using: &random) ? text() : nil,
                    conditions: conditions, baits: baits()))
        }
        let h = try await stocked()
        for body: JSONValue in [[:], ["species": "pike"], ["water": "salt"]] {
            answers.append(try await h.call("analytics.suggest", body).decode(Suggestions.self))
        }
        var differ: [String] = []
        for answer in answers where answer.jsonData != (try WireCoding.encoder.encode(answer)) {
            differ.append(String(decoding: answer.jsonData, as: UTF8.self))
        }
        #expect(differ.isEmpty, "\(differ.count) of \(answers.count) differ, e.g. \(differ.prefix(1))")
    }

    /// The suggestion read from the stored counts in one walk over all rows
    /// (`TallyCounts.merged`) is the one the nested maps of every entry gave: the code before
    /// the walk, kept here as the reference, over catches of random species, baits, waters
    /// and conditions (some buckets spelt two canonically equivalent ways, which are one
    /// bucket to both), for every filter.
    @Test func theWalkOverRowsGivesTheMapsAnswer() async throws {
        var random = SplitMix(seed: 11)
        let h = try Harness()
        let baits = ["worm", "spinner", "jig", "fly", "Spoon", "live bait", "r\u{E4}ka", "ra\u{308}ka"]
        // (the Kelvin sign is the same text as an ASCII K: its byte order puts the ASCII one first)
        // (and more buckets than the merge first makes room for: it grows)
        let temperatures =
            ["0 to 5 °C", "5 to 10 °C", "10 to 15 °C", "caf\u{E9}", "cafe\u{301}", "K", "\u{212A}"]
            + (0..<60).map { "band \($0)" }
        let pressures = ["below 1000 hPa", "1000 to 1010 hPa", "1010 to 1020 hPa"]
        let skies = ["clear", "cloudy", "rain", "fog"]
        for i in 0..<200 {
            let water = random.next(below: 3) == 0 ? "salt" : "fresh"
            let species = ["pike", "Perch", "bass"][random.next(below: 3)]
            try await h.feed(
                "catch.created",
                fish("c\(i)", species: species, bait: baits[random.next(below: baits.count)], water: water))
            switch random.next(below: 10) {
            case 0: continue  // pending
            case 1:
                try await h.weather("conditions.unavailable", ["catchId": .string("c\(i)"), "reason": "archive unreachable"])
            default:
                try await h.weather(
                    "conditions.ready",
                    ready(
                        "c\(i)", temperature: temperatures[random.next(below: temperatures.count)],
                        pressure: pressures[random.next(below: pressures.count)], beaufort: random.next(below: 6),
                        sky: skies[random.next(below: skies.count)], tide: water == "salt" ? "rising" : nil))
            }
        }
        var compared = 0
        for species in [nil, "pike", "PERCH", "bass", "zander"] as [String?] {
            for water in [nil, Water.fresh, .salt] {
                let body = SuggestRequest(species: species, water: water)
                let (mine, theirs) = try await h.service.host.database.read { db in
                    (
                        try SuggestQueries.suggest(db, userId: "alice", body: body, buckets: TallyBuckets()),
                        try referenceSuggest(db, userId: "alice", body: body)
                    )
                }
                let same = mine == theirs
                #expect(same, "\(body): \(String(decoding: mine.jsonData, as: UTF8.self))")
                compared += 1
            }
        }
        #expect(compared == 15)
        let all = try await h.suggest()
        #expect(all["catches"] == 200)
        let listed = all["conditions"]?.arrayValue?.reduce(0) { $0 + ($1["buckets"]?.arrayValue?.count ?? 0) } ?? 0
        #expect(listed > 64, "\(listed) buckets: the merge did not have to grow")
        // the two spellings of "café" are one bucket, and so are K and the Kelvin sign
        for bucket in ["caf\u{E9}", "K"] {
            #expect(
                all.condition("temperatureBand")?["buckets"]?.arrayValue?.filter { $0["bucket"]?.stringValue == bucket }
                    .count == 1, "\(bucket)")
        }
    }

    /// The suggestion as it was computed before `TallyCounts.merged`: every entry of every
    /// row into maps of dimension → bucket → bait → count.
    func referenceSuggest(_ db: Database, userId: String, body: SuggestRequest) throws -> Suggestions {
        let species = body.species.map(CatchProjection.key)
        var counts: [String: [String: [String: Int]]] = [:]
        let rows = try Row.fetchAll(
            db,
            sql: "SELECT bait, counts FROM catchTally WHERE userId = ?1 AND species = ?2 AND (?3 IS NULL OR water = ?3)",
            arguments: [userId, species ?? CatchProjection.any, body.water?.rawValue])
        for row in rows {
            let bait: String = row[0]
            let data: Data = row[1]
            for entry in try TallyCounts.named(db, data) where Int(entry.code) < TallyCounts.dimensionKeys.count {
                counts[TallyCounts.dimensionKeys[Int(entry.code)], default: [:]][entry.bucket, default: [:]][
                    bait, default: 0] += entry.n
            }
        }
        let status = counts["status"] ?? [:]
        func total(_ baits: [String: Int]?) -> Int { baits?.values.reduce(0, +) ?? 0 }
        let ready = total(status["ready"])
        let pending = total(status["pending"])
        let unavailable = total(status["unavailable"])
        func topBaits(_ baits: [String: Int], limit: Int) -> [BaitCount] {
            let sum = baits.values.reduce(0, +)
            return baits.sorted { ($0.value, $1.key) > ($1.value, $0.key) }.prefix(limit).map {
                BaitCount(bait: $0.key, count: $0.value, share: SuggestQueries.share($0.value, sum))
            }
        }
        var allBaits: [String: Int] = [:]
        for baits in status.values { allBaits.merge(baits, uniquingKeysWith: +) }
        let conditions = CatchProjection.dimensions.map { key, label -> ConditionSuggestion in
            let buckets = counts[key] ?? [:]
            let withData = buckets.values.reduce(0) { $0 + total($1) }
            let list = buckets.map { bucket, baits in
                BucketCount(
                    bucket: bucket, count: total(baits), share: SuggestQueries.share(total(baits), withData),
                    baits: topBaits(baits, limit: 3))
            }.sorted { ($0.count, $1.bucket) > ($1.count, $0.bucket) }
            return ConditionSuggestion(
                condition: key, label: label, catches: withData, best: list.first, buckets: list,
                confidence: SuggestQueries.confidence(withData), basis: SuggestQueries.basis(withData))
        }
        var notes: [String] = []
        if pending > 0 { notes.append("\(pending) still waiting for weather conditions") }
        if unavailable > 0 { notes.append("\(unavailable) without conditions (unavailable)") }
        return Suggestions(
            species: species, water: body.water, catches: ready + pending + unavailable, ready: ready,
            pending: pending, unavailable: unavailable, confidence: SuggestQueries.confidence(ready),
            basis: SuggestQueries.basis(ready), note: notes.isEmpty ? nil : "not counted: " + notes.joined(separator: "; "),
            conditions: conditions, baits: topBaits(allBaits, limit: 10))
    }

    /// Shares are worked out in integers; they must be what dividing and rounding Decimals
    /// gives, as values and as the text the wire carries.
    @Test func sharesAreTheRoundedDecimalQuotient() throws {
        func reference(_ count: Int, _ total: Int) -> Decimal {
            guard total != 0 else { return 0 }
            var quotient = Decimal(count) / Decimal(total)
            var rounded = Decimal()
            NSDecimalRound(&rounded, &quotient, 3, .plain)
            return rounded
        }
        var pairs: [(Int, Int)] = [
            (0, 0), (5, 0), (1, Int.max), (Int.max / 1000, Int.max / 999), (Int.max, Int.max), (3, 2), (1 << 40, 1 << 40),
            ((1 << 40) - 1, (1 << 40) - 1), (1, (1 << 40) - 1), (-1, 3), (2, -3), (-5, -8), (-1, 2001),
            (Int.min, Int.min), (Int.max / 1000, 1),
        ]
        for total in 1...400 { for count in 0...total { pairs.append((count, total)) } }
        for total in [999, 1000, 1001, 2000, 3333, 65_537, 1_000_000] {
            for count in [0, 1, total / 3, total / 2, total / 2 + 1, total - 1, total] { pairs.append((count, total)) }
        }
        var wrong: [String] = []
        for (count, total) in pairs {
            let mine = SuggestQueries.share(count, total), theirs = reference(count, total)
            var out = JSONOutput()
            out.milli(mine)
            let mineText = String(decoding: out.data, as: UTF8.self)
            let inArray = String(decoding: try WireCoding.encode([theirs]), as: UTF8.self)
            let theirText = String(inArray.dropFirst().dropLast())  // (without the array's brackets)
            if mine.decimal != theirs || mineText != theirText {
                wrong.append("\(count)/\(total): \(mineText) vs \(theirText)")
            }
        }
        #expect(wrong.isEmpty, "\(wrong.count) of \(pairs.count) differ, e.g. \(wrong.prefix(5))")
    }
}

extension JSONValue {
    func merging(_ other: [String: JSONValue]) -> JSONValue {
        guard case .object(var object) = self else { return self }
        object.merge(other) { $1 }
        return .object(object)
    }
}
