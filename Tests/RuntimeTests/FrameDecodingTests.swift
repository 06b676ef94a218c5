// Frames are decoded the fast way (WireCoding.decode: JSONParser, then JSONValueDecoder),
// and Foundation reads whatever that way does not. So the fast way may refuse anything,
// but whatever it decodes must be what Foundation decodes from the same bytes. Held here
// over every Contracts request and record type (`Documented`, each from its sample with
// every optional field set), an event and a page of results, and a type with every kind of
// leaf the decoders treat apart: each as sent, and with any one field removed, null, of
// another type, or spelt as a number or string Foundation reads its own way.
import Contracts
import Foundation
import Runtime
import Storage
import Testing
@testable import Wire

@Suite struct FrameDecodingTests {
    /// Every leaf kind the two decoders read apart.
    struct Kinds: Codable, Sendable {
        var int: Int
        var int8: Int8
        var uint64: UInt64
        var double: Double
        var float: Float
        var decimal: Decimal
        var milli: Milli
        var date: Date
        var data: Data
        var url: URL
        var bool: Bool
        var text: String
        var optional: Int?
        var list: [Int?]
        var byName: [String: Double]
        var byNumber: [Int: String]
        var nested: [Kinds]?
    }

    static let kinds = Kinds(
        int: 3, int8: -4, uint64: 4_000_000_000, double: 0.1, float: 1.5, decimal: Decimal(string: "12.25")!,
        milli: Milli(thousandths: 11_200), date: Date(timeIntervalSince1970: 1_777_777_777), data: Data("ABC".utf8),
        url: URL(string: "https://example.com/a?b=c")!, bool: true, text: "é \"quoted\" \\ /", optional: nil,
        list: [1, nil, 3], byName: ["a": 1.25], byNumber: [2: "two"], nested: [])

    /// Raw JSON put in place of a field: numbers and strings each decoder spells its own way.
    static let tokens = [
        "-0", "-0.0", "0", "1.0", "1e2", "1E2", "1.5", "1e-400", "1e400", "1e39", "3.4028235e38", "0.1",
        "9007199254740993", "9223372036854775808", "18446744073709551615", "-1", "255", "256", "12.2500",
        "\"QUJD\"", "\"QUJ\"", "\"QU JD\"", "\"QUJD\\n\"", "\"\"", "\"\\u00e9\"", "\"\\ud83d\\ude00\"", "\"a\\/b\"",
        "\"2026-05-01T14:45:00+02:00\"", "\"2026-05-01T14:45:00.123Z\"", "\"2026-05-01\"", "\"https://x.y/\"",
        "\"not a url at all \\u0000\"", "\"12.25\"", "{}", "[]", "[null]", "{\"1\":\"x\"}", "{\"x\":\"y\"}", "true",
        "null",
    ]

    /// The documents to read: `value` as it is, with every field (at any depth) removed or
    /// replaced by each of `tokens`.
    static func documents(_ value: JSONValue) -> [(String, Data)] {
        var out = [("as sent", Data(value.jsonText.utf8))]
        let marker = "\u{1}token\u{1}"
        let quotedMarker = JSONValue.string(marker).jsonText
        func walk(_ value: JSONValue, _ rebuild: @escaping (JSONValue?) -> JSONValue, _ path: String) {
            switch value {
            case .object(let fields):
                for (key, field) in fields {
                    let inner: (JSONValue?) -> JSONValue = { replacement in
                        var changed = fields
                        changed[key] = replacement
                        return rebuild(.object(changed))
                    }
                    out.append(("\(path)\(key) removed", Data(inner(nil).jsonText.utf8)))
                    let template = inner(.string(marker)).jsonText
                    for token in tokens {
                        let text = template.replacingOccurrences(of: quotedMarker, with: token)
                        out.append(("\(path)\(key) = \(token)", Data(text.utf8)))
                    }
                    walk(field, { inner($0 ?? .null) }, "\(path)\(key).")
                }
            case .array(let items):
                for (index, item) in items.enumerated() {
                    walk(item, { replacement in
                        var changed = items
                        changed[index] = replacement ?? .null
                        return rebuild(.array(changed))
                    }, "\(path)[\(index)].")
                }
            default:
                break
            }
        }
        walk(value, { $0 ?? .null }, "")
        return out
    }

    struct Tally {
        var documents = 0
        var fast = 0
    }

    /// Each document decoded as T three ways: by Foundation, by the fast way alone, and by
    /// `WireCoding.decode` (what the services call). The fast way's every success must be
    /// Foundation's (the same JSON when written back); `WireCoding.decode` must succeed or
    /// fail as Foundation does, with Foundation's words.
    static func check<T: Codable>(_ type: T.Type, _ sample: T, into tally: inout Tally) throws {
        let value = try JSONValue.parse(String(decoding: WireCoding.encode(sample), as: UTF8.self))
        let fastBefore = tally.fast
        defer { #expect(tally.fast > fastBefore, "the fast way read no \(T.self) at all") }
        for (what, data) in documents(value) {
            tally.documents += 1
            let reference = Result { try WireCoding.decoder.decode(T.self, from: data) }
            let fast = JSONParser.parse(data).flatMap { try? JSONValueDecoder.decode(T.self, from: $0, path: []) }
            if let fast {
                tally.fast += 1
                switch reference {
                case .success(let expected):
                    #expect(try WireCoding.encode(fast) == WireCoding.encode(expected), "\(T.self) \(what): another value")
                case .failure(let error):
                    Issue.record("\(T.self) \(what): only the fast way took it (Foundation: \(WireCoding.describe(error)))")
                }
            }
            let used = Result { try WireCoding.decode(T.self, from: data) }
            switch (reference, used) {
            case (.success(let a), .success(let b)):
                #expect(try WireCoding.encode(a) == WireCoding.encode(b), "\(T.self) \(what)")
            case (.failure(let a), .failure(let b)):
                #expect(WireCoding.describe(a) == WireCoding.describe(b), "\(T.self) \(what)")
            default:
                Issue.record("\(T.self) \(what): Foundation \(reference), WireCoding.decode \(used)")
            }
        }
    }

    static let documented: [any Documented.Type] = [
        AccountDelete.self, Activity.self, ActivityAdd.self, ActivityCreated.self, ActivityDeleted.self,
        AttendanceAdd.self, AttendanceDeleted.self, AttendanceEntry.self, BuyRequest.self, Catch.self, CatchAdd.self,
        CatchBestsRequest.self, CatchConditions.self, CatchDeleted.self, CatchList.self, CatchUpdate.self,
        Conditions.self, ConditionsGet.self, ConditionsReady.self, ConditionsUnavailable.self, Empty.self,
        Expense.self, ExpenseAdd.self, ExpenseDeleted.self, ExpenseList.self, ExpenseUpdate.self, Fillup.self,
        FillupAdd.self, FillupDeleted.self, FillupList.self, FillupUpdate.self, FuelStatsRequest.self, IdBody.self,
        ListBody.self, LoginRequest.self, NetWorth.self, PasswordChange.self, PhotoGet.self, QuoteRequest.self,
        RegisterRequest.self, SettingsUpdate.self, ShardGetRequest.self, ShardSetRequest.self, SuggestRequest.self,
        SummaryRequest.self, TimeAdd.self, TimeDeleted.self, TimeEntry.self, TimeList.self, TimeSavedEvent.self,
        TimerRequest.self, TimerState.self, Vehicle.self, VehicleAdd.self, VehicleDeleted.self, VehicleUpdate.self,
        WeatherGet.self,
    ]

    static func checkDocumented<T: Documented>(_ type: T.Type, into tally: inout Tally) throws {
        try check(T.self, T.sample, into: &tally)
    }

    @Test func everyContractsTypeDecodesAsFoundationDecodesIt() throws {
        var tally = Tally()
        for type in Self.documented { try Self.checkDocumented(type, into: &tally) }
        #expect(tally.documents > 10_000, "\(tally.documents) documents")
        #expect(tally.fast > tally.documents / 4, "the fast way read \(tally.fast) of \(tally.documents)")
    }

    @Test func framesOfEveryKindDecodeAsFoundationDecodesThem() throws {
        var tally = Tally()
        try Self.check(Kinds.self, Self.kinds, into: &tally)
        let event = Event(
            seq: 7, type: "catch.created", userId: "u1", at: Date(timeIntervalSince1970: 1_777_777_777),
            data: try JSONValue.from(Catch.sample))
        let since: JSONValue = ["events": [try JSONValue.from(event)], "last": 9]
        try Self.check(
            EventsSinceResult.self, try WireCoding.decoder.decode(EventsSinceResult.self, from: Data(since.jsonText.utf8)),
            into: &tally)
        try Self.check(Page<Expense>.self, Page(items: [Expense.sample, Expense.sample], nextCursor: "c2"), into: &tally)
        let header = RequestHeader(v: 1, id: "r1", method: "records.expense.add", token: "t", idempotencyKey: "k",
            deadlineMs: 900, stackKey: "s")
        try Self.check(RequestHeader.self, header, into: &tally)
        #expect(tally.fast > tally.documents / 4, "the fast way read \(tally.fast) of \(tally.documents)")
    }
}
