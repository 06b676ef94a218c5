// The money rules, as named writes on an open transaction. Every change to a wallet appends
// one ledger row carrying the cash and net worth after it, so the ledger alone explains the
// wallet. Earnings and corrections come from records' events (and therefore replay to the
// same rows); purchases come from `store.buy`.
import Contracts
import Foundation
import GRDB
import Storage
import Wire

struct WalletState: Sendable, Equatable {
    var earnedMs: Int64 = 0
    var spentCents: Int64 = 0

    /// Floor of the total, never a sum of per-entry roundings.
    var netWorthCents: Int64 { TimeValue.cents(earnedMs) }
    var cashCents: Int64 { netWorthCents - spentCents }

    static func load(_ db: Database, userId: String) throws -> WalletState {
        guard
            let row = try Row.fetchOne(
                db, sql: "SELECT earnedMs, spentCents FROM wallet WHERE userId = ?", arguments: [userId])
        else { return WalletState() }
        return WalletState(earnedMs: row["earnedMs"], spentCents: row["spentCents"])
    }

    func save(_ db: Database, userId: String) throws {
        try db.execute(
            sql: """
                INSERT INTO wallet (userId, earnedMs, spentCents) VALUES (?, ?, ?)
                ON CONFLICT(userId) DO UPDATE SET earnedMs = excluded.earnedMs, spentCents = excluded.spentCents
                """,
            arguments: [userId, earnedMs, spentCents])
    }
}

extension WalletView {
    init(_ state: WalletState) {
        self.init(
            netWorthCents: state.netWorthCents, netWorthMs: state.earnedMs, spentCents: state.spentCents,
            cashCents: state.cashCents)
    }
}

enum LedgerKind: String, Codable, Sendable {
    case earning, purchase, correction
}

enum Ledger {
    /// A saved entry that would take the user's total tracked time past Int64 (a damaged
    /// wallet: each entry is at most a century). The event is skipped, not credited.
    struct WalletFull: Error, CustomStringConvertible {
        var userId: String
        var entryId: String
        var description: String { "the wallet's total would overflow: entry \(entryId) not credited" }
    }

    /// Credits a saved time entry once. Returns false when it was already credited (a
    /// duplicate event) or the user has been deleted.
    @discardableResult
    static func earn(_ db: Database, userId: String, entryId: String, durationMs: Int64, savedAt: Date) throws -> Bool {
        if try isDeleted(db, userId: userId) { return false }
        var wallet = try WalletState.load(db, userId: userId)
        // (each entry is at most a century, so only a damaged wallet gets here: the entry is
        // not credited rather than the consumer trapping on it, and stopping, at every start)
        let (earned, overflow) = wallet.earnedMs.addingReportingOverflow(durationMs)
        guard !overflow else { throw Ledger.WalletFull(userId: userId, entryId: entryId) }
        try db.execute(
            sql: """
                INSERT INTO timeEntry (userId, entryId, durationMs, savedAt) VALUES (?, ?, ?, ?)
                ON CONFLICT(userId, entryId) DO NOTHING
                """,
            arguments: [userId, entryId, durationMs, savedAt.timeIntervalSince1970])
        guard db.changesCount == 1 else { return false }
        let before = wallet.netWorthCents
        wallet.earnedMs = earned
        try wallet.save(db, userId: userId)
        try append(
            db, id: derivedId(at: savedAt, seed: "earning\n\(userId)\n\(entryId)"), userId: userId, kind: .earning,
            amountCents: wallet.netWorthCents - before, durationMs: durationMs, wallet: wallet, reference: entryId,
            at: savedAt)
        return true
    }

    /// Takes back a credited entry that records deleted. Net worth drops by exactly what the
    /// entry added; cash may go below zero if it was already spent; owned items are kept.
    @discardableResult
    static func correct(_ db: Database, userId: String, entryId: String, at: Date) throws -> Bool {
        guard
            let durationMs = try Int64.fetchOne(
                db, sql: "SELECT durationMs FROM timeEntry WHERE userId = ? AND entryId = ? AND deletedAt IS NULL",
                arguments: [userId, entryId])
        else { return false }
        try db.execute(
            sql: "UPDATE timeEntry SET deletedAt = ? WHERE userId = ? AND entryId = ?",
            arguments: [at.timeIntervalSince1970, userId, entryId])
        var wallet = try WalletState.load(db, userId: userId)
        let before = wallet.netWorthCents
        wallet.earnedMs = max(0, wallet.earnedMs - durationMs)
        try wallet.save(db, userId: userId)
        try append(
            db, id: derivedId(at: at, seed: "correction\n\(userId)\n\(entryId)"), userId: userId, kind: .correction,
            amountCents: wallet.netWorthCents - before, durationMs: -durationMs, wallet: wallet, reference: entryId,
            at: at)
        return true
    }

    /// Buys an item: owned check, cash check and insert in the caller's transaction, so
    /// concurrent buys by one user can never overspend.
    static func buy(_ db: Database, userId: String, itemId: String, at: Date) throws -> PurchaseResult {
        guard
            let item = try Row.fetchOne(
                db, sql: "SELECT id, name, priceCents FROM item WHERE id = ?", arguments: [itemId])
        else { throw ServiceError(.notFound, "item \"\(itemId)\" not found; store.items lists the ten items") }
        let name: String = item["name"]
        let price: Int64 = item["priceCents"]
        if try Bool.fetchOne(
            db, sql: "SELECT EXISTS (SELECT 1 FROM purchase WHERE userId = ? AND itemId = ?)",
            arguments: [userId, itemId])
            == true
        {
            throw ServiceError(.alreadyExists, "you already own \(name); an item is bought once and kept forever")
        }
        var wallet = try WalletState.load(db, userId: userId)
        guard wallet.cashCents >= price else {
            // (with cash below zero, what is owed counts too: this much more, tracked, buys it)
            let shortfall = price - wallet.cashCents
            throw ServiceError(
                .failedPrecondition,
                "not enough cash for \(name): it costs \(Money.format(price)), you have \(Money.format(wallet.cashCents)); "
                    + "short by \(Money.format(shortfall)) (\(Money.hours(shortfall)) more tracked)",
                details: [
                    "shortfallCents": .number(.init(shortfall)), "cashCents": .number(.init(wallet.cashCents)),
                    "priceCents": .number(.init(price)),
                ])
        }
        let ledgerId = ID.make(at: at)
        wallet.spentCents += price
        try db.execute(
            sql: "INSERT INTO purchase (userId, itemId, priceCents, ledgerId, at) VALUES (?, ?, ?, ?, ?)",
            arguments: [userId, itemId, price, ledgerId, at.timeIntervalSince1970])
        try wallet.save(db, userId: userId)
        try append(
            db, id: ledgerId, userId: userId, kind: .purchase, amountCents: -price, durationMs: nil, wallet: wallet,
            reference: itemId, at: at)
        return PurchaseResult(
            itemId: itemId, name: name, priceCents: price, ledgerId: ledgerId, purchasedAt: at,
            wallet: WalletView(wallet))
    }

    /// Forgets everything about a user (auth's `user.deleted`) and remembers that they are
    /// gone, so a late or replayed records event does not bring their wallet back.
    static func purge(_ db: Database, userId: String, at: Date) throws {
        for sql in [
            "DELETE FROM wallet WHERE userId = ?", "DELETE FROM timeEntry WHERE userId = ?",
            "DELETE FROM purchase WHERE userId = ?", "DELETE FROM visitor WHERE userId = ?",
            "DELETE FROM quoteSeen WHERE userId = ?", "DELETE FROM ledger WHERE userId = ?",
        ] {
            try db.execute(sql: sql, arguments: [userId])
        }
        try Idempotency.purge(db, principal: userId)
        try Outbox.redact(db, userId: userId)
        try DeletedUsers.remember(db, userId: userId, at: at)
    }

    static func isDeleted(_ db: Database, userId: String) throws -> Bool { try DeletedUsers.contains(db, userId: userId) }

    private static func append(
        _ db: Database, id: String, userId: String, kind: LedgerKind, amountCents: Int64, durationMs: Int64?,
        wallet: WalletState, reference: String, at: Date
    ) throws {
        try db.execute(
            sql: """
                INSERT INTO ledger (id, userId, kind, amountCents, durationMs, balanceAfterCents, netWorthAfterCents, reference, at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                """,
            arguments: [
                id, userId, kind.rawValue, amountCents, durationMs, wallet.cashCents, wallet.netWorthCents, reference,
                at.timeIntervalSince1970,
            ])
    }

    /// A UUIDv7-shaped id whose time part is `at` and whose rest is a hash of `seed`: a
    /// ledger row made from an event gets the same id when the event is replayed.
    static func derivedId(at: Date, seed: String) -> String {
        let hash = Crypto.sha256Hex(seed)
        let ms = UInt64(max(0, at.timeIntervalSince1970 * 1000))
        let time = String(format: "%012llx", ms & 0xFFFF_FFFF_FFFF)
        let h = Array(hash)
        let variant = ["8", "9", "a", "b"][(Int(String(h[16]), radix: 16) ?? 0) % 4]
        return
            "\(time.prefix(8))-\(time.suffix(4))-7\(String(h[0..<3]))-\(variant)\(String(h[3..<6]))-\(String(h[6..<18]))"
    }
}

enum Money {
    /// 123456 → "$1,234.56"; negative amounts get a leading minus.
    static func format(_ cents: Int64) -> String { TimeValue.dollars(cents) }

    /// The tracked time that earns `cents`, e.g. "2h 30m".
    static func hours(_ cents: Int64) -> String {
        let minutes = (cents * TimeValue.msPerCent + 59_999) / 60_000
        return minutes >= 60 ? "\(minutes / 60)h \(minutes % 60)m" : "\(minutes)m"
    }
}
