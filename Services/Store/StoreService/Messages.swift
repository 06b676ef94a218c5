// Request bodies, results and event payloads of the store service (docs/protocol.md, "Store service").
import Foundation

public struct BuyRequest: Codable, Sendable {
    public var itemId: String
    public init(itemId: String) { self.itemId = itemId }
}

public struct LedgerRequest: Codable, Sendable {
    public var cursor: String?
    public var limit: Int?
    public init(cursor: String? = nil, limit: Int? = nil) {
        self.cursor = cursor
        self.limit = limit
    }
}

public struct QuoteRequest: Codable, Sendable {
    /// An IANA zone such as "Europe/Paris"; the user's day is counted there. Default UTC.
    public var timeZone: String?
    public init(timeZone: String? = nil) { self.timeZone = timeZone }
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

    init(_ state: WalletState) {
        self.init(
            netWorthCents: state.netWorthCents, netWorthMs: state.earnedMs, spentCents: state.spentCents,
            cashCents: state.cashCents)
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
}

public struct ItemsResult: Codable, Sendable, Equatable {
    public var items: [ItemView]
    public var cashCents: Int64
}

public struct InfoResult: Codable, Sendable, Equatable {
    public var title: String
    public var rules: [String]
    public var text: String
    public var centsPerHour: Int
}

public struct PurchaseResult: Codable, Sendable, Equatable {
    public var itemId: String
    public var name: String
    public var priceCents: Int64
    public var ledgerId: String
    public var purchasedAt: Date
    public var wallet: WalletView
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
}

public struct LedgerResult: Codable, Sendable, Equatable {
    public var entries: [LedgerEntryView]
    public var nextCursor: String?
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
}

/// `store.purchased`, published through the outbox.
public struct PurchasedEvent: Codable, Sendable, Equatable {
    public var itemId: String
    public var priceCents: Int64
    public var ledgerId: String
}

/// records' `time.deleted`.
struct TimeDeleted: Decodable {
    var id: String
}

/// auth's `user.deleted`.
struct UserDeleted: Decodable {
    var userId: String?
}
