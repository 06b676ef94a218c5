// Decoding straight from a JSONValue (Shared/Wire/JSONValueDecoder.swift) reads what
// Foundation's decoder reads from the same text: the payloads a projection replays most
// (fill-ups, catches, conditions) as stored and with any one field removed, null, of
// another type or with more decimals than it takes; and a quantity read from a number's
// digits is what `Milli(exactly:)` makes of its Decimal.
import Contracts
import Foundation
import Testing
import TestSupport
import Wire

@Suite struct ValueDecoderTests {
    @Test func aQuantityFromItsDigitsIsTheDecimalsQuantity() throws {
        var texts = [
            "0", "1", "-1", "0.001", "-0.001", "11.2", "3.459", "0.1", "12.25", "1.2345", "0.0001", "100000",
            "4611686018427387", "4611686018427387.903", "4611686018427387.904", "-4611686018427387.903",
            "-4611686018427387.904", "9223372036854775807", "123456789012345678", "1234567890123456789", "1e2",
            "1.5e+300", "5e-324", "-0.5", "999999999999999.999",
        ]
        var random = SplitMix(seed: 7)
        for _ in 0..<20_000 {
            let whole = String(random.next() >> UInt64(random.next(below: 64)))
            let decimals = random.next(below: 6)
            var fraction = ""
            for _ in 0..<decimals { fraction += String(random.next(below: 10)) }
            let sign = random.next(below: 3) == 0 ? "-" : ""
            texts.append(sign + whole + (fraction.isEmpty ? "" : "." + fraction))
        }
        var fast = 0
        for text in texts {
            let number = try #require(JSONNumber(text: text), "\(text)")
            let expected = number.decimal.flatMap { Milli(exactly: $0) }
            if let thousandths = number.thousandths {
                fast += 1
                #expect(Milli(thousandths: thousandths) == expected, "\(text)")
            }
            // Whatever way it takes, the decoder answers what the Decimal answers.
            let decoded = try? JSONValue.number(number).decode(Milli.self)
            #expect(decoded == expected, "\(text)")
        }
        #expect(fast > texts.count / 2, "the digits path is the common one (\(fast) of \(texts.count))")
    }

    /// `value` decoded as T both ways: equal results, or both refused.
    func agree<T: Decodable & Equatable>(_ type: T.Type, _ value: JSONValue, _ what: String) throws {
        let text = try WireCoding.encode(value)
        let reference = Result { try WireCoding.decoder.decode(T.self, from: text) }
        let direct = Result { try value.decode(T.self) }
        switch (reference, direct) {
        case (.success(let a), .success(let b)):
            #expect(a == b, "\(T.self) \(what)")
        case (.failure, .failure):
            break
        case (.success, .failure(let error)):
            Issue.record("\(T.self) \(what): only the value decoder refused it: \(error)")
        case (.failure(let error), .success):
            Issue.record("\(T.self) \(what): only the value decoder took it (Foundation: \(error))")
        }
    }

    /// What a field is replaced with: wrong types, null, and numbers a field may not take.
    static let replacements: [(String, JSONValue)] = [
        ("null", .null), ("a string", .string("x")), ("a time", .string("2026-05-01T14:45:00Z")),
        ("true", .bool(true)), ("an integer", .number(7)), ("a negative", .number(-3)),
        ("four decimals", .number(JSONNumber(text: "1.2345")!)), ("a half", .number(JSONNumber(text: "0.5")!)),
        ("too large", .number(JSONNumber(text: "9223372036854775808")!)), ("an object", .object(["a": .number(1)])),
        ("an array", .array([.number(1)])), ("water", .string("salt")), ("unit", .string("lb")),
    ]

    /// Every field of `value` (and of the objects inside it) removed, or replaced by each of
    /// `replacements`.
    static func mutations(of value: JSONValue, at path: String = "") -> [(String, JSONValue)] {
        guard case .object(let fields) = value else { return [] }
        var out: [(String, JSONValue)] = []
        for (key, field) in fields {
            var removed = fields
            removed[key] = nil
            out.append(("\(path)\(key) removed", .object(removed)))
            for (name, replacement) in replacements {
                var changed = fields
                changed[key] = replacement
                out.append(("\(path)\(key) = \(name)", .object(changed)))
            }
            for (what, inner) in mutations(of: field, at: "\(path)\(key).") {
                var changed = fields
                changed[key] = inner
                out.append((what, .object(changed)))
            }
        }
        return out
    }

    func check<T: Codable & Equatable>(_ sample: T) throws {
        let value = try JSONValue.parse(String(decoding: WireCoding.encode(sample), as: UTF8.self))
        try agree(T.self, value, "as stored")
        #expect(try value.decode(T.self) == sample)
        let mutations = Self.mutations(of: value)
        #expect(mutations.count > 50)
        for (what, mutated) in mutations { try agree(T.self, mutated, what) }
    }

    @Test func fillUpsDecodeAsFoundationReadsThem() throws {
        var fill = Fillup.sample
        fill.note = "full tank"
        fill.trip = Milli(thousandths: 301_400)
        try check(fill)
    }

    @Test func catchesDecodeAsFoundationReadsThem() throws {
        var fish = Catch.sample
        fish.note = "by the reeds"
        fish.length = Milli(thousandths: 62_500)
        fish.lengthUnit = .cm
        try check(fish)
    }

    @Test func conditionsDecodeAsFoundationReadsThem() throws {
        try check(ConditionsReady.sample)
        try check(ConditionsUnavailable.sample)
    }
}
