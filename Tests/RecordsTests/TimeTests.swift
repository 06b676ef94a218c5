import Foundation
import Testing
import Wire

@Suite("Activities, timer and net worth")
struct TimeTests {
    @Test func activityNamesAreUniqueAmongActiveOnes() async throws {
        let records = try Harness()
        let piano = try await records.ok("records.activity.add", #"{"name":"Piano"}"#)
        #expect(piano["totalMs"] == 0)
        #expect(piano["amount"] == "$0.00")
        #expect(piano["timer"]?["state"] == "idle")
        let duplicate = try await records.fails("records.activity.add", #"{"name":" piano "}"#)
        #expect(duplicate.code == .alreadyExists)
        #expect(duplicate.message == #"activity "piano" already exists"#)
        // Another user may use the name; a deleted activity frees it.
        try await records.ok("records.activity.add", #"{"name":"Piano"}"#, as: "bob")
        try await records.ok("records.activity.delete", #"{"id":"\#(piano["id"]!.string)"}"#)
        try await records.ok("records.activity.add", #"{"name":"Piano"}"#)
        #expect(try await records.fails("records.activity.get", #"{"id":"\#(piano["id"]!.string)"}"#).code == .notFound)
        #expect(try await records.ok("records.activity.list").items.count == 1)
    }

    @Test(arguments: [
        (#"{"name":""}"#, "name", #"name: must be 1–60 characters (got "")"#),
        (#"{"name":"\#(String(repeating: "a", count: 61))"}"#, "name", "name: must be 1–60 characters (got \"\(String(repeating: "a", count: 61))\")"),
        (#"{"name":7}"#, "name", "name: expected a string"),
        (#"{}"#, "name", "name: is required"),
    ])
    func activityAddRefuses(body: String, field: String, message: String) async throws {
        let records = try Harness()
        let error = try await records.fails("records.activity.add", body)
        #expect(error.code == .invalidArgument)
        #expect(error.field == field)
        #expect(error.message == message)
    }

    @Test func timerSurvivesARestartAndSavesToTheLog() async throws {
        let scratch = try ScratchFile()
        defer { scratch.remove() }
        let clock = TestClock()
        var records: Harness? = try Harness(path: scratch.path, clock: clock)
        let activity = try await records!.activity()
        let body = #"{"activityId":"\#(activity)"}"#
        let started = try await records!.ok("records.timer.start", body)
        #expect(started["state"] == "running")
        #expect(started["elapsedMs"] == 0)

        // The process goes away while the timer runs; time passes; a new one opens the file.
        records = nil
        clock.advance(seconds: 90)
        records = try Harness(path: scratch.path, clock: clock)
        #expect(try await records!.ok("records.timer.get", body)["elapsedMs"] == 90_000)
        let paused = try await records!.ok("records.timer.pause", body)
        #expect(paused["state"] == "paused")
        #expect(paused["accumulatedMs"] == 90_000)

        // A paused timer stays paused across a restart.
        records = nil
        clock.advance(seconds: 600)
        records = try Harness(path: scratch.path, clock: clock)
        let stillPaused = try await records!.ok("records.timer.get", body)
        #expect(stillPaused["state"] == "paused")
        #expect(stillPaused["elapsedMs"] == 90_000)

        try await records!.ok("records.timer.resume", body)
        clock.advance(seconds: 30)
        let stopped = try await records!.ok("records.timer.stop", body)
        #expect(stopped["state"] == "stopped")
        #expect(stopped["elapsedMs"] == 120_000)
        clock.advance(seconds: 30)
        #expect(try await records!.ok("records.timer.get", body)["elapsedMs"] == 120_000)  // frozen

        let saved = try await records!.ok("records.timer.save", body)
        #expect(saved["entry"]?["durationMs"] == 120_000)
        #expect(saved["timer"]?["state"] == "idle")
        let log = try await records!.ok("records.time.list", body)
        #expect(log.items.map { $0["durationMs"]! } == [120_000])
        #expect(try await records!.ok("records.activity.get", #"{"id":"\#(activity)"}"#)["totalMs"] == 120_000)
        let worth = try await records!.ok("records.networth")
        #expect(worth["totalMs"] == 120_000)
        #expect(worth["cents"] == 3)  // 2 minutes = 3.33 cents, never rounded up
        #expect(worth["goalCents"] == 1_000_000)
    }

    @Test func netWorthKeepsTheTimeOfDeletedActivities() async throws {
        let records = try Harness()
        let a = try await records.activity("Piano")
        let b = try await records.activity("Chess")
        for (activity, hours) in [(a, 2.0), (b, 1.5)] {
            let body = #"{"activityId":"\#(activity)"}"#
            try await records.ok("records.timer.start", body)
            records.clock.advance(seconds: hours * 3600)
            try await records.ok("records.timer.pause", body)
            try await records.ok("records.timer.save", body)
        }
        #expect(try await records.ok("records.networth")["amount"] == "$3.50")
        try await records.ok("records.activity.delete", #"{"id":"\#(a)"}"#)
        let worth = try await records.ok("records.networth")
        #expect(worth["totalMs"] == 12_600_000)
        #expect(worth["cents"] == 350)
        #expect(try await records.ok("records.networth", as: "bob")["totalMs"] == 0)
        #expect(try await records.fails("records.timer.start", #"{"activityId":"\#(a)"}"#).code == .notFound)
    }

    @Test func invalidTransitionsAreRefused() async throws {
        let records = try Harness()
        let activity = try await records.activity()
        let body = #"{"activityId":"\#(activity)"}"#
        func refused(_ verb: String) async throws -> String {
            let error = try await records.fails("records.timer.\(verb)", body)
            #expect(error.code == .failedPrecondition, "\(verb)")
            return error.message
        }
        // idle
        #expect(try await refused("pause") == #"the timer of "Piano" is not running: start it first"#)
        #expect(try await refused("resume") == #"the timer of "Piano" has not been started: use start"#)
        #expect(try await refused("stop") == #"the timer of "Piano" has not been started"#)
        #expect(try await refused("save") == #"nothing to save: the timer of "Piano" is idle"#)
        #expect(try await refused("clear") == #"nothing to clear: the timer of "Piano" is idle"#)
        // running
        try await records.ok("records.timer.start", body)
        #expect(try await refused("start") == #"the timer of "Piano" is already running"#)
        #expect(try await refused("resume") == #"the timer of "Piano" is already running"#)
        #expect(try await refused("save") == #"the timer of "Piano" is running: pause or stop it before saving"#)
        // paused with nothing on it
        try await records.ok("records.timer.pause", body)
        #expect(try await refused("pause") == #"the timer of "Piano" is already paused"#)
        #expect(try await refused("start") == #"the timer of "Piano" is paused: resume it, or save or clear it first"#)
        #expect(try await refused("save") == #"nothing to save: the timer of "Piano" shows 0 ms"#)
        // stopped
        try await records.ok("records.timer.stop", body)
        #expect(try await refused("stop") == #"the timer of "Piano" is already stopped"#)
        #expect(try await refused("pause") == #"the timer of "Piano" is stopped: save or clear it"#)
        #expect(try await refused("resume") == #"the timer of "Piano" is stopped: save or clear it"#)
        #expect(try await refused("start") == #"the timer of "Piano" is stopped: save or clear it before starting again"#)
        // clear discards
        let cleared = try await records.ok("records.timer.clear", body)
        #expect(cleared["state"] == "idle")
        #expect(try await records.count("timer") == 0)
        #expect(try await records.count("timeEntry") == 0)
    }

    @Test func anotherUsersActivityAndTimerAreNotFound() async throws {
        let records = try Harness()
        let activity = try await records.activity(as: "bob")
        for method in [
            "records.activity.get", "records.activity.delete",
        ] {
            #expect(try await records.fails(method, #"{"id":"\#(activity)"}"#).code == .notFound, "\(method)")
        }
        for verb in ["start", "pause", "resume", "stop", "save", "clear", "get"] {
            let error = try await records.fails("records.timer.\(verb)", #"{"activityId":"\#(activity)"}"#)
            #expect(error.code == .notFound, "\(verb)")
            #expect(error.field == "activityId")
        }
        #expect(try await records.fails("records.time.list", #"{"activityId":"\#(activity)"}"#).code == .notFound)
        #expect(try await records.fails("records.timer.start", #"{"activityId":5}"#).field == "activityId")
    }
}

@Suite("Manual time entries")
struct ManualTimeTests {
    @Test func timePractisedWithoutTheTimerCountsLikeSavedTime() async throws {
        let records = try Harness()
        let piano = try await records.activity()
        let before = try await records.events().count
        let entry = try await records.ok(
            "records.time.add", #"{"activityId":"\#(piano)","durationMs":5400000}"#)
        #expect(entry["durationMs"] == 5_400_000)
        #expect(try await records.ok("records.networth")["totalMs"] == 5_400_000)
        let log = try await records.ok("records.time.list", #"{"activityId":"\#(piano)"}"#)
        #expect(log.items.count == 1)
        let events = try await records.events()
        #expect(events.count == before + 1)
        #expect(events.last?.type == "time.saved")
        #expect(events.last?.data["durationMs"] == 5_400_000)
        #expect(events.last?.data["fromTimer"] == false, "the timer is left as it was: analytics must not idle it")

        for (body, field) in [
            (#"{"activityId":"\#(piano)","durationMs":0}"#, "durationMs"),
            (#"{"activityId":"\#(piano)","durationMs":86400001}"#, "durationMs"),
            (#"{"activityId":"\#(piano)","durationMs":60000,"startedAt":"2099-01-01T00:00:00Z"}"#, "startedAt"),
        ] {
            let error = try await records.fails("records.time.add", body)
            #expect(error.code == .invalidArgument && error.field == field, "\(body): \(error)")
        }
        let foreign = try await records.fails(
            "records.time.add", #"{"activityId":"\#(piano)","durationMs":60000}"#, as: "bob")
        #expect(foreign.code == .notFound)
        #expect(try await records.ok("records.networth")["totalMs"] == 5_400_000, "nothing else was written")
    }

    @Test func anOverlappingEntryIsRefused() async throws {
        let records = try Harness()
        let piano = try await records.activity()
        // 10:00–11:00 on a past day
        try await records.ok(
            "records.time.add", #"{"activityId":"\#(piano)","durationMs":3600000,"startedAt":"2026-05-01T10:00:00Z"}"#)
        // 10:30–11:30 overlaps it
        let overlap = try await records.fails(
            "records.time.add", #"{"activityId":"\#(piano)","durationMs":3600000,"startedAt":"2026-05-01T10:30:00Z"}"#)
        #expect(overlap.code == .failedPrecondition)
        #expect(overlap.field == "startedAt")
        #expect(overlap.message.contains("overlaps an entry already saved"), "\(overlap.message)")
        // 11:00–12:00 touches it without overlapping; another activity may use the same hour
        try await records.ok(
            "records.time.add", #"{"activityId":"\#(piano)","durationMs":3600000,"startedAt":"2026-05-01T11:00:00Z"}"#)
        let guitar = try await records.activity("Guitar")
        try await records.ok(
            "records.time.add", #"{"activityId":"\#(guitar)","durationMs":3600000,"startedAt":"2026-05-01T10:30:00Z"}"#)
        // two entries "ending now" (no startedAt) overlap each other
        try await records.ok("records.time.add", #"{"activityId":"\#(piano)","durationMs":60000}"#)
        #expect(try await records.fails("records.time.add", #"{"activityId":"\#(piano)","durationMs":60000}"#).code
            == .failedPrecondition)
        #expect(try await records.ok("records.networth")["totalMs"] == 10_860_000)
    }

    @Test func anEntryOverlappingTheActivitysUnsavedTimerIsRefused() async throws {
        let clock = TestClock()
        let records = try Harness(clock: clock)
        let piano = try await records.activity()
        let timer = #"{"activityId":"\#(piano)"}"#
        try await records.ok("records.timer.start", timer)  // 12:00
        clock.advance(seconds: 3000)  // 12:50
        // 12:15–12:45, while the timer runs: the same practice twice once the timer is saved
        let during = #"{"activityId":"\#(piano)","durationMs":1800000,"startedAt":"2026-05-10T12:15:00Z"}"#
        for state in ["running", "paused", "stopped"] {
            if state == "paused" { try await records.ok("records.timer.pause", timer) }
            if state == "stopped" { try await records.ok("records.timer.stop", timer) }
            let refused = try await records.fails("records.time.add", during)
            #expect(refused.code == .failedPrecondition && refused.field == "startedAt", "\(state): \(refused.message)")
            #expect(refused.message.contains("overlaps this activity's timer (\(state)"), "\(refused.message)")
        }
        // before the timer started, and after it stopped: another session
        try await records.ok(
            "records.time.add", #"{"activityId":"\#(piano)","durationMs":1800000,"startedAt":"2026-05-10T11:00:00Z"}"#)
        clock.advance(seconds: 1200)  // 13:10; the timer stopped at 12:50
        try await records.ok(
            "records.time.add", #"{"activityId":"\#(piano)","durationMs":600000,"startedAt":"2026-05-10T12:55:00Z"}"#)
        // the timer's own time is saved once: 50 min, with the two other sessions
        try await records.ok("records.timer.save", timer)
        #expect(try await records.ok("records.networth")["totalMs"] == 5_400_000)
    }
}
