import Foundation
import Testing
import Wire

@Suite("Expenses")
struct ExpenseTests {
    @Test func addWithDefaultsThenGetUpdateDelete() async throws {
        let records = try Harness()
        let added = try await records.ok("records.expense.add", #"{"name":"Coffee","amountMinor":450}"#)
        let id = added["id"]!.string
        #expect(added["currency"] == "USD")
        #expect(added["date"] == .string(time()))
        #expect(added["category"] == nil)
        #expect(try await records.ok("records.expense.get", #"{"id":"\#(id)"}"#) == added)
        let updated = try await records.ok(
            "records.expense.update",
            #"{"id":"\#(id)","description":"flat white","amountMinor":500,"currency":"EUR","category":"food","date":"\#(time(-86400))"}"#
        )
        #expect(updated["description"] == "flat white")
        #expect(updated["amountMinor"] == 500)
        #expect(updated["currency"] == "EUR")
        #expect(updated["category"] == "food")
        #expect(updated["name"] == "Coffee")
        let cleared = try await records.ok("records.expense.update", #"{"id":"\#(id)","category":null,"description":null}"#)
        #expect(cleared["category"] == nil)
        #expect(cleared["description"] == nil)
        #expect(try await records.ok("records.expense.delete", #"{"id":"\#(id)"}"#) == ["deleted": true])
        #expect(try await records.fails("records.expense.delete", #"{"id":"\#(id)"}"#).code == .notFound)
    }

    @Test(arguments: [
        (#"{"name":"","amountMinor":1}"#, "name", #"name: must be 1–80 characters (got "")"#),
        (#"{"name":"\#(String(repeating: "n", count: 81))","amountMinor":1}"#, "name", "name: must be 1–80 characters (got 81 characters)"),
        (#"{"name":"a","amountMinor":0}"#, "amountMinor", "amountMinor: must be greater than 0 (got 0)"),
        (#"{"name":"a","amountMinor":-3}"#, "amountMinor", "amountMinor: must be greater than 0 (got -3)"),
        (#"{"name":"a","amountMinor":"3"}"#, "amountMinor", "amountMinor: expected a whole number"),
        (#"{"name":"a"}"#, "amountMinor", "amountMinor: is required"),
        (#"{"name":"a","amountMinor":1,"currency":"EURO"}"#, "currency", #"currency: must be an ISO-4217 code of 3 uppercase letters, like USD (got "EURO")"#),
        (#"{"name":"a","amountMinor":1,"description":"\#(String(repeating: "d", count: 501))"}"#, "description", "description: must be at most 500 characters (got 501 characters)"),
        (#"{"name":"a","amountMinor":1,"category":"\#(String(repeating: "c", count: 41))"}"#, "category", "category: must be at most 40 characters (got \"\(String(repeating: "c", count: 41))\")"),
        (#"{"name":"a","amountMinor":1,"date":"2026-05-11T00:00:00+02:00"}"#, "date", "date: must not be more than 5 minutes in the future (got 2026-05-10T22:00:00Z)"),
    ])
    func addRefuses(body: String, field: String, message: String) async throws {
        let records = try Harness()
        let error = try await records.fails("records.expense.add", body)
        #expect(error.code == .invalidArgument)
        #expect(error.field == field)
        #expect(error.message == message)
        #expect(try await records.count("expense") == 0)
    }

    @Test func anotherUsersExpenseIsNotFound() async throws {
        let records = try Harness()
        let id = try await records.ok("records.expense.add", #"{"name":"Rent","amountMinor":100000}"#, as: "bob")["id"]!.string
        for method in ["records.expense.get", "records.expense.update", "records.expense.delete"] {
            #expect(try await records.fails(method, #"{"id":"\#(id)","amountMinor":1}"#).code == .notFound, "\(method)")
        }
        #expect(try await records.ok("records.expense.get", #"{"id":"\#(id)"}"#, as: "bob")["amountMinor"] == 100000)
    }

    @Test func listFiltersByRangeAndCategoryAndSorts() async throws {
        let records = try Harness()
        let day: Double = 86_400
        let rows: [(String, Int, String?, Double)] = [
            ("a", 300, "food", -4 * day), ("b", 100, nil, -3 * day), ("c", 900, "Food", -2 * day), ("d", 200, "fuel", -1 * day),
        ]
        for (name, amount, category, seconds) in rows {
            let categoryField = category.map { #","category":"\#($0)""# } ?? ""
            try await records.ok(
                "records.expense.add", #"{"name":"\#(name)","amountMinor":\#(amount),"date":"\#(time(seconds))"\#(categoryField)}"#)
        }
        func names(_ body: String) async throws -> [String] {
            try await records.ok("records.expense.list", body).items.map { $0["name"]!.string }
        }
        #expect(try await names("{}") == ["d", "c", "b", "a"])
        #expect(try await names(#"{"sort":"amount"}"#) == ["c", "a", "d", "b"])
        #expect(try await names(#"{"from":"\#(time(-3 * day))","to":"\#(time(-1 * day))"}"#) == ["c", "b"])
        #expect(try await names(#"{"category":"food"}"#) == ["c", "a"])
        #expect(try await names(#"{"category":"food","sort":"amount","from":"\#(time(-3 * day))"}"#) == ["c"])
        let error = try await records.fails("records.expense.list", #"{"from":"\#(time(0))","to":"\#(time(-day))"}"#)
        #expect(error.field == "to")
        var seen: [String] = []
        var cursor: String?
        repeat {
            let cursorField = cursor.map { #","cursor":"\#($0)""# } ?? ""
            let page = try await records.ok("records.expense.list", #"{"sort":"amount","limit":3\#(cursorField)}"#)
            seen += page.items.map { $0["name"]!.string }
            cursor = page["nextCursor"]?.stringValue
        } while cursor != nil
        #expect(seen == ["c", "a", "d", "b"])
    }

    @Test func sortByAmountOrdersWithinEachCurrency() async throws {
        let records = try Harness()
        // 1,000 yen is not more than $12.50: amounts are compared only within a currency
        for (name, amount, currency) in [
            ("yen-big", 1000, "JPY"), ("usd-small", 1250, "USD"), ("eur", 700, "EUR"), ("usd-big", 5000, "USD"),
            ("yen-small", 300, "JPY"),
        ] {
            try await records.ok(
                "records.expense.add", #"{"name":"\#(name)","amountMinor":\#(amount),"currency":"\#(currency)"}"#)
        }
        let expected = ["eur", "yen-big", "yen-small", "usd-big", "usd-small"]
        let all = try await records.ok("records.expense.list", #"{"sort":"amount"}"#).items.map { $0["name"]!.string }
        #expect(all == expected)
        // pages of two never skip or repeat a row across currencies
        var seen: [String] = []
        var cursor: String?
        repeat {
            let cursorField = cursor.map { #","cursor":"\#($0)""# } ?? ""
            let page = try await records.ok("records.expense.list", #"{"sort":"amount","limit":2\#(cursorField)}"#)
            seen += page.items.map { $0["name"]!.string }
            cursor = page["nextCursor"]?.stringValue
        } while cursor != nil
        #expect(seen == expected)
    }
}
