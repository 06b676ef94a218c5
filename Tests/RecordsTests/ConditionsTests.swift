// The weather-fetcher's events land on the catch: ready with a summary, unavailable with a
// reason; a result for an old place or time, or for another user's catch, changes nothing.
import Foundation
import GRDB
import RecordsService
import Runtime
import Storage
import Testing
import Contracts
import Wire

@Suite("Catch conditions")
struct ConditionsTests {
    func ready(
        _ catchId: String, user: String, latitude: Double = 59.3, longitude: Double = 18.1, hour: Date,
        water: String? = nil
    ) -> Event {
        var conditions: [String: JSONValue] = [
            "source": "archive", "latitude": .number(.init(latitude)), "longitude": .number(.init(longitude)),
            "hour": .string(WireTime.format(hour)), "moonPhase": "full moon", "moonAgeDays": 14.2,
            "moonIllumination": 0.99, "tide": "skipped",
        ]
        if let water { conditions["water"] = .string(water) }
        return Event(
            seq: 1, type: "conditions.ready", userId: user, at: Date(),
            data: [
                "catchId": .string(catchId), "summary": "14°C, overcast, wind 3 Bft SW",
                "conditions": .object(conditions),
            ])
    }

    @Test func changingTheWaterRefetchesAndIgnoresTheOldWatersAnswer() async throws {
        let records = try Harness()
        let added = try await records.ok("records.catch.add", catchBody)
        let id = added["id"]!.string
        let caughtAt = try #require(WireTime.parse(added["caughtAt"]!.string))
        try await apply(records, ready(id, user: "alice", hour: caughtAt, water: "fresh"))
        #expect(try await records.ok("records.catch.get", #"{"id":"\#(id)"}"#)["conditions"]?["status"] == "ready")
        // fresh → salt: the tide must be fetched, so the conditions wait again
        let salted = try await records.ok("records.catch.update", #"{"id":"\#(id)","water":"salt"}"#)
        #expect(salted["conditions"]?["status"] == "pending")
        let updated = try #require(try await records.events().last { $0.type == "catch.updated" })
        #expect(updated.data["waterChanged"] == true)
        #expect(updated.data["placeOrTimeChanged"] == false)
        // an answer still made for fresh water (fetched before the change) is not taken
        try await apply(records, ready(id, user: "alice", hour: caughtAt, water: "fresh"))
        #expect(try await records.ok("records.catch.get", #"{"id":"\#(id)"}"#)["conditions"]?["status"] == "pending")
        try await apply(records, ready(id, user: "alice", hour: caughtAt, water: "salt"))
        #expect(try await records.ok("records.catch.get", #"{"id":"\#(id)"}"#)["conditions"]?["status"] == "ready")
        // an edit that keeps the water keeps the conditions
        let renamed = try await records.ok("records.catch.update", #"{"id":"\#(id)","bait":"worm"}"#)
        #expect(renamed["conditions"]?["status"] == "ready")
        #expect(try await records.events().last { $0.type == "catch.updated" }?.data["waterChanged"] == false)
    }

    func apply(_ records: Harness, _ event: Event) async throws {
        try await records.host.database.write { db in try RecordsService.applyWeatherEvent(db, event) }
    }

    @Test func readyAndUnavailableLandOnTheCatch() async throws {
        let records = try Harness()
        let added = try await records.ok("records.catch.add", catchBody)
        let id = added["id"]!.string
        let caughtAt = try #require(WireTime.parse(added["caughtAt"]!.string))
        #expect(added["conditions"]?["status"] == "pending")

        // Another user's event for this id, and a result for another place: ignored.
        try await apply(records, ready(id, user: "bob", hour: caughtAt))
        try await apply(records, ready(id, user: "alice", latitude: 40.0, hour: caughtAt))
        #expect(try await records.ok("records.catch.get", #"{"id":"\#(id)"}"#)["conditions"]?["status"] == "pending")

        try await apply(records, ready(id, user: "alice", hour: caughtAt))
        let conditions = try await records.ok("records.catch.get", #"{"id":"\#(id)"}"#)["conditions"]
        #expect(conditions?["status"] == "ready")
        #expect(conditions?["summary"] == "14°C, overcast, wind 3 Bft SW")

        let second = try await records.ok("records.catch.add", catchBody)["id"]!.string
        let gone = Event(
            seq: 2, type: "conditions.unavailable", userId: "alice", at: Date(),
            data: ["catchId": .string(second), "reason": "no weather data before 1940"])
        try await apply(records, gone)
        let unavailable = try await records.ok("records.catch.get", #"{"id":"\#(second)"}"#)["conditions"]
        #expect(unavailable?["status"] == "unavailable")
        #expect(unavailable?["reason"] == "no weather data before 1940")
        // An "unavailable" about a place the catch no longer has changes nothing.
        let third = try await records.ok("records.catch.add", catchBody)["id"]!.string
        let stale = Event(
            seq: 4, type: "conditions.unavailable", userId: "alice", at: Date(),
            data: [
                "catchId": .string(third), "reason": "provider refused", "latitude": 10.0, "longitude": 10.0,
                "hour": .string(WireTime.format(caughtAt)),
            ])
        try await apply(records, stale)
        #expect(try await records.ok("records.catch.get", #"{"id":"\#(third)"}"#)["conditions"]?["status"] == "pending")
        // A late "ready" does not overwrite a settled answer; unknown types are skipped.
        try await apply(records, ready(second, user: "alice", hour: caughtAt))
        try await apply(records, Event(seq: 3, type: "redacted", userId: "alice", at: Date(), data: [:]))
        #expect(try await records.ok("records.catch.get", #"{"id":"\#(second)"}"#)["conditions"]?["status"] == "unavailable")
    }

    /// An answer is for the catch's time when both round to the same hour (docs/weather-buckets.md:
    /// 14:29 → 14:00, 14:30 → 15:00). Within 30 minutes is not enough: an answer made for
    /// 14:10 (or for the hour 14:00) does not answer a catch moved to 14:30 or 14:35.
    @Test func anAnswerIsForTheCatchsHourNotForATimeNearIt() async throws {
        let records = try Harness()
        func catchAt(_ time: String) async throws -> String {
            let body = catchBody.replacingOccurrences(of: "}", with: #","caughtAt":"\#(time)"}"#)
            return try await records.ok("records.catch.add", body)["id"]!.string
        }
        func status(_ id: String) async throws -> String? {
            try await records.ok("records.catch.get", #"{"id":"\#(id)"}"#)["conditions"]?["status"]?.stringValue
        }
        func at(_ text: String) -> Date { WireTime.parse(text)! }
        // an "unavailable" made for the catch at 14:10, the catch since moved to 14:35
        let moved = try await catchAt("2026-05-04T14:35:00Z")
        try await apply(
            records,
            Event(
                seq: 1, type: "conditions.unavailable", userId: "alice", at: Date(),
                data: [
                    "catchId": .string(moved), "reason": "provider refused", "latitude": 59.3, "longitude": 18.1,
                    "hour": "2026-05-04T14:10:00Z",
                ]))
        #expect(try await status(moved) == "pending")
        // weather for the hour 14:00, the catch since moved to 14:30:00 (the hour 15:00)
        let half = try await catchAt("2026-05-04T14:30:00Z")
        try await apply(records, ready(half, user: "alice", hour: at("2026-05-04T14:00:00Z")))
        #expect(try await status(half) == "pending")
        try await apply(records, ready(half, user: "alice", hour: at("2026-05-04T15:00:00Z")))
        #expect(try await status(half) == "ready")
        // 14:29:59 is the hour 14:00
        let early = try await catchAt("2026-05-04T14:29:59Z")
        try await apply(records, ready(early, user: "alice", hour: at("2026-05-04T15:00:00Z")))
        #expect(try await status(early) == "pending")
        try await apply(records, ready(early, user: "alice", hour: at("2026-05-04T14:00:00Z")))
        #expect(try await status(early) == "ready")
    }

    @Test func catchHourRoundsHalfAnHourUpOnBothSidesOf1970() {
        let hour: Int64 = 3_600_000
        #expect(CatchHour.of(ms: 0) == 0)
        #expect(CatchHour.of(ms: hour / 2 - 1) == 0)
        #expect(CatchHour.of(ms: hour / 2) == 1)
        #expect(CatchHour.of(ms: -hour / 2) == 0)  // 23:30 on 31 December 1969 → midnight
        #expect(CatchHour.of(ms: -hour / 2 - 1) == -1)
        #expect(CatchHour.of(WireTime.parse("2026-05-04T14:29:59.999Z")!) == CatchHour.of(WireTime.parse("2026-05-04T14:00:00Z")!))
        #expect(CatchHour.of(WireTime.parse("2026-05-04T14:30:00Z")!) == CatchHour.of(WireTime.parse("2026-05-04T15:00:00Z")!))
        #expect(CatchHour.of(ms: Int64.max) == Int64.max / hour)  // no trap at the edge
    }
}
