// The store service's contract (docs/protocol.md, "Store service"): the shelf, the wallet,
// the ledger and the quote of the day. Money is whole cents; time is whole milliseconds.
import Foundation
import Wire

/// `store.buy`.
public struct BuyRequest: Documented, Equatable {
    public var itemId: String
    public init(itemId: String) { self.itemId = itemId }
    public static let sample = BuyRequest(itemId: "metronome")
}

/// `store.quote`.
public struct QuoteRequest: Documented, Equatable {
    /// An IANA zone such as "Europe/Paris"; the user's day is counted there. Default UTC.
    public var timeZone: String?
    public init(timeZone: String? = nil) { self.timeZone = timeZone }
    public static let sample = QuoteRequest(timeZone: "Europe/Paris")
}

public struct WalletView: Codable, Sendable, Equatable {
    public var netWorthCents: Int64
    public var netWorthMs: Int64
    public var spentCents: Int64
    public var cashCents: Int64

    public init(netWorthCents: Int64, netWorthMs: Int64, spentCents: Int64, cashCents: Int64) {
        self.netWorthCents = netWorthCents
        self.netWorthMs = netWorthMs
        self.spentCents = spentCents
        self.cashCents = cashCents
    }
}

public struct ItemView: Codable, Sendable, Equatable {
    public var id: String
    public var name: String
    public var description: String
    public var priceCents: Int64
    /// Bought: shown in gold, never for sale again.
    public var owned: Bool
    public var purchasedAt: Date?

    public init(id: String, name: String, description: String, priceCents: Int64, owned: Bool, purchasedAt: Date?) {
        self.id = id
        self.name = name
        self.description = description
        self.priceCents = priceCents
        self.owned = owned
        self.purchasedAt = purchasedAt
    }
}

public struct ItemsResult: Codable, Sendable, Equatable {
    public var items: [ItemView]
    public var cashCents: Int64

    public init(items: [ItemView], cashCents: Int64) {
        self.items = items
        self.cashCents = cashCents
    }
}

public struct InfoResult: Codable, Sendable, Equatable {
    public var title: String
    public var rules: [String]
    public var text: String
    public var centsPerHour: Int

    public init(title: String, rules: [String], text: String, centsPerHour: Int) {
        self.title = title
        self.rules = rules
        self.text = text
        self.centsPerHour = centsPerHour
    }
}

public struct PurchaseResult: Codable, Sendable, Equatable {
    public var itemId: String
    public var name: String
    public var priceCents: Int64
    public var ledgerId: String
    public var purchasedAt: Date
    public var wallet: WalletView

    public init(itemId: String, name: String, priceCents: Int64, ledgerId: String, purchasedAt: Date, wallet: WalletView) {
        self.itemId = itemId
        self.name = name
        self.priceCents = priceCents
        self.ledgerId = ledgerId
        self.purchasedAt = purchasedAt
        self.wallet = wallet
    }
}

public struct LedgerEntryView: Codable, Sendable, Equatable {
    public var id: String
    public var kind: String
    /// Positive for earnings, negative for purchases and corrections.
    public var amountCents: Int64
    /// Tracked time behind an earning (negative for a correction); absent for purchases.
    public var durationMs: Int64?
    /// Cash after this entry.
    public var balanceAfterCents: Int64
    public var netWorthAfterCents: Int64
    /// The time entry id (earning, correction) or the item id (purchase).
    public var reference: String
    public var at: Date

    public init(
        id: String, kind: String, amountCents: Int64, durationMs: Int64?, balanceAfterCents: Int64,
        netWorthAfterCents: Int64, reference: String, at: Date
    ) {
        self.id = id
        self.kind = kind
        self.amountCents = amountCents
        self.durationMs = durationMs
        self.balanceAfterCents = balanceAfterCents
        self.netWorthAfterCents = netWorthAfterCents
        self.reference = reference
        self.at = at
    }
}

public struct LedgerResult: Codable, Sendable, Equatable {
    public var entries: [LedgerEntryView]
    public var nextCursor: String?

    public init(entries: [LedgerEntryView], nextCursor: String?) {
        self.entries = entries
        self.nextCursor = nextCursor
    }
}

public struct QuoteResult: Codable, Sendable, Equatable {
    /// "intro" the first time a user ever opens the app, then "quote".
    public var kind: String
    public var text: String
    public var author: String?
    /// ZenQuotes' credit, only on a quote ZenQuotes gave (a bundled quote has none).
    public var attribution: String?
    /// `zenquotes` or `bundled` (the public-domain list used when ZenQuotes is unreachable).
    public var source: String?
    /// True only the first time this user sees the quote on this day.
    public var isNew: Bool?
    /// The user's day (YYYY-MM-DD) in the requested time zone.
    public var day: String?

    public init(
        kind: String, text: String, author: String? = nil, attribution: String? = nil, source: String? = nil,
        isNew: Bool? = nil, day: String? = nil
    ) {
        self.kind = kind
        self.text = text
        self.author = author
        self.attribution = attribution
        self.source = source
        self.isNew = isNew
        self.day = day
    }
}

// MARK: Methods

public enum StoreMethods {
    public static let items = Method<Empty, ItemsResult>("store.items", .read)
    public static let info = Method<Empty, InfoResult>("store.info", .read)
    public static let wallet = Method<Empty, WalletView>("store.wallet", .read)
    /// `limit` 1…200, default 50.
    public static let ledger = Method<ListBody, LedgerResult>("store.ledger", .read)
    public static let buy = Method<BuyRequest, PurchaseResult>("store.buy", .write)
    /// Records the quote the user has seen today (and the intro, once), in writes of its own.
    public static let quote = Method<QuoteRequest, QuoteResult>("store.quote", .ownWrite)
}
