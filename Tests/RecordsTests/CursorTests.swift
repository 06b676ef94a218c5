// A cursor belongs to one list (docs/protocol.md, "Lists"): the method, its sort and the
// filters that chose its rows. Given to any other list it is `invalid_argument` on `cursor`,
// never a page of that list resumed at a position taken from another.
import Foundation
import Testing
import Wire

@Suite struct CursorTests {
    /// The next cursor of `method` with `body` at one row a page.
    func firstCursor(_ records: Harness, _ method: String, _ body: String) async throws -> String {
        let page = try await records.ok(method, body.replacingOccurrences(of: "{", with: #"{"limit":1,"#))
        return try #require(page["nextCursor"]?.stringValue)
    }

    func with(_ body: String, cursor: String) -> String {
        body.replacingOccurrences(of: "{", with: #"{"cursor":"\#(cursor)","#)
    }

    @Test func aFillUpCursorOfOneVehicleIsRefusedForAnother() async throws {
        let records = try Harness()
        let car = try await records.vehicle()
        let van = try await records.vehicle()
        for (vehicle, base) in [(car, 0.0), (van, 50.0)] {
            for i in 0..<3 {
                try await records.ok(
                    "records.fillup.add",
                    #"{"vehicleId":"\#(vehicle)","trip":10,"volume":1,"totalMinor":1,"date":"\#(time(base + Double(i) * 100))"}"#)
            }
        }
        let carList = #"{"vehicleId":"\#(car)"}"#
        let cursor = try await firstCursor(records, "records.fillup.list", carList)
        // its own list resumes
        #expect(try await records.ok("records.fillup.list", with(carList, cursor: cursor)).items.count == 2)
        let error = try await records.fails("records.fillup.list", with(#"{"vehicleId":"\#(van)"}"#, cursor: cursor))
        #expect(error.field == "cursor")
        #expect(error.message.contains("another list"))
    }

    @Test func listsSortedTheSameWayDoNotShareCursors() async throws {
        let records = try Harness()
        for _ in 0..<2 {
            _ = try await records.vehicle()
            _ = try await records.activity("A\(UUID().uuidString.prefix(6))")
        }
        // vehicles and activities are both listed by creation time
        let vehicles = try await firstCursor(records, "records.vehicle.list", "{}")
        let activities = try await firstCursor(records, "records.activity.list", "{}")
        #expect(try await records.fails("records.activity.list", with("{}", cursor: vehicles)).field == "cursor")
        #expect(try await records.fails("records.vehicle.list", with("{}", cursor: activities)).field == "cursor")
        #expect(try await records.ok("records.vehicle.list", with("{}", cursor: vehicles)).items.count == 1)
    }

    @Test func filtersBelongToTheList() async throws {
        let records = try Harness()
        for (water, i) in [("fresh", 0), ("fresh", 1), ("salt", 2), ("salt", 3)] {
            try await records.ok(
                "records.catch.add",
                #"{"species":"pike","weight":\#(i + 1),"weightUnit":"kg","bait":"b","water":"\#(water)","latitude":1,"longitude":2,"caughtAt":"\#(time(Double(i) * 60))"}"#
            )
        }
        let fresh = try await firstCursor(records, "records.catch.list", #"{"water":"fresh"}"#)
        #expect(try await records.ok("records.catch.list", with(#"{"water":"fresh"}"#, cursor: fresh)).items.count == 1)
        #expect(try await records.fails("records.catch.list", with(#"{"water":"salt"}"#, cursor: fresh)).field == "cursor")
        #expect(try await records.fails("records.catch.list", with("{}", cursor: fresh)).field == "cursor")

        for (name, category) in [("Lunch", "Food"), ("Dinner", "food"), ("Bus", "Travel")] {
            try await records.ok(
                "records.expense.add", #"{"name":"\#(name)","amountMinor":450,"category":"\#(category)"}"#)
        }
        let food = try await firstCursor(records, "records.expense.list", #"{"category":"Food"}"#)
        // the category is compared without case, so "FOOD" is the same list
        #expect(
            try await records.ok("records.expense.list", with(#"{"category":"FOOD"}"#, cursor: food)).items.count == 1)
        #expect(
            try await records.fails("records.expense.list", with(#"{"category":"Travel"}"#, cursor: food)).field
                == "cursor")
        #expect(
            try await records.fails(
                "records.expense.list", with(#"{"category":"Food","from":"2020-01-01T00:00:00Z"}"#, cursor: food)
            ).field == "cursor")
    }

    @Test func aCursorWithoutItsPositionIsRefusedNotRestarted() async throws {
        let records = try Harness()
        let car = try await records.vehicle()
        for i in 0..<3 {
            try await records.ok(
                "records.fillup.add",
                #"{"vehicleId":"\#(car)","trip":10,"volume":1,"totalMinor":1,"date":"\#(time(Double(i) * 100))"}"#)
        }
        let list = #"{"vehicleId":"\#(car)"}"#
        let cursor = try await firstCursor(records, "records.fillup.list", list)
        // the same cursor with its sort key taken out
        var base64 = cursor.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        let data = try #require(Data(base64Encoded: base64))
        var fields = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(fields["n"] != nil)
        fields["n"] = nil
        let stripped = Crypto.base64URL(Array(try JSONSerialization.data(withJSONObject: fields)))
        let error = try await records.fails("records.fillup.list", with(list, cursor: stripped))
        #expect(error.field == "cursor")
        #expect(error.message.contains("is not a cursor this list returned"))
    }
}
