// JSONParser (Shared/Wire/JSONParser.swift) reads JSON text to a JSONValue itself, leaving
// anything unusual to Foundation: wherever it answers, Foundation's decoding of the same
// bytes answers the same value; where Foundation refuses, it does not answer at all.
import Foundation
import Testing
import TestSupport
@testable import Wire

@Suite struct JSONParserTests {
    static let strings = [
        "", "plain", "ünïcode", "🎣 pike", "quote \" here", "back\\slash", "tab\there", "line\nbreak", "a/b", "\u{0001}",
        "日本語", "émoji 👍🏽", "\u{7F}", "x\u{2028}y",
    ]
    static let numbers = [
        "0", "-0", "1", "-1", "11.2", "0.001", "12.50", "3.0", "-0.0", "1e2", "1E-3", "2.5e+3", "9007199254740993",
        "9223372036854775807", "9223372036854775808", "-9223372036854775808", "12.3456789012345678901", "1.5e300",
        "5e-324", "123456789012345678", "0.1", "100",
    ]

    /// A random JSON text of `value`-like shape, written with random spacing and escapes.
    static func document(_ random: inout SplitMix, depth: Int = 0) -> String {
        func space() -> String { ["", " ", "\n", "\t", "  ", "\r\n"][random.next(below: depth == 0 ? 6 : 3)] }
        func quoted(_ text: String) -> String {
            var out = "\""
            for scalar in text.unicodeScalars {
                switch scalar {
                case "\"": out += "\\\""
                case "\\": out += "\\\\"
                case "\n": out += random.next(below: 2) == 0 ? "\\n" : "\\u000a"
                case "\t": out += "\\t"
                case "/": out += random.next(below: 2) == 0 ? "\\/" : "/"
                case _ where scalar.value < 0x20: out += String(format: "\\u%04x", scalar.value)
                case _ where scalar.value > 0x7F && scalar.value < 0xFFFF && random.next(below: 4) == 0:
                    out += String(format: "\\u%04X", scalar.value)
                default: out.unicodeScalars.append(scalar)
                }
            }
            return out + "\""
        }
        let kind = depth >= 4 ? random.next(below: 5) : random.next(below: 7)
        switch kind {
        case 0: return quoted(strings[random.next(below: strings.count)])
        case 1: return numbers[random.next(below: numbers.count)]
        case 2: return ["true", "false"][random.next(below: 2)]
        case 3: return "null"
        case 4: return quoted("k\(random.next(below: 1000))")
        case 5:
            let count = random.next(below: 5)
            let items = (0..<count).map { _ in space() + document(&random, depth: depth + 1) + space() }
            return "[" + items.joined(separator: ",") + "]"
        default:
            let count = random.next(below: 6)
            var keys = Set<String>()
            var members: [String] = []
            for _ in 0..<count {
                let key = random.next(below: 3) == 0 ? strings[random.next(below: strings.count)] : "f\(random.next(below: 20))"
                guard keys.insert(key).inserted else { continue }
                members.append(space() + quoted(key) + space() + ":" + space() + document(&random, depth: depth + 1))
            }
            return "{" + members.joined(separator: ",") + space() + "}"
        }
    }

    /// Foundation's reading of `data`, nil when it refuses.
    static func foundation(_ data: Data) -> JSONValue? {
        try? JSONDecoder().decode(JSONValue.self, from: data)
    }

    @Test func whereverItAnswersFoundationAnswersTheSame() {
        var random = SplitMix(seed: 11)
        var answered = 0, documents = 0, damagedAnswered = 0
        for _ in 0..<3_000 {
            let text = Self.document(&random)
            let data = Data(text.utf8)
            documents += 1
            let fast = JSONParser.parse(data)
            let reference = Self.foundation(data)
            if let fast {
                answered += 1
                #expect(fast == reference, "\(text)")
            }
            // Damaged copies: cut short, a byte changed, a byte dropped, a comma or text added.
            var bytes = [UInt8](data)
            let at = random.next(below: bytes.count)
            let damaged: [[UInt8]] = [
                Array(bytes.prefix(at)),
                { var b = bytes; b[at] = [0x22, 0x5C, 0x2C, 0x7D, 0x5D, 0x00, 0xFF, 0x31][random.next(below: 8)]; return b }(),
                { var b = bytes; b.remove(at: at); return b }(),
                bytes + Array(",".utf8), bytes + Array(" x".utf8),
                { var b = bytes; b.insert(0x2C, at: at); return b }(),
            ]
            for copy in damaged {
                let data = Data(copy)
                if let fast = JSONParser.parse(data) {
                    damagedAnswered += 1
                    #expect(fast == Self.foundation(data), "\(String(decoding: copy, as: UTF8.self))")
                }
            }
            bytes.removeAll()
        }
        // The common case is read here, not handed back.
        #expect(answered > documents * 3 / 4, "answered \(answered) of \(documents)")
        #expect(damagedAnswered > 0)
    }

    @Test func theUnusualIsLeftToFoundation() throws {
        for text in [
            #"{"a":1,"a":2}"#, #"[1,2,]"#, #"{"a":1,}"#, #""\ud83c\udfa3""#, #""\udfa3""#, "\"tab\there\"", "[1] x", "", " ",
            "[01]", "[1.]", "[.5]", "[+1]", "{\"a\" 1}", "[\"\\x\"]", String(repeating: "[", count: 200) + String(repeating: "]", count: 200),
        ] {
            #expect(JSONParser.parse(Data(text.utf8)) == nil, "\(text)")
        }
        #expect(JSONParser.parse(Data([0x22, 0xFF, 0x22])) == nil, "not UTF-8")
        // An object's members are gathered on one stack with those of the objects around it:
        // a key repeated inside a nested object, or after one, is still seen, and the same
        // key at two levels is not a repeat.
        for text in [#"{"a":{"b":1,"b":2}}"#, #"{"a":{"x":1},"a":2}"#, #"[{"k":[{"k":1}],"k":2}]"#] {
            #expect(JSONParser.parse(Data(text.utf8)) == nil, "\(text)")
        }
        #expect(
            JSONParser.parse(Data(#"{"a":{"a":{"a":1},"b":[{"a":2},{}]},"b":3}"#.utf8))
                == .object([
                    "a": .object(["a": .object(["a": 1]), "b": .array([.object(["a": 2]), .object([:])])]), "b": 3,
                ]))
        // And through the public entry points, the answer is still Foundation's.
        #expect(throws: (any Error).self) { try JSONValue.parse(#"{"a":1"#) }
        #expect(try JSONValue.parse(#""\ud83c\udfa3""#) == .string("🎣"))
        #expect(try JSONValue.parse(#"{"v":[1,2.50,"x",true,null,{}]}"#) == JSONParser.parse(Data(#"{"v":[1,2.5,"x",true,null,{}]}"#.utf8)))
    }
}
