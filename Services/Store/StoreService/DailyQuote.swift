// The quote of the day: ZenQuotes `/api/today`, fetched at most once per UTC day and kept
// in store.sqlite. ZenQuotes allows about 5 requests per 30 s per IP and answers an
// over-the-limit caller with HTTP 200 and a quote that says "Too many requests…", so that
// body counts as a failure. After a failure the bundled list serves (chosen by day) and the
// fetch is not retried before `retryInterval` has passed. Concurrent callers share one fetch.
import Foundation
import GRDB
import Logging
import Outbound
import Runtime

struct Quote: Sendable, Equatable {
    var text: String
    var author: String
}

actor DailyQuotes {
    let database: any DatabaseWriter
    let http: HTTPClient
    let todayURL: URL
    let retryInterval: TimeInterval
    let logger: Logger
    private var inFlight: [String: Task<Quote, Never>] = [:]
    /// What this process learned last, checked after every suspension (the database reads
    /// above may have raced a fetch that just finished).
    private var fetched: (day: String, quote: Quote)?
    private var failedAt: TimeInterval?

    init(database: any DatabaseWriter, settings: StoreSettings, logger: Logger) {
        self.database = database
        http = HTTPClient(timeout: settings.quoteTimeout)
        todayURL = settings.quotesURL.appendingPathComponent("api").appendingPathComponent("today")
        retryInterval = settings.quoteRetryInterval
        self.logger = logger
    }

    /// The quote of the UTC day that contains `now`.
    func quote(now: Date) async throws -> Quote {
        let day = Day.string(now, in: .gmt)
        if let cached = try await database.read({ db in try Self.cached(db, day: day) }) { return cached }
        let storedFailure = try await database.read { db in
            try Double.fetchOne(db, sql: "SELECT at FROM quoteFetchFailure WHERE id = 1")
        }
        // No suspension from here until `inFlight` is set, so concurrent callers share a fetch.
        if let fetched, fetched.day == day { return fetched.quote }
        if let running = inFlight[day] { return await running.value }
        let lastFailure = [storedFailure, failedAt].compactMap { $0 }.max()
        if let lastFailure, now.timeIntervalSince1970 - lastFailure < retryInterval,
            lastFailure <= now.timeIntervalSince1970
        {
            return FallbackQuotes.quote(for: now)
        }
        let task = Task { await self.fetch(day: day, now: now) }
        inFlight[day] = task
        let quote = await task.value
        inFlight[day] = nil
        return quote
    }

    private func fetch(day: String, now: Date) async -> Quote {
        do {
            let quote = try await download()
            try await database.write { db in
                try db.execute(
                    sql:
                        "INSERT INTO dailyQuote (day, text, author, fetchedAt) VALUES (?, ?, ?, ?) ON CONFLICT(day) DO NOTHING",
                    arguments: [day, quote.text, quote.author, now.timeIntervalSince1970])
                try db.execute(sql: "DELETE FROM quoteFetchFailure")
            }
            logger.info("quote of the day fetched", metadata: ["quote.day": "\(day)"])
            let kept = try await database.read { db in try Self.cached(db, day: day) } ?? quote
            fetched = (day, kept)
            failedAt = nil
            return kept
        } catch {
            logger.warning(
                "quote of the day unavailable; using the bundled list",
                metadata: ["quote.day": "\(day)", "error.detail": "\(error)"])
            failedAt = now.timeIntervalSince1970
            try? await database.write { db in
                try db.execute(
                    sql: """
                        INSERT INTO quoteFetchFailure (id, at, reason) VALUES (1, ?, ?)
                        ON CONFLICT(id) DO UPDATE SET at = excluded.at, reason = excluded.reason
                        """,
                    arguments: [now.timeIntervalSince1970, "\(error)"])
            }
            return FallbackQuotes.quote(for: now)
        }
    }

    private func download() async throws -> Quote {
        let response = try await http.get(todayURL)
        guard response.status == 200 else { throw QuoteError("HTTP \(response.status)") }
        return try Self.parse(response.body)
    }

    /// `[{"q":"…","a":"Author","h":"…"}]`; the rate-limit answer has the same shape.
    static func parse(_ body: Data) throws -> Quote {
        struct Entry: Decodable {
            var q: String?
            var a: String?
        }
        guard let entries = try? JSONDecoder().decode([Entry].self, from: body), let first = entries.first,
            let text = first.q?.trimmingCharacters(in: .whitespacesAndNewlines), !text.isEmpty
        else { throw QuoteError("unexpected body: not an array of {q, a}") }
        let author = first.a?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        if text.lowercased().hasPrefix("too many requests") || author.lowercased() == "zenquotes.io" {
            throw QuoteError("rate limited: \(text)")
        }
        return Quote(text: text, author: author.isEmpty ? "Unknown" : author)
    }

    static func cached(_ db: Database, day: String) throws -> Quote? {
        try Row.fetchOne(db, sql: "SELECT text, author FROM dailyQuote WHERE day = ?", arguments: [day]).map {
            Quote(text: $0["text"], author: $0["author"])
        }
    }
}

struct QuoteError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

enum Day {
    /// "YYYY-MM-DD" of `date` in `zone`.
    static func string(_ date: Date, in zone: TimeZone) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let parts = calendar.dateComponents([.year, .month, .day], from: date)
        return String(format: "%04d-%02d-%02d", parts.year ?? 0, parts.month ?? 0, parts.day ?? 0)
    }
}

/// What the first open shows instead of a quote.
enum Intro {
    static let text = """
        Welcome to Ten-Grand. It takes about 10,000 hours of deliberate practice to master \
        something, whether it is the violin, a language, code or a craft. Here every hour you \
        track is worth $1.00, so mastery is $10,000.00. Create an activity for each thing you \
        practise, start the timer when you begin and save it when you stop. Your net worth is \
        all the time you have ever saved; spend the cash it earns in the store, and come back \
        each day for a new quote to keep you going.
        """
}

/// Classic, public-domain quotes for days when ZenQuotes cannot be reached.
enum FallbackQuotes {
    static let all: [Quote] = [
        Quote(text: "Well begun is half done.", author: "Aristotle"),
        Quote(text: "The journey of a thousand miles begins with a single step.", author: "Lao Tzu"),
        Quote(text: "Art is long, life is short.", author: "Hippocrates"),
        Quote(text: "Practice is everything.", author: "Periander"),
        Quote(text: "Slow and steady wins the race.", author: "Aesop"),
        Quote(text: "Drop by drop is the water pot filled.", author: "The Dhammapada"),
        Quote(text: "Whatsoever thy hand findeth to do, do it with thy might.", author: "Ecclesiastes 9:10"),
        Quote(text: "Diligence is the mother of good luck.", author: "Benjamin Franklin"),
        Quote(text: "Lost time is never found again.", author: "Benjamin Franklin"),
        Quote(
            text: "Dost thou love life? Then do not squander time, for that's the stuff life is made of.",
            author: "Benjamin Franklin"),
        Quote(text: "Well done is better than well said.", author: "Benjamin Franklin"),
        Quote(text: "One today is worth two tomorrows.", author: "Benjamin Franklin"),
        Quote(text: "He that can have patience can have what he will.", author: "Benjamin Franklin"),
        Quote(text: "Great works are performed not by strength but by perseverance.", author: "Samuel Johnson"),
        Quote(
            text: "What we hope ever to do with ease, we must learn first to do with diligence.",
            author: "Samuel Johnson"),
        Quote(
            text: "Knowing is not enough; we must apply. Willing is not enough; we must do.",
            author: "Johann Wolfgang von Goethe"),
        Quote(text: "Our patience will achieve more than our force.", author: "Edmund Burke"),
        Quote(
            text: "It is not enough to be busy; so are the ants. The question is: what are we busy about?",
            author: "Henry David Thoreau"),
        Quote(text: "The best way out is always through.", author: "Robert Frost"),
        Quote(
            text: "Genius is nothing but a greater aptitude for patience.", author: "Georges-Louis Leclerc de Buffon"),
        Quote(
            text: "A man who dares to waste one hour of time has not discovered the value of life.",
            author: "Charles Darwin"),
        Quote(text: "Genius is one per cent inspiration, ninety-nine per cent perspiration.", author: "Thomas Edison"),
        Quote(text: "Do what you can, with what you have, where you are.", author: "Theodore Roosevelt"),
        Quote(
            text: "Habit is a cable; we weave a thread of it each day, and at last we cannot break it.",
            author: "Horace Mann"),
        Quote(
            text:
                "Use what talents you possess: the woods would be very silent if no birds sang there except those that sang best.",
            author: "Henry van Dyke"),
        Quote(text: "Every artist was first an amateur.", author: "Ralph Waldo Emerson"),
        Quote(text: "Energy and persistence conquer all things.", author: "Benjamin Franklin"),
        Quote(text: "Rome was not built in a day.", author: "Proverb"),
        Quote(text: "Nothing is particularly hard if you divide it into small jobs.", author: "Henry Ford"),
        Quote(
            text: "Perseverance is not a long race; it is many short races one after the other.",
            author: "Walter Elliot"),
    ]

    /// The same quote all (UTC) day, a different one the next.
    static func quote(for date: Date) -> Quote {
        let days = Int((date.timeIntervalSince1970 / 86_400).rounded(.down))
        return all[((days % all.count) + all.count) % all.count]
    }
}
