// Ids, times and decoding errors: the small promises of the Wire module.
import Contracts
import Foundation
import Testing
import Wire

@Suite struct WireTests {
    @Test func idsAreValidUUIDv7AndStrictlyIncreasing() {
        let now = Date()
        let ids = (0..<10_000).map { _ in ID.make(at: now) }  // all in the same millisecond
        #expect(ids.allSatisfy(ID.isValid))
        #expect(ids.allSatisfy { $0[$0.index($0.startIndex, offsetBy: 14)] == "7" })
        #expect(ids == ids.sorted())
        #expect(Set(ids).count == ids.count)
        let later = ID.make(at: now.addingTimeInterval(1))
        #expect(later > ids.last!)
    }

    @Test func timesRoundTripWithOffsets() throws {
        let parsed = try #require(WireTime.parse("2026-05-01T16:45:00+02:00"))
        #expect(WireTime.format(parsed) == "2026-05-01T14:45:00Z")
        let fractional = try #require(WireTime.parse("2026-05-01T14:45:00.250Z"))
        #expect(WireTime.format(fractional) == "2026-05-01T14:45:00.250Z")
        #expect(WireTime.parse("2026-05-01 14:45") == nil)
        #expect(WireTime.parse("yesterday") == nil)
    }
}

@Suite struct TimeValueTests {
    @Test func anHourIsADollarAndCentsAreFloored() {
        #expect(TimeValue.cents(3_600_000) == 100)
        #expect(TimeValue.cents(35_999) == 0, "36 s make a cent; less is nothing")
        #expect(TimeValue.cents(36_000) == 1)
        #expect(TimeValue.cents(TimeValue.goalMs) == 1_000_000)
        #expect(TimeValue.dollars(0) == "$0.00")
        #expect(TimeValue.dollars(505) == "$5.05")
        #expect(TimeValue.dollars(123_456_789) == "$1,234,567.89")
        #expect(TimeValue.dollars(1_000_000) == "$10,000.00")
    }

    @Test("an activity, a net worth and analytics' summary show one worth for the same time, exactly")
    func oneWorthEverywhere() throws {
        let ms: Int64 = 5_400_000 + 18_000  // 1.5 h and 18 s: half a cent, floored
        let worth = TimeWorth(ms)
        #expect(worth.cents == 150 && worth.amount == "$1.50")
        // 5,418,000 / 36,000,000,000 = 0.0001505: 0.0002 to 4 decimals, half away from zero
        #expect(worth.progress == Decimal(string: "0.0002"))
        let timer = TimerState(
            activityId: "a", state: .idle, accumulatedMs: 0, runningSince: nil, startedAt: nil, elapsedMs: 0,
            at: Date(timeIntervalSince1970: 0))
        let activity = Activity(id: "a", name: "Chess", createdAt: Date(timeIntervalSince1970: 0), totalMs: ms, timer: timer)
        let summary = ActivitySummary(
            id: "a", name: "Chess", createdAt: Date(timeIntervalSince1970: 0), totalMs: ms, timer: .idle, timerElapsedMs: 0)
        let netWorth = NetWorth(totalMs: ms)
        #expect(TimeWorth(activity.totalMs) == worth)
        #expect((activity.cents, activity.amount, activity.progress) == (worth.cents, worth.amount, worth.progress))
        #expect((summary.cents, summary.amount, summary.progress) == (worth.cents, worth.amount, worth.progress))
        #expect((netWorth.cents, netWorth.amount, netWorth.progress) == (worth.cents, worth.amount, worth.progress))
        #expect(netWorth.goalCents == 1_000_000 && !summary.running)
        // the exact decimal travels as JSON text, not through a binary fraction
        #expect(String(decoding: try WireCoding.encode(netWorth), as: UTF8.self).contains("\"progress\":0.0002"))
    }
}
