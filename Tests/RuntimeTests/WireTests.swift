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
}
