import Foundation
import Testing
import Wire

@Suite("Vehicles")
struct VehicleTests {
    @Test func addGetUpdateListDelete() async throws {
        let records = try Harness()
        let added = try await records.ok(
            "records.vehicle.add", #"{"nickname":" Civic ","make":"Honda","model":"Civic","year":2019,"distanceUnit":"km","volumeUnit":"l"}"#)
        let id = added["id"]!.string
        #expect(ID.isValid(id))
        #expect(added["nickname"] == "Civic")
        #expect(added["distanceUnit"] == "km")
        #expect(added["volumeUnit"] == "l")
        #expect(added["year"] == 2019)

        let defaults = try await records.ok("records.vehicle.add", #"{"nickname":"Civic"}"#)
        #expect(defaults["distanceUnit"] == "mi")
        #expect(defaults["volumeUnit"] == "gal")
        #expect(defaults["make"] == nil)

        #expect(try await records.ok("records.vehicle.get", #"{"id":"\#(id)"}"#) == added)

        let updated = try await records.ok("records.vehicle.update", #"{"id":"\#(id)","nickname":"Red","make":null}"#)
        #expect(updated["nickname"] == "Red")
        #expect(updated["make"] == nil)
        #expect(updated["model"] == "Civic")  // absent: unchanged

        let list = try await records.ok("records.vehicle.list")
        #expect(list.items.map { $0["id"]!.string } == [defaults["id"]!.string, id])

        #expect(try await records.ok("records.vehicle.delete", #"{"id":"\#(id)"}"#) == ["deleted": true])
        #expect(try await records.fails("records.vehicle.get", #"{"id":"\#(id)"}"#).code == .notFound)
    }

    @Test(arguments: [
        (#"{"nickname":""}"#, "nickname", #"nickname: must be 1–60 characters (got "")"#),
        (#"{"nickname":"   "}"#, "nickname", #"nickname: must be 1–60 characters (got "   ")"#),
        (#"{"nickname":"\#(String(repeating: "x", count: 61))"}"#, "nickname", "nickname: must be 1–60 characters (got \"\(String(repeating: "x", count: 61))\")"),
        (#"{"nickname":"a","make":"\#(String(repeating: "m", count: 61))"}"#, "make", "make: must be at most 60 characters (got \"\(String(repeating: "m", count: 61))\")"),
        (#"{"nickname":"a","model":"\#(String(repeating: "m", count: 61))"}"#, "model", "model: must be at most 60 characters (got \"\(String(repeating: "m", count: 61))\")"),
        (#"{"nickname":"a","year":1885}"#, "year", "year: must be between 1886 and 2027 (got 1885)"),
        (#"{"nickname":"a","year":2028}"#, "year", "year: must be between 1886 and 2027 (got 2028)"),
        (#"{"nickname":"a","distanceUnit":"miles"}"#, "distanceUnit", #"distanceUnit: must be one of mi, km (got "miles")"#),
        (#"{"nickname":"a","volumeUnit":"gallon"}"#, "volumeUnit", #"volumeUnit: must be one of gal, l, ukgal (got "gallon")"#),
        (#"{}"#, "nickname", "nickname: is required"),
        (#"{"nickname":12}"#, "nickname", "nickname: expected a string"),
        (#"{"nickname":"a","year":"1990"}"#, "year", "year: expected a whole number"),
    ])
    func addRefuses(body: String, field: String, message: String) async throws {
        let records = try Harness()
        let error = try await records.fails("records.vehicle.add", body)
        #expect(error.code == .invalidArgument)
        #expect(error.field == field)
        #expect(error.message == message)
        #expect(try await records.count("vehicle") == 0)
    }

    @Test func updateRefusesBadFieldsAndWritesNothing() async throws {
        let records = try Harness()
        let id = try await records.vehicle()
        let error = try await records.fails("records.vehicle.update", #"{"id":"\#(id)","nickname":"ok","year":1700}"#)
        #expect(error.field == "year")
        #expect(try await records.ok("records.vehicle.get", #"{"id":"\#(id)"}"#)["nickname"] == "Civic")
        #expect(try await records.fails("records.vehicle.update", #"{"id":"\#(id)","nickname":null,"make":5}"#).field == "make")
    }

    @Test func anotherUsersVehicleIsNotFound() async throws {
        let records = try Harness()
        let id = try await records.vehicle(as: "bob")
        for method in ["records.vehicle.get", "records.vehicle.update", "records.vehicle.delete"] {
            let error = try await records.fails(method, #"{"id":"\#(id)","nickname":"mine"}"#, as: "alice")
            #expect(error.code == .notFound, "\(method)")
        }
        #expect(try await records.ok("records.vehicle.list", as: "alice").items.isEmpty)
        #expect(try await records.ok("records.vehicle.get", #"{"id":"\#(id)"}"#, as: "bob")["nickname"] == "Civic")
        #expect(try await records.fails("records.vehicle.get", #"{"id":"nonsense"}"#).code == .notFound)
    }

    @Test func deletingAVehicleDeletesItsFillupsWithOneEvent() async throws {
        let records = try Harness()
        let id = try await records.vehicle()
        for odometer in [100, 200, 300] {
            try await records.ok(
                "records.fillup.add", #"{"vehicleId":"\#(id)","odometer":\#(odometer),"volume":10,"totalMinor":4000}"#)
        }
        #expect(try await records.count("fillup") == 3)
        let before = try await records.events().count
        try await records.ok("records.vehicle.delete", #"{"id":"\#(id)"}"#)
        #expect(try await records.count("fillup") == 0)
        let events = try await records.events().dropFirst(before)
        #expect(events.map(\.type) == ["vehicle.deleted"])
        #expect(events.first?.data["fillupsDeleted"] == 3)
        #expect(events.first?.userId == "alice")
    }

    @Test func requiresASession() async throws {
        let records = try Harness()
        let frame = #"{"v":1,"id":"x","method":"records.vehicle.list","body":{}}"#
        let reply = try WireCoding.decode(Reply.self, from: await records.dispatcher.handle(Data(frame.utf8)))
        #expect(reply.error?.code == .unauthenticated)
    }
}
