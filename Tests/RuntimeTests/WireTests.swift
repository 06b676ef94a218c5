// Ids, times and decoding errors: the small promises of the Wire module.
import Contracts
import Foundation
import Testing
import Wire

@Suite struct WireTests {
    @Test func idsAreValidUUIDv7AndStrictlyIncreasing() {
        let now = Date()
        let ids = (0..<10_000).map { _ in ID.make(at: now) }  // all in the same millisecond
        #expect(ids.allSatisfy(ID.isValid))
        #expect(ids.allSatisfy { $0[$0.index($0.startIndex, offsetBy: 14)] == "7" })
        #expect(ids == ids.sorted())
        #expect(Set(ids).count == ids.count)
        let later = ID.make(at: now.addingTimeInterval(1))
        #expect(later > ids.last!)
    }

    @Test func timesRoundTripWithOffsets() throws {
        let parsed = try #require(WireTime.parse("2026-05-01T16:45:00+02:00"))
        #expect(WireTime.format(parsed) == "2026-05-01T14:45:00Z")
        let fractional = try #require(WireTime.parse("2026-05-01T14:45:00.250Z"))
        #expect(WireTime.format(fractional) == "2026-05-01T14:45:00.250Z")
        #expect(WireTime.parse("2026-05-01 14:45") == nil)
        #expect(WireTime.parse("yesterday") == nil)
    }
}

@Suite struct TimeValueTests {
    @Test func anHourIsADollarAndCentsAreFloored() {
        #expect(TimeValue.cents(3_600_000) == 100)
        #expect(TimeValue.cents(35_999) == 0, "36 s make a cent; less is nothing")
        #expect(TimeValue.cents(36_000) == 1)
        #expect(TimeValue.cents(TimeValue.goalMs) == 1_000_000)
        #expect(TimeValue.dollars(0) == "$0.00")
        #expect(TimeValue.dollars(505) == "$5.05")
        #expect(TimeValue.dollars(123_456_789) == "$1,234,567.89")
        #expect(TimeValue.dollars(1_000_000) == "$10,000.00")
    }

    @Test("an activity, a net worth and analytics' summary show one worth for the same time, exactly")
    func oneWorthEverywhere() throws {
        let ms: Int64 = 5_400_000 + 18_000  // 1.5 h and 18 s: half a cent, floored
        let worth = TimeWorth(ms)
        #expect(worth.cents == 150 && worth.amount == "$1.50")
        // 5,418,000 / 36,000,000,000 = 0.0001505: 0.0002 to 4 decimals, half away from zero
        #expect(worth.progress == Decimal(string: "0.0002"))
        let timer = TimerState(
            activityId: "a", state: .idle, accumulatedMs: 0, runningSince: nil, startedAt: nil, elapsedMs: 0,
            at: Date(timeIntervalSince1970: 0))
        let activity = Activity(id: "a", name: "Chess", createdAt: Date(timeIntervalSince1970: 0), totalMs: ms, timer: timer)
        let summary = ActivitySummary(
            id: "a", name: "Chess", createdAt: Date(timeIntervalSince1970: 0), totalMs: ms, timer: .idle, timerElapsedMs: 0)
        let netWorth = NetWorth(totalMs: ms)
        #expect(TimeWorth(activity.totalMs) == worth)
        #expect((activity.cents, activity.amount, activity.progress) == (worth.cents, worth.amount, worth.progress))
        #expect((summary.cents, summary.amount, summary.progress) == (worth.cents, worth.amount, worth.progress))
        #expect((netWorth.cents, netWorth.amount, netWorth.progress) == (worth.cents, worth.amount, worth.progress))
        #expect(netWorth.goalCents == 1_000_000 && !summary.running)
        // the exact decimal travels as JSON text, not through a binary fraction
        #expect(String(decoding: try WireCoding.encode(netWorth), as: UTF8.self).contains("\"progress\":0.0002"))
    }
}

/// The idempotency hash is taken over a body's canonical text written straight from its
/// bytes (CanonicalJSON); stored hashes were made from `JSONValue.jsonText`. The two must
/// agree for every body, or a retry would be refused as a different request.
@Suite struct CanonicalJSONTests {
    /// A small deterministic generator (SplitMix64), so a failure can be replayed.
    struct Generator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
        mutating func pick<T>(_ items: [T]) -> T { items[below(items.count)] }
    }

    static let numbers = [
        "0", "-0", "1", "-1", "7", "350", "123456789012345", "-999999999999999", "1234567890123456", "8999999999999999",
        "9000000000000000", "12345678901234567890", "1.0", "1.50", "11.2", "-0.5", "0.1", "1e2", "1E2", "1e-5", "2.5e+3",
        "0.0001", "1.5e300", "123456789.123", "-0.0", "3e-7", "1e20",
    ]
    static let strings = [
        "", "coffee", "a/b", "Zürich", "日本", "tab\\tin", "quote\\\"d", "slash\\/", "\\u00e9", "line\\nbreak", "\\u0041",
    ]
    static let keys = ["a", "b", "A", "B", "_x", "a10", "a9", "ab", "aB", "a-b", "10", "9", "name", "amountMinor", "é", "k\\u0065y"]

    static func value(_ g: inout Generator, depth: Int) -> String {
        func space() -> String { g.pick(["", "", " ", "\n  ", "\t"]) }
        switch depth > 3 ? g.below(4) : g.below(7) {
        case 0: return g.pick(numbers)
        case 1: return "\"\(g.pick(strings))\""
        case 2: return g.pick(["true", "false", "null"])
        case 3: return g.pick(numbers)
        case 4:
            let count = g.below(4)
            return "[" + space() + (0..<count).map { _ in value(&g, depth: depth + 1) }.joined(separator: space() + "," + space()) + "]"
        default:
            var chosen: [String] = []
            for _ in 0..<g.below(5) {
                let key = g.pick(keys)
                if !chosen.contains(key) { chosen.append(key) }
            }
            let members = chosen.map { "\"\($0)\"" + space() + ":" + space() + value(&g, depth: depth + 1) }
            return "{" + space() + members.joined(separator: space() + "," + space()) + space() + "}"
        }
    }

    @Test func agreesWithTheDecodedValuesJSONText() throws {
        var g = Generator(state: 13)
        var fast = 0
        for _ in 0..<3_000 {
            let text = Self.value(&g, depth: 0)
            let data = Data(text.utf8)
            let reference = Array(try JSONValue.parse(data).jsonText.utf8)
            if let canonical = CanonicalJSON.text(data) {
                fast += 1
                #expect(canonical == reference, "\(text) → \(String(decoding: canonical, as: UTF8.self)), not \(String(decoding: reference, as: UTF8.self))")
            }
        }
        // Most generated values have nothing the byte-level writer leaves to the long way.
        #expect(fast > 1_000, "only \(fast) of 3000 values took the byte-level way")
    }

    @Test func theUsualWriteBodyTakesTheByteLevelWay() throws {
        let body = Data(#"{ "name" : "coffee 1", "amountMinor": 350, "currency":"USD", "date":"2026-05-01T14:45:00Z", "tags":[1, 2] }"#.utf8)
        let canonical = try #require(CanonicalJSON.text(body))
        #expect(String(decoding: canonical, as: UTF8.self) == #"{"amountMinor":350,"currency":"USD","date":"2026-05-01T14:45:00Z","name":"coffee 1","tags":[1,2]}"#)
        // Escapes, duplicate keys and broken text are left to the decoder.
        #expect(CanonicalJSON.text(Data(#"{"a":"x\"y"}"#.utf8)) == nil)
        #expect(CanonicalJSON.text(Data(#"{"a":1,"a":2}"#.utf8)) == nil)
        #expect(CanonicalJSON.text(Data(#"{"a":1"#.utf8)) == nil)
        #expect(CanonicalJSON.text(Data(#"{"a":01}"#.utf8)) == nil)
        #expect(CanonicalJSON.text(Data(#"{"a":1} x"#.utf8)) == nil)
        #expect(CanonicalJSON.text(Data([0x22, 0xFF, 0x22])) == nil, "invalid UTF-8")
        #expect(CanonicalJSON.text(Data(String(repeating: "[", count: 200).utf8)) == nil)
    }
}
