// Expenses per day, ISO week, month, year and category; attendance hours with open
// entries; time totals with a deleted activity and a running timer.
import Foundation
import Runtime
import Testing
import Wire

@testable import AnalyticsService

func expense(_ id: String, _ amount: Int64, on date: Date, currency: String = "USD", category: String? = nil)
    -> JSONValue
{
    var object: [String: JSONValue] = [
        "id": .string(id), "name": .string("item \(id)"), "amountMinor": .number(.init(amount)),
        "currency": .string(currency), "date": time(date), "createdAt": time(date), "updatedAt": time(date),
    ]
    if let category { object["category"] = .string(category) }
    return .object(object)
}

func entry(_ id: String, _ kind: String, _ at: Date) -> JSONValue {
    [
        "id": .string(id), "kind": .string(kind), "at": time(at), "source": "cli", "correction": false,
        "createdAt": time(at),
    ]
}

extension JSONValue {
    func currency(_ code: String) -> JSONValue? {
        self["currencies"]?.arrayValue?.first { $0["currency"]?.stringValue == code }
    }

    /// key → totalMinor (or workedMs) of a summary's groups.
    func groups(_ field: String = "totalMinor") -> [String: Int] {
        var result: [String: Int] = [:]
        for group in self["groups"]?.arrayValue ?? [] { result[group["key"]!.stringValue!] = group[field]?.intValue }
        return result
    }
}

@Suite struct ExpenseTests {
    func stocked() async throws -> Harness {
        let h = try Harness()
        try await h.feed("expense.created", expense("e1", 1200, on: day(0, hour: 12), category: "food"))
        try await h.feed("expense.created", expense("e2", 800, on: day(0, hour: 18), category: "transport"))
        try await h.feed("expense.created", expense("e3", 500, on: day(2), category: "food"))
        try await h.feed("expense.created", expense("e4", 3000, on: day(7)))
        try await h.feed("expense.created", expense("e5", 1000, on: day(29, hour: 9), category: "food"))
        try await h.feed("expense.created", expense("e6", 2000, on: day(1), currency: "EUR", category: "food"))
        return h
    }

    func summary(_ h: Harness, _ body: JSONValue) async throws -> JSONValue {
        try await h.call("analytics.expense.summary", body)
    }

    @Test func categoriesAreGroupedWhateverTheirCase() async throws {
        let h = try Harness()
        try await h.feed("expense.created", expense("e1", 1200, on: day(0), category: "Food"))
        try await h.feed("expense.created", expense("e2", 800, on: day(1), category: "food"))
        try await h.feed("expense.created", expense("e3", 500, on: day(2), category: "food"))
        try await h.feed("expense.created", expense("e4", 300, on: day(3), category: "Transport"))
        let usd = try #require(try await h.call("analytics.expense.summary", ["by": "category"]).currency("USD"))
        // one group, in the spelling most of its expenses use
        #expect(usd.groups() == ["food": 2500, "Transport": 300])
        #expect(usd["groups"]?.arrayValue?.first?["category"] == "food")
        #expect(usd["groups"]?.arrayValue?.first?["count"] == 3)
        // a tie goes to the spelling seen first (the earliest day)
        try await h.feed("expense.created", expense("e5", 100, on: day(4), category: "FOOD"))
        try await h.feed("expense.created", expense("e6", 100, on: day(5), category: "Food"))
        let tied = try #require(try await h.call("analytics.expense.summary", ["by": "category"]).currency("USD"))
        #expect(tied.groups() == ["Food": 2700, "Transport": 300])
    }

    /// Analytics does not trust a producer's ranges: amounts that add up past Int64 (records
    /// allows 10^15 each, so 9,224 of them on one day) must not stop the projection or the
    /// service; the summary says the total is too large instead of a wrong or trapping sum.
    @Test func totalsBeyondInt64AreRefusedNotFatal() async throws {
        let h = try Harness()
        for (i, amount) in [Int64(4_000_000_000_000_000_000), 4_000_000_000_000_000_000, 4_000_000_000_000_000_000].enumerated() {
            try await h.feed("expense.created", expense("big\(i)", amount, on: day(0, hour: Double(12 + i)), category: "food"))
        }
        try await h.feed("expense.created", expense("small", 500, on: day(1), category: "food"))
        for by in ["day", "month", "category"] {
            await #expect(throws: ServiceError.self, "\(by)") { try await summary(h, ["by": .string(by)]) }
        }
        // A change of time zone counts the days again from the expenses (SQLite's sum() would
        // have failed the whole event, and the projection would have stopped at it).
        try await h.feed(AuthEvents.userSettingsChanged, ["userId": "alice", "timeZone": "Asia/Tokyo"], from: "auth")
        let refused = await #expect(throws: ServiceError.self) { try await summary(h, ["by": "month"]) }
        #expect(refused?.code == .failedPrecondition)
        #expect(refused?.message.contains("USD expenses in this range add up to more than") == true)
        // Deleting one brings the day back in range, and the sums are exact again.
        try await h.feed("expense.deleted", ["id": "big0", "userId": "alice"])
        let usd = try #require(try await summary(h, ["by": "day"]).currency("USD"))
        #expect(usd["totalMinor"]?.jsonText == "8000000000000000500")
    }

    /// A total past Int64 that an expense taken away brings back under it: SQLite stores the
    /// rounded REAL as an INTEGER, which must not be taken as the exact sum.
    @Test func aTotalBackUnderInt64IsExactNotRounded() async throws {
        let h = try Harness()
        try await h.feed("expense.created", expense("big", 9_223_372_036_854_775_000, on: day(0, hour: 12), category: "food"))
        try await h.feed("expense.created", expense("tip", 1_001, on: day(0, hour: 13), category: "food"))
        await #expect(throws: ServiceError.self) { try await summary(h, ["by": "day"]) }
        try await h.feed("expense.deleted", ["id": "tip", "userId": "alice"])
        let usd = try #require(try await summary(h, ["by": "day"]).currency("USD"))
        #expect(usd["totalMinor"]?.jsonText == "9223372036854775000")
    }

    @Test func totalsPerPeriodAndCategory() async throws {
        let h = try await stocked()
        var usd = try #require(try await summary(h, ["by": "day"]).currency("USD"))
        #expect(usd.groups() == ["2026-05-04": 2000, "2026-05-06": 500, "2026-05-11": 3000, "2026-06-02": 1000])
        #expect(usd["totalMinor"] == 6500)
        #expect(usd["count"] == 5)
        let byDay = try await summary(h, ["by": "day"])
        #expect(byDay["from"] == "2026-05-04")
        #expect(byDay["to"] == "2026-06-03")
        #expect(byDay["days"] == 30)
        #expect(usd.decimal("averagePerDayMinor") == dec("216.67"))
        usd = try #require(try await summary(h, ["by": "week"]).currency("USD"))
        #expect(usd.groups() == ["2026-W19": 2500, "2026-W20": 3000, "2026-W23": 1000])
        usd = try #require(try await summary(h, ["by": "month"]).currency("USD"))
        #expect(usd.groups() == ["2026-05": 5500, "2026-06": 1000])
        usd = try #require(try await summary(h, ["by": "year"]).currency("USD"))
        #expect(usd.groups() == ["2026": 6500])
        usd = try #require(try await summary(h, ["by": "category"]).currency("USD"))
        #expect(usd["groups"]?.arrayValue?.map { $0["key"]?.stringValue } == ["uncategorized", "food", "transport"])
        #expect(usd.groups() == ["uncategorized": 3000, "food": 2700, "transport": 800])
        // never mixed with euros
        let eur = try #require(try await summary(h, ["by": "category"]).currency("EUR"))
        #expect(eur.groups() == ["food": 2000])
    }

    @Test func rangeAverageAndLargest() async throws {
        let h = try await stocked()
        let may = try await summary(h, ["by": "month", "from": "2026-05-01", "to": "2026-06-01"])
        #expect(may["days"] == 31)
        let usd = try #require(may.currency("USD"))
        #expect(usd["totalMinor"] == 5500)
        #expect(usd.decimal("averagePerDayMinor") == dec("177.42"))
        #expect(usd["largest"]?.arrayValue?.map { $0["id"]?.stringValue } == ["e4", "e1", "e2", "e3"])
        // a time with an offset works as well as a date
        let week = try await summary(
            h, ["by": "day", "from": "2026-05-04T00:00:00Z", "to": "2026-05-06T12:00:00+00:00"])
        #expect(week.currency("USD")?.groups() == ["2026-05-04": 2000, "2026-05-06": 500])
        #expect(week["days"] == 3)
        // A range without expenses summarised nothing: days 0, as documented.
        let empty = try await summary(h, ["by": "month", "from": "2027-01-01", "to": "2027-02-01"])
        #expect(empty["days"] == 0)
        #expect(empty["currencies"]?.arrayValue?.isEmpty == true)
        #expect(empty["from"] == nil && empty["to"] == nil)
    }

    @Test func editsAndDeletesMoveTheTotals() async throws {
        let h = try await stocked()
        try await h.feed("expense.updated", expense("e1", 1500, on: day(1), category: "food"))
        try await h.feed("expense.deleted", ["id": "e2", "userId": "alice"])
        let usd = try #require(try await summary(h, ["by": "day"]).currency("USD"))
        #expect(usd.groups() == ["2026-05-05": 1500, "2026-05-06": 500, "2026-05-11": 3000, "2026-06-02": 1000])
        let rows = try await h.read { db in
            try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM expenseDay WHERE day = 20577")
        }
        #expect(rows == 0)  // 2026-05-04 emptied
    }

    @Test func invalidArguments() async throws {
        let h = try await stocked()
        #expect(try await h.failure("analytics.expense.summary", ["by": "fortnight"]).field == "by")
        #expect(try await h.failure("analytics.expense.summary", ["from": "May 1st"]).field == "from")
        #expect(try await h.failure("analytics.expense.summary", ["from": "2026-02-30"]).field == "from")
        #expect(
            try await h.failure("analytics.expense.summary", ["from": "2026-05-02", "to": "2026-05-01"]).field == "to")
        // two times in one day: `to` before (or at) `from` is not after it, though both cover that day
        for to in ["2026-05-04T12:00:00Z", "2026-05-04T18:00:00Z"] {
            #expect(
                try await h.failure("analytics.expense.summary", ["from": "2026-05-04T18:00:00Z", "to": .string(to)])
                    .field == "to")
        }
        _ = try await h.call("analytics.expense.summary", ["from": "2026-05-04T12:00:00Z", "to": "2026-05-04T18:00:00Z"])
        _ = try await h.call("analytics.expense.summary", ["from": "2026-05-04", "to": "2026-05-04T00:00:01Z"])
        let empty = try await h.call("analytics.expense.summary", ["by": "day"], user: "bob")
        #expect(empty["currencies"]?.arrayValue == [])
    }
}

@Suite struct AttendanceTests {
    func stocked() async throws -> Harness {
        let h = try Harness()
        try await h.feed("attendance.created", entry("a1", "arrival", day(0, hour: 9)))
        try await h.feed("attendance.created", entry("d1", "departure", day(0, hour: 17.5)))
        try await h.feed("attendance.created", entry("a2", "arrival", day(1, hour: 22)))
        try await h.feed("attendance.created", entry("d2", "departure", day(2, hour: 6)))
        try await h.feed("attendance.created", entry("a3", "arrival", day(3, hour: 9)))  // forgot to leave
        try await h.feed("attendance.created", entry("a4", "arrival", day(3, hour: 10)))
        try await h.feed("attendance.created", entry("d4", "departure", day(3, hour: 12)))
        try await h.feed("attendance.created", entry("d5", "departure", day(4, hour: 12)))  // never arrived
        try await h.feed("attendance.created", entry("a6", "arrival", day(7, hour: 8)))  // at work now
        return h
    }

    @Test func hoursPerDayAndWeekWithOpenEntries() async throws {
        let h = try await stocked()
        let days = try await h.call("analytics.attendance.hours", ["by": "day"])
        #expect(
            days.groups("workedMs") == [
                "2026-05-04": 30_600_000, "2026-05-05": 7_200_000, "2026-05-06": 21_600_000, "2026-05-07": 7_200_000,
            ])
        #expect(days["groups"]?.arrayValue?.first?.decimal("hours") == dec("8.5"))
        #expect(days.decimal("totalHours") == dec("18.5"))
        let open = try #require(days["open"]?.arrayValue)
        #expect(open.map { $0["id"]?.stringValue } == ["a6", "d5", "a3"])
        #expect(open[0]["reason"] == "still open: no departure yet")
        #expect(open[1]["reason"] == "departure without an arrival before it")
        #expect(open[2]["reason"] == "arrival without a departure after it")
        #expect(days["latestArrival"]?["id"] == "a6")
        #expect(days["latestDeparture"]?["id"] == "d5")
        let weeks = try await h.call("analytics.attendance.hours", ["by": "week"])
        #expect(weeks.groups("workedMs") == ["2026-W19": 66_600_000])
        let ranged = try await h.call(
            "analytics.attendance.hours", ["by": "day", "from": "2026-05-06", "to": "2026-05-08"])
        #expect(ranged.groups("workedMs") == ["2026-05-06": 21_600_000, "2026-05-07": 7_200_000])
        #expect(ranged["open"]?.arrayValue?.map { $0["id"]?.stringValue } == ["a3"])
    }

    @Test func insertsAndDeletesRepairThePairs() async throws {
        let h = try await stocked()
        try await h.feed(
            "attendance.deleted", ["id": "d1", "userId": "alice", "kind": "departure", "at": time(day(0, hour: 17.5))])
        var days = try await h.call("analytics.attendance.hours", ["by": "day"])
        #expect(days.groups("workedMs")["2026-05-04"] == nil)
        #expect(days["open"]?.arrayValue?.contains { $0["id"] == "a1" } == true)
        // A departure in the night splits a2 → d2: a2 → d3 pairs, d2 is left alone.
        try await h.feed("attendance.created", entry("d3", "departure", day(2, hour: 1)))
        days = try await h.call("analytics.attendance.hours", ["by": "day"])
        #expect(days.groups("workedMs")["2026-05-05"] == 7_200_000)
        #expect(days.groups("workedMs")["2026-05-06"] == 3_600_000)
        #expect(days["open"]?.arrayValue?.contains { $0["id"] == "d2" } == true)
        try await h.feed(
            "attendance.deleted", ["id": "d3", "userId": "alice", "kind": "departure", "at": time(day(2, hour: 1))])
        try await h.feed("attendance.created", entry("d1", "departure", day(0, hour: 17.5)))
        let again = try await h.call("analytics.attendance.hours", ["by": "day"])
        let original = try await stocked().call("analytics.attendance.hours", ["by": "day"])
        #expect(again == original)
        #expect(try await h.failure("analytics.attendance.hours", ["by": "month"]).field == "by")
    }
}

@Suite struct TimeTests {
    @Test func totalsProgressNetWorthAndTimers() async throws {
        let h = try Harness(now: day(10))
        try await h.feed("activity.created", ["id": "guitar", "name": "Guitar", "createdAt": time(day(0))])
        try await h.feed("activity.created", ["id": "chess", "name": "Chess", "createdAt": time(day(1))])
        func saved(_ id: String, _ activity: String, _ ms: Int64) -> JSONValue {
            [
                "id": .string(id), "userId": "alice", "activityId": .string(activity),
                "durationMs": .number(.init(ms)),
                "startedAt": time(day(2)), "savedAt": time(day(2)),
            ]
        }
        try await h.feed("time.saved", saved("t1", "guitar", 7_200_000))
        try await h.feed("time.saved", saved("t2", "chess", 5_400_000))
        try await h.feed("time.saved", saved("t3", "guitar", 1_800_000))
        try await h.feed(
            "timer.changed",
            [
                "activityId": "chess", "state": "running", "accumulatedMs": 60_000,
                "runningSince": time(day(10).addingTimeInterval(-600)), "startedAt": time(day(9)), "elapsedMs": 60_000,
                "at": time(day(10).addingTimeInterval(-600)),
            ])
        try await h.feed(
            "activity.deleted", ["id": "guitar", "userId": "alice", "name": "Guitar", "totalMs": 9_000_000])
        let summary = try await h.call("analytics.time.summary")
        let activities = try #require(summary["activities"]?.arrayValue)
        #expect(activities.count == 1)
        #expect(activities[0]["name"] == "Chess")
        #expect(activities[0]["totalMs"] == 5_400_000)
        #expect(activities[0]["cents"] == 150)
        #expect(activities[0]["amount"] == "$1.50")
        #expect(activities[0].decimal("progress") == dec("0.0002"))
        #expect(activities[0]["running"] == true)
        #expect(activities[0]["timerElapsedMs"] == 660_000)
        #expect(summary["running"] == ["chess"])
        // net worth keeps the deleted activity's 2.5 hours
        #expect(summary["netWorth"]?["totalMs"] == 14_400_000)
        #expect(summary["netWorth"]?["amount"] == "$4.00")
        // Time added by hand (`records.time.add`) is counted and leaves the timer running.
        let manual: JSONValue = [
            "id": "t3b", "userId": "alice", "activityId": "chess", "durationMs": 600_000, "startedAt": time(day(3)),
            "savedAt": time(day(3)), "fromTimer": false,
        ]
        try await h.feed("time.saved", manual)
        let added = try await h.call("analytics.time.summary")
        #expect(added["running"] == ["chess"])
        #expect(added["activities"]?.arrayValue?.first?["timer"] == "running")
        #expect(added["activities"]?.arrayValue?.first?["totalMs"] == 6_000_000)
        #expect(added["netWorth"]?["totalMs"] == 15_000_000)
        // A save of the timer (`fromTimer` true, or absent in events from before the field)
        // leaves it idle; a replayed save is not counted twice.
        let t4 = try await h.feed("time.saved", saved("t4", "chess", 660_000))
        try await h.service.host.database.write { db in try AnalyticsService.applyRecordsEvent(db, t4) }
        let after = try await h.call("analytics.time.summary")
        #expect(after["running"] == [])
        #expect(after["activities"]?.arrayValue?.first?["timer"] == "idle")
        #expect(after["netWorth"]?["totalMs"] == 15_660_000)
    }
}
