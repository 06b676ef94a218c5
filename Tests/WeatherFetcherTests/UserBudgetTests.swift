// One user cannot spend the shared provider quota: each user's calls are budgeted
// (LOGBOOK_WEATHER_FETCHER_USER_CALLS_PER_HOUR); cached answers cost nothing.
import Foundation
import Synchronization
import Runtime
import TestSupport
import Testing
import Wire

@testable import WeatherFetcherService

@Suite struct UserBudgetTests {
    func get(_ service: WeatherFetcherService, _ latitude: Double, user: String) async throws -> Reply {
        try await service.client.reply(
            "weather.get", body: ["latitude": .number(.init(latitude)), "longitude": -70.67, "at": "2024-05-20T14:40:00Z"],
            options: CallOptions(token: "good-\(user)"))
    }

    @Test func aUsersProviderCallsAreBudgeted() async throws {
        let harness = try Harness(configure: { $0.userCallsPerHour = 4 })
        let service = try harness.makeService()
        // Salt water: a weather and a marine call per new place.
        #expect(try await get(service, 41.1, user: "u1").ok)
        #expect(try await get(service, 41.2, user: "u1").ok)
        #expect(harness.server.requests.count == 4)
        let spent = try await get(service, 41.3, user: "u1")
        #expect(spent.error?.code == .resourceExhausted, "\(spent.error?.message ?? "answered")")
        let retryAfterMs = spent.error?.details?["retryAfterMs"]?.doubleValue ?? 0
        #expect(retryAfterMs > 0 && retryAfterMs <= 900_000, "\(retryAfterMs)")
        #expect(harness.server.requests.count == 4, "the refused lookup called nobody")
        // A cached place costs nothing; another user has a budget of their own.
        #expect(try await get(service, 41.1, user: "u1").ok)
        #expect(try await get(service, 41.3, user: "u2").ok)
        // The bucket refills at 4 an hour: a place's two calls after 30 minutes.
        harness.advance(by: 1800)
        #expect(try await get(service, 41.4, user: "u1").ok)
    }

    /// docs/protocol.md, weather.get: `unavailable` when the provider "asked us to slow down
    /// (then details.retryAfterMs)". During a long pause (a daily quota) the lookup used to
    /// sleep until the pause ended, long after its caller had given up.
    @Test func aLookupDuringALongPauseIsAnsweredAtOnce() async throws {
        let harness = try Harness(configure: { $0.userCallsPerHour = 4 })
        let service = try harness.makeService()
        service.fetcher.limiter.pause(for: .seconds(3600))
        let clock = ContinuousClock()
        let started = clock.now
        let paused = try await get(service, 41.1, user: "u1")
        #expect(clock.now - started < .seconds(2), "answered, not waited out")
        #expect(paused.error?.code == .unavailable, "\(paused.error?.message ?? "answered")")
        let retryAfterMs = paused.error?.details?["retryAfterMs"]?.doubleValue ?? 0
        #expect(retryAfterMs > 3_500_000 && retryAfterMs <= 3_600_000, "\(retryAfterMs)")
        #expect(harness.server.requests.isEmpty)
    }

    @Test func aSpentUsersCatchWaitsWithoutLosingAnAttempt() async throws {
        let harness = try Harness(configure: { $0.userCallsPerHour = 2 })
        let service = try harness.makeService()
        #expect(try await get(service, 41.1, user: "u1").ok)  // spends u1's two calls
        try await service.applyRecords([harness.catchEvent(id: "c1", latitude: 42.5, longitude: -70.6)])
        // The job runner tries the catch, finds the budget spent and notes why; wait for the
        // note (polled, so a busy machine is not a failure) rather than a fixed sleep.
        let status = try await service.running { () async throws -> JSONValue in
            var status = try await service.status("c1", user: "u1")
            for _ in 0..<100 where status["lastError"]?.stringValue == nil {
                try await Task.sleep(for: .milliseconds(50))
                status = try await service.status("c1", user: "u1")
            }
            return status
        }
        #expect(status["status"] == "pending", "\(status)")
        #expect(status["attempts"] == 0, "no attempt is spent waiting for the budget: \(status)")
        #expect(status["lastError"]?.stringValue?.contains("calls are spent") == true, "\(status)")
        #expect(harness.server.requests.count == 2)
        // Other users' catches go on meanwhile.
        try await service.applyRecords([harness.catchEvent(id: "c2", user: "u2", latitude: 43.5, longitude: -70.6)])
        let ready = try await service.running { () async throws -> Bool in
            for _ in 0..<50 {
                if try await service.status("c2", user: "u2")["status"] == "ready" { return true }
                try await Task.sleep(for: .milliseconds(100))
            }
            return false
        }
        #expect(ready)
    }

    /// A user's backlog beyond the budget is spread over the time it needs, not brought
    /// back all at once every time one call comes free; and waiting for the budget is not
    /// time counted toward giving up.
    @Test func aSpentUsersBacklogIsSpreadNotChurned() async throws {
        let draws = Mutex(0.0)
        let harness = try Harness(configure: {
            $0.userCallsPerHour = 2
            $0.jitter = {
                draws.withLock {
                    $0 += 0.05
                    return $0.truncatingRemainder(dividingBy: 1)
                }
            }
        })
        let service = try harness.makeService()
        #expect(try await get(service, 41.1, user: "u1").ok)  // spends u1's two calls
        try await service.applyRecords(
            (0..<20).map { harness.catchEvent(id: "c\($0)", latitude: 42.0 + Double($0) / 10, longitude: -70.6) })
        let before = harness.settings.now()
        try await service.running {
            for _ in 0..<100 {
                let waiting = try await service.host.database.read {
                    try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM fetchJob WHERE lastError IS NOT NULL")
                }
                if waiting == 20 { break }
                try await Task.sleep(for: .milliseconds(50))
            }
        }
        let (due, queued) = try await service.host.database.read { db in
            (
                try Double.fetchAll(db, sql: "SELECT nextAttemptAt FROM fetchJob WHERE state = 'pending'"),
                try Double.fetchAll(db, sql: "SELECT queuedAt FROM fetchJob WHERE state = 'pending'")
            )
        }
        #expect(due.count == 20)
        #expect(Set(due).count >= 15, "spread, not one instant for all: \(due.sorted())")
        // 20 jobs at 2 an hour: spread over up to 9.5 hours past the first wait
        #expect(due.max()! - before.timeIntervalSince1970 > 3 * 3600)
        #expect(due.max()! - before.timeIntervalSince1970 <= 10 * 3600 + 1)
        #expect(zip(due.sorted(), queued.sorted()).allSatisfy { $0 == $1 }, "the 48 hours count from when it is due")
    }

    @Test func theSettingIsRead() throws {
        let stack = try StackConfiguration.scratch("/tmp/lb-none", extra: ["LOGBOOK_WEATHER_FETCHER_USER_CALLS_PER_HOUR": "30"])
        #expect(try WeatherFetcherSettings(configuration: stack).userCallsPerHour == 30)
        #expect(try WeatherFetcherSettings(configuration: StackConfiguration.scratch("/tmp/lb-none")).userCallsPerHour == 120)
        #expect(throws: ConfigurationError.self) {
            try WeatherFetcherSettings(
                configuration: StackConfiguration.scratch("/tmp/lb-none", extra: ["LOGBOOK_WEATHER_FETCHER_USER_CALLS_PER_HOUR": "-1"]))
        }
    }

    /// A timeout no request could use is refused when the service starts, not found by a
    /// trap on its first fetch (seconds × 10⁹ past Int64).
    @Test func anEndlessHTTPTimeoutIsRefusedAtStart() throws {
        for value in ["10000000000", "3601"] {
            #expect(throws: ConfigurationError.self, "\(value)") {
                try WeatherFetcherSettings(
                    configuration: StackConfiguration.scratch(
                        "/tmp/lb-none", extra: ["LOGBOOK_WEATHER_FETCHER_HTTP_TIMEOUT_SECONDS": value]))
            }
        }
        let hour = try WeatherFetcherSettings(
            configuration: StackConfiguration.scratch("/tmp/lb-none", extra: ["LOGBOOK_WEATHER_FETCHER_HTTP_TIMEOUT_SECONDS": "3600"]))
        #expect(hour.httpTimeout == .seconds(3_600))
    }
}
