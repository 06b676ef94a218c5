// Buying: enough cash, not enough (shortfall named), already owned, idempotency keys,
// concurrent buys that must never overspend, validation, and users kept apart.
import Contracts
import Foundation
import GRDB
import Runtime
import Storage
import StoreService
import Testing
import Wire

@Suite struct PurchaseTests {
    func harness(earning hours: Int64, user: String = "ann") async throws -> StoreHarness {
        let h = try StoreHarness()
        var script = EventScript()
        script.saved(user, "e1", ms: hours * hour)
        try await h.records.apply(script.events)
        return h
    }

    @Test func catalogueAndInfo() async throws {
        let h = try StoreHarness()
        let items: ItemsResult = try await h.call("store.items", user: "ann")
        #expect(items.items.count == 10)
        #expect(Set(items.items.map(\.id)).count == 10)
        #expect(items.items.first?.priceCents == 500)
        #expect(items.items.last?.priceCents == 500_000)
        #expect(items.items.map(\.priceCents) == items.items.map(\.priceCents).sorted())
        #expect(items.items.allSatisfy { !$0.owned && !$0.name.isEmpty && !$0.description.isEmpty })
        #expect(items.cashCents == 0)
        let info: JSONValue = try await h.call("store.info", user: "ann")
        let text = info["text"]?.stringValue ?? ""
        #expect(text.contains("$1.00"))
        #expect(text.contains("never lowers your net worth"))
        #expect(text.contains("kept forever"))
        #expect(info["rules"]?.arrayValue?.count == 5)
    }

    @Test func buyWithEnoughCash() async throws {
        let h = try await harness(earning: 60)
        let result = try await h.buy("ann", "metronome")
        #expect(result.priceCents == 5_000)
        #expect(
            result.wallet
                == WalletView(netWorthCents: 6_000, netWorthMs: 60 * hour, spentCents: 5_000, cashCents: 1_000))
        #expect(result.purchasedAt == h.clock.now)

        let items: ItemsResult = try await h.call("store.items", user: "ann")
        let metronome = try #require(items.items.first { $0.id == "metronome" })
        #expect(metronome.owned)
        #expect(metronome.purchasedAt == h.clock.now)
        #expect(items.items.filter(\.owned).count == 1)
        #expect(items.cashCents == 1_000)

        let ledger = try await h.ledger("ann")
        #expect(ledger.first?.kind == "purchase")
        #expect(ledger.first?.id == result.ledgerId)
        #expect(ledger.first?.amountCents == -5_000)
        #expect(ledger.first?.balanceAfterCents == 1_000)
        #expect(ledger.first?.netWorthAfterCents == 6_000)  // buying never lowers net worth
        #expect(ledger.first?.reference == "metronome")

        // No service consumes purchases: the store publishes no event for one.
        let events = try await h.transport.call("events.since", EventsSince(after: 0), as: EventsSinceResult.self)
        #expect(events.events.isEmpty)
    }

    @Test func notEnoughCashNamesTheShortfall() async throws {
        let h = try await harness(earning: 30)
        let error = try await h.error("store.buy", ["itemId": "metronome"], user: "ann")
        #expect(error.code == .failedPrecondition)
        #expect(error.message.contains("$20.00"), "\(error.message)")
        #expect(error.message.contains("20h 0m"), "\(error.message)")
        #expect(error.details == ["shortfallCents": 2_000, "cashCents": 3_000, "priceCents": 5_000])
        #expect(try await h.wallet("ann").spentCents == 0)
        #expect(try await h.ledger("ann").count == 1)
    }

    @Test func anOwnedItemCannotBeBoughtAgain() async throws {
        let h = try await harness(earning: 100)
        _ = try await h.buy("ann", "pencil")
        let error = try await h.error("store.buy", ["itemId": "pencil"], user: "ann")
        #expect(error.code == .alreadyExists)
        #expect(try await h.wallet("ann").spentCents == 500)
    }

    @Test func theSameIdempotencyKeyBuysOnce() async throws {
        let h = try await harness(earning: 100)
        let first = try await h.buy("ann", "notebook", key: "buy-1")
        let second = try await h.buy("ann", "notebook", key: "buy-1")
        #expect(first == second)
        #expect(try await h.wallet("ann").spentCents == 2_000)
        #expect(try await h.ledger("ann").filter { $0.kind == "purchase" }.count == 1)
        // The same key for another item is a different request.
        let error = try await h.error("store.buy", ["itemId": "pencil"], user: "ann", key: "buy-1")
        #expect(error.code == .alreadyExists)
        #expect(error.field == "idempotencyKey")
    }

    @Test func concurrentBuysNeverOverspend() async throws {
        // $80.00 of cash; 20 concurrent buys (every item twice) worth far more.
        let h = try await harness(earning: 80)
        let items: ItemsResult = try await h.call("store.items", user: "ann")
        let ids = items.items.map(\.id) + items.items.map(\.id)
        let outcomes = await withTaskGroup(of: Result<PurchaseResult, ServiceError>.self) { group in
            for (index, id) in ids.enumerated() {
                group.addTask {
                    do {
                        return .success(try await h.buy("ann", id, key: "k\(index)"))
                    } catch {
                        return .failure(ServiceError.from(error))
                    }
                }
            }
            var all: [Result<PurchaseResult, ServiceError>] = []
            for await outcome in group { all.append(outcome) }
            return all
        }
        let bought = outcomes.compactMap { try? $0.get() }
        let refused = outcomes.compactMap { outcome -> ServiceError? in
            if case .failure(let error) = outcome { return error }
            return nil
        }
        #expect(bought.count + refused.count == 20)
        #expect(refused.allSatisfy { [.failedPrecondition, .alreadyExists].contains($0.code) })
        #expect(Set(bought.map(\.itemId)).count == bought.count)
        let spent = bought.reduce(0) { $0 + $1.priceCents }
        #expect(spent <= 8_000)
        #expect(spent > 0)

        let wallet = try await h.wallet("ann")
        #expect(wallet.spentCents == spent)
        #expect(wallet.cashCents == 8_000 - spent)
        #expect(wallet.cashCents >= 0)
        let ledger = try await h.ledger("ann")
        let purchases = ledger.filter { $0.kind == "purchase" }
        #expect(purchases.count == bought.count)
        #expect(purchases.allSatisfy { $0.balanceAfterCents >= 0 })
        // Each row's balance follows from the one before it.
        let chronological = Array(ledger.reversed())
        for (previous, next) in zip(chronological, chronological.dropFirst()) {
            #expect(next.balanceAfterCents == previous.balanceAfterCents + next.amountCents)
        }
        #expect(chronological.last?.balanceAfterCents == wallet.cashCents)
    }

    @Test func theSchemaRefusesOverspendingEvenIfCodeTried() async throws {
        let h = try await harness(earning: 1)
        await #expect(throws: DatabaseError.self) {
            try await h.host.database.write { db in
                try db.execute(sql: "UPDATE wallet SET spentCents = 101 WHERE userId = 'ann'")
            }
        }
        await #expect(throws: DatabaseError.self) {
            try await h.host.database.write { db in
                try db.execute(sql: "UPDATE ledger SET amountCents = 1")
            }
        }
    }

    @Test func validationAndUnknownItems() async throws {
        let h = try await harness(earning: 100)
        var error = try await h.error("store.buy", ["itemId": "yacht"], user: "ann")
        #expect(error.code == .notFound)
        error = try await h.error("store.buy", ["itemId": "  "], user: "ann")
        #expect(error.code == .invalidArgument)
        #expect(error.field == "itemId")
        error = try await h.error("store.buy", ["itemId": 5], user: "ann")
        #expect(error.code == .invalidArgument)
        #expect(error.field == "itemId")
        error = try await h.error("store.buy", [:], user: "ann")
        #expect(error.code == .invalidArgument)
        #expect(error.field == "itemId")
        error = try await h.error("store.ledger", ["limit": 0], user: "ann")
        #expect(error.field == "limit")
        error = try await h.error("store.ledger", ["limit": "ten"], user: "ann")
        #expect(error.code == .invalidArgument)
        #expect(error.field == "limit")
        error = try await h.error("store.ledger", ["cursor": "nonsense"], user: "ann")
        #expect(error.field == "cursor")
        error = try await h.error("store.quote", ["timeZone": "Mars/Olympus_Mons"], user: "ann")
        #expect(error.code == .invalidArgument)
        #expect(error.field == "timeZone")
        error = try await h.error("store.quote", ["timeZone": 2], user: "ann")
        #expect(error.field == "timeZone")
        error = try await h.error("store.wallet", user: nil)
        #expect(error.code == .unauthenticated)
        #expect(try await h.wallet("ann").spentCents == 0)
    }

    @Test func anotherUsersDataIsNeverVisible() async throws {
        let h = try await harness(earning: 100)
        _ = try await h.buy("ann", "hourglass", key: "shared-key")
        #expect(try await h.wallet("bob") == WalletView(netWorthCents: 0, netWorthMs: 0, spentCents: 0, cashCents: 0))
        #expect(try await h.ledger("bob").isEmpty)
        let items: ItemsResult = try await h.call("store.items", user: "bob")
        #expect(items.items.allSatisfy { !$0.owned })
        // The same idempotency key from another user is that user's own request.
        let error = try await h.error("store.buy", ["itemId": "hourglass"], user: "bob", key: "shared-key")
        #expect(error.code == .failedPrecondition)
        // Ann's ledger cursor is not Bob's: refused, showing nothing of Ann's.
        let page: LedgerResult = try await h.call("store.ledger", ["limit": 1], user: "ann")
        let cursor = try #require(page.nextCursor)
        #expect(try await h.error("store.ledger", ["cursor": .string(cursor)], user: "bob").field == "cursor")
    }

    /// A ledger cursor tells nothing of other users: consecutive cursors of one user do not
    /// count the entries others made in between (the table's sequence numbers would), and a
    /// number the method never returned is refused.
    @Test func ledgerCursorsSayNothingOfOtherUsers() async throws {
        let h = try StoreHarness()
        var script = EventScript()
        for i in 0..<3 {
            script.saved("ann", "a\(i)", ms: hour, minutesAfterStart: Double(i))
            for j in 0..<5 { script.saved("bob", "b\(i)-\(j)", ms: hour, minutesAfterStart: Double(i)) }
        }
        try await h.records.apply(script.events)
        let first: LedgerResult = try await h.call("store.ledger", ["limit": 1], user: "ann")
        let cursor = try #require(first.nextCursor)
        #expect(cursor == first.entries.last?.id, "the cursor is the entry's own id")
        let second: LedgerResult = try await h.call("store.ledger", ["limit": 1, "cursor": .string(cursor)], user: "ann")
        #expect(second.entries.map(\.reference) == ["a1"])
        for made in ["999999", "1", "0"] {
            #expect(try await h.error("store.ledger", ["cursor": .string(made)], user: "ann").field == "cursor")
        }
    }

    @Test func ledgerPagesNewestFirst() async throws {
        let h = try StoreHarness()
        var script = EventScript()
        for i in 0..<7 { script.saved("ann", "e\(i)", ms: hour, minutesAfterStart: Double(i)) }
        try await h.records.apply(script.events)
        var seen: [String] = []
        var cursor: String?
        repeat {
            var body: JSONValue = ["limit": 3]
            if let cursor { body = ["limit": 3, "cursor": .string(cursor)] }
            let page: LedgerResult = try await h.call("store.ledger", body, user: "ann")
            #expect(page.entries.count <= 3)
            seen += page.entries.map(\.reference)
            cursor = page.nextCursor
        } while cursor != nil
        #expect(seen == (0..<7).reversed().map { "e\($0)" })
    }
}
