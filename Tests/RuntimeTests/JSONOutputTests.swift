// The JSON a reply writes itself (Shared/Wire/JSONWritable.swift) is what the shared encoder
// writes: integers of every size, Decimals and thousandths written digit by digit, and the expenses (an
// answer, an event, a page of a list) and fuel stats, held to Foundation's encoder over edge cases and
// generated values (the suggestions' writers are held to it in
// Tests/AnalyticsTests/SuggestTests.swift).
import Contracts
import Foundation
import Testing
import TestSupport
import Wire

@Suite struct JSONOutputTests {
    /// What the shared encoder writes for `value`, alone.
    func encoded(_ value: some Encodable) throws -> String {
        String(String(decoding: try WireCoding.encoder.encode([value]), as: UTF8.self).dropFirst().dropLast())
    }

    @Test func integersAreTheEncodersText() throws {
        var values: [Int64] = [0, 1, -1, 9, 10, -10, 99, 100, Int64.max, Int64.min, Int64.max - 1, Int64.min + 1]
        var random = SplitMix(seed: 3)
        for _ in 0..<2_000 {
            values.append(Int64(bitPattern: random.next()) >> Int64(random.next(below: 64)))
        }
        var wrong: [String] = []
        for value in values {
            var out = JSONOutput()
            out.int(value)
            let mine = String(decoding: out.data, as: UTF8.self)
            if mine != (try encoded(value)) { wrong.append("\(value): \(mine)") }
        }
        for value in [UInt64.max, UInt64(Int64.max) + 1] {
            var out = JSONOutput()
            out.int(value)
            if String(decoding: out.data, as: UTF8.self) != (try encoded(value)) { wrong.append("\(value)") }
        }
        var small = JSONOutput()
        small.int(Int8.min)
        small.int(UInt8.max)
        #expect(String(decoding: small.data, as: UTF8.self) == "-128255")
        #expect(wrong.isEmpty, "\(wrong.count) differ, e.g. \(wrong.prefix(5))")
    }

    @Test func decimalsAreTheEncodersText() throws {
        var values: [Decimal] = [
            0, 1, -1, 10, 100, Decimal(string: "0.750")!, Decimal(string: "0.75")!, Decimal(string: "0.001")!,
            Decimal(string: "-0.001")!, Decimal(string: "1.000")!, Decimal(string: "1000")!, Decimal(string: "1e3")!,
            Decimal(string: "12.25")!, Decimal(string: "0.0000000000000000000000000000001")!,
            Decimal(string: "18446744073709551615")!, Decimal(string: "18446744073709551616")!,
            Decimal(string: "-18446744073709551615.5")!, Decimal(string: "123456789012345678901234567890")!,
            Decimal(string: "1e-40")!, Decimal(string: "1e-41")!, Decimal(string: "5e120")!, Decimal.nan,
            Decimal(sign: .plus, exponent: -3, significand: 750), Decimal(sign: .plus, exponent: -3, significand: 0),
            Decimal(sign: .minus, exponent: -2, significand: 5), Decimal(sign: .plus, exponent: 2, significand: 7),
            Decimal(12.5), Decimal(0.1), Decimal(1.0 / 3.0), Decimal(Double.pi), Decimal(-2.5e-7),
        ]
        var random = SplitMix(seed: 5)
        for _ in 0..<3_000 {
            let significand = random.next() >> UInt64(random.next(below: 64))
            let exponent = random.next(below: 50) - 42
            let sign: FloatingPointSign = random.next(below: 4) == 0 ? .minus : .plus
            values.append(Decimal(sign: sign, exponent: exponent, significand: Decimal(significand)))
            // as a value is usually made: a quotient or a sum
            values.append(Decimal(Int(significand >> 20)) / Decimal(random.next(below: 10_000) + 1))
            values.append(Decimal(string: "\(significand >> 30).\(random.next(below: 1000))")!)
        }
        var wrong: [String] = []
        for value in values {
            var out = JSONOutput()
            out.decimal(value)
            let mine = String(decoding: out.data, as: UTF8.self)
            let theirs = value.isNaN ? value.description : try encoded(value)
            if mine != theirs { wrong.append("\(value.description): \(mine) vs \(theirs)") }
        }
        #expect(wrong.isEmpty, "\(wrong.count) of \(values.count) differ, e.g. \(wrong.prefix(5))")
    }

    /// Thousandths are written digit by digit as the encoder writes a `Milli` (its Decimal),
    /// which is also `Milli.description`: zeros inside the fraction kept, trailing ones not.
    @Test func millisAreTheEncodersText() throws {
        var values: [Int64] = [
            0, 1, -1, 5, 50, 500, 999, 1000, 1001, 1010, 1100, -1050, 750, 667, 12_345, 100_000, -100_001,
            Int64.max / 2, -(Int64.max / 2),
        ]
        var random = SplitMix(seed: 29)
        for _ in 0..<3_000 { values.append(Int64(bitPattern: random.next()) >> Int64(random.next(below: 64) + 2)) }
        var wrong: [String] = []
        for thousandths in values {
            let value = Milli(thousandths: thousandths)
            var out = JSONOutput()
            out.milli(value)
            let mine = String(decoding: out.data, as: UTF8.self)
            let theirs = try encoded(value)
            if mine != theirs || mine != value.description { wrong.append("\(thousandths): \(mine) vs \(theirs)") }
        }
        #expect(wrong.isEmpty, "\(wrong.count) of \(values.count) differ, e.g. \(wrong.prefix(5))")
    }

    /// Strings that need escapes are written as the encoder writes them: every ASCII
    /// character alone and among others, and generated texts of control characters, quotes,
    /// backslashes, slashes and non-ASCII (a cache key holds a request's JSON).
    @Test func escapedStringsAreTheEncodersText() throws {
        var random = SplitMix(seed: 23)
        var texts = (0..<0x80).map { String(Character(Unicode.Scalar(UInt8($0)))) }
        texts += texts.map { "a\($0)b" }
        // each ASCII character at every place of texts up to three words long (the check
        // for escapes reads eight bytes at a time, a shorter text as one padded word, and the
        // copy moves up to sixteen bytes as two words), among plain and non-ASCII neighbours
        for length in 1...24 {
            for place in 0..<length {
                for code in [0x00, 0x08, 0x1F, 0x20, 0x21, 0x22, 0x23, 0x2F, 0x5B, 0x5C, 0x5D, 0x7F] {
                    var bytes = (0..<length).map { UInt8(ascii: "a") + UInt8($0 % 26) }
                    bytes[place] = UInt8(code)
                    texts.append(String(decoding: bytes, as: UTF8.self))
                    texts.append("é" + String(decoding: bytes, as: UTF8.self) + "🐟")
                }
            }
        }
        let pieces = ["\"", "\\", "/", "\u{0}", "\u{1f}", "\u{7f}", "\n", "\r\n", "\t", "\u{8}", "\u{c}", "é", "🐟", "\u{2028}", "x", "{\"k\":1}"]
        for _ in 0..<2_000 {
            texts.append((0..<random.next(below: 12)).map { _ in random.pick(pieces) }.joined())
        }
        var wrong: [String] = []
        for text in texts {
            let mine = CanonicalJSON.quoted(text)
            let theirs = try WireCoding.encoder.encode(text)
            if mine != theirs { wrong.append("\(String(decoding: mine, as: UTF8.self)) vs \(String(decoding: theirs, as: UTF8.self))") }
            var out = JSONOutput()
            out.string(text)
            if out.data != theirs { wrong.append("JSONOutput: \(String(decoding: out.data, as: UTF8.self))") }
        }
        #expect(wrong.isEmpty, "\(wrong.count) of \(texts.count) differ, e.g. \(wrong.prefix(5))")
    }

    @Test func expensesAndTheirPagesAreTheEncodersText() throws {
        var random = SplitMix(seed: 17)
        let texts = ["", "Lunch", "Gädda 🐟", "a \"quoted\" name", "back\\slash", "tab\tand\nline", "slash/ok", "\u{1}", "é"]
        func date() -> Date {
            // whole milliseconds (as stored) and arbitrary instants, before 1970 and far ahead
            let ms = Int64(random.next(below: 400_000_000_000)) - 100_000_000_000
            return random.next(below: 4) == 0
                ? Date(timeIntervalSince1970: Double(ms) / 1000 + Double(random.next(below: 1000)) / 1e7)
                : Date(timeIntervalSince1970: Double(ms) / 1000)
        }
        func expense() -> Expense {
            Expense(
                id: random.pick(texts), name: random.pick(texts),
                description: random.next(below: 3) == 0 ? nil : random.pick(texts),
                amountMinor: Int64(bitPattern: random.next()) >> Int64(random.next(below: 64)),
                currency: random.pick(["USD", "EUR", "SEK"]), date: date(),
                category: random.next(below: 3) == 0 ? nil : random.pick(texts), createdAt: date(), updatedAt: date())
        }
        var wrong: [String] = []
        for _ in 0..<500 {
            let one = expense()
            if one.jsonData != (try WireCoding.encoder.encode(one)) { wrong.append(String(decoding: one.jsonData, as: UTF8.self)) }
            let page = Page(
                items: (0..<random.next(below: 4)).map { _ in expense() },
                nextCursor: random.next(below: 2) == 0 ? nil : random.pick(texts))
            if page.jsonData != (try WireCoding.encoder.encode(page)) { wrong.append(String(decoding: page.jsonData, as: UTF8.self)) }
            if page.items.jsonData != (try WireCoding.encoder.encode(page.items)) { wrong.append("array") }
        }
        #expect(wrong.isEmpty, "\(wrong.count) differ, e.g. \(wrong.prefix(2))")
        // and the shared encoding takes the writer for them, for the same bytes
        let sample = expense()
        #expect(try WireCoding.encode(sample) == WireCoding.encoder.encode(sample))
    }

    /// `analytics.fuel.stats` answers: every optional present or not, Decimals of every shape
    /// (as the decimals test above), dates before 1970 and far ahead, texts needing escapes.
    @Test func fuelStatsAreTheEncodersText() throws {
        var random = SplitMix(seed: 23)
        let texts = ["", "v1", "Gädda 🐟", "a \"quoted\" name", "back\\slash", "tab\tand\nline", "\u{1}", "mpg_us"]
        func decimal() -> Decimal {
            let significand = random.next() >> UInt64(random.next(below: 64))
            let sign: FloatingPointSign = random.next(below: 4) == 0 ? .minus : .plus
            return Decimal(sign: sign, exponent: random.next(below: 12) - 8, significand: Decimal(significand))
        }
        func date() -> Date {
            let ms = Int64(random.next(below: 400_000_000_000)) - 100_000_000_000
            return Date(timeIntervalSince1970: Double(ms) / 1000)
        }
        func maybe<T>(_ make: () -> T) -> T? { random.next(below: 3) == 0 ? nil : make() }
        func point() -> EconomyPoint { EconomyPoint(fillId: random.pick(texts), date: date(), value: decimal()) }
        func stats() -> FuelStats {
            FuelStats(
                vehicleId: random.pick(texts), units: random.pick(texts), unitLabel: random.pick(texts),
                distanceUnit: random.pick(texts), volumeUnit: random.pick(texts),
                fills: Int(bitPattern: UInt(random.next())) >> random.next(below: 64),
                closedSegments: random.next(below: 1_000), average: maybe(decimal), reason: maybe { random.pick(texts) },
                last: maybe(point), best: maybe(point), worst: maybe(point), closedDistance: decimal(),
                closedVolume: decimal(),
                waiting: maybe { WaitingFills(partialFills: random.next(below: 9), distance: decimal(), volume: decimal()) },
                spending: (0..<random.next(below: 4)).map { _ in
                    FuelSpending(
                        currency: random.pick(texts), fills: random.next(below: 500),
                        totalMinor: Int64(bitPattern: random.next()) >> Int64(random.next(below: 64)), volume: decimal(),
                        averagePricePerUnitMinor: maybe(decimal),
                        costPerDistance: maybe { CostPerDistance(minor: decimal(), per: random.pick(texts)) })
                })
        }
        var wrong: [String] = []
        for _ in 0..<1_000 {
            let one = stats()
            if one.jsonData != (try WireCoding.encoder.encode(one)) { wrong.append(String(decoding: one.jsonData, as: UTF8.self)) }
        }
        #expect(wrong.isEmpty, "\(wrong.count) differ, e.g. \(wrong.prefix(2))")
        // the shared encoding (what a reply carries) takes the writer, for the same bytes
        let sample = stats()
        #expect(try WireCoding.encode(sample) == WireCoding.encoder.encode(sample))
    }

    /// Any JSON value (the CLI's request bodies and saved answers) is written as the encoder
    /// writes it: nested values, keys of any text (non-ASCII, escapes, one a prefix of
    /// another), strings needing escapes, and numbers of every kind a JSONNumber holds
    /// (integers to 64 bits, decimals, beyond 64 bits, exponents only a Double holds).
    @Test func jsonValuesAreTheEncodersText() throws {
        var random = SplitMix(seed: 23)
        let texts = [
            "", "a", "ab", "b", "B", "é", "e\u{301}", "Ä", "z", "🐟", "日本", "a\"b", "back\\slash", "line\nbreak", "\u{1}",
            "slash/ok", "\u{7F}", "\u{2028}", "tab\t",
        ]
        let numbers = [
            "0", "-1", "9223372036854775807", "-9223372036854775808", "9223372036854775808", "12.5", "0.001", "-0.75",
            "123456789012345678901234567890", "1e300", "-2.5e-200", "1e-130", "3.14159", "100", "1000000000000000000000",
        ].compactMap { JSONNumber(text: $0) }
        func value(_ depth: Int) -> JSONValue {
            switch random.next(below: depth > 3 ? 4 : 6) {
            case 0: return .null
            case 1: return .bool(random.next(below: 2) == 0)
            case 2:
                return random.next(below: 2) == 0
                    ? .number(random.pick(numbers))
                    : .number(JSONNumber(Double(Int64(bitPattern: random.next())) / Double(1 << random.next(below: 60))))
            case 3: return .string(random.pick(texts))
            case 4: return .array((0..<random.next(below: 4)).map { _ in value(depth + 1) })
            default:
                var members: [String: JSONValue] = [:]
                for _ in 0..<random.next(below: 5) { members[random.pick(texts)] = value(depth + 1) }
                return .object(members)
            }
        }
        var wrong: [String] = []
        for _ in 0..<3_000 {
            let v = value(0)
            let theirs = try WireCoding.encoder.encode(v)
            if v.jsonData != theirs {
                wrong.append("\(String(decoding: v.jsonData, as: UTF8.self)) vs \(String(decoding: theirs, as: UTF8.self))")
            }
        }
        #expect(wrong.isEmpty, "\(wrong.count) differ, e.g. \(wrong.prefix(3))")
    }
}
