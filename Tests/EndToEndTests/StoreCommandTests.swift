// The Ten-Grand store end to end (seed 004) through the real `logbook` binary against the
// real auth, records and store executables: the shelf, the wallet, the intro then the quote
// of the day, and "track time with the timer, save, see cash, try to buy". A test cannot
// track 5 hours (records' clock cannot be moved from outside), so the purchase here is the
// shortfall path; a successful buy is covered at the service level (StoreTests). Analytics
// is not part of this stack: its commands must fail with `unavailable` (exit 7) naming it.
import Foundation
import Testing

@Suite("logbook store and analytics commands", .serialized, .timeLimit(.minutes(3)))
struct StoreCommandTests {
    @Test("store, wallet, quote; timer saved → ledger earning; a short buy says what is missing")
    func store() async throws {
        try await withStack { stack in
            try await stack.upAndRegister("tina")

            // The shelf: ten items, none owned, cheapest first.
            let shelf = try await stack.logbook("store")
            #expect(shelf.status == 0, "\(shelf.stderr)")
            let lines = shelf.stdout.split(separator: "\n")
            #expect(lines.first?.hasPrefix("ID") == true && lines.first?.contains("OWNED") == true, "\(shelf.stdout)")
            #expect(lines.filter { $0.contains("$") && !$0.hasPrefix("cash") }.count == 10, "\(shelf.stdout)")
            #expect(!shelf.stdout.contains("★"), "nothing owned yet")
            #expect(shelf.stdout.contains("cash $0.00; 0 of 10 owned"), "\(shelf.stdout)")
            let items = try await stack.object("store", "list")["items"] as? [[String: Any]] ?? []
            #expect(items.count == 10)
            #expect(items.allSatisfy { $0["owned"] as? Bool == false })
            #expect(items.first?["id"] as? String == "pencil" && items.first?["priceCents"] as? Int == 500)
            let long = try await stack.logbook("store", "list", "--long")
            #expect(long.stdout.contains("DESCRIPTION") && long.stdout.contains("Where every practice journal starts"))
            let csv = try await stack.logbook("store", "list", "--csv")
            #expect(csv.stdout.hasPrefix("id,name,price,owned,purchasedAt,description\r\npencil,Sharpened Pencil,5.00,false,,"), "\(csv.stdout)")

            let info = try await stack.logbook("store", "info")
            #expect(info.status == 0 && info.stdout.hasPrefix("How the store works\n  • "), "\(info.stdout)")

            let wallet = try await stack.logbook("wallet")
            #expect(wallet.status == 0, "\(wallet.stderr)")
            #expect(wallet.stdout.contains("net worth:  $0.00"), "\(wallet.stdout)")
            #expect(wallet.stdout.contains("cash:       $0.00") && wallet.stdout.contains("cash = net worth − spent"))

            // The first open ever: the intro. Then the quote of the day, new once per day.
            let intro = try await stack.logbook("quote")
            #expect(intro.status == 0, "\(intro.stderr)")
            #expect(intro.stdout.hasPrefix("Welcome to Ten-Grand."), "\(intro.stdout)")
            let quote = try await stack.logbook("quote", "--time-zone", "Europe/Paris")
            #expect(quote.status == 0, "\(quote.stderr)")
            #expect(quote.stdout.hasPrefix("Quote of the day for ") && quote.stdout.contains("(new today)"), "\(quote.stdout)")
            #expect(quote.stdout.contains("“") && quote.stdout.contains("    — "), "\(quote.stdout)")
            // the harness's stack is offline: the quote is a bundled one, not credited to ZenQuotes
            #expect(!quote.stdout.contains("ZenQuotes"), "\(quote.stdout)")
            let again = try await stack.object("quote", "--time-zone", "Europe/Paris")
            #expect(again["kind"] as? String == "quote" && again["isNew"] as? Bool == false, "\(again)")
            let badZone = try await stack.logbook("quote", "--time-zone", "Mars/Olympus")
            #expect(badZone.status == 2 && badZone.stderr.contains("timeZone"), "\(badZone.stderr)")

            // Track time with the timer and save it: the store credits it (1 hour = $1.00).
            #expect(try await stack.logbook("activity", "add", "Guitar").status == 0)
            #expect(try await stack.logbook("timer", "start", "Guitar").status == 0)
            try await Task.sleep(for: .milliseconds(1200))
            #expect(try await stack.logbook("timer", "stop", "Guitar").status == 0)
            let saved = try await stack.object("timer", "save", "Guitar")
            let entry = try #require(saved["entry"] as? [String: Any])
            let entryId = try #require(entry["id"] as? String)
            let durationMs = try #require(entry["durationMs"] as? Int)
            #expect(durationMs >= 1000)

            var ledger: [[String: Any]] = []
            let credited = try await stack.eventually {
                ledger = try await stack.object("store", "ledger")["entries"] as? [[String: Any]] ?? []
                return !ledger.isEmpty
            }
            try #require(credited, "the store never credited the saved time\n\(stack.log("store"))")
            #expect(ledger.count == 1)
            #expect(ledger.first?["kind"] as? String == "earning")
            #expect(ledger.first?["reference"] as? String == entryId)
            #expect(ledger.first?["durationMs"] as? Int == durationMs)
            #expect(ledger.first?["amountCents"] as? Int == 0, "a second is worth less than a cent")
            let table = try await stack.logbook("store", "ledger")
            #expect(table.stdout.hasPrefix("DATE"), "\(table.stdout)")
            #expect(table.stdout.contains("earning") && table.stdout.contains("0:00:01 tracked"), "\(table.stdout)")
            let ledgerCSV = try await stack.logbook("store", "ledger", "--csv", "--all")
            #expect(ledgerCSV.stdout.hasPrefix("id,at,kind,amount,balance,netWorth,durationMs,reference\r\n"))
            #expect(ledgerCSV.stdout.contains(",earning,0.00,0.00,0.00,\(durationMs),\(entryId)\r\n"), "\(ledgerCSV.stdout)")
            #expect(try await stack.logbook("store", "ledger", "--limit", "201").status == 2)

            let walletAfter = try await stack.object("wallet")
            #expect(walletAfter["netWorthMs"] as? Int == durationMs && walletAfter["cashCents"] as? Int == 0, "\(walletAfter)")

            // Buying with too little cash: exit 5, the service's message with the amount missing.
            let short = try await stack.logbook("store", "buy", "PENCIL")
            #expect(short.status == 5, "\(short.stdout)\(short.stderr)")
            #expect(short.stderr.contains("not enough cash for Sharpened Pencil"), "\(short.stderr)")
            #expect(short.stderr.contains("short by $5.00 (5h 0m more tracked)"), "\(short.stderr)")
            let shortJSON = try await stack.logbook("store", "buy", "brass metronome", "--json")
            #expect(shortJSON.status == 5)
            #expect(shortJSON.stderr.contains("\"shortfallCents\" : 5000"), "\(shortJSON.stderr)")

            // Names: unknown and ambiguous references fail before any purchase is tried.
            let unknown = try await stack.logbook("store", "buy", "piano")
            #expect(unknown.status == 3 && unknown.stderr.contains("pencil, notebook"), "\(unknown.stderr)")
            let ambiguous = try await stack.logbook("store", "buy", "o")
            #expect(ambiguous.status == 2 && ambiguous.stderr.contains("matches"), "\(ambiguous.stderr)")

            // Nothing was bought: the shelf and the ledger are as they were.
            #expect(try await stack.object("store")["cashCents"] as? Int == 0)
            #expect((try await stack.object("store", "ledger")["entries"] as? [Any])?.count == 1)

            // Five and a half hours practised away from the timer earn enough for the pencil.
            // (a morning session: the timer's saved minutes just now must not overlap it)
            let added = try await stack.logbook("activity", "add-time", "Guitar", "5h30m", "--started", "2026-01-05T08:00:00Z")
            #expect(added.status == 0 && added.stdout.contains("$5.50"), "\(added.stdout)\(added.stderr)")
            var funds: [String: Any] = [:]
            let earned = try await stack.eventually {
                funds = try await stack.object("wallet")
                return (funds["cashCents"] as? Int ?? 0) >= 550
            }
            try #require(earned, "the store never credited the added time: \(funds)\n\(stack.log("store"))")
            let worth = try #require(funds["netWorthCents"] as? Int)

            let bought = try await stack.logbook("store", "buy", "pencil")
            #expect(bought.status == 0, "\(bought.stdout)\(bought.stderr)")
            #expect(bought.stdout.contains("net worth still"), "\(bought.stdout)")
            let owned = try await stack.object("store")
            let pencil = (owned["items"] as? [[String: Any]] ?? []).first { $0["id"] as? String == "pencil" }
            #expect(pencil?["owned"] as? Bool == true, "the pencil is owned: \(owned)")
            #expect(try await stack.logbook("store").stdout.contains("gold"), "owned items show as gold")
            let after = try await stack.object("wallet")
            #expect(after["netWorthCents"] as? Int == worth, "buying never lowers net worth")
            #expect(after["cashCents"] as? Int == worth - 500, "\(after)")
            let twice = try await stack.logbook("store", "buy", "pencil")
            #expect(twice.status == 4, "an item is bought once: \(twice.stderr)")
        }
    }

    @Test("analytics not installed: its commands fail with unavailable (exit 7) naming it")
    func analyticsUnavailable() async throws {
        // A bin directory with every executable but analytics: an installation without it.
        let bin = "/tmp/lbb-" + UUID().uuidString.prefix(8).lowercased()
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: bin) }
        let built = try TestStack.findBinaries()
        for name in ["logbook", "auth", "records", "weather-fetcher", "store"] {
            try FileManager.default.createSymbolicLink(atPath: bin + "/" + name, withDestinationPath: built + "/" + name)
        }
        try await withStack(environment: ["LOGBOOK_BIN_DIR": bin]) { stack in
            try await stack.upAndRegister("ann")
            #expect(try await stack.logbook("car", "add", "Civic").status == 0)
            for arguments in [
                ["fuel", "stats"], ["fuel", "stats", "--units", "l-per-100km"], ["expense", "summary", "--by", "category"],
                ["attend", "hours", "--week"], ["suggest", "--water", "salt"],
            ] {
                let result = try await stack.logbook(arguments: arguments)
                #expect(result.status == 7, "logbook \(arguments.joined(separator: " ")): \(result.stdout)\(result.stderr)")
                #expect(result.stderr.contains("analytics service is not installed"), "\(result.stderr)")
                #expect(result.stderr.hasSuffix("(unavailable)\n"), "\(result.stderr)")
            }
            let json = try await stack.logbook("suggest", "--json")
            #expect(json.status == 7 && json.stderr.contains("\"code\" : \"unavailable\""), "\(json.stderr)")
            let usage = try await stack.logbook("fuel", "stats", "--units", "furlongs")
            #expect(usage.status == 2)
        }
    }
}
