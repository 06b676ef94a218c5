// The intro and the quote of the day, against a local stand-in for ZenQuotes: one fetch per
// UTC day, the rate-limit body and outages fall back to bundled quotes without a fetch on
// every call, `isNew` once per user per day, days counted in the user's time zone.
import Contracts
import Foundation
import Runtime
import StoreService
import Testing
import TestSupport
import Wire

@Suite struct QuoteTests {
    static let today =
        #"[{"q":"Practice does not make perfect. Perfect practice makes perfect.","a":"Vince Lombardi","h":"<blockquote>…</blockquote>"}]"#
    static let tomorrow =
        #"[{"q":"Small deeds done are better than great deeds planned.","a":"Peter Marshall","h":"<blockquote>…</blockquote>"}]"#
    static let rateLimited =
        #"[{"q":"Too many requests. Obtain an auth key for unlimited access.","a":"zenquotes.io","h":"Too many requests. Obtain an auth key for unlimited access @ zenquotes.io"}]"#

    func quote(_ h: StoreHarness, _ user: String, timeZone: String? = nil) async throws -> QuoteResult {
        try await h.call("store.quote", timeZone.map { ["timeZone": .string($0)] } ?? [:], user: user)
    }

    @Test func introFirstThenTheQuoteOncePerDay() async throws {
        let server = try StubHTTPServer { _ in .json(Self.today) }
        defer { server.stop() }
        let h = try StoreHarness(quotesURL: server.baseURL, clock: TestClock("2026-05-01T09:00:00Z"))

        let intro = try await quote(h, "ann")
        #expect(intro.kind == "intro")
        #expect(intro.text.contains("10,000 hours"))
        #expect(intro.isNew == nil && intro.author == nil)
        #expect(server.requests(path: "/api/today").isEmpty)

        let first = try await quote(h, "ann")
        #expect(first.kind == "quote")
        #expect(first.author == "Vince Lombardi")
        #expect(first.isNew == true)
        #expect(first.day == "2026-05-01")
        #expect(first.attribution == "Inspirational quotes provided by ZenQuotes API (https://zenquotes.io)")
        #expect(first.source == "zenquotes")

        h.clock.advance(3_600)
        let again = try await quote(h, "ann")
        #expect(again.isNew == false)
        #expect(again.text == first.text)

        _ = try await quote(h, "bob")  // Bob's intro
        let bob = try await quote(h, "bob")
        #expect(bob.isNew == true)
        #expect(bob.text == first.text)
        #expect(server.requests(path: "/api/today").count == 1)

        // The next day: one new fetch, new for everyone once.
        server.respond { _ in .json(Self.tomorrow) }
        h.clock.set("2026-05-02T00:00:01Z")
        let next = try await quote(h, "ann")
        #expect(next.isNew == true)
        #expect(next.day == "2026-05-02")
        #expect(next.author == "Peter Marshall")
        #expect(try await quote(h, "ann").isNew == false)
        #expect(try await quote(h, "bob").isNew == true)
        #expect(server.requests(path: "/api/today").count == 2)
    }

    @Test func concurrentFirstCallsShareOneFetch() async throws {
        let server = try StubHTTPServer { _ in StubResponse(body: Data(Self.today.utf8), delay: .milliseconds(200)) }
        defer { server.stop() }
        let h = try StoreHarness(quotesURL: server.baseURL)
        let users = (0..<10).map { "u\($0)" }
        for user in users { _ = try await quote(h, user) }  // intros
        let results = try await withThrowingTaskGroup(of: QuoteResult.self) { group in
            for user in users { group.addTask { try await quote(h, user) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(results.allSatisfy { $0.isNew == true && $0.author == "Vince Lombardi" })
        #expect(server.requests(path: "/api/today").count == 1)
    }

    @Test func rateLimitFallsBackAndIsNotRetriedOnEveryCall() async throws {
        let server = try StubHTTPServer { _ in .json(Self.rateLimited) }
        defer { server.stop() }
        let h = try StoreHarness(quotesURL: server.baseURL, clock: TestClock("2026-05-01T09:00:00Z"))
        _ = try await quote(h, "ann")
        let fallback = try await quote(h, "ann")
        #expect(fallback.kind == "quote")
        #expect(!fallback.text.lowercased().contains("too many requests"))
        #expect(fallback.author != "zenquotes.io")
        // a bundled quote is not credited to ZenQuotes
        #expect(fallback.attribution == nil)
        #expect(fallback.source == "bundled")
        #expect(fallback.isNew == true)
        #expect(server.requests(path: "/api/today").count == 1)

        // Other users within ten minutes: the same bundled quote, no new request.
        for user in ["bob", "cid", "dee"] {
            _ = try await quote(h, user)
            let result = try await quote(h, user)
            #expect(result.text == fallback.text)
        }
        h.clock.advance(9 * 60)
        _ = try await quote(h, "eve")
        _ = try await quote(h, "eve")
        #expect(server.requests(path: "/api/today").count == 1)

        // After ten minutes it tries again; ZenQuotes is back, so new viewers get the real
        // quote. Ann keeps the quote she was shown today.
        server.respond { _ in .json(Self.today) }
        h.clock.advance(2 * 60)
        _ = try await quote(h, "fay")
        let fay = try await quote(h, "fay")
        #expect(fay.author == "Vince Lombardi")
        #expect(server.requests(path: "/api/today").count == 2)
        let ann = try await quote(h, "ann")
        #expect(ann.text == fallback.text)
        #expect(ann.isNew == false)
    }

    @Test func anOutageFallsBackToBundledQuotesChosenByDay() async throws {
        let clock = TestClock("2026-05-01T09:00:00Z")
        let h = try StoreHarness(quotesURL: unreachableQuotes, clock: clock)
        _ = try await quote(h, "ann")
        let first = try await quote(h, "ann")
        #expect(first.kind == "quote" && first.isNew == true)
        #expect(!(first.author ?? "").isEmpty)

        // Deterministic: another store on the same day picks the same bundled quote.
        let other = try StoreHarness(quotesURL: unreachableQuotes, clock: TestClock("2026-05-01T20:00:00Z"))
        _ = try await quote(other, "zed")
        #expect(try await quote(other, "zed").text == first.text)

        clock.set("2026-05-02T09:00:00Z")
        let next = try await quote(h, "ann")
        #expect(next.isNew == true)
        #expect(next.text != first.text)
    }

    @Test func aServerErrorOrGarbageIsAnOutageToo() async throws {
        let server = try StubHTTPServer { _ in .json(#"{"error":"boom"}"#, status: 500) }
        defer { server.stop() }
        let h = try StoreHarness(quotesURL: server.baseURL)
        _ = try await quote(h, "ann")
        #expect(try await quote(h, "ann").kind == "quote")
        server.respond { _ in .json("[]") }
        h.clock.advance(11 * 60)
        _ = try await quote(h, "bob")
        #expect(try await quote(h, "bob").kind == "quote")
        #expect(server.requests(path: "/api/today").count == 2)
    }

    @Test func theDayIsTheUsersDayInTheirTimeZone() async throws {
        let server = try StubHTTPServer { _ in .json(Self.today) }
        defer { server.stop() }
        // 23:30 UTC on 1 May is already 2 May in Paris and still 1 May in New York.
        let h = try StoreHarness(quotesURL: server.baseURL, clock: TestClock("2026-05-01T23:30:00Z"))
        for user in ["paris", "york", "utc"] { _ = try await quote(h, user) }
        let paris = try await quote(h, "paris", timeZone: "Europe/Paris")
        let york = try await quote(h, "york", timeZone: "America/New_York")
        let utc = try await quote(h, "utc")
        #expect(paris.day == "2026-05-02")
        #expect(york.day == "2026-05-01")
        #expect(utc.day == "2026-05-01")
        #expect([paris, york, utc].allSatisfy { $0.isNew == true })

        // 00:30 UTC on 2 May: a new day in UTC, the same day in Paris and New York.
        h.clock.set("2026-05-02T00:30:00Z")
        #expect(try await quote(h, "paris", timeZone: "Europe/Paris").isNew == false)
        #expect(try await quote(h, "york", timeZone: "America/New_York").isNew == false)
        let utcNext = try await quote(h, "utc")
        #expect(utcNext.isNew == true)
        #expect(utcNext.day == "2026-05-02")

        // 22:30 UTC on 2 May is 3 May in Paris.
        h.clock.set("2026-05-02T22:30:00Z")
        let parisNext = try await quote(h, "paris", timeZone: "Europe/Paris")
        #expect(parisNext.day == "2026-05-03")
        #expect(parisNext.isNew == true)
    }

    @Test func withoutATimeZoneTheDayIsTheAccountsZone() async throws {
        let server = try StubHTTPServer { _ in .json(Self.today) }
        defer { server.stop() }
        // 15:30 UTC on 1 May is already 2 May in Tokyo (the account's zone, from auth)
        let h = try StoreHarness(quotesURL: server.baseURL, clock: TestClock("2026-05-01T15:30:00Z"))
        _ = try await quote(h, "tokyo")
        #expect(try await quote(h, "tokyo").day == "2026-05-02")
        // a zone in the request still wins
        #expect(try await quote(h, "tokyo", timeZone: "UTC").day == "2026-05-01")
    }
}
