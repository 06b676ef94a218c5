// Issue #17, item 4, through the real `logbook` binary: messages in the user's words.
import Foundation
import Testing

@Suite("the user's words end to end", .serialized, .timeLimit(.minutes(3)))
struct WordingEndToEndTests {
    @Test("negative values, durations, overlaps, --to as typed, --source, unknown services")
    func words() async throws {
        try await withStack { stack in
            // an unknown service is named at once, without waiting for a timeout
            let clock = ContinuousClock()
            let start = clock.now
            let nosuch = try await stack.logbook("call", "nosuch", "x")
            #expect(nosuch.status != 0)
            #expect(nosuch.stderr.contains("no service named \"nosuch\""), "\(nosuch.stderr)")
            #expect(clock.now - start < .seconds(4), "answered without waiting for a reply")

            try await stack.upAndRegister("wanda")
            let lunch = try await stack.logbook("expense", "add", "Lunch", "-5")
            #expect(lunch.status != 0)
            #expect(lunch.stderr.contains("amount: must be greater than 0 (got -5)"), "\(lunch.stderr)")
            #expect(!lunch.stderr.contains("Missing"), "\(lunch.stderr)")

            #expect(try await stack.logbook("car", "add", "Civic").status == 0)
            let volume = try await stack.logbook("fillup", "add", "--odometer", "100", "--volume", "-3", "--total", "10")
            #expect(volume.status != 0)
            #expect(volume.stderr.contains("must be greater than 0"), "\(volume.stderr)")
            #expect(!volume.stderr.contains("Missing value"), "\(volume.stderr)")

            #expect(try await stack.logbook("activity", "add", "Guitar").status == 0)
            let long = try await stack.logbook("activity", "add-time", "Guitar", "25h")
            #expect(long.stderr.contains("duration: must be at most 24 hours at once (got 25:00:00)"), "\(long.stderr)")
            #expect(try await stack.logbook("activity", "add-time", "Guitar", "1h").status == 0)
            let twice = try await stack.logbook("activity", "add-time", "Guitar", "1h")
            #expect(twice.status != 0)
            #expect(twice.stderr.contains("overlaps an entry already saved"), "\(twice.stderr)")
            #expect(twice.stderr.contains("(started)"), "the option's name, not startedAt: \(twice.stderr)")

            let backwards = try await stack.logbook("expense", "summary", "--from", "2026-11-02", "--to", "2026-11-01")
            #expect(backwards.status != 0)
            #expect(backwards.stderr.contains("(got --from 2026-11-02 --to 2026-11-01)"), "\(backwards.stderr)")
            let listed = try await stack.logbook("expense", "list", "--from", "2026-11-02", "--to", "2026-11-01")
            #expect(listed.stderr.contains("(got --from 2026-11-02 --to 2026-11-01)"), "\(listed.stderr)")

            // deleting an activity whose timer runs says the unsaved time goes with it
            #expect(try await stack.logbook("activity", "add", "Piano").status == 0)
            #expect(try await stack.logbook("timer", "start", "Piano").status == 0)
            let deleted = try await stack.logbook("activity", "delete", "Piano", "--yes")
            #expect(deleted.status == 0, "\(deleted.stderr)")
            #expect(deleted.stdout.contains("discarded its running timer's"), "\(deleted.stdout)")

            #expect(try await stack.logbook("attend", "in", "--source", "company").status == 0)
            let history = try await stack.logbook("attend", "history")
            #expect(history.stdout.contains("company"), "\(history.stdout)")
        }
    }
}
