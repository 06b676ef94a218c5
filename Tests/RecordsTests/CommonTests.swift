// Rules every records method shares: idempotent writes, one event per write, the account
// purge, malformed bodies, exact quantities.
import Foundation
import GRDB
import RecordsService
import Runtime
import Storage
import Testing
import Wire

@Suite("Every logbook")
struct CommonTests {
    /// A create per logbook, with the table it writes.
    static let creates: [(method: String, body: String, table: String)] = [
        ("records.vehicle.add", #"{"nickname":"Civic"}"#, "vehicle"),
        ("records.catch.add", catchBody, "fishCatch"),
        ("records.expense.add", #"{"name":"Coffee","amountMinor":450}"#, "expense"),
        ("records.attendance.add", #"{"kind":"arrival","source":"cli"}"#, "attendance"),
        ("records.activity.add", #"{"name":"Piano"}"#, "activity"),
    ]

    @Test(arguments: creates.map(\.method))
    func aRepeatedIdempotencyKeyReplaysTheFirstResult(method: String) async throws {
        let create = try #require(Self.creates.first { $0.method == method })
        let records = try Harness()
        let first = try await records.send(method, create.body, key: "k-1")
        let again = try await records.send(method, create.body, key: "k-1")
        #expect(first.reply.ok)
        #expect(again.reply.result == first.reply.result)
        #expect(try await records.count(create.table) == 1)
        #expect(try await records.events().count == 1)

        let different = try await records.fails(method, create.body.replacingOccurrences(of: "}", with: #","note":"x"}"#), key: "k-1")
        #expect(different.code == .alreadyExists)
        #expect(different.field == "idempotencyKey")
        // The key is the caller's own: another user's identical key is a new request.
        #expect(try await records.send(method, create.body, as: "bob", key: "k-1").reply.ok)
        #expect(try await records.count(create.table) == 2)
    }

    @Test func fillupAddIsIdempotentToo() async throws {
        let records = try Harness()
        let vehicle = try await records.vehicle()
        let body = #"{"vehicleId":"\#(vehicle)","odometer":100,"volume":10,"totalMinor":4000}"#
        let first = try await records.ok("records.fillup.add", body, key: "fill-1")
        #expect(try await records.ok("records.fillup.add", body, key: "fill-1") == first)
        #expect(try await records.count("fillup") == 1)
        let other = body.replacingOccurrences(of: "4000", with: "4001")
        #expect(try await records.fails("records.fillup.add", other, key: "fill-1").code == .alreadyExists)
    }

    @Test(arguments: [
        "records.vehicle.add", "records.fillup.add", "records.catch.add", "records.expense.add", "records.attendance.add",
        "records.activity.add", "records.vehicle.update", "records.vehicle.list", "records.catch.list", "records.timer.start",
    ])
    func aBodyThatIsNotAnObjectIsInvalid(method: String) async throws {
        let records = try Harness()
        for body in ["5", #""text""#, "[]"] {
            let error = try await records.fails(method, body)
            #expect(error.code == .invalidArgument, "\(method) \(body)")
        }
    }

    @Test func everyWriteEmitsExactlyOneEventOfItsType() async throws {
        let records = try Harness()
        var expected: [String] = []
        func write(_ method: String, _ body: String, _ type: String) async throws -> JSONValue {
            let result = try await records.ok(method, body)
            expected.append(type)
            let events = try await records.events()
            #expect(events.map(\.type) == expected, "\(method)")
            #expect(events.last?.userId == "alice")
            return result
        }
        let vehicle = try await write("records.vehicle.add", #"{"nickname":"Civic"}"#, "vehicle.created")["id"]!.string
        _ = try await write("records.vehicle.update", #"{"id":"\#(vehicle)","make":"Honda"}"#, "vehicle.updated")
        let fill = try await write(
            "records.fillup.add", #"{"vehicleId":"\#(vehicle)","odometer":100,"volume":12.345,"pricePerUnitMinor":300}"#,
            "fillup.created")
        let fillEvent = try #require(try await records.events().last)
        #expect(fillEvent.data == fill)  // the full record
        #expect(try fillEvent.data["volume"]!.decode(Milli.self) == Milli(thousandths: 12_345))
        _ = try await write("records.fillup.update", #"{"id":"\#(fill["id"]!.string)","full":false}"#, "fillup.updated")
        _ = try await write("records.fillup.delete", #"{"id":"\#(fill["id"]!.string)"}"#, "fillup.deleted")
        #expect(try await records.events().last?.data == ["id": fill["id"]!, "userId": "alice", "vehicleId": .string(vehicle)])
        _ = try await write("records.vehicle.delete", #"{"id":"\#(vehicle)"}"#, "vehicle.deleted")

        let fish = try await write("records.catch.add", catchBody, "catch.created")["id"]!.string
        _ = try await write("records.catch.update", #"{"id":"\#(fish)","released":true}"#, "catch.updated")
        _ = try await write("records.catch.delete", #"{"id":"\#(fish)"}"#, "catch.deleted")

        let expense = try await write("records.expense.add", #"{"name":"Tea","amountMinor":300}"#, "expense.created")["id"]!.string
        _ = try await write("records.expense.update", #"{"id":"\#(expense)","amountMinor":350}"#, "expense.updated")
        _ = try await write("records.expense.delete", #"{"id":"\#(expense)"}"#, "expense.deleted")

        let entry = try await write("records.attendance.add", #"{"kind":"arrival","source":"cli"}"#, "attendance.created")
        _ = try await write("records.attendance.delete", #"{"id":"\#(entry["id"]!.string)"}"#, "attendance.deleted")

        let activity = try await write("records.activity.add", #"{"name":"Piano"}"#, "activity.created")["id"]!.string
        let timer = #"{"activityId":"\#(activity)"}"#
        _ = try await write("records.timer.start", timer, "timer.changed")
        records.clock.advance(seconds: 10)
        _ = try await write("records.timer.pause", timer, "timer.changed")
        _ = try await write("records.timer.resume", timer, "timer.changed")
        records.clock.advance(seconds: 5)
        _ = try await write("records.timer.stop", timer, "timer.changed")
        let saved = try await write("records.timer.save", timer, "time.saved")
        let savedEvent = try #require(try await records.events().last)
        #expect(savedEvent.data["id"] == saved["entry"]?["id"])
        #expect(savedEvent.data["activityId"] == .string(activity))
        #expect(savedEvent.data["durationMs"] == 15_000)
        #expect(savedEvent.data["fromTimer"] == true)
        #expect(savedEvent.data["savedAt"] != nil)
        _ = try await write("records.timer.start", timer, "timer.changed")
        _ = try await write("records.timer.clear", timer, "timer.changed")
        _ = try await write("records.activity.delete", #"{"id":"\#(activity)"}"#, "activity.deleted")

        // A refused write leaves no event.
        _ = try await records.fails("records.expense.add", #"{"name":"","amountMinor":1}"#)
        #expect(try await records.events().count == expected.count)
    }

    @Test func userDeletedPurgesEveryRowOfThatUser() async throws {
        let records = try Harness()
        for user in ["alice", "bob"] {
            let vehicle = try await records.vehicle(as: user)
            try await records.ok(
                "records.fillup.add", #"{"vehicleId":"\#(vehicle)","odometer":1,"volume":1,"totalMinor":1}"#, as: user)
            try await records.ok("records.catch.add", catchBody, as: user)
            try await records.ok("records.expense.add", #"{"name":"Tea","amountMinor":300}"#, as: user, key: "tea")
            try await records.ok("records.attendance.add", #"{"kind":"arrival","source":"cli"}"#, as: user)
            let activity = try await records.activity(as: user)
            let timer = #"{"activityId":"\#(activity)"}"#
            try await records.ok("records.timer.start", timer, as: user)
            records.clock.advance(seconds: 60)
            try await records.ok("records.timer.stop", timer, as: user)
            try await records.ok("records.timer.save", timer, as: user)
            try await records.ok("records.timer.start", timer, as: user)
        }
        let tables = ["vehicle", "fillup", "fishCatch", "expense", "attendance", "activity", "timer", "timeEntry", "idempotency"]
        for table in tables { #expect(try await records.count(table) == 2, "\(table)") }

        let event = Event(seq: 7, type: AuthEvents.userDeleted, userId: "alice", at: Date(), data: ["userId": "alice"])
        try await records.host.database.write { db in try RecordsService.applyAuthEvent(db, event) }
        for table in tables { #expect(try await records.count(table) == 1, "\(table)") }
        // Alice's past events keep their sequence numbers but carry none of her data.
        let log = try await records.host.database.read { try Outbox.since($0, after: 0, limit: 1000) }
        #expect(!log.contains { $0.userId == "alice" }, "a redacted event does not say whose it was")
        let redacted = log.filter { $0.type == Outbox.redactedType }
        #expect(!redacted.isEmpty)
        #expect(redacted.allSatisfy { $0.userId == nil && $0.data == [:] })
        #expect(log.filter { $0.userId == "bob" }.allSatisfy { $0.type != Outbox.redactedType })
        #expect(log.map(\.seq) == Array(1...Int64(log.count)), "no gaps")
        #expect(try await records.ok("records.networth")["totalMs"] == 0)
        #expect(try await records.ok("records.networth", as: "bob")["totalMs"] == 60_000)
        // Other auth events change nothing.
        let revoked = Event(
            seq: 8, type: AuthEvents.sessionRevoked, userId: "bob", at: Date(),
            data: ["userId": "bob", "sessionIds": ["s"], "reason": "logout"])
        try await records.host.database.write { db in try RecordsService.applyAuthEvent(db, revoked) }
        for table in tables { #expect(try await records.count(table) == 1, "\(table)") }
    }

    /// A write let in before the account's deletion was applied (its session resolved, from
    /// a cache or before the event) and committing after it is refused: nothing of the
    /// deleted user is written again, no event of theirs published after the redaction, and
    /// a retry of a write made before the deletion (its key purged) is not applied again.
    @Test func aDeletedUsersWriteInFlightIsRefused() async throws {
        let records = try Harness()
        try await records.ok("records.expense.add", #"{"name":"Tea","amountMinor":300}"#, key: "tea")
        let event = Event(seq: 1, type: AuthEvents.userDeleted, userId: "alice", at: Date(), data: ["userId": "alice"])
        try await records.host.database.write { db in try RecordsService.applyAuthEvent(db, event) }
        for (method, body, key) in [
            ("records.vehicle.add", #"{"nickname":"Civic"}"#, nil),
            ("records.expense.add", #"{"name":"Tea","amountMinor":300}"#, "tea"),
        ] {
            let error = try await records.fails(method, body, key: key)
            #expect(error.code == .unauthenticated, "\(method)")
        }
        #expect(try await records.count("vehicle") == 0)
        #expect(try await records.count("expense") == 0)
        let log = try await records.host.database.read { try Outbox.since($0, after: 0, limit: 1000) }
        #expect(!log.contains { $0.userId == "alice" })
        // others write on
        _ = try await records.vehicle(as: "bob")
    }

    @Test func milliIsExact() throws {
        func decode(_ text: String) throws -> Milli { try WireCoding.decode(Milli.self, from: Data(text.utf8)) }
        #expect(try decode("12.345") == Milli(thousandths: 12_345))
        #expect(try decode("0.001") == Milli(thousandths: 1))
        #expect(try decode("-3") == Milli(thousandths: -3000))
        #expect(try decode("1234567.891") == Milli(thousandths: 1_234_567_891))
        #expect(try decode("1.2300") == Milli(thousandths: 1230))
        #expect(throws: DecodingError.self) { try decode("1.2345") }
        #expect(throws: DecodingError.self) { try decode("\"1.2\"") }
        #expect(String(decoding: try WireCoding.encode(Milli(thousandths: 12_345)), as: UTF8.self) == "12.345")
        #expect(String(decoding: try WireCoding.encode(Milli(thousandths: 100)), as: UTF8.self) == "0.1")
        #expect(Milli(thousandths: 12_345_600).grouped == "12,345.6")
        #expect(Milli(thousandths: -1_000_000).grouped == "-1,000")
    }
}
