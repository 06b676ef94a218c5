import Foundation
import Testing
import Wire

@Suite("Attendance")
struct AttendanceTests {
    @Test func arrivalsAndDeparturesAlternate() async throws {
        let records = try Harness()
        let arrival = try await records.ok(
            "records.attendance.add", #"{"kind":"arrival","source":"ios","latitude":52.5,"longitude":13.4,"accuracy":12.5}"#)
        #expect(arrival["at"] == .string(time()))
        #expect(arrival["accuracy"] == 12.5)
        #expect(arrival["correction"] == false)
        records.clock.advance(seconds: 60)

        let second = try await records.fails("records.attendance.add", #"{"kind":"arrival","source":"cli"}"#)
        #expect(second.code == .failedPrecondition)
        #expect(
            second.message
                == "an arrival is still open: entry \(arrival["id"]!.string) at \(time()); record a departure first, or pass correction: true to add this arrival anyway"
        )
        #expect(second.details?["openEntryId"] == arrival["id"])
        #expect(try await records.count("attendance") == 1)

        let correction = try await records.ok(
            "records.attendance.add", #"{"kind":"arrival","source":"cli","correction":true,"note":"forgot"}"#)
        #expect(correction["correction"] == true)
        records.clock.advance(seconds: 3600)
        let departure = try await records.ok("records.attendance.add", #"{"kind":"departure","source":"company"}"#)
        records.clock.advance(seconds: 60)
        let twice = try await records.fails("records.attendance.add", #"{"kind":"departure","source":"web"}"#)
        #expect(twice.message.hasPrefix("the last entry is already a departure: entry \(departure["id"]!.string)"))
        // A back-dated entry is checked against the one after it too.
        let backdated = try await records.fails(
            "records.attendance.add", #"{"kind":"arrival","source":"web","at":"\#(time(-100))"}"#)
        #expect(backdated.code == .failedPrecondition)
        #expect(backdated.message.hasPrefix("the next entry is also an arrival: entry \(arrival["id"]!.string)"))

        let latest = try await records.ok("records.attendance.latest")
        #expect(latest["arrival"]?["id"] == correction["id"])
        #expect(latest["departure"]?["id"] == departure["id"])

        let list = try await records.ok("records.attendance.list")
        #expect(list.items.map { $0["id"]! } == [departure["id"]!, correction["id"]!, arrival["id"]!])

        #expect(try await records.ok("records.attendance.delete", #"{"id":"\#(departure["id"]!.string)"}"#) == ["deleted": true])
        #expect(try await records.ok("records.attendance.latest")["departure"] == nil)
    }

    @Test(arguments: [
        (#"{"kind":"in","source":"ios"}"#, "kind", #"kind: must be one of arrival, departure (got "in")"#),
        (#"{"kind":"arrival","source":"watch"}"#, "source", #"source: must be one of ios, android, web, cli, company (got "watch")"#),
        (#"{"kind":"arrival"}"#, "source", "source: is required"),
        (#"{"kind":"arrival","source":"ios","latitude":91,"longitude":0}"#, "latitude", "latitude: must be between -90 and 90 (got 91)"),
        (#"{"kind":"arrival","source":"ios","latitude":1}"#, "longitude", "longitude: is required with latitude"),
        (#"{"kind":"arrival","source":"ios","accuracy":5}"#, "accuracy", "accuracy: needs latitude and longitude (got 5)"),
        (#"{"kind":"arrival","source":"ios","latitude":1,"longitude":1,"accuracy":-1}"#, "accuracy", "accuracy: must be 0 or more metres (got -1)"),
        (#"{"kind":"arrival","source":"ios","at":"2026-05-10T12:06:00Z"}"#, "at", "at: must not be more than 5 minutes in the future (got 2026-05-10T12:06:00Z)"),
        (#"{"kind":"arrival","source":"ios","correction":"yes"}"#, "correction", "correction: expected true or false"),
    ])
    func addRefuses(body: String, field: String, message: String) async throws {
        let records = try Harness()
        let error = try await records.fails("records.attendance.add", body)
        #expect(error.code == .invalidArgument)
        #expect(error.field == field)
        #expect(error.message == message)
    }

    @Test func usersDoNotSeeEachOthersEntries() async throws {
        let records = try Harness()
        let bobs = try await records.ok("records.attendance.add", #"{"kind":"arrival","source":"ios"}"#, as: "bob")
        // Bob's open arrival does not block Alice's.
        try await records.ok("records.attendance.add", #"{"kind":"arrival","source":"ios"}"#, as: "alice")
        #expect(try await records.fails("records.attendance.delete", #"{"id":"\#(bobs["id"]!.string)"}"#).code == .notFound)
        #expect(try await records.ok("records.attendance.list").items.count == 1)
        #expect(try await records.ok("records.attendance.latest", as: "carol") == [:])
    }
}
