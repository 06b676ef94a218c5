// Bad input and late arrivals never hurt the store: a wallet that cannot take another
// entry skips the event instead of trapping, a deleted user's quote writes nothing, a
// caller who gave up does not use up the day's quote, a blank item id is refused.
import Contracts
import Foundation
import GRDB
import Runtime
import Storage
import StoreService
import TestSupport
import Testing
import Wire

@Suite struct StoreHardeningTests {
    @Test func anEntryThatWouldOverflowTheWalletIsSkippedNotFatal() async throws {
        let h = try StoreHarness()
        var script = EventScript()
        script.saved("ann", "e1", ms: hour)
        try await h.records.apply(script.events)
        // a damaged wallet: just under Int64's limit
        try await h.host.database.write { db in
            try db.execute(sql: "UPDATE wallet SET earnedMs = ? WHERE userId = 'ann'", arguments: [Int64.max - 1_000])
        }
        script.saved("ann", "e2", ms: hour)
        script.saved("bob", "e3", ms: hour)
        try await h.records.apply(Array(script.events.dropFirst()))
        // the stream went on past it: bob's entry counted, ann's second not
        #expect(try await h.wallet("bob").netWorthMs == hour)
        #expect(try await h.wallet("ann").netWorthMs == Int64.max - 1_000)
        #expect(try await h.ledger("ann").count == 1)
    }

    @Test func aDeletedUsersQuoteWritesNothing() async throws {
        let h = try StoreHarness()
        try await h.auth.apply([Event(seq: 1, type: "user.deleted", userId: "ann", at: Date(), data: ["userId": "ann"])])
        // (her session is still in a cache somewhere: the call reaches the store)
        let error = try await h.error("store.quote", user: "ann")
        #expect(error.code == .unauthenticated)
        let rows = try await h.host.database.read { db in
            try Int.fetchOne(
                db,
                sql: "SELECT (SELECT COUNT(*) FROM visitor WHERE userId = 'ann') + (SELECT COUNT(*) FROM quoteSeen WHERE userId = 'ann')"
            )
        }
        #expect(rows == 0)
    }

    @Test func aCallerWhoGaveUpDoesNotUseUpTheDaysQuote() async throws {
        let today = #"[{"q":"Slow and steady.","a":"Aesop","h":""}]"#
        let server = try StubHTTPServer { _ in StubResponse(body: Data(today.utf8), delay: .milliseconds(900)) }
        defer { server.stop() }
        let h = try StoreHarness(quotesURL: server.baseURL)
        _ = try await h.call("store.quote", user: "ann", as: QuoteResult.self)  // the intro
        let late = try await h.transport.reply(
            "store.quote", body: [:], options: CallOptions(token: "tok-ann", timeout: .milliseconds(300)))
        #expect(late.error?.code == .deadlineExceeded)
        try await Task.sleep(for: .milliseconds(1_200))  // the fetch ends; the handler would write now
        let shown: QuoteResult = try await h.call("store.quote", user: "ann")
        #expect(shown.isNew == true)
        #expect(shown.author == "Aesop")
    }

    @Test func anItemIdOfWhiteSpaceIsInvalid() async throws {
        let h = try StoreHarness()
        for blank in ["\n", "\t\n ", "\u{3000}"] {
            let error = try await h.error("store.buy", ["itemId": .string(blank)], user: "ann")
            #expect(error.code == .invalidArgument, "\(blank.debugDescription)")
            #expect(error.field == "itemId")
        }
    }
}
