// JSONValue.from encodes a typed value straight to a JSON value (JSONValueEncoder); it must
// make exactly the value that Foundation's encoder (WireCoding.encoder) writes and the
// parser reads back, which is what it did before: the CLI sends those values, and a request
// queued offline by an earlier version replays with the same bytes. Held here over every
// documented Contracts type, generated values of every leaf kind, and types that use the
// rarer container calls; and the two refuse the same values.
import Contracts
import Foundation
import Testing
@testable import Wire

@Suite struct JSONValueEncoderTests {
    /// What Foundation's encoder writes, parsed.
    static func reference<T: Encodable>(_ value: T) throws -> JSONValue {
        try JSONValue.parse(WireCoding.encoder.encode(value))
    }

    static func same<T: Encodable>(_ value: T, _ what: @autoclosure () -> String = "") {
        let expected = Result { try reference(value) }
        let encoded = Result { try JSONValueEncoder.encode(value) }
        switch (expected, encoded) {
        case (.success(let a), .success(let b)):
            #expect(a == b, "\(T.self) \(what()): Foundation \(a.jsonText), encoder \(b.jsonText)")
        case (.failure, .failure):
            break
        default:
            Issue.record("\(T.self) \(what()): Foundation \(expected), encoder \(encoded)")
        }
    }

    static func checkDocumented<T: Documented>(_ type: T.Type) { same(T.sample) }

    @Test func everyContractsTypeEncodesAsFoundationEncodesIt() {
        for type in FrameDecodingTests.documented { Self.checkDocumented(type) }
        Self.same(Page(items: [Expense.sample, Expense.sample], nextCursor: "c2"))
        Self.same(FrameDecodingTests.kinds)
    }

    /// Generated values of every leaf kind, nested, with nils and empty containers.
    @Test func generatedValuesEncodeAsFoundationEncodesThem() {
        var random = SystemRandomNumberGenerator()
        func double() -> Double {
            switch Int.random(in: 0..<6, using: &random) {
            case 0: return [0, -0.0, 1, -1, 0.1, 1e16, 1e15 + 0.5, 1e-7, 5e-324, .greatestFiniteMagnitude, 9.0e15, 123.0][
                Int.random(in: 0..<12, using: &random)]
            case 1: return Double(Int.random(in: -1_000_000...1_000_000, using: &random)) / 1000
            case 2: return Double(Int64.random(in: .min ... .max, using: &random))
            default:
                var bits = UInt64.random(in: 0 ... .max, using: &random)
                while !Double(bitPattern: bits).isFinite { bits = UInt64.random(in: 0 ... .max, using: &random) }
                return Double(bitPattern: bits)
            }
        }
        func float() -> Float {
            var bits = UInt32.random(in: 0 ... .max, using: &random)
            while !Float(bitPattern: bits).isFinite { bits = UInt32.random(in: 0 ... .max, using: &random) }
            return Int.random(in: 0..<3, using: &random) == 0 ? Float(Int.random(in: -999...999, using: &random)) / 8 : Float(bitPattern: bits)
        }
        func decimal() -> Decimal {
            let mantissa = Int64.random(in: -999_999_999_999...999_999_999_999, using: &random)
            return Decimal(sign: mantissa < 0 ? .minus : .plus, exponent: Int.random(in: -20...20, using: &random),
                significand: Decimal(mantissa.magnitude))
        }
        func text() -> String {
            let pieces = ["a", "é", "\"", "\\", "/", "\n", "\u{1}", "😀", " ", "\u{7f}", "<", "\u{2028}"]
            return (0..<Int.random(in: 0...6, using: &random)).map { _ in pieces.randomElement(using: &random)! }.joined()
        }
        func kinds(depth: Int) -> FrameDecodingTests.Kinds {
            FrameDecodingTests.Kinds(
                int: Int.random(in: .min ... .max, using: &random), int8: Int8.random(in: .min ... .max, using: &random),
                uint64: UInt64.random(in: 0 ... .max, using: &random), double: double(), float: float(),
                decimal: decimal(), milli: Milli(thousandths: Int64.random(in: -9_999_999...9_999_999, using: &random)),
                date: Date(timeIntervalSince1970: Double(Int64.random(in: -62_000_000_000_000...250_000_000_000_000, using: &random)) / 1000),
                data: Data((0..<Int.random(in: 0...9, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }),
                url: URL(string: ["https://example.com/a?b=c", "file:///tmp/x y", "rel/path", "mailto:a@b.c"].randomElement(using: &random)!)
                    ?? URL(fileURLWithPath: "/"),
                bool: Bool.random(using: &random), text: text(),
                optional: Bool.random(using: &random) ? nil : Int.random(in: -9...9, using: &random),
                list: (0..<Int.random(in: 0...4, using: &random)).map { _ in Bool.random(using: &random) ? nil : Int.random(in: -9...9, using: &random) },
                byName: Dictionary(uniqueKeysWithValues: (0..<Int.random(in: 0...3, using: &random)).map { ("k\($0)\(text())", double()) }),
                byNumber: Dictionary(uniqueKeysWithValues: (0..<Int.random(in: 0...3, using: &random)).map { ($0 * 7 - 3, text()) }),
                nested: depth > 1 || Bool.random(using: &random) ? nil : (0..<Int.random(in: 0...2, using: &random)).map { _ in kinds(depth: depth + 1) })
        }
        for index in 0..<3_000 { Self.same(kinds(depth: 0), "#\(index)") }
        for _ in 0..<2_000 {
            Self.same(double())
            Self.same(float())
            Self.same(decimal())
        }
    }

    /// The container calls synthesized conformances never make.
    struct Containers: Encodable {
        var name: String
        var skip: Int?

        enum Keys: String, CodingKey { case name, skip, nested, list, parent, empty, nothing, again }

        func encode(to encoder: any Encoder) throws {
            var keyed = encoder.container(keyedBy: Keys.self)
            try keyed.encode(name, forKey: .name)
            try keyed.encodeIfPresent(skip, forKey: .skip)
            try keyed.encodeNil(forKey: .again)
            var nested = keyed.nestedContainer(keyedBy: Keys.self, forKey: .nested)
            try nested.encode(Date(timeIntervalSince1970: 1_777_777_777.5), forKey: .name)
            var list = keyed.nestedUnkeyedContainer(forKey: .list)
            try list.encode(1.5)
            try list.encodeNil()
            var inner = list.nestedContainer(keyedBy: Keys.self)
            try inner.encode(Decimal(string: "12.250")!, forKey: .name)
            var deeper = list.nestedUnkeyedContainer()
            try deeper.encode(Data([0, 255]))
            try Nothing().encode(to: list.superEncoder())
            try list.encode(Nothing())
            try Self.Base(value: 7).encode(to: keyed.superEncoder())
            try Self.Base(value: 8).encode(to: keyed.superEncoder(forKey: .parent))
            _ = keyed.nestedContainer(keyedBy: Keys.self, forKey: .empty)
            try keyed.encode(Nothing(), forKey: .nothing)
            // the same container asked for again writes into the same object
            var again = encoder.container(keyedBy: Keys.self)
            try again.encode("second", forKey: .again)
            // a nested value written after another
            try nested.encode(URL(string: "https://example.com/p")!, forKey: .list)
        }

        struct Base: Encodable { var value: Int }
    }

    /// Encodes nothing at all.
    struct Nothing: Encodable {
        func encode(to encoder: any Encoder) throws {}
    }

    struct Single: Encodable {
        var inner: Containers
        func encode(to encoder: any Encoder) throws {
            var single = encoder.singleValueContainer()
            try single.encode(inner)
        }
    }

    @Test func rarerContainerCallsEncodeAsFoundationEncodesThem() throws {
        let value = Containers(name: "n", skip: nil)
        Self.same(value)
        Self.same(Containers(name: "m", skip: 3))
        Self.same(Single(inner: value))
        Self.same([value, value])
        Self.same(["a": Single(inner: value)])
        Self.same([Nothing()])
        Self.same(Optional<Int>.none)
        Self.same("text")
        Self.same([Int?.none, 1])
        #expect(try JSONValueEncoder.encode(value)["again"] == "second")
    }

    @Test func theSameValuesAreRefused() {
        #expect(throws: EncodingError.self) { try JSONValueEncoder.encode(Nothing()) }
        #expect(throws: EncodingError.self) { try Self.reference(Nothing()) }
        for bad in [Double.nan, .infinity, -.infinity] {
            #expect(throws: EncodingError.self) { try JSONValueEncoder.encode(["x": bad]) }
            #expect(throws: EncodingError.self) { try Self.reference(["x": bad]) }
        }
        #expect(throws: EncodingError.self) { try JSONValueEncoder.encode([Float.nan]) }
        #expect(throws: EncodingError.self) { try Self.reference([Float.nan]) }
    }
}
