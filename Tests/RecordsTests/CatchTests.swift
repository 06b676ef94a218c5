import Foundation
import Testing
import Wire

@Suite("Catches")
struct CatchTests {
    @Test func addWithDefaultsThenGetUpdateDelete() async throws {
        let records = try Harness()
        let added = try await records.ok("records.catch.add", catchBody)
        let id = added["id"]!.string
        #expect(added["species"] == "Pike")
        #expect(added["weight"] == 2.5)
        #expect(added["caughtAt"] == .string(time()))
        #expect(added["released"] == false)
        #expect(added["conditions"] == ["status": "pending"])
        #expect(added["photoHash"] == nil)
        #expect(try await records.ok("records.catch.get", #"{"id":"\#(id)"}"#) == added)

        let updated = try await records.ok(
            "records.catch.update", #"{"id":"\#(id)","species":"Zander","length":61.5,"lengthUnit":"cm","released":true}"#)
        #expect(updated["species"] == "Zander")
        #expect(updated["length"] == 61.5)
        #expect(updated["lengthUnit"] == "cm")
        #expect(updated["released"] == true)
        let cleared = try await records.ok("records.catch.update", #"{"id":"\#(id)","length":null}"#)
        #expect(cleared["length"] == nil)
        #expect(cleared["lengthUnit"] == nil)

        #expect(try await records.ok("records.catch.delete", #"{"id":"\#(id)"}"#) == ["deleted": true])
        #expect(try await records.fails("records.catch.get", #"{"id":"\#(id)"}"#).code == .notFound)
    }

    @Test func editingPlaceOrTimeMakesConditionsPendingAndSaysSo() async throws {
        let records = try Harness()
        let id = try await records.ok("records.catch.add", catchBody)["id"]!.string
        try await records.host.database.write { db in
            // the summary as CatchConditions.swift stores it: the one-line text, as JSON
            try db.execute(sql: "UPDATE fishCatch SET conditionsStatus = 'ready', conditionsSummary = '\"12°C, overcast\"'")
        }
        let renamed = try await records.ok("records.catch.update", #"{"id":"\#(id)","bait":"worm"}"#)
        #expect(renamed["conditions"] == ["status": "ready", "summary": "12°C, overcast"])
        let moved = try await records.ok("records.catch.update", #"{"id":"\#(id)","latitude":60}"#)
        #expect(moved["conditions"] == ["status": "pending"])
        let retimed = try await records.ok("records.catch.update", #"{"id":"\#(id)","caughtAt":"\#(time(-3600))"}"#)
        #expect(retimed["caughtAt"] == .string(time(-3600)))
        let updates = try await records.events().filter { $0.type == "catch.updated" }
        #expect(updates.map { $0.data["placeOrTimeChanged"] } == [false, true, true])
        #expect(updates.last?.data["species"] == "Pike")  // the whole record travels
    }

    @Test(arguments: [
        (#""species":"","weight":1,"weightUnit":"kg","bait":"b","water":"salt","latitude":0,"longitude":0"#, "species", #"species: must be 1–80 characters (got "")"#),
        (#""species":"p","weight":0,"weightUnit":"kg","bait":"b","water":"salt","latitude":0,"longitude":0"#, "weight", "weight: must be greater than 0 (got 0)"),
        (#""species":"p","weight":1.0001,"weightUnit":"kg","bait":"b","water":"salt","latitude":0,"longitude":0"#, "weight", "weight: must have at most 3 decimals (got 1.0001)"),
        (#""species":"p","weight":1,"weightUnit":"g","bait":"b","water":"salt","latitude":0,"longitude":0"#, "weightUnit", #"weightUnit: must be one of kg, lb (got "g")"#),
        (#""species":"p","weight":1,"bait":"b","water":"salt","latitude":0,"longitude":0"#, "weightUnit", "weightUnit: is required"),
        (#""species":"p","weight":1,"weightUnit":"kg","length":-1,"lengthUnit":"cm","bait":"b","water":"salt","latitude":0,"longitude":0"#, "length", "length: must be greater than 0 (got -1)"),
        (#""species":"p","weight":1,"weightUnit":"kg","length":30,"bait":"b","water":"salt","latitude":0,"longitude":0"#, "lengthUnit", "lengthUnit: is required with length (cm or in)"),
        (#""species":"p","weight":1,"weightUnit":"kg","water":"salt","latitude":0,"longitude":0"#, "bait", #"bait: is required, 1–80 characters: the logbook warns when a catch has no bait (write "unknown" if you do not know it) (got "")"#),
        (#""species":"p","weight":1,"weightUnit":"kg","bait":"  ","water":"salt","latitude":0,"longitude":0"#, "bait", #"bait: is required, 1–80 characters: the logbook warns when a catch has no bait (write "unknown" if you do not know it) (got "  ")"#),
        (#""species":"p","weight":1,"weightUnit":"kg","bait":"b","water":"lake","latitude":0,"longitude":0"#, "water", #"water: must be one of fresh, salt (got "lake")"#),
        (#""species":"p","weight":1,"weightUnit":"kg","bait":"b","water":"salt","latitude":90.5,"longitude":0"#, "latitude", "latitude: must be between -90 and 90 (got 90.5)"),
        (#""species":"p","weight":1,"weightUnit":"kg","bait":"b","water":"salt","latitude":0,"longitude":-181"#, "longitude", "longitude: must be between -180 and 180 (got -181)"),
        (#""species":"p","weight":1,"weightUnit":"kg","bait":"b","water":"salt","latitude":0"#, "longitude", "longitude: is required"),
        (#""species":"p","weight":1,"weightUnit":"kg","bait":"b","water":"salt","latitude":0,"longitude":0,"caughtAt":"2026-05-10T13:00:00Z""#, "caughtAt", "caughtAt: must not be more than 5 minutes in the future (got 2026-05-10T13:00:00Z)"),
        (#""species":"p","weight":1,"weightUnit":"kg","bait":"b","water":"salt","latitude":0,"longitude":0,"released":1"#, "released", "released: expected true or false"),
        (#""species":"p","weight":"heavy","weightUnit":"kg","bait":"b","water":"salt","latitude":0,"longitude":0"#, "weight", "weight: expected a number"),
    ])
    func addRefuses(fields: String, field: String, message: String) async throws {
        let records = try Harness()
        let error = try await records.fails("records.catch.add", "{\(fields)}")
        #expect(error.code == .invalidArgument)
        #expect(error.field == field)
        #expect(error.message == message)
        #expect(try await records.count("fishCatch") == 0)
    }

    @Test func anotherUsersCatchIsNotFound() async throws {
        let records = try Harness()
        let id = try await records.ok("records.catch.add", catchBody, as: "bob")["id"]!.string
        for method in ["records.catch.get", "records.catch.update", "records.catch.delete"] {
            #expect(try await records.fails(method, #"{"id":"\#(id)","species":"x"}"#).code == .notFound, "\(method)")
        }
        #expect(try await records.ok("records.catch.list").items.isEmpty)
    }

    @Test func listsBySectionAndSort() async throws {
        let records = try Harness()
        let fish: [(String, String, String, Double)] = [
            ("pike", "3", "kg", -400), ("Perch", "0.4", "kg", -300), ("Cod", "9", "lb", -200), ("bass", "5", "lb", -100),
        ]
        for (species, weight, unit, seconds) in fish {
            let water = species == "Cod" ? "salt" : "fresh"
            try await records.ok(
                "records.catch.add",
                #"{"species":"\#(species)","weight":\#(weight),"weightUnit":"\#(unit)","bait":"b","water":"\#(water)","latitude":1,"longitude":2,"caughtAt":"\#(time(seconds))"}"#
            )
        }
        func names(_ body: String) async throws -> [String] {
            try await records.ok("records.catch.list", body).items.map { $0["species"]!.string }
        }
        #expect(try await names("{}") == ["bass", "Cod", "Perch", "pike"])
        #expect(try await names(#"{"water":"fresh"}"#) == ["bass", "Perch", "pike"])
        #expect(try await names(#"{"water":"salt"}"#) == ["Cod"])
        // 9 lb = 4.08 kg > 3 kg > 5 lb = 2.27 kg > 0.4 kg: units compared as mass
        #expect(try await names(#"{"sort":"weight"}"#) == ["Cod", "pike", "bass", "Perch"])
        #expect(try await names(#"{"sort":"species"}"#) == ["bass", "Cod", "Perch", "pike"])
        // paging through a non-date sort
        var seen: [String] = []
        var cursor: String?
        repeat {
            let cursorField = cursor.map { #","cursor":"\#($0)""# } ?? ""
            let page = try await records.ok("records.catch.list", #"{"sort":"species","limit":1\#(cursorField)}"#)
            seen += page.items.map { $0["species"]!.string }
            cursor = page["nextCursor"]?.stringValue
        } while cursor != nil
        #expect(seen == ["bass", "Cod", "Perch", "pike"])
        let first = try await records.ok("records.catch.list", #"{"sort":"species","limit":1}"#)
        let wrongSort = try await records.fails(
            "records.catch.list", #"{"sort":"weight","cursor":"\#(first["nextCursor"]!.string)"}"#)
        #expect(wrongSort.field == "cursor")
        #expect(try await records.fails("records.catch.list", #"{"sort":"size"}"#).field == "sort")
    }

    @Test func personalBestsPerSpecies() async throws {
        let records = try Harness()
        func add(_ species: String, _ weight: String, _ unit: String, water: String = "fresh", as user: String = "alice")
            async throws -> String
        {
            try await records.ok(
                "records.catch.add",
                #"{"species":"\#(species)","weight":\#(weight),"weightUnit":"\#(unit)","bait":"spoon","water":"\#(water)","latitude":59.3,"longitude":18.1}"#,
                as: user)["id"]!.string
        }
        _ = try await add("Pike", "2.5", "kg")
        // 6 lb = 2.72 kg: heavier than 2.5 kg, whatever the unit
        let pikeBest = try await add("pike", "6", "lb")
        _ = try await add("Perch", "0.4", "kg")
        let bass = try await add("Bass", "4.1", "lb", water: "salt")
        _ = try await add("Pike", "9", "kg", as: "bob")
        let result = try await records.ok("records.catch.bests", "{}")
        let bests = try #require(result["bests"]?.arrayValue)
        #expect(bests.map { $0["species"]?.stringValue } == ["Bass", "Perch", "pike"])
        #expect(bests.map { $0["catches"] } == [1, 1, 2])
        #expect(bests[2]["best"]?["id"]?.stringValue == pikeBest)
        #expect(bests[2]["best"]?["weight"] == 6)
        let salt = try await records.ok("records.catch.bests", #"{"water":"salt"}"#)["bests"]?.arrayValue
        #expect(salt?.map { $0["best"]?["id"]?.stringValue } == [bass])
        #expect(try await records.ok("records.catch.bests", "{}", as: "carol")["bests"] == [])
        #expect(try await records.fails("records.catch.bests", #"{"water":"lake"}"#).field == "water")
    }
}
