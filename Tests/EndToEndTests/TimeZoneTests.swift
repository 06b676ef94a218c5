// Issue #17, item 1, through the real `logbook` binary and real services: a user in Tokyo
// adds November's rent at Tokyo midnight; the summary, its November range and the list all
// put it on 1 November, worked hours split at Tokyo's midnight, and a change of the
// account's zone recounts the days.
import Foundation
import Testing

@Suite("time zones end to end", .serialized, .timeLimit(.minutes(3)))
struct TimeZoneEndToEndTests {
    @Test("TZ=Asia/Tokyo: expense list and summary agree on the day")
    func tokyo() async throws {
        try await withStack(environment: ["TZ": "Asia/Tokyo"]) { stack in
            try await stack.upAndRegister("kenji")
            let me = try await stack.object("whoami")
            #expect(me["timeZone"] as? String == "Asia/Tokyo", "\(me)")
            let added = try await stack.logbook("expense", "add", "Rent", "1000", "--date", "2026-11-01")
            try #require(added.status == 0, "\(added.stderr)")
            let list = try await stack.logbook("expense", "list", "--all")
            // Tokyo midnight, as the CLI reads the zone (the C library, TZ)
            #expect(list.stdout.contains("2026-11-01 00:00"), "\(list.stdout)")

            var byMonth = ""
            let counted = try await stack.eventually {
                byMonth = try await stack.logbook("expense", "summary").stdout
                return byMonth.contains("2026-11")
            }
            #expect(counted, "summary:\n\(byMonth)")
            #expect(!byMonth.contains("2026-10"), "\(byMonth)")
            let november = try await stack.logbook("expense", "summary", "--from", "2026-11-01", "--to", "2026-11-30")
            #expect(november.status == 0, "\(november.stderr)")
            #expect(november.stdout.contains("$1,000.00"), "\(november.stdout)")
            #expect(!november.stdout.contains("no expenses"), "\(november.stdout)")
            #expect(november.stdout.contains("2026-11-01 to 2026-11-30"), "\(november.stdout)")

            // a shift from 22:00 to 02:00 Tokyo time is split at Tokyo's midnight
            #expect(try await stack.logbook("attend", "in", "--at", "2026-11-02 22:00").status == 0)
            #expect(try await stack.logbook("attend", "out", "--at", "2026-11-03 02:00").status == 0)
            var hours = ""
            let split = try await stack.eventually {
                hours = try await stack.logbook("attend", "hours", "--csv").stdout
                return hours.contains("2026-11-03")
            }
            #expect(split, "hours:\n\(hours)")
            #expect(hours.contains("2026-11-02,7200000"), "\(hours)")
            #expect(hours.contains("2026-11-03,7200000"), "\(hours)")

            // the account moves to UTC: the same rent is now October's, and the CLI says why
            let set = try await stack.logbook("settings", "time-zone", "UTC")
            #expect(set.status == 0, "\(set.stderr)")
            #expect(set.stdout.contains("time zone set to UTC"), "\(set.stdout)")
            #expect(try await stack.object("whoami")["timeZone"] as? String == "UTC")
            var moved = ""
            let recounted = try await stack.eventually {
                moved = try await stack.logbook("expense", "summary").stdout
                return moved.contains("2026-10")
            }
            #expect(recounted, "summary after the change:\n\(moved)")
            #expect(moved.contains("days are counted in UTC"), "\(moved)")
            let refused = try await stack.logbook("settings", "time-zone", "Mars/Olympus")
            #expect(refused.status != 0)
            #expect(refused.stderr.contains("timeZone: must be an IANA time zone"), "\(refused.stderr)")
        }
    }
}
