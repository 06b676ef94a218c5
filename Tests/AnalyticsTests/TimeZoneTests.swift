// Days in the user's own time zone (issue #17, item 1): expenses and worked hours are
// counted in the zone auth publishes for the user, a change of zone recounts them, and the
// `from`/`to` range is read as the user's days.
import Foundation
import Runtime
import Testing
import Wire

@testable import AnalyticsService

func registered(_ user: String, zone: String?) -> JSONValue {
    var object: [String: JSONValue] = ["userId": .string(user), "username": .string(user)]
    if let zone { object["timeZone"] = .string(zone) }
    return .object(object)
}

/// 2026-11-01T00:00:00+09:00 (Tokyo midnight) = 2026-10-31T15:00:00Z.
let tokyoNovemberFirst = WireTime.parse("2026-10-31T15:00:00Z")!

@Suite struct TimeZoneTests {
    @Test func tokyoRentIsInNovember() async throws {
        let h = try Harness()
        try await h.feed("user.registered", registered("alice", zone: "Asia/Tokyo"), from: "auth")
        try await h.feed("expense.created", expense("rent", 100_000, on: tokyoNovemberFirst, category: "home"))
        let byMonth = try await h.call("analytics.expense.summary", ["by": "month"])
        #expect(byMonth["timeZone"] == "Asia/Tokyo")
        #expect(try #require(byMonth.currency("USD")).groups() == ["2026-11": 100_000])
        // the range the issue typed: --from 2026-11-01 --to 2026-11-30 (the CLI sends to: 12-01)
        let november = try await h.call(
            "analytics.expense.summary", ["by": "day", "from": "2026-11-01", "to": "2026-12-01"])
        #expect(try #require(november.currency("USD")).groups() == ["2026-11-01": 100_000])
        #expect(november["from"] == "2026-11-01")
        // October holds nothing
        let october = try await h.call(
            "analytics.expense.summary", ["by": "day", "from": "2026-10-01", "to": "2026-11-01"])
        #expect(october["currencies"]?.arrayValue?.isEmpty == true)
        // a time with an offset is read as the local day it falls in
        let fromTime = try await h.call(
            "analytics.expense.summary", ["by": "day", "from": "2026-10-31T15:00:00Z", "to": "2026-11-02"])
        #expect(try #require(fromTime.currency("USD")).groups() == ["2026-11-01": 100_000])
    }

    @Test func withoutAZoneDaysAreUTC() async throws {
        let h = try Harness()
        try await h.feed("expense.created", expense("rent", 100_000, on: tokyoNovemberFirst))
        let byMonth = try await h.call("analytics.expense.summary", ["by": "month"])
        #expect(byMonth["timeZone"] == "UTC")
        #expect(try #require(byMonth.currency("USD")).groups() == ["2026-10": 100_000])
    }

    @Test func changingTheZoneRecountsExpensesAndHours() async throws {
        let h = try Harness()
        // the records arrive before auth's registration (two independent streams)
        try await h.feed("expense.created", expense("rent", 100_000, on: tokyoNovemberFirst))
        try await h.feed("expense.created", expense("tea", 300, on: tokyoNovemberFirst.addingTimeInterval(3_600)))
        // 22:00–02:00 Tokyo time on the night of Nov 1 → 2
        let arrive = WireTime.parse("2026-11-01T13:00:00Z")!
        try await h.feed("attendance.created", entry("in1", "arrival", arrive))
        try await h.feed("attendance.created", entry("out1", "departure", arrive.addingTimeInterval(4 * 3_600)))
        var hours = try await h.call("analytics.attendance.hours", ["by": "day"])
        #expect(hours.groups("workedMs") == ["2026-11-01": 4 * 3_600_000])
        try await h.feed("user.registered", registered("alice", zone: "Asia/Tokyo"), from: "auth")
        let usd = try #require(try await h.call("analytics.expense.summary", ["by": "day"]).currency("USD"))
        #expect(usd.groups() == ["2026-11-01": 100_300])
        hours = try await h.call("analytics.attendance.hours", ["by": "day"])
        #expect(hours["timeZone"] == "Asia/Tokyo")
        #expect(hours.groups("workedMs") == ["2026-11-01": 2 * 3_600_000, "2026-11-02": 2 * 3_600_000])
        // back to UTC through a settings change
        try await h.feed(
            AuthEvents.userSettingsChanged, ["userId": "alice", "timeZone": "Europe/London"], from: "auth")
        hours = try await h.call("analytics.attendance.hours", ["by": "day"])
        #expect(hours.groups("workedMs") == ["2026-11-01": 4 * 3_600_000])
        let london = try #require(try await h.call("analytics.expense.summary", ["by": "day"]).currency("USD"))
        #expect(london.groups() == ["2026-10-31": 100_300])
        // an expense added later lands in the current zone, and deleting it takes it back out
        try await h.feed("expense.created", expense("late", 50, on: tokyoNovemberFirst))
        try await h.feed("expense.deleted", ["id": "late", "userId": "alice"])
        let after = try #require(try await h.call("analytics.expense.summary", ["by": "day"]).currency("USD"))
        #expect(after.groups() == ["2026-10-31": 100_300])
        // another user is untouched
        try await h.feed("expense.created", expense("b1", 700, on: tokyoNovemberFirst), user: "bob")
        let bob = try #require(try await h.call("analytics.expense.summary", ["by": "day"], user: "bob").currency("USD"))
        #expect(bob.groups() == ["2026-10-31": 700])
    }

    @Test func aShiftOverADaylightSavingNightIsSplitAtLocalMidnight() async throws {
        let h = try Harness()
        try await h.feed("user.registered", registered("alice", zone: "Europe/Oslo"), from: "auth")
        // Oslo leaves summer time on 2026-10-25 at 03:00 CEST → 02:00 CET: that day has 25 hours.
        // 22:00 CEST Oct 24 (20:00Z) to 06:00 CET Oct 25 (05:00Z): 2 h before midnight, 7 h after.
        try await h.feed("attendance.created", entry("in", "arrival", WireTime.parse("2026-10-24T20:00:00Z")!))
        try await h.feed("attendance.created", entry("out", "departure", WireTime.parse("2026-10-25T05:00:00Z")!))
        let hours = try await h.call("analytics.attendance.hours", ["by": "day"])
        #expect(hours.groups("workedMs") == ["2026-10-24": 2 * 3_600_000, "2026-10-25": 7 * 3_600_000])
    }

    @Test func localDayEdges() {
        let oslo = LocalDays.zone(named: "Europe/Oslo")!
        let day = LocalDays.parse(date: "2026-10-25")!
        #expect(LocalDays.start(ofDay: day, in: oslo) == WireTime.parse("2026-10-24T22:00:00Z")!.ms)
        #expect(LocalDays.start(ofDay: day + 1, in: oslo) == WireTime.parse("2026-10-25T23:00:00Z")!.ms)
        #expect(LocalDays.text(LocalDays.day(ms: tokyoNovemberFirst.ms, in: LocalDays.zone(named: "Asia/Tokyo")!)) == "2026-11-01")
        // Samoa skipped 2011-12-30 entirely: that day's first instant is the 31st's midnight
        let apia = LocalDays.zone(named: "Pacific/Apia")!
        let skipped = LocalDays.parse(date: "2011-12-30")!
        #expect(LocalDays.start(ofDay: skipped, in: apia) == LocalDays.start(ofDay: skipped + 1, in: apia))
        #expect(LocalDays.zone(named: "CEST") == nil)
        #expect(LocalDays.zone(named: "Mars/Olympus") == nil)
        #expect(LocalDays.zone(named: "UTC") != nil)
        #expect(LocalDays.name(of: LocalDays.zone(named: "UTC")!) == "UTC")
    }
}
