// The store service: cash earned from tracked time, ten items to buy, a ledger, and the
// intro / quote of the day. Its state is built from records' `time.*` events (applied with
// the consumer's checkpoint, so a wiped store.sqlite replays to the same wallets) plus its
// own purchases; auth's `user.deleted` purges a user. docs/protocol.md, "Store service" is the contract.
import Contracts
import Foundation
import GRDB
import Logging
import Outbound
import Runtime
import ServiceLifecycle
import Storage
import Wire

public struct StoreSettings: Sendable {
    /// ZenQuotes' base URL (`LOGBOOK_STORE_QUOTES_URL`); `/api/today` is appended.
    public var quotesURL: URL
    /// After a failed fetch, the bundled quotes serve until this much time has passed.
    public var quoteRetryInterval: TimeInterval
    /// Whole seconds (HTTPClient rounds up).
    public var quoteTimeout: Duration
    /// Injected so tests can cross a day boundary.
    public var clock: @Sendable () -> Date

    public init(
        quotesURL: URL = URL(string: "https://zenquotes.io")!, quoteRetryInterval: TimeInterval = 600,
        quoteTimeout: Duration = .seconds(3), clock: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.quotesURL = quotesURL
        self.quoteRetryInterval = quoteRetryInterval
        self.quoteTimeout = quoteTimeout
        self.clock = clock
    }

    /// Reads `LOGBOOK_STORE_QUOTES_URL`.
    public init(configuration: StackConfiguration) throws {
        self.init()
        if let text = configuration.setting("store", "QUOTES_URL") {
            guard let url = URL(string: text), url.scheme == "http" || url.scheme == "https" else {
                throw ConfigurationError("LOGBOOK_STORE_QUOTES_URL must be an http(s) URL (got \"\(text)\")")
            }
            quotesURL = url
        }
    }
}

/// Its state comes from every records shard's `time.*` events (each shard with its own
/// checkpoint) and auth's `user.deleted`.
extension StoreService: LogbookService {
    public static func assemble(on host: ServiceHost, configuration: StackConfiguration) throws -> ServiceAssembly {
        let store = StoreService(host: host, settings: try StoreSettings(configuration: configuration))
        return ServiceAssembly(
            router: store.router(),
            subscriptions: [
                // every other records event (expenses, fill-ups, catches…) only moves the
                // checkpoint: no decode, no transaction of its own
                Subscription(
                    "records", types: [TimeEvents.timeSaved, TimeEvents.timeDeleted], feedsReplies: true,
                    handler: store.applyRecordsEvent),
                Subscription("auth", types: [AuthEvents.userDeleted], handler: store.applyAuthEvent),
            ])
    }
}

public final class StoreService: Sendable {
    public static let name = "store"
    public static let attribution = "Inspirational quotes provided by ZenQuotes API (https://zenquotes.io)"

    public static var migrator: DatabaseMigrator { Schema.migrator }

    public let host: ServiceHost
    let settings: StoreSettings
    let quotes: DailyQuotes
    let logger: Logger

    public init(host: ServiceHost, settings: StoreSettings) {
        self.host = host
        self.settings = settings
        logger = host.logger
        quotes = DailyQuotes(database: host.database, settings: settings, logger: host.logger)
    }

    public func router() -> Router {
        var router = host.makeRouter()
        let clock = settings.clock
        router.read(StoreMethods.items) { _, context in try await self.items(userId: context.userId) }
        router.read(StoreMethods.info) { _, _ in Self.info }
        router.read(StoreMethods.wallet) { _, context in
            try await self.host.database.read { db in WalletView(try WalletState.load(db, userId: context.userId)) }
        }
        router.read(StoreMethods.ledger) { body, context in try await self.ledger(body, userId: context.userId) }
        router.write(StoreMethods.buy) { body, context, db in
            let itemId = body.itemId.trimmingWhitespace
            guard !itemId.isEmpty else { throw ServiceError.invalid("itemId", "must not be empty") }
            return try Ledger.buy(db, userId: context.userId, itemId: itemId, at: clock())
        }
        router.ownWrite(StoreMethods.quote) { body, context in
            try await self.quote(body, userId: context.userId, accountZone: context.principal?.timeZone, context: context)
        }
        return router
    }

    // MARK: Reads

    func items(userId: String) async throws -> ItemsResult {
        try await host.database.read { db in
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT item.id, item.name, item.description, item.priceCents, purchase.at AS purchasedAt
                    FROM item LEFT JOIN purchase ON purchase.itemId = item.id AND purchase.userId = ?
                    ORDER BY item.position
                    """,
                arguments: [userId])
            let items = rows.map { row in
                let purchasedAt: Double? = row["purchasedAt"]
                return ItemView(
                    id: row["id"], name: row["name"], description: row["description"], priceCents: row["priceCents"],
                    owned: purchasedAt != nil, purchasedAt: purchasedAt.map { Date(timeIntervalSince1970: $0) })
            }
            return ItemsResult(items: items, cashCents: try WalletState.load(db, userId: userId).cashCents)
        }
    }

    static let info: InfoResult = {
        let rules = [
            "Every hour you track earns $1.00 of net worth: one cent for each 36 seconds of saved time.",
            "Cash is your net worth minus everything you have spent in the store.",
            "Buying spends cash only; it never lowers your net worth.",
            "Each item is bought once and kept forever: it turns gold and leaves the shelf.",
            "If your cash is short, the purchase fails and tells you how much more time to track.",
        ]
        return InfoResult(
            title: "How the store works", rules: rules,
            text: "Your time is your money. " + rules.joined(separator: " "), centsPerHour: 100)
    }()

    func ledger(_ body: ListBody, userId: String) async throws -> LedgerResult {
        let limit = body.limit ?? 50
        guard (1...200).contains(limit) else {
            throw ServiceError.invalid("limit", "must be between 1 and 200 (got \(limit))")
        }
        // The cursor is the id of the page's last entry, an entry of the caller's own (not
        // the table's sequence number, whose gaps would count other users' entries).
        let cursor = body.cursor
        return try await host.database.read { db in
            var before = Int64.max
            if let cursor {
                guard
                    let seq = try Int64.fetchOne(
                        db, sql: "SELECT seq FROM ledger WHERE userId = ? AND id = ?", arguments: [userId, cursor])
                else { throw ServiceError.invalid("cursor", "is not a cursor returned by store.ledger") }
                before = seq
            }
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT seq, id, kind, amountCents, durationMs, balanceAfterCents, netWorthAfterCents, reference, at
                    FROM ledger WHERE userId = ? AND seq < ? ORDER BY seq DESC LIMIT ?
                    """,
                arguments: [userId, before, limit + 1])
            let page = rows.prefix(limit)
            let entries = page.map { row in
                LedgerEntryView(
                    id: row["id"], kind: row["kind"], amountCents: row["amountCents"], durationMs: row["durationMs"],
                    balanceAfterCents: row["balanceAfterCents"], netWorthAfterCents: row["netWorthAfterCents"],
                    reference: row["reference"], at: Date(timeIntervalSince1970: row["at"]))
            }
            let next: String? = rows.count > limit ? page.last.map { row in row["id"] as String } : nil
            return LedgerResult(entries: entries, nextCursor: next)
        }
    }

    // MARK: Intro and quote of the day

    /// The first call ever answers the intro; later calls the quote of the user's day,
    /// pinned on their first open of that day so it stays the same all day. The day is the
    /// user's: in `timeZone` when the request names one, else in the account's zone.
    func quote(_ body: QuoteRequest, userId: String, accountZone: String? = nil, context: RequestContext? = nil)
        async throws -> QuoteResult
    {
        var zone = LocalDays.zone(or: accountZone)
        if let name = body.timeZone {
            guard let parsed = TimeZone(identifier: name) else {
                throw ServiceError.invalid(
                    "timeZone", "must be an IANA time zone such as \"Europe/Paris\" (got \"\(name)\")")
            }
            zone = parsed
        }
        let now = settings.clock()
        let database = host.database
        let visited = try await database.read { db in
            try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM visitor WHERE userId = ?)", arguments: [userId])
                ?? false
        }
        if !visited {
            let first = try await host.commits.write { db in
                try Self.mayWrite(db, userId: userId, context)
                try db.execute(
                    sql: "INSERT INTO visitor (userId, introShownAt) VALUES (?, ?) ON CONFLICT(userId) DO NOTHING",
                    arguments: [userId, now.timeIntervalSince1970])
                return db.changesCount == 1
            }
            if first { return QuoteResult(kind: "intro", text: Intro.text) }
        }
        let day = Day.string(now, in: zone)
        if let seen = try await database.read({ db in try Self.seen(db, userId: userId, day: day) }) {
            return Self.quoteResult(seen, isNew: false, day: day)
        }
        let quote = try await quotes.quote(now: now)
        let (shown, isNew) = try await host.commits.write { db in
            try Self.mayWrite(db, userId: userId, context)
            try db.execute(
                sql: """
                    INSERT INTO quoteSeen (userId, day, text, author, seenAt) VALUES (?, ?, ?, ?, ?)
                    ON CONFLICT(userId, day) DO NOTHING
                    """,
                arguments: [userId, day, quote.text, quote.author, now.timeIntervalSince1970])
            if db.changesCount == 1 { return (quote, true) }
            return (try Self.seen(db, userId: userId, day: day) ?? quote, false)
        }
        return Self.quoteResult(shown, isNew: isNew, day: day)
    }

    /// Before the intro or a day's quote is marked seen: not for a caller who has given up
    /// (the next call would say the quote is not new, though nobody saw it), nor for a user
    /// whose deletion the store has applied (the purge has run, and would not run again).
    static func mayWrite(_ db: Database, userId: String, _ context: RequestContext?) throws {
        try context?.checkDeadline()
        if try Ledger.isDeleted(db, userId: userId) { throw ServiceError.unauthenticated("session expired or revoked") }
    }

    static func seen(_ db: Database, userId: String, day: String) throws -> Quote? {
        try Row.fetchOne(
            db, sql: "SELECT text, author FROM quoteSeen WHERE userId = ? AND day = ?", arguments: [userId, day]
        )
        .map { Quote(text: $0["text"], author: $0["author"]) }
    }

    /// A quote from the bundled list is not ZenQuotes': it gets no ZenQuotes credit.
    static func quoteResult(_ quote: Quote, isNew: Bool, day: String) -> QuoteResult {
        let bundled = FallbackQuotes.all.contains(quote)
        return QuoteResult(
            kind: "quote", text: quote.text, author: quote.author, attribution: bundled ? nil : attribution,
            source: bundled ? "bundled" : "zenquotes", isNew: isNew, day: day)
    }

    // MARK: Events from other services

    /// records' events, applied in the consumer's transaction with its checkpoint. Types the
    /// store does not use are ignored; a malformed event is logged and skipped rather than
    /// blocking every later event.
    public func applyRecordsEvent(_ db: Database, _ event: Event) throws {
        switch event.type {
        case TimeEvents.timeSaved:
            guard let userId = event.userId else { return skip(event, because: "no userId") }
            guard let saved = decode(TimeSavedEvent.self, event) else { return }
            // The upper bound (a century) keeps a corrupt value from overflowing a wallet.
            guard (0...Self.maxEntryMs).contains(saved.durationMs), !saved.id.isEmpty else {
                return skip(event, because: "durationMs must be 0…\(Self.maxEntryMs) and id must not be empty")
            }
            do {
                try Ledger.earn(db, userId: userId, entryId: saved.id, durationMs: saved.durationMs, savedAt: saved.savedAt)
            } catch let full as Ledger.WalletFull {
                return skip(event, because: full.description)
            }
        case TimeEvents.timeDeleted:
            guard let userId = event.userId else { return skip(event, because: "no userId") }
            guard let deleted = decode(TimeDeleted.self, event) else { return }
            try Ledger.correct(db, userId: userId, entryId: deleted.id, at: event.at)
        default:
            return
        }
    }

    static let maxEntryMs: Int64 = 100 * 366 * 24 * 3_600_000

    /// auth's events: `user.deleted` purges everything the store knows about the user.
    public func applyAuthEvent(_ db: Database, _ event: Event) throws {
        guard event.type == AuthEvents.userDeleted else { return }
        guard let userId = (try? event.decode(AuthEvents.UserDeleted.self))?.userId ?? event.userId else {
            skip(event, because: "no userId")
            return
        }
        try Ledger.purge(db, userId: userId, at: event.at)
    }

    private func decode<T: Decodable>(_ type: T.Type, _ event: Event) -> T? {
        do {
            return try event.decode(T.self)
        } catch {
            skip(event, because: WireCoding.describe(error))
            return nil
        }
    }

    private func skip(_ event: Event, because reason: String) {
        logger.error(
            "malformed event skipped",
            metadata: ["event.type": "\(event.type)", "event.seq": "\(event.seq)", "error.detail": "\(reason)"])
    }
}
