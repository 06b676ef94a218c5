// Reliability: outages, restarts, duplicate events, the cache, edits and deletions,
// giving up, slowing down. Every test counts the stub provider's calls.
import Foundation
import GRDB
import Runtime
import Storage
import Synchronization
import TestSupport
import Testing
import Wire

@testable import WeatherFetcherService

@Suite struct ReliabilityTests {
    static let down: StubHTTPServer.Handler = { _ in .json(#"{"error":true,"reason":"upstream down"}"#, status: 503) }

    @Test func providerDownForAWhileThenBack() async throws {
        let harness = try Harness(handler: Self.down)
        let service = try harness.makeService()
        try await service.applyRecords([harness.catchEvent(id: "c1")])
        try await service.running {
            // Wait (bounded) for two failed attempts rather than for a fixed time: the
            // suite runs in parallel on two cores.
            var waiting = try await service.status("c1")
            for _ in 0..<200 where (waiting["attempts"]?.intValue ?? 0) < 2 {
                try await Task.sleep(for: .milliseconds(50))
                waiting = try await service.status("c1")
            }
            #expect(waiting["status"] == "pending")
            #expect((waiting["attempts"]?.intValue ?? 0) >= 2)
            #expect(waiting["lastError"]?.stringValue?.contains("503") == true)
            harness.server.respond(with: Fixtures.openMeteo())
            let status = try await service.settled("c1")
            #expect(status["status"] == "ready")
        }
        #expect(try await service.published().map(\.type) == ["conditions.ready"])
    }

    @Test func pendingJobsFinishAfterARestart() async throws {
        let harness = try Harness(handler: Self.down)
        do {
            let first = try harness.makeService()
            try await first.applyRecords([harness.catchEvent(id: "c1"), harness.catchEvent(id: "c2", latitude: 40)])
            try await first.running { try await Task.sleep(for: .milliseconds(150)) }
            #expect(try await first.status("c1")["status"] == "pending")
            #expect(try await first.status("c2")["status"] == "pending")
        }
        harness.server.respond(with: Fixtures.openMeteo())
        let second = try harness.makeService()
        let (c1, c2) = try await second.running { (try await second.settled("c1"), try await second.settled("c2")) }
        #expect(c1["status"] == "ready")
        #expect(c2["status"] == "ready")
        #expect(try await second.published().map(\.type) == ["conditions.ready", "conditions.ready"])
    }

    @Test func theSameEventTwiceMakesOneJobOneFetchOneResult() async throws {
        let harness = try Harness()
        let service = try harness.makeService()
        let event = harness.catchEvent(id: "c1")
        try await service.applyRecords([event])
        try await service.applyRecords([event])  // a replay: the checkpoint skips it
        var again = event
        again.seq = harness.nextSeq()  // the same catch published again under a new number
        try await service.applyRecords([again])
        try await service.running { try await service.settled("c1") }
        try await service.applyRecords([event, again])  // and once more after the fact
        try await service.running { try await Task.sleep(for: .milliseconds(100)) }
        #expect(harness.server.requests(path: "/v1/forecast").count == 1)
        #expect(harness.server.requests(path: "/v1/marine").count == 1)
        #expect(try await service.published().map(\.type) == ["conditions.ready"])
    }

    @Test func aSecondCatchAtTheSamePlaceAndHourCostsNoCall() async throws {
        let harness = try Harness()
        let service = try harness.makeService()
        try await service.applyRecords([
            harness.catchEvent(id: "a", latitude: 41.5234, longitude: -70.6712, at: "2024-05-20T14:40:00Z")
        ])
        try await service.running { try await service.settled("a") }
        try await service.applyRecords([
            // 41.5234 and 41.5201 both round to 41.52; 14:40 and 15:10 both to 15:00.
            harness.catchEvent(id: "b", user: "u2", latitude: 41.5201, longitude: -70.6749, at: "2024-05-20T15:10:00Z")
        ])
        try await service.running { try await service.settled("b", user: "u2") }
        #expect(harness.server.requests(path: "/v1/forecast").count == 1)
        #expect(harness.server.requests(path: "/v1/marine").count == 1)
        let a = try await service.status("a")
        let b = try await service.status("b", user: "u2")
        #expect(b["status"] == "ready")
        #expect(a["conditions"]?["temperatureC"] == b["conditions"]?["temperatureC"])

        try await service.applyRecords([harness.catchEvent(id: "c", at: "2024-05-20T18:00:00Z")])
        try await service.running { try await service.settled("c") }
        #expect(harness.server.requests(path: "/v1/forecast").count == 2, "another hour is another call")
    }

    @Test func catchesAtTheSamePlaceAndHourArrivingTogetherCostOneCall() async throws {
        let harness = try Harness()
        let service = try harness.makeService()
        try await service.applyRecords([
            harness.catchEvent(id: "a", at: "2024-05-20T14:40:00Z"),
            harness.catchEvent(id: "b", at: "2024-05-20T14:50:00Z"),
            harness.catchEvent(id: "c", latitude: 41.521, at: "2024-05-20T15:05:00Z"),
        ])
        let states = try await service.running {
            [try await service.settled("a"), try await service.settled("b"), try await service.settled("c")]
        }
        #expect(states.map { $0["status"] } == ["ready", "ready", "ready"])
        #expect(harness.server.requests(path: "/v1/forecast").count == 1)
        #expect(harness.server.requests(path: "/v1/marine").count == 1)
    }

    @Test func editsRefetchOnlyWhenPlaceOrTimeChanged() async throws {
        let harness = try Harness()
        let service = try harness.makeService()
        try await service.applyRecords([harness.catchEvent(id: "c1")])
        try await service.running { try await service.settled("c1") }
        try await service.applyRecords([harness.catchEvent("catch.updated", id: "c1", placeOrTimeChanged: false)])
        #expect(try await service.status("c1")["status"] == "ready")
        try await service.applyRecords([
            harness.catchEvent("catch.updated", id: "c1", at: "2024-05-21T06:00:00Z", placeOrTimeChanged: true)
        ])
        #expect(try await service.status("c1")["status"] == "pending")
        let status = try await service.running { try await service.settled("c1") }
        #expect(status["conditions"]?["hour"] == "2024-05-21T06:00:00Z")
        #expect(harness.server.requests(path: "/v1/forecast").count == 2)
        #expect(try await service.published().map(\.type) == ["conditions.ready", "conditions.ready"])
    }

    @Test func anHourlyQuotaAsHTTP400PausesUntilTheNextHourThenRetries() async throws {
        // Open-Meteo's real over-quota answer, sent as HTTP 400 the first time only
        let calls = Mutex(0)
        let asked = Mutex<[Date]>([])
        let openMeteo = Fixtures.openMeteo()
        let harness = try Harness(start: "2024-06-01T12:59:00Z")
        let resetAt = try #require(WireTime.parse("2024-06-01T13:00:00Z"))
        // Weakly: the server belongs to the harness, and a handler holding the harness would
        // keep both alive after the test (and its scratch directory on disk).
        harness.server.respond { [weak harness] request in
            guard let harness else { return .json(#"{"error":true,"reason":"the test is over"}"#, status: 503) }
            if request.path == "/v1/forecast" { asked.withLock { $0.append(harness.settings.now()) } }
            if request.path == "/v1/forecast", calls.withLock({ $0 += 1; return $0 }) == 1 {
                // the quota answer comes 2 s before the hour, however long the set-up took
                harness.advance(by: resetAt.addingTimeInterval(-2).timeIntervalSince(harness.settings.now()))
                return .json(
                    #"{"error":true,"reason":"Hourly API request limit exceeded. Please try again in the next hour."}"#,
                    status: 400)
            }
            return openMeteo(request)
        }
        let service = try harness.makeService()
        try await service.applyRecords([harness.catchEvent(id: "c1", at: "2024-06-01T10:00:00Z")])
        let status = try await service.running { () -> JSONValue in
            // the first answer pauses everyone until 13:00 (about 3 s away), not for good
            var seen: JSONValue = .null
            let clock = ContinuousClock()
            let deadline = clock.now + .seconds(10)
            while clock.now < deadline {
                seen = try await service.status("c1")
                if seen["status"] != "pending" { break }
                try await Task.sleep(for: .milliseconds(50))
            }
            return seen
        }
        #expect(status["status"] == "ready", "\(status)")
        #expect(status["attempts"] == 0, "a quota answer is not the catch's fault")
        #expect(harness.server.requests(path: "/v1/forecast").count == 2)
        let times = asked.withLock { $0 }
        #expect(times.count == 2)
        if times.count == 2 { #expect(times[1] >= resetAt, "the retry waited for the hour's reset (\(times[1]))") }
    }

    @Test func changingTheWaterFetchesOrDropsTheTide() async throws {
        let harness = try Harness()
        let service = try harness.makeService()
        try await service.applyRecords([harness.catchEvent(id: "c1", water: "fresh")])
        let fresh = try await service.running { try await service.settled("c1") }
        #expect(fresh["conditions"]?["tide"] == "skipped")
        #expect(fresh["conditions"]?["water"] == "fresh")
        #expect(harness.server.requests(path: "/v1/marine").isEmpty)
        // fresh → salt: the tide is fetched now
        try await service.applyRecords([
            harness.catchEvent("catch.updated", id: "c1", water: "salt", placeOrTimeChanged: false, waterChanged: true)
        ])
        #expect(try await service.status("c1")["status"] == "pending")
        let salt = try await service.running { try await service.settled("c1") }
        #expect(salt["conditions"]?["tide"] == "measured")
        #expect(salt["conditions"]?["water"] == "salt")
        #expect(harness.server.requests(path: "/v1/marine").count == 1)
        // salt → fresh: the tide goes
        try await service.applyRecords([
            harness.catchEvent("catch.updated", id: "c1", water: "fresh", placeOrTimeChanged: false, waterChanged: true)
        ])
        let back = try await service.running { try await service.settled("c1") }
        #expect(back["conditions"]?["tide"] == "skipped")
        #expect(back["conditions"]?["tidePhase"] == nil)
        let published = try await service.published().filter { $0.type == "conditions.ready" }
        #expect(published.map { $0.data["conditions"]?["water"] } == ["fresh", "salt", "fresh"])
    }

    @Test func deletedCatchesAndUsersLeaveNothingBehind() async throws {
        let harness = try Harness(handler: Self.down)
        let service = try harness.makeService()
        try await service.applyRecords([
            harness.catchEvent(id: "c1"), harness.catchEvent(id: "c2", user: "u2"),
            harness.catchEvent(id: "c3", user: "u2"),
        ])
        try await service.applyRecords([harness.deletedEvent(id: "c1")])
        try await service.applyAuth([
            Event(seq: 1, type: "user.deleted", userId: "u2", at: Date(), data: ["userId": "u2"])
        ])
        #expect(try await service.status("c1")["error"] == "not_found")
        #expect(try await service.status("c2", user: "u2")["error"] == "not_found")
        harness.server.respond(with: Fixtures.openMeteo())
        try await service.running { try await Task.sleep(for: .milliseconds(150)) }
        #expect(harness.server.requests.isEmpty)
        #expect(try await service.published().isEmpty)
        let left = try await service.host.database.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM fetchJob") }
        #expect(left == 0)
    }

    /// Auth's and records' streams are read apart: a catch of a deleted user may come after
    /// the deletion. It queues nothing, asks the provider nothing and publishes nothing.
    @Test func aCatchArrivingAfterItsUsersDeletionIsIgnored() async throws {
        let harness = try Harness()
        let service = try harness.makeService()
        try await service.applyAuth([
            Event(seq: 1, type: "user.deleted", userId: "u2", at: Date(), data: ["userId": "u2"])
        ])
        try await service.applyRecords([harness.catchEvent(id: "c2", user: "u2"), harness.catchEvent(id: "c1")])
        try await service.running { try await service.settled("c1") }
        #expect(try await service.status("c2", user: "u2")["error"] == "not_found")
        #expect(try await service.published().compactMap(\.userId) == ["u1"])
        let jobs = try await service.host.database.read {
            try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM fetchJob WHERE userId = 'u2'")
        }
        #expect(jobs == 0)
    }

    /// docs/protocol.md: "When an account is deleted, every producer redacts that user's past
    /// events". The conditions this service published for a deleted user's catches held where
    /// and when the user fished, under the user's id.
    @Test func aDeletedUsersPublishedConditionsAreRedacted() async throws {
        let harness = try Harness()
        let service = try harness.makeService()
        try await service.applyRecords([harness.catchEvent(id: "c1"), harness.catchEvent(id: "c2", user: "u2")])
        try await service.running {
            try await service.settled("c1")
            try await service.settled("c2", user: "u2")
        }
        let before = try await service.published()
        #expect(Set(before.compactMap(\.userId)) == ["u1", "u2"])
        try await service.applyAuth([
            Event(seq: 1, type: "user.deleted", userId: "u2", at: Date(), data: ["userId": "u2"])
        ])
        let after = try await service.published()
        #expect(after.map(\.seq) == before.map(\.seq), "the stream keeps its sequence numbers")
        let kept = after.filter { $0.userId == "u1" }
        #expect(kept.map(\.type) == ["conditions.ready"])
        #expect(kept.first?.data["catchId"] == "c1")
        let redacted = after.filter { $0.type == Outbox.redactedType }
        #expect(redacted.count == before.filter { $0.userId == "u2" }.count)
        #expect(redacted.allSatisfy { $0.userId == nil && $0.data == [:] }, "not even whose they were")
        #expect(!after.contains { $0.userId == "u2" || $0.data["catchId"] == "c2" })
    }

    /// A database from before the redaction holds a deleted user's conditions and a checkpoint
    /// past auth's `user.deleted`: the migration has the stream read again, and the deletion,
    /// applied once more, redacts them.
    @Test func conditionsLeftByAnEarlierDeletionAreRedactedOnUpgrade() async throws {
        let harness = try Harness()
        do {
            let service = try harness.makeService()
            try await service.applyRecords([harness.catchEvent(id: "c2", user: "u2")])
            try await service.running { try await service.settled("c2", user: "u2") }
            // as the version before left it: the job purged, the event kept, auth read up to 7
            try await service.host.database.write { db in
                try db.execute(sql: "DELETE FROM fetchJob WHERE userId = 'u2'")
                try db.execute(sql: "INSERT OR REPLACE INTO eventCheckpoint (producer, seq) VALUES ('auth', 7)")
                try db.execute(sql: "DELETE FROM grdb_migrations WHERE identifier = 'weather.v3-redactDeleted'")
            }
            #expect(try await service.published().map(\.userId) == ["u2"])
        }
        let upgraded = try harness.makeService()
        let checkpoint = try await upgraded.host.database.read {
            try Int64.fetchOne($0, sql: "SELECT seq FROM eventCheckpoint WHERE producer = 'auth'")
        }
        #expect(checkpoint == nil, "auth's stream is read again from the start")
        try await upgraded.applyAuth([
            Event(seq: 1, type: "session.revoked", userId: "u2", at: Date(), data: ["userId": "u2"]),
            Event(seq: 2, type: "user.deleted", userId: "u2", at: Date(), data: ["userId": "u2"]),
        ])
        let after = try await upgraded.published()
        #expect(after.map(\.type) == [Outbox.redactedType])
        #expect(after.allSatisfy { $0.userId == nil && $0.data == [:] })
    }

    @Test func anotherUsersCatchIsNotFound() async throws {
        let harness = try Harness()
        let service = try harness.makeService()
        try await service.applyRecords([harness.catchEvent(id: "c1", user: "u1")])
        #expect(try await service.status("c1", user: "u1")["status"] == "pending")
        #expect(try await service.status("c1", user: "intruder")["error"] == "not_found")
        #expect(try await service.status("", user: "u1")["error"] == "invalid_argument")
    }

    @Test func givesUpAfterTheLastAttempt() async throws {
        let harness = try Harness(handler: Self.down) { $0.maxAttempts = 3 }
        let service = try harness.makeService()
        try await service.applyRecords([harness.catchEvent(id: "c1")])
        let status = try await service.running { try await service.settled("c1") }
        #expect(status["status"] == "unavailable")
        #expect(status["reason"]?.stringValue?.contains("after 3 attempts") == true)
        #expect(harness.server.requests(path: "/v1/forecast").count == 3)
        let events = try await service.published()
        #expect(events.map(\.type) == ["conditions.unavailable"])
        #expect(events.first?.userId == "u1")
    }

    @Test func givesUpAfter48HoursWhateverTheAttempts() async throws {
        let harness = try Harness(handler: Self.down) { $0.backoffBase = .milliseconds(50) }
        let service = try harness.makeService()
        try await service.applyRecords([harness.catchEvent(id: "c1")])
        let status = try await service.running {
            try await Task.sleep(for: .milliseconds(150))
            #expect(try await service.status("c1")["status"] == "pending")
            harness.advance(by: 49 * 3600)
            return try await service.settled("c1")
        }
        #expect(status["status"] == "unavailable")
        #expect(harness.server.requests.count < 10)
    }

    @Test func weatherIsPublishedWithoutTideWhenOnlyTheMarineAPIKeepsFailing() async throws {
        let harness = try Harness(
            handler: { request in
                request.path == "/v1/marine" ? ReliabilityTests.down(request) : Fixtures.openMeteo()(request)
            }, configure: { $0.maxAttempts = 3 })
        let service = try harness.makeService()
        try await service.applyRecords([harness.catchEvent(id: "c1")])
        let status = try await service.running { try await service.settled("c1") }
        #expect(status["status"] == "ready")
        #expect(status["conditions"]?["tide"] == "unavailable")
        #expect(status["conditions"]?["temperatureC"] == 14.2)
        #expect(harness.server.requests(path: "/v1/forecast").count == 1, "the weather came from the cache")
        #expect(harness.server.requests(path: "/v1/marine").count == 3)
    }

    /// A marine answer without its sea-level column (or with one that is not a list, or
    /// without the hour asked) is broken, not "no tide here": retried, then the tide is
    /// unavailable, and nothing is kept for the next catch at that place and hour.
    @Test(arguments: [
        #"{"utc_offset_seconds":0,"hourly":{"time":["2024-05-20T15:00"]}}"#,
        #"{"utc_offset_seconds":0,"hourly":{"time":["2024-05-20T15:00"],"sea_level_height_msl":"n/a"}}"#,
        #"{"utc_offset_seconds":0,"hourly":{"time":["1999-01-01T00:00"],"sea_level_height_msl":[0.5]}}"#,
    ])
    func aBrokenMarineAnswerIsNotNoTide(body: String) async throws {
        let harness = try Harness(
            handler: { request in
                request.path == "/v1/marine" ? .json(body) : Fixtures.openMeteo()(request)
            }, configure: { $0.maxAttempts = 2 })
        let service = try harness.makeService()
        try await service.applyRecords([harness.catchEvent(id: "c1")])
        let status = try await service.running { try await service.settled("c1") }
        #expect(status["conditions"]?["tide"] == "unavailable", "\(status.jsonText)")
        #expect(harness.server.requests(path: "/v1/marine").count == 2)
        try await service.applyRecords([harness.catchEvent(id: "c2")])
        _ = try await service.running { try await service.settled("c2") }
        #expect(harness.server.requests(path: "/v1/marine").count > 2, "the broken answer was kept")
    }

    /// A catch logged as it happens (its nearest hour not over yet) waits for that hour to
    /// pass: its conditions are the weather that came, never the forecast for it.
    @Test func aCatchOfTheCurrentHourWaitsForTheWeatherThatCame() async throws {
        let harness = try Harness()  // the clock at 2024-06-01T12:00:00Z
        let service = try harness.makeService()
        try await service.applyRecords([harness.catchEvent(id: "live", at: "2024-06-01T12:40:00Z")])
        try await service.running {
            try await Task.sleep(for: .milliseconds(300))
            #expect(try await service.status("live")["status"] == "pending")
            #expect(harness.server.requests.isEmpty, "nothing is asked before the hour 13:00 is over")
            harness.advance(by: 2 * 3600 + 60)  // 14:01
            let status = try await service.settled("live")
            #expect(status["status"] == "ready")
        }
        #expect(harness.server.requests(path: "/v1/forecast").count == 1)
    }

    /// A `weather.get` for an hour still to come answers a forecast: a catch made in that hour
    /// later gets the weather that came (fetched again), not the forecast kept from the lookup.
    @Test func aForecastIsNotKeptAsTheWeatherOfItsHour() async throws {
        let harness = try Harness()  // the clock at 2024-06-01T12:00:00Z
        let service = try harness.makeService()
        let ahead = try await service.client.reply(
            "weather.get",
            body: ["latitude": 41.5234, "longitude": -70.6712, "at": "2024-06-02T07:00:00Z", "water": "fresh"],
            options: CallOptions(token: "good-u1"))
        #expect(ahead.ok, "\(ahead.error?.message ?? "")")
        #expect(harness.server.requests(path: "/v1/forecast").count == 1)
        harness.advance(by: 86400)  // 2024-06-02T12:00: the hour is over
        try await service.applyRecords([
            harness.catchEvent(id: "c1", at: "2024-06-02T07:10:00Z", water: "fresh")
        ])
        let first = try await service.running { try await service.settled("c1") }
        #expect(first["status"] == "ready")
        #expect(harness.server.requests(path: "/v1/forecast").count == 2, "the catch's hour was asked again")
        // fetched after its hour, that answer is kept: another catch of the hour costs no call
        try await service.applyRecords([
            harness.catchEvent(id: "c2", at: "2024-06-02T06:50:00Z", water: "fresh")
        ])
        let second = try await service.running { try await service.settled("c2") }
        #expect(second["status"] == "ready")
        #expect(harness.server.requests(path: "/v1/forecast").count == 2)
    }

    @Test func tooManyRequestsPausesEveryoneAndCostsNoAttempt() async throws {
        let harness = try Harness()
        let calls = Counter()
        harness.server.respond { request in
            if calls.next() == 1 {
                // no limit named: the service's default pause (a named quota waits for its reset,
                // see anHourlyQuotaAsHTTP400PausesUntilTheNextHourThenRetries)
                return .json(#"{"error":true,"reason":"Too many requests"}"#, status: 429)
            }
            return Fixtures.openMeteo()(request)
        }
        let service = try harness.makeService()
        try await service.applyRecords([harness.catchEvent(id: "c1")])
        let clock = ContinuousClock()
        let start = clock.now
        let status = try await service.running { try await service.settled("c1") }
        #expect(status["status"] == "ready")
        #expect(clock.now - start >= .milliseconds(200), "the pause (200 ms in tests) was kept")
        #expect(harness.server.requests(path: "/v1/forecast").count == 2)
        let attempts = try await service.host.database.read {
            try Int.fetchOne($0, sql: "SELECT attempts FROM fetchJob WHERE catchId = 'c1'")
        }
        #expect(attempts == 0)
    }

    @Test func theRateLimiterSpacesCallsBeyondTheBurst() async throws {
        let limiter = RateLimiter(perMinute: 600, burst: 2)  // 10 a second
        let clock = ContinuousClock()
        let start = clock.now
        for _ in 0..<5 { try await limiter.acquire() }
        let elapsed = clock.now - start
        // The property is the spacing (a lower bound); the upper bound only catches a hang.
        #expect(elapsed >= .milliseconds(280) && elapsed < .seconds(30), "took \(elapsed)")
    }
}
