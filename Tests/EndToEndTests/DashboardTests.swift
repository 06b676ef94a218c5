// `logbook dashboard` through the real binary and stack: every section with every service
// up; a stopped service's sections marked unavailable (exit 9) while the rest shows; a
// frozen service (SIGSTOP) costs the page about one deadline, not the sum of its calls, and
// its sections show their last copy marked stale.
// Analytics may not be installed on this branch: its sections must then say so, not fail.
import Foundation
import Testing

@Suite("logbook dashboard", .serialized, .timeLimit(.minutes(4)))
struct DashboardTests {
    static let password = "correct horse battery staple"

    /// A stack with a user who has a car, fill-ups, an expense, a running timer, a catch and
    /// an arrival.
    func populated(_ stack: TestStack) async throws {
        let up = try await stack.logbook("stack", "up")
        try #require(up.status == 0, "stack up failed: \(up.stderr)")
        let register = try await stack.logbook("register", "dana", "--password-stdin", stdin: Self.password + "\n")
        try #require(register.status == 0, "\(register.stderr)")
        for arguments in [
            ["car", "add", "Civic"],
            ["fillup", "add", "--date", "2026-05-01 10:00", "--odometer", "1000", "--volume", "10", "--total", "30"],
            ["fillup", "add", "--date", "2026-05-05 10:00", "--odometer", "1300", "--volume", "10", "--total", "31"],
            ["expense", "add", "Lunch", "12.50"],
            ["activity", "add", "Piano"],
            ["timer", "start", "Piano"],
            [
                "catch", "add", "--species", "Pike", "--weight", "2.5", "--bait", "spoon", "--water", "fresh", "--lat",
                "59.33", "--lon", "18.07",
            ],
            ["attend", "in"],
        ] {
            let result = try await stack.logbook(arguments: arguments)
            try #require(result.status == 0, "logbook \(arguments.joined(separator: " ")): \(result.stderr)")
        }
    }

    func dashboard(_ stack: TestStack, deadline: Int) async throws -> (CommandResult, Duration) {
        let clock = ContinuousClock()
        let start = clock.now
        let result = try await stack.logbook("dashboard", "--json", "--deadline", "\(deadline)")
        return (result, clock.now - start)
    }

    func sections(_ result: CommandResult) -> [String: [String: Any]] {
        result.object["sections"] as? [String: [String: Any]] ?? [:]
    }

    var analyticsInstalled: Bool {
        (try? TestStack.findBinaries()).map { FileManager.default.isExecutableFile(atPath: $0 + "/analytics") } ?? false
    }

    @Test("every service up: every section, in about the time of the slowest call")
    func allUp() async throws {
        try await withStack { stack in
            try await populated(stack)
            _ = try await dashboard(stack, deadline: 1500)  // warm: first quote is the intro
            let (result, wall) = try await dashboard(stack, deadline: 1500)
            #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
            let sections = sections(result)
            for name in ["account", "timers", "wallet", "catch", "quote"] {
                #expect(sections[name]?["status"] as? String == "ok", "\(name): \(sections[name] ?? [:])")
            }
            for name in ["fuel", "spending", "office"] {
                #expect(
                    sections[name]?["status"] as? String == (analyticsInstalled ? "ok" : "not installed"), "\(name)")
            }
            let timers = (sections["timers"]?["data"] as? [String: Any])?["running"] as? [[String: Any]]
            #expect(timers?.first?["name"] as? String == "Piano")
            let fish = (sections["catch"]?["data"] as? [String: Any])?["catch"] as? [String: Any]
            #expect(fish?["species"] as? String == "Pike")
            #expect(sections["wallet"]?["data"] as? [String: Any] != nil)
            #expect(sections["quote"]?["text"] as? String != nil)

            let timings = try #require(result.object["timings"] as? [String: Any])
            let total = try #require(timings["totalMs"] as? Double)
            let slowest = try #require(timings["slowestCallMs"] as? Double)
            let calls = timings["calls"] as? [[String: Any]] ?? []
            let sum = calls.compactMap { $0["ms"] as? Double }.reduce(0, +)
            print(
                "dashboard: \(total) ms for the page (wall \(wall) with process start); slowest call \(slowest) ms (\(timings["slowestCall"] ?? "")); \(calls.count) calls summing \(sum) ms"
            )
            // Parallel: the page is its slowest section (at most two calls in a row), not the sum
            // (bounds loose enough for a loaded machine).
            let slowestSection = (timings["sections"] as? [String: Double])?.values.max() ?? 0
            #expect(total < slowestSection + 150, "page \(total) ms vs slowest section \(slowestSection) ms")
            #expect(total < slowest * 2 + 250, "page \(total) ms vs slowest call \(slowest) ms")

            let human = try await stack.logbook("dashboard")
            #expect(human.status == 0)
            #expect(human.stdout.contains("Piano running"), "\(human.stdout)")
            #expect(human.stdout.contains("nothing waiting to sync"), "\(human.stdout)")
        }
    }

    @Test("a stopped service: its sections unavailable, exit 9, the rest shown")
    func oneStopped() async throws {
        try await withStack { stack in
            try await populated(stack)
            let supervisor = try #require(stack.pid("supervisor"))
            let store = try #require(stack.pid("store"))
            // Pause the supervisor so it does not restart store at once, then stop store.
            kill(supervisor, SIGSTOP)
            do {
                kill(store, SIGKILL)
                let (result, wall) = try await dashboard(stack, deadline: 1000)
                kill(supervisor, SIGCONT)
                #expect(result.status == 9, "\(result.stdout)\(result.stderr)")
                let sections = sections(result)
                #expect(sections["wallet"]?["status"] as? String == "unavailable")
                #expect(sections["quote"]?["status"] as? String == "unavailable")
                for name in ["account", "timers", "catch"] {
                    #expect(sections[name]?["status"] as? String == "ok", "\(name): \(sections[name] ?? [:])")
                }
                #expect(result.object["partial"] as? Bool == true)
                print("dashboard with store stopped: wall \(wall)")
                #expect(wall < .milliseconds(1000 + 2000))
            } catch {
                kill(supervisor, SIGCONT)
                throw error
            }
            let human = try await stack.logbook("dashboard", "--deadline", "1000")
            #expect(human.status == 0 || human.status == 9)
        }
    }

    @Test("a frozen service: the page returns in about the deadline")
    func oneSlowed() async throws {
        try await withStack { stack in
            try await populated(stack)
            let before = try await stack.logbook("dashboard")  // leaves a copy of each section
            #expect(before.status == 0, "\(before.stdout)\(before.stderr)")
            let records = try #require(stack.pid("records"))
            kill(records, SIGSTOP)
            let outcome: (CommandResult, Duration)
            do {
                outcome = try await dashboard(stack, deadline: 1000)
                kill(records, SIGCONT)
            } catch {
                kill(records, SIGCONT)
                throw error
            }
            let (result, wall) = outcome
            #expect(result.status == 9, "\(result.stdout)\(result.stderr)")
            let sections = sections(result)
            for name in ["timers", "catch"] {
                #expect(sections[name]?["status"] as? String == "unavailable", "\(name): \(sections[name] ?? [:])")
                let stale = sections[name]?["stale"] as? [String: Any]
                #expect(stale?["savedAt"] as? String != nil, "the last copy, marked stale: \(sections[name] ?? [:])")
            }
            #expect((sections["timers"]?["text"] as? String)?.contains("last seen") == true)
            // the fuel section uses records and analytics: only the silent one is blamed
            let fuel = sections["fuel"]?["text"] as? String ?? ""
            #expect(fuel.contains("unavailable (records did not answer in time)"), "\(fuel)")
            #expect(!fuel.contains("analytics did not answer"), "\(fuel)")
            for name in ["account", "wallet", "quote"] {
                #expect(sections[name]?["status"] as? String == "ok", "\(name): \(sections[name] ?? [:])")
            }
            let total = try #require((result.object["timings"] as? [String: Any])?["totalMs"] as? Double)
            print("dashboard with records frozen, deadline 1000 ms: page \(total) ms, wall \(wall)")
            #expect(total >= 950 && total < 1400, "about one deadline: \(total) ms")
            #expect(wall < .milliseconds(1000 + 2000))

            let after = try await stack.logbook("dashboard", "--json")
            #expect(after.status == 0, "records answers again: \(after.stdout)")
        }
    }
}
