import Foundation
import Testing
import Wire

@Suite("Fill-ups")
struct FillupTests {
    @Test func addWithDefaultsThenGet() async throws {
        let records = try Harness()
        let vehicle = try await records.vehicle()
        let (reply, text) = try await records.send(
            "records.fillup.add", #"{"vehicleId":"\#(vehicle)","odometer":12345.6,"volume":12.345,"pricePerUnitMinor":349}"#)
        let fill = try #require(reply.result)
        #expect(fill["date"] == .string(time()))  // default: now
        #expect(fill["full"] == true)
        #expect(fill["missed"] == false)
        #expect(fill["currency"] == "USD")
        #expect(fill["derived"] == "total")
        #expect(fill["totalMinor"] == 4308)  // 12.345 × 349 = 4308.405
        // Exact on the wire: the thousandths come back as typed.
        #expect(text.contains(#""volume":12.345"#))
        #expect(text.contains(#""odometer":12345.6"#))
        let got = try await records.send("records.fillup.get", #"{"id":"\#(fill["id"]!.string)"}"#)
        #expect(got.reply.result == fill)
        #expect(got.text.contains(#""volume":12.345"#))
    }

    @Test func priceAndTotalAreDerivedExactly() async throws {
        let records = try Harness()
        let vehicle = try await records.vehicle()
        func add(_ fields: String) async throws -> JSONValue {
            try await records.ok("records.fillup.add", #"{"vehicleId":"\#(vehicle)","trip":300,\#(fields)}"#)
        }
        // total = round(volume × price), half up
        let a = try await add(#""volume":10.001,"pricePerUnitMinor":350"#)  // 3500.35
        #expect(a["totalMinor"] == 3500)
        let b = try await add(#""volume":0.003,"pricePerUnitMinor":500"#)  // 1.5 → 2
        #expect(b["totalMinor"] == 2)
        // price = round(total / volume), to a thousandth of a minor unit
        let c = try await add(#""volume":12.5,"totalMinor":4000"#)  // 320
        #expect(c["pricePerUnitMinor"] == 320)
        #expect(c["derived"] == "price")
        let d = try await add(#""volume":3,"totalMinor":1000"#)  // 333.3333… → 333.333
        #expect(d["pricePerUnitMinor"] == 333.333)
        let e = try await add(#""volume":2,"totalMinor":1001"#)  // 500.5, exactly
        #expect(e["pricePerUnitMinor"] == 500.5)
        let third = try await add(#""volume":3,"totalMinor":2"#)  // 0.6666… → 0.667 (half up)
        #expect(third["pricePerUnitMinor"] == 0.667)
        // both given: both kept
        let f = try await add(#""volume":10,"pricePerUnitMinor":399,"totalMinor":4000"#)
        #expect(f["pricePerUnitMinor"] == 399)
        #expect(f["totalMinor"] == 4000)
        #expect(f["derived"] == "none")
        // an update of the volume derives the derived one again
        let g = try await records.ok("records.fillup.update", #"{"id":"\#(c["id"]!.string)","volume":10}"#)
        #expect(g["pricePerUnitMinor"] == 400)
        #expect(g["totalMinor"] == 4000)
        // giving the price now derives the total
        let h = try await records.ok("records.fillup.update", #"{"id":"\#(c["id"]!.string)","pricePerUnitMinor":350}"#)
        #expect(h["totalMinor"] == 3500)
        #expect(h["derived"] == "total")
    }

    @Test(arguments: [
        (#""odometer":100,"volume":-3,"totalMinor":100"#, "volume", "volume: must be greater than 0 (got -3)"),
        (#""odometer":100,"volume":0,"totalMinor":100"#, "volume", "volume: must be greater than 0 (got 0)"),
        (#""odometer":100,"volume":1.2345,"totalMinor":100"#, "volume", "volume: must have at most 3 decimals (got 1.2345)"),
        (#""odometer":100.0001,"volume":1,"totalMinor":100"#, "odometer", "odometer: must have at most 3 decimals (got 100.0001)"),
        (#""odometer":0,"volume":1,"totalMinor":100"#, "odometer", "odometer: must be greater than 0 (got 0)"),
        (#""trip":-5,"volume":1,"totalMinor":100"#, "trip", "trip: must be greater than 0 (got -5)"),
        (#""volume":1,"totalMinor":100"#, "odometer", "odometer: give odometer or trip (or both)"),
        (#""odometer":100,"volume":1"#, "pricePerUnitMinor", "pricePerUnitMinor: give pricePerUnitMinor or totalMinor (or both)"),
        (#""odometer":100,"volume":1,"pricePerUnitMinor":0"#, "pricePerUnitMinor", "pricePerUnitMinor: must be greater than 0 (got 0)"),
        (#""odometer":100,"volume":1,"totalMinor":-1"#, "totalMinor", "totalMinor: must be greater than 0 (got -1)"),
        (#""odometer":100,"volume":1,"totalMinor":"100""#, "totalMinor", "totalMinor: expected a whole number"),
        (#""odometer":100,"volume":1,"totalMinor":100,"currency":"usd""#, "currency", #"currency: must be an ISO-4217 code of 3 uppercase letters, like USD (got "usd")"#),
        (#""odometer":100,"volume":1,"totalMinor":100,"date":"2026-05-10T12:05:01Z""#, "date", "date: must not be more than 5 minutes in the future (got 2026-05-10T12:05:01Z)"),
        (#""odometer":100,"volume":1,"totalMinor":100,"date":"yesterday""#, "date", #"date: expected an ISO-8601 time with an offset, like 2026-05-01T14:45:00Z (got "yesterday")"#),
        (#""odometer":100,"volume":1,"totalMinor":100,"note":"\#(String(repeating: "n", count: 501))""#, "note", "note: must be at most 500 characters (got 501 characters)"),
        (#""odometer":"100","volume":1,"totalMinor":100"#, "odometer", "odometer: expected a number"),
        (#""odometer":100,"totalMinor":100"#, "volume", "volume: is required"),
        (#""odometer":100,"volume":1,"totalMinor":100,"full":"yes""#, "full", "full: expected true or false"),
    ])
    func addRefuses(fields: String, field: String, message: String) async throws {
        let records = try Harness()
        let vehicle = try await records.vehicle()
        let error = try await records.fails("records.fillup.add", #"{"vehicleId":"\#(vehicle)",\#(fields)}"#)
        #expect(error.code == .invalidArgument)
        #expect(error.field == field)
        #expect(error.message == message)
        #expect(try await records.count("fillup") == 0)
    }

    @Test func aFractionInAWholeNumberFieldIsRefused() async throws {
        let records = try Harness()
        let vehicle = try await records.vehicle()
        let error = try await records.fails(
            "records.fillup.add", #"{"vehicleId":"\#(vehicle)","odometer":1,"volume":1,"totalMinor":1.5}"#)
        #expect(error.code == .invalidArgument)
        #expect(error.field == "totalMinor")
        #expect(error.message == "totalMinor: must be a whole number (got 1.5)")
    }

    @Test func dateFiveMinutesAheadIsAccepted() async throws {
        let records = try Harness()
        let vehicle = try await records.vehicle()
        let fill = try await records.ok(
            "records.fillup.add", #"{"vehicleId":"\#(vehicle)","odometer":1,"volume":1,"totalMinor":1,"date":"\#(time(300))"}"#)
        #expect(fill["date"] == .string(time(300)))
    }

    @Test func odometerMustNotGoBackwardsAgainstItsNeighbours() async throws {
        let records = try Harness()
        let vehicle = try await records.vehicle()
        let day: Double = 86_400
        func add(_ odometer: String, at seconds: Double) async throws -> (ok: JSONValue?, error: ServiceError?) {
            let reply = try await records.send(
                "records.fillup.add",
                #"{"vehicleId":"\#(vehicle)","odometer":\#(odometer),"volume":10,"totalMinor":4000,"date":"\#(time(seconds))"}"#
            ).reply
            return (reply.result, reply.error)
        }
        #expect(try await add("12345.6", at: -10 * day).ok != nil)  // 2026-04-30
        #expect(try await add("13000", at: -2 * day).ok != nil)  // 2026-05-08
        let before = try await add("12000", at: -5 * day)
        #expect(before.error?.code == .invalidArgument)
        #expect(
            before.error?.message
                == "odometer: must be at least 12,345.6 (the fill-up on 2026-04-30 reads 12,345.6) (got 12,000)")
        let after = try await add("13500", at: -5 * day)
        #expect(
            after.error?.message == "odometer: must be at most 13,000 (the fill-up on 2026-05-08 reads 13,000) (got 13,500)")
        #expect(try await add("12345.6", at: -5 * day).ok != nil)  // equal to the previous is fine
        #expect(try await add("12500", at: -4 * day).ok != nil)
        // A trip-only fill-up has no odometer to compare.
        let trip = try await records.ok(
            "records.fillup.add", #"{"vehicleId":"\#(vehicle)","trip":200,"volume":10,"totalMinor":4000}"#)
        #expect(trip["odometer"] == nil)
        // An update is checked against its new neighbours (and not against itself).
        let last = try #require(try await add("14000", at: 0).ok)
        let moved = try await records.fails(
            "records.fillup.update", #"{"id":"\#(last["id"]!.string)","date":"\#(time(-11 * day))"}"#)
        #expect(moved.message.hasPrefix("odometer: must be at most 12,345.6 (the fill-up on 2026-04-30"))
        try await records.ok("records.fillup.update", #"{"id":"\#(last["id"]!.string)","odometer":14001}"#)
    }

    @Test func updateEditsEveryFieldAndClearsOptionalOnes() async throws {
        let records = try Harness()
        let vehicle = try await records.vehicle()
        let fill = try await records.ok(
            "records.fillup.add",
            #"{"vehicleId":"\#(vehicle)","odometer":100,"trip":50,"volume":5,"totalMinor":2000,"note":"hi"}"#)
        let id = fill["id"]!.string
        let updated = try await records.ok(
            "records.fillup.update",
            #"{"id":"\#(id)","date":"\#(time(-60))","odometer":null,"trip":60.5,"volume":6,"totalMinor":2400,"currency":"EUR","full":false,"missed":true,"note":null}"#
        )
        #expect(updated["odometer"] == nil)
        #expect(updated["trip"] == 60.5)
        #expect(updated["volume"] == 6)
        #expect(updated["pricePerUnitMinor"] == 400)
        #expect(updated["currency"] == "EUR")
        #expect(updated["full"] == false)
        #expect(updated["missed"] == true)
        #expect(updated["note"] == nil)
        #expect(updated["date"] == .string(time(-60)))
        let error = try await records.fails("records.fillup.update", #"{"id":"\#(id)","trip":null}"#)
        #expect(error.message == "odometer: give odometer or trip (or both)")
        #expect(try await records.ok("records.fillup.get", #"{"id":"\#(id)"}"#) == updated)
    }

    @Test func anotherUsersFillupOrVehicleIsNotFound() async throws {
        let records = try Harness()
        let bobs = try await records.vehicle(as: "bob")
        let fill = try await records.ok(
            "records.fillup.add", #"{"vehicleId":"\#(bobs)","odometer":1,"volume":1,"totalMinor":1}"#, as: "bob")
        let id = fill["id"]!.string
        for method in ["records.fillup.get", "records.fillup.update", "records.fillup.delete"] {
            #expect(try await records.fails(method, #"{"id":"\#(id)","volume":2}"#).code == .notFound, "\(method)")
        }
        let add = try await records.fails(
            "records.fillup.add", #"{"vehicleId":"\#(bobs)","odometer":1,"volume":1,"totalMinor":1}"#)
        #expect(add.code == .notFound)
        #expect(add.field == "vehicleId")
        #expect(try await records.fails("records.fillup.list", #"{"vehicleId":"\#(bobs)"}"#).code == .notFound)
        #expect(try await records.ok("records.fillup.get", #"{"id":"\#(id)"}"#, as: "bob") == fill)
    }

    @Test func listIsNewestFirstAndPagesEveryRowOnce() async throws {
        let records = try Harness()
        let vehicle = try await records.vehicle()
        let other = try await records.vehicle()
        var ids: [(date: String, id: String)] = []
        for i in 0..<7 {
            // two fill-ups share each date: the id breaks the tie
            let fill = try await records.ok(
                "records.fillup.add",
                #"{"vehicleId":"\#(vehicle)","trip":10,"volume":1,"totalMinor":1,"date":"\#(time(Double(-1000 + (i / 2) * 100)))"}"#)
            ids.append((fill["date"]!.string, fill["id"]!.string))
        }
        try await records.ok("records.fillup.add", #"{"vehicleId":"\#(other)","trip":10,"volume":1,"totalMinor":1}"#)
        var seen: [String] = []
        var cursor: String?
        repeat {
            let cursorField = cursor.map { #","cursor":"\#($0)""# } ?? ""
            let page = try await records.ok(
                "records.fillup.list", #"{"vehicleId":"\#(vehicle)","limit":3\#(cursorField)}"#)
            #expect(page.items.count <= 3)
            seen += page.items.map { $0["id"]!.string }
            cursor = page["nextCursor"]?.stringValue
        } while cursor != nil
        // Newest first; the id (UUIDv7) breaks ties between equal dates.
        #expect(seen == ids.sorted { ($0.date, $0.id) > ($1.date, $1.id) }.map(\.id))
        let error = try await records.fails("records.fillup.list", #"{"vehicleId":"\#(vehicle)","limit":501}"#)
        #expect(error.message == "limit: must be between 1 and 500 (got 501)")
        let bad = try await records.fails("records.fillup.list", #"{"vehicleId":"\#(vehicle)","cursor":"!!"}"#)
        #expect(bad.field == "cursor")
    }
}

@Suite struct FillupLimitTests {
    @Test("a derived price or total keeps the limits of one given")
    func derivedValuesKeepTheLimits() async throws {
        let records = try Harness()
        let car = try await records.vehicle()
        for (body, field) in [
            (#""volume":0.001,"totalMinor":5000"#, "totalMinor"),  // 5,000,000 per unit
            (#""volume":1000000,"totalMinor":1"#, "totalMinor"),  // 0 per unit
            (#""volume":0.001,"pricePerUnitMinor":0.001"#, "pricePerUnitMinor"),  // a total of 0
        ] {
            let error = try await records.fails("records.fillup.add", #"{"vehicleId":"\#(car)","odometer":100,\#(body)}"#)
            #expect(error.code == .invalidArgument && error.field == field, "\(body): \(error.message)")
        }
        #expect(try await records.count("fillup") == 0)
        // within the limits, derived as before
        let fine = try await records.ok("records.fillup.add", #"{"vehicleId":"\#(car)","odometer":100,"volume":10,"totalMinor":4000}"#)
        #expect(fine["pricePerUnitMinor"] == 400)
        // an update that makes the derived price impossible says so on the volume
        let id = try #require(fine["id"]?.stringValue)
        let update = try await records.fails("records.fillup.update", #"{"id":"\#(id)","volume":0.001}"#)
        #expect(update.code == .invalidArgument && update.field == "volume", "\(update.message)")
    }

    @Test("the odometer is checked against the nearest fill-ups in the order the economy walk takes them")
    func sameInstantNeighbours() async throws {
        let records = try Harness()
        let car = try await records.vehicle()
        let at = "2026-05-01T10:00:00Z"
        try await records.ok("records.fillup.add", #"{"vehicleId":"\#(car)","date":"\#(at)","odometer":200,"volume":10,"totalMinor":4000}"#)
        // the same instant: not compared (only the odometers order them)
        try await records.ok("records.fillup.add", #"{"vehicleId":"\#(car)","date":"\#(at)","odometer":100,"volume":10,"totalMinor":4000}"#)
        // a day later, 150 is behind the 200 read at that instant
        let later = try await records.fails(
            "records.fillup.add", #"{"vehicleId":"\#(car)","date":"2026-05-02T10:00:00Z","odometer":150,"volume":10,"totalMinor":4000}"#)
        #expect(later.code == .invalidArgument && later.field == "odometer", "\(later.message)")
        #expect(later.message.contains("at least 200"), "\(later.message)")
        // a day earlier, 150 is ahead of the 100 read at that instant
        let earlier = try await records.fails(
            "records.fillup.add", #"{"vehicleId":"\#(car)","date":"2026-04-30T10:00:00Z","odometer":150,"volume":10,"totalMinor":4000}"#)
        #expect(earlier.code == .invalidArgument && earlier.field == "odometer", "\(earlier.message)")
        #expect(earlier.message.contains("at most 100"), "\(earlier.message)")
    }
}
