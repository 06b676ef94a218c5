// What every one-shot command does before and after its request, held to what it did when
// it went through Foundation (docs/performance.md, "The CLI's own work"): --timeout's default,
// columns padded by characters, and local times from the C library's zone.
import ArgumentParser
import Foundation
import Testing
import Wire

@testable import Gateway

@Suite struct StartupTests {
    @Test func theTimeoutIsFiveSecondsUnlessGivenAndItsDefaultIsInTheHelp() throws {
        #expect(try GlobalOptions.parse([]).duration == .seconds(5))
        #expect(try GlobalOptions.parse(["--timeout", "2.5"]).duration == .milliseconds(2500))
        #expect(throws: (any Error).self) { try GlobalOptions.parse(["--timeout", "0"]) }
        #expect(throws: (any Error).self) { try GlobalOptions.parse(["--timeout", "3601"]) }
        #expect(GlobalOptions.helpMessage().contains("(default: 5)"))
    }

    @Test func columnsArePaddedToTheWidestCellCountedInCharacters() {
        #expect(Output.table(["A", "B"], [["é", "x"], ["😀😀", "y"]]) == "A   B\né   x\n😀😀  y")
        #expect(Output.fields([("id", "1"), ("e-mail", "-")]) == "id:      1\ne-mail:  -")
        #expect(Output.pad("abc", to: 2) == "abc")
    }

    @Test func localTimesInThisMachinesZoneAreFoundationsToo() {
        // (the zone is whatever this machine has; TimeZoneTests runs the CLI in Asia/Tokyo)
        var dates: [Date] = []
        for hour in stride(from: 0, to: 24 * 800, by: 7) {
            dates.append(Date(timeIntervalSince1970: 1_767_225_600 + Double(hour) * 3600 + 59.5))
        }
        for date in dates {
            #expect(TimeText.local(date) == TimeText.formatted(date, timeZone: .current, seconds: false), "\(date)")
            #expect(TimeText.local(date, seconds: true) == TimeText.formatted(date, timeZone: .current, seconds: true))
        }
    }
}
