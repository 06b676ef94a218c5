// Ids, times and decoding errors: the small promises of the Wire module.
import Contracts
import Foundation
import Testing
import TestSupport
@testable import Wire

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

/// WireTime writes and reads the common forms from their digits; Foundation's ISO 8601
/// style, which it replaced on that path, is the oracle here.
@Suite struct WireTimeDigitsTests {
    static let plain = Date.ISO8601FormatStyle(timeZone: .gmt)
    static let withFraction = Date.ISO8601FormatStyle(includingFractionalSeconds: true, timeZone: .gmt)

    /// What Foundation writes for the same millisecond (the code before).
    static func foundationText(ms totalMs: Int64) -> String {
        var seconds = totalMs / 1000
        var ms = totalMs % 1000
        if ms < 0 {
            ms += 1000
            seconds -= 1
        }
        let whole = Date(timeIntervalSince1970: Double(seconds)).formatted(plain)
        guard ms > 0 else { return whole }
        return String(whole.dropLast()) + "." + String(String(ms + 1000).dropFirst()) + "Z"
    }

    static func foundationParse(_ text: String) -> Date? {
        (try? plain.parse(text)) ?? (try? withFraction.parse(text))
    }

    @Test("every millisecond from year 1 to 9999 is written as Foundation writes it and read back exactly")
    func formatAgreesWithFoundation() {
        var random = SplitMix(seed: 11)
        let first: Int64 = -62_135_596_800_000  // 0001-01-01T00:00:00Z
        let last: Int64 = 253_402_300_799_999  // 9999-12-31T23:59:59.999Z
        var samples: [Int64] = [first, last, 0, -1, 1, 951_782_400_000, 951_868_799_999, 4_107_542_400_000]
        for _ in 0..<3_000 { samples.append(first + Int64(random.next() % UInt64(last - first + 1))) }
        for _ in 0..<500 { samples.append(Int64(random.next() % 4_000_000_000) * 1000) }  // whole seconds
        for ms in samples {
            let text = WireTime.format(Date(ms: ms))
            #expect(text == Self.foundationText(ms: ms), "ms \(ms)")
            #expect(WireTime.parse(text)?.ms == ms, "\(text)")
        }
    }

    @Test("the common forms read as Foundation reads them; anything else is left to Foundation")
    func parseAgreesWithFoundation() {
        var random = SplitMix(seed: 12)
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        var texts = [
            "2024-02-29T12:00:00Z", "2023-02-29T12:00:00Z", "2026-04-31T00:00:00Z", "2026-13-01T00:00:00Z",
            "2026-05-01T24:00:00Z", "2026-05-01T23:60:00Z", "2026-05-01T23:59:60Z", "2026-05-01T23:59:59+14:00",
            "2026-05-01T23:59:59-12:30", "2026-05-01T23:59:59+24:00", "2026-05-01T23:59:59.5Z",
            "2026-05-01T23:59:59.12345Z", "2026-05-01t23:59:59Z", "2026-05-01T23:59:59", "0000-01-01T00:00:00Z",
            "2026-05-01T23:59:59.999+01:00", "2026-05-01T23:59:59.abcZ", "２０２６-05-01T23:59:59Z",
        ]
        for _ in 0..<2_000 {
            let year = 1900 + random.next(below: 300)
            let month = 1 + random.next(below: 12)
            let day = 1 + random.next(below: 31)
            var text = "\(year)-\(two(month))-\(two(day))T\(two(random.next(below: 24))):\(two(random.next(below: 60))):\(two(random.next(below: 60)))"
            if random.next(below: 2) == 0 { text += ".\(String(1000 + random.next(below: 1000)).dropFirst())" }
            switch random.next(below: 3) {
            case 0: text += "Z"
            case 1: text += "+\(two(random.next(below: 15))):\(two(random.pick([0, 30, 45])))"
            default: text += "-\(two(random.next(below: 13))):\(two(random.pick([0, 30])))"
            }
            texts.append(text)
        }
        var fast = 0
        for text in texts {
            let expected = Self.foundationParse(text)
            let parsed = WireTime.parse(text)
            #expect(parsed?.ms == expected?.ms, "\(text)")
            if WireTime.parseCommon(text) != nil { fast += 1 }
        }
        #expect(fast > 1_500, "most of the generated texts are read from their digits")
    }

    /// The fast path reads only the text's own bytes: every form cut short at every length,
    /// and with a separator put at every place, reads as Foundation reads it (a debug build
    /// traps on a read past the end; CI's fuzzing found "2024-05-20T14:40:00.", whose
    /// fraction was read from the three bytes after it).
    @Test("a time cut short, or with a separator anywhere, never reads past its end")
    func cutShortTimesReadNothingPastTheirEnd() {
        let forms = [
            "2024-05-20T14:40:00Z", "2024-05-20T14:40:00.123Z", "2024-05-20T14:40:00+05:30",
            "2024-05-20T14:40:00.123-05:30",
        ]
        var texts: [String] = []
        for form in forms {
            let bytes = Array(form.utf8)
            for length in 0...bytes.count { texts.append(String(decoding: bytes[..<length], as: UTF8.self)) }
            for place in bytes.indices {
                for separator in ".Z+-:T" {
                    var changed = bytes
                    changed[place] = UInt8(ascii: separator.unicodeScalars.first!)
                    texts.append(String(decoding: changed, as: UTF8.self))
                    texts.append(String(decoding: changed[..<(place + 1)], as: UTF8.self))
                }
            }
        }
        for text in texts {
            #expect(WireTime.parse(text)?.ms == Self.foundationParse(text)?.ms, "\(text)")
        }
        #expect(texts.count > 700)
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
    typealias Generator = SplitMix


    static let numbers = [
        "0", "-0", "1", "-1", "7", "350", "123456789012345", "-999999999999999", "1234567890123456", "8999999999999999",
        "9000000000000000", "12345678901234567890", "1.0", "1.50", "11.2", "-0.5", "0.1", "1e2", "1E2", "1e-5", "2.5e+3",
        "0.0001", "1.5e300", "123456789.123", "-0.0", "3e-7", "1e20", "12.3456789012345678901", "9007199254740993",
        "41.123456789012345678", "1e-100", "123456789012345678901234567890123456789012", "-2.50e-3", "1e95",
    ]
    static let strings = [
        "", "coffee", "a/b", "Zürich", "日本", "tab\\tin", "quote\\\"d", "slash\\/", "\\u00e9", "line\\nbreak", "\\u0041",
    ]
    static let keys = ["a", "b", "A", "B", "_x", "a10", "a9", "ab", "aB", "a-b", "10", "9", "name", "amountMinor", "é", "k\\u0065y"]

    static func value(_ g: inout Generator, depth: Int) -> String {
        func space() -> String { g.pick(["", "", " ", "\n  ", "\t"]) }
        switch depth > 3 ? g.next(below: 4) : g.next(below: 7) {
        case 0: return g.pick(numbers)
        case 1: return "\"\(g.pick(strings))\""
        case 2: return g.pick(["true", "false", "null"])
        case 3: return g.pick(numbers)
        case 4:
            let count = g.next(below: 4)
            return "[" + space() + (0..<count).map { _ in value(&g, depth: depth + 1) }.joined(separator: space() + "," + space()) + "]"
        default:
            var chosen: [String] = []
            for _ in 0..<g.next(below: 5) {
                let key = g.pick(keys)
                if !chosen.contains(key) { chosen.append(key) }
            }
            let members = chosen.map { "\"\($0)\"" + space() + ":" + space() + value(&g, depth: depth + 1) }
            return "{" + space() + members.joined(separator: space() + "," + space()) + space() + "}"
        }
    }

    @Test func agreesWithTheDecodedValuesJSONText() throws {
        var g = Generator(seed: 13)
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

@Suite("JSON numbers keep their digits")
struct JSONNumberTests {
    @Test("canonical text: one spelling per value, JSON's grammar only")
    func canonicalText() {
        let cases: [(String, String)] = [
            ("0.10", "0.1"), ("1E2", "100"), ("-0", "0"), ("-0.0", "0"), ("2.500", "2.5"), ("11.2", "11.2"), ("3.0", "3"),
            ("9007199254740993", "9007199254740993"), ("12.3456789012345678901", "12.3456789012345678901"),
            ("1e21", "1000000000000000000000"), ("3e-7", "0.0000003"), ("-12.50", "-12.5"),
        ]
        for (text, canonical) in cases {
            #expect(JSONNumber(text: text)?.text == canonical, "\(text)")
        }
        for bad in ["+1", "01", ".5", "1.", "0x10", "nan", "inf", "12abc", "", "-", "1e", "1e+", " 1"] {
            #expect(JSONNumber(text: bad) == nil, "\(bad)")
        }
        #expect(JSONNumber(text: "3.0") == JSONNumber(3) && JSONNumber(text: "0.10") == JSONNumber(0.1))
        #expect(JSONNumber(0.1 + 0.2).text == "0.30000000000000004", "a Double's shortest text, not its binary expansion")
        #expect(JSONNumber(Milli(thousandths: 11_200)).text == "11.2")
        #expect(JSONNumber(text: "1.7976931348623157e308")!.isWhole && JSONNumber(text: "1e21")!.isWhole)
        #expect(!JSONNumber(text: "1.5")!.isWhole && !JSONNumber(text: "5e-324")!.isWhole)
    }

    @Test("a number already canonical is kept as it is: the long way gives the same text")
    func shortCanonicalSpellings() {
        // Tokens of every shape near the fast path's edges: signs, leading and trailing
        // zeros, 1 to 22 digits, fractions, exponents.
        var random = SystemRandomNumberGenerator()
        func digits(_ count: Int) -> String {
            String((0..<count).map { _ in Character(String(Int.random(in: 0...9, using: &random))) })
        }
        var tokens = ["0", "-0", "0.5", "-0.5", "0.0", "-0.0", "1", "10", "100.25", "0.050", "007", "1.", ".5", "-",
            "999999999999999999", "1000000000000000000", "-999999999999999999", "0.00000000000000001",
            "12345678901234567.8", "1234567890123456.78", "9223372036854775807", "-9223372036854775808", "1e5"]
        for _ in 0..<60_000 {
            var token = Bool.random(using: &random) ? "-" : ""
            token += digits(Int.random(in: 1...12, using: &random))
            if Bool.random(using: &random) { token += "." + digits(Int.random(in: 0...12, using: &random)) }
            if Int.random(in: 0..<10, using: &random) == 0 { token += "e" + digits(1) }
            tokens.append(token)
        }
        var fast = 0
        for token in tokens {
            let longWay = JSONNumber.canonicalTextTheLongWay(token)
            if JSONNumber.isShortCanonical(token.utf8) {
                fast += 1
                #expect(longWay == token, "\(token)")
            }
            #expect(JSONNumber.canonicalText(token) == longWay, "\(token)")
        }
        #expect(fast > 15_000, "the random tokens reach the fast path")
        for kept in ["0", "0.5", "-0.5", "1", "100.25", "999999999999999999", "0.00000000000000001"] {
            #expect(JSONNumber.isShortCanonical(kept.utf8), "\(kept)")
        }
        for notKept in ["-0", "0.0", "0.050", "007", "1.", ".5", "-", "", "1000000000000000000", "1e5", "1234567890123456789.5"] {
            #expect(!JSONNumber.isShortCanonical(notKept.utf8), "\(notKept)")
        }
    }

    @Test("a Double's number is its shortest text read as a decimal, whichever way it is made")
    func doublesAsTheirText() {
        // JSONNumber(Double) takes Swift's text as it is for a fraction without an exponent;
        // it must be the text the long way (reading that text as a JSON number) gives.
        var random = SystemRandomNumberGenerator()
        var checked = 0
        func check(_ value: Double) {
            guard value.isFinite else { return }
            let longWay = JSONNumber(text: "\(value)")?.text ?? "\(value)"
            let whole = value.rounded() == value && abs(value) < 9.0e15
            #expect(JSONNumber(value).text == (whole ? String(Int64(value)) : longWay), "\(value)")
            checked += 1
        }
        for _ in 0..<40_000 {
            // every magnitude, and the ones measurements have (coordinates, readings)
            check(Double(bitPattern: random.next()))
            check(Double.random(in: -180...180, using: &random))
            check((Double.random(in: -1000...1000, using: &random) * 100).rounded() / 100)
            check(Double.random(in: -1e-3...1e-3, using: &random))
            check(Double(Int64.random(in: -1 << 54...1 << 54, using: &random)) + 0.5)
        }
        for edge in [0.1, -0.5, 1e-4, 1e-5, 0.00012345678901234567, 4503599627370495.5, 9.0e15, 9007199254740993, 1e300, 5e-324] {
            check(edge)
            check(-edge)
        }
        #expect(checked > 190_000)
    }

    @Test("a value parsed, encoded and decoded keeps every digit: quantities and 64-bit amounts")
    func parsedValuesKeepTheirDigits() throws {
        let text = #"{"volume":11.2,"long":12.3456789012345678901,"big":9007199254740993,"max":9223372036854775807,"tiny":0.001}"#
        let value = try JSONValue.parse(text)
        #expect(value.jsonText == #"{"big":9007199254740993,"long":12.3456789012345678901,"max":9223372036854775807,"tiny":0.001,"volume":11.2}"#)
        struct Body: Decodable {
            var volume: Milli
            var long: Decimal
            var big: Int64
            var max: Int64
            var tiny: Milli
        }
        // Straight from the value (a consumer's event, the CLI's saved answer) and through its text.
        for body in [try value.decode(Body.self), try WireCoding.decode(Body.self, from: WireCoding.encode(value))] {
            #expect(body.volume == Milli(thousandths: 11_200))
            #expect(body.long == Decimal(string: "12.3456789012345678901")!)
            #expect(body.big == 9_007_199_254_740_993 && body.max == Int64.max)
            #expect(body.tiny == Milli(thousandths: 1))
        }
        // A number with more decimals than a quantity takes is still refused, not rounded.
        #expect(throws: (any Error).self) { try JSONValue.parse(#"{"v":1.2345}"#)["v"]!.decode(Milli.self) }
        // Integers are read only from whole numbers in range.
        #expect(throws: (any Error).self) { try JSONValue.parse("[1.5]").decode([Int].self) }
        #expect(throws: (any Error).self) { try JSONValue.parse("[9223372036854775808]").decode([Int64].self) }
        #expect(try JSONValue.parse("[1e2]").decode([Int].self) == [100])
    }

    /// The fuzzer's find (Tests/Fuzz/crashes/exponent-int-min): an exponent of exactly Int.min
    /// trapped in `abs` while the number's text was checked, so one frame stopped a service.
    @Test("exponents at the ends of Int's range are refused or read, never a crash")
    func extremeExponents() throws {
        for exponent in ["-9223372036854775808", "9223372036854775807", "-9223372036854775807", "+9223372036854775807",
            "99999999999999999999", "-99999999999999999999"]
        {
            for mantissa in ["1", "-1", "0", "1.5"] {
                let text = "\(mantissa)e\(exponent)"
                #expect(JSONNumber.canonicalText(text) == nil, "\(text)")
                _ = JSONNumber(text: text)
                // A frame with it: whatever the fast parser says, the decode answers as Foundation does.
                let frame = Data(#"{"v":1,"id":"x","method":"$srv.ping","n":\#(text)}"#.utf8)
                #expect(JSONParser.parse(frame) == nil, "\(text)")
                struct Frame: Decodable { var n: Double }
                let fast = Result { try WireCoding.decode(Frame.self, from: frame).n }
                let foundation = Result { try WireCoding.decoder.decode(Frame.self, from: frame).n }
                #expect(String(describing: fast) == String(describing: foundation), "\(text)")
            }
        }
    }

    @Test("numbers no Decimal holds still parse, as their nearest Double")
    func outOfRangeNumbers() throws {
        let value = try JSONValue.parse("[1.5e300, 5e-324]")
        #expect(value.jsonText == "[1.5e+300,5e-324]")
        #expect(value.arrayValue?.first?.doubleValue == 1.5e300)
    }
}
