// `logbook store [list]|info|buy|ledger`, `logbook wallet` and `logbook quote`: the Ten-Grand
// store (seed 004) on the store service (docs/protocol.md, "Store service"). Cash is earned by tracked
// time (1 hour = $1.00) and spent on ten items; an item bought is owned forever ("gold").
import ArgumentParser
import Contracts
import Foundation
import Wire

/// The store's pure parts: item matching and the texts people read (unit-tested).
enum StoreText {
    static let gold = "★ gold"

    /// The item `reference` names among `items`: an id or a name, case-insensitively; else
    /// the one item whose id or name starts with it (or whose name contains it). No match is
    /// `not_found`, several are `invalid_argument` listing them.
    static func match(_ reference: String, in items: [ItemView]) throws -> ItemView {
        let wanted = reference.trimmingCharacters(in: .whitespaces).lowercased()
        let id = { (item: ItemView) in item.id.lowercased() }
        let name = { (item: ItemView) in item.name.lowercased() }
        guard !wanted.isEmpty else { throw ServiceError.invalid("item", "must name an item by id or name (got \"\")") }
        let exact = items.filter { id($0) == wanted || name($0) == wanted }
        let found = exact.isEmpty
            ? items.filter { id($0).hasPrefix(wanted) || name($0).hasPrefix(wanted) || name($0).contains(wanted) }
            : exact
        switch found.count {
        case 1: return found[0]
        case 0:
            let ids = items.map(\.id).joined(separator: ", ")
            throw ServiceError(.notFound, "no store item matches \"\(reference)\"; the items are: \(ids)", field: "item")
        default:
            let candidates = found.map { "\($0.id) (\($0.name))" }.joined(separator: ", ")
            throw ServiceError(
                .invalidArgument, "\"\(reference)\" matches \(found.count) items: \(candidates); give more of the name or the id",
                field: "item")
        }
    }

    /// A ledger amount with its sign: +$1.00, -$50.00, $0.00.
    static func signed(_ cents: Int64) -> String {
        cents > 0 ? "+" + Money.format(cents) : Money.format(cents)
    }

    /// Cents as the time that earns them: 500 → "5h 0m".
    static func hours(cents: Int64) -> String {
        let minutes = cents.magnitude * 60 / 100
        return "\(cents < 0 ? "-" : "")\(minutes / 60)h \(minutes % 60)m"
    }

    /// What a ledger row is about: the time behind an earning, the item of a purchase.
    static func detail(_ entry: LedgerEntryView, names: [String: String] = [:]) -> String {
        let ms = entry.durationMs
        let reference = entry.reference
        switch entry.kind {
        case "earning": return "\(TimeText.clock(milliseconds: ms ?? 0)) tracked"
        case "purchase": return "bought \(names[reference] ?? reference)"
        case "correction": return "\(TimeText.clock(milliseconds: ms ?? 0)) taken back (time entry deleted)"
        default: return reference
        }
    }

    /// The wallet, explained: net worth, spent, cash, and the rule that links them.
    static func wallet(_ wallet: WalletView) -> String {
        Output.fields([
            (
                "net worth",
                "\(Money.format(wallet.netWorthCents))  (\(TimeText.clock(milliseconds: wallet.netWorthMs)) tracked, all time)"
            ),
            ("spent", Money.format(wallet.spentCents)),
            ("cash", Money.format(wallet.cashCents)),
        ]) + "\ncash = net worth − spent. Buying spends cash; it never lowers your net worth (1 hour tracked = $1.00)."
    }

    /// Text folded at spaces into lines of at most `width` characters (a longer word stays whole).
    static func wrap(_ text: String, width: Int = 80) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false).map { paragraph in
            var lines: [String] = []
            var line = ""
            for word in paragraph.split(separator: " ") {
                if !line.isEmpty && line.count + 1 + word.count > width {
                    lines.append(line)
                    line = ""
                }
                line += (line.isEmpty ? "" : " ") + word
            }
            lines.append(line)
            return lines.joined(separator: "\n")
        }.joined(separator: "\n")
    }

    /// The intro (first open ever) or the quote of the day with its author and attribution.
    static func quote(_ quote: QuoteResult) -> String {
        let text = quote.text
        guard quote.kind == "quote" else { return wrap(text) }
        var lines: [String] = []
        let day = quote.day.map { " for \($0)" } ?? ""
        lines.append("Quote of the day\(day)" + (quote.isNew == true ? " (new today)" : ""))
        lines.append("")
        lines.append("  “\(text)”")
        if let author = quote.author, !author.isEmpty { lines.append("    — \(author)") }
        if let attribution = quote.attribution, !attribution.isEmpty {
            lines.append("")
            lines.append(attribution)
        }
        return lines.joined(separator: "\n")
    }
}

struct StoreGroup: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "store",
        abstract: "The store: ten items bought with the cash your tracked time earns.",
        discussion: """
            1 hour tracked = $1.00 of cash. cash = net worth − spent: buying spends cash and \
            never lowers your net worth. An item is bought once and owned forever (★ gold).
            Examples:
              logbook store                   # the ten items, price, ★ for yours
              logbook store list --long       # with their descriptions
              logbook store info              # how the store works
              logbook store buy pencil        # by id or name, case-insensitive
              logbook store ledger            # every earning and purchase, newest first
              logbook wallet                  # net worth, spent and cash
            """,
        subcommands: [StoreList.self, StoreInfo.self, StoreBuy.self, StoreLedger.self],
        defaultSubcommand: StoreList.self)
}

struct StoreList: GatewayCommand {
    static let configuration = CommandConfiguration(
        commandName: "list", abstract: "The ten items: price, and ★ gold for the ones you own.",
        discussion: "Examples:\n  logbook store\n  logbook store list --long\n  logbook store list --csv")

    @OptionGroup var global: GlobalOptions
    @Flag(help: "Show each item's description.") var long = false
    @Flag(help: "Print CSV instead of a table.") var csv = false

    func execute(_ context: Context) async throws {
        let shelf = try await StoreMethods.items.call(context)
        let items = shelf.items
        if context.json { return Output.json(shelf) }
        if csv {
            let rows = items.map { item in
                [item.id, item.name, Money.plain(item.priceCents), item.owned ? "true" : "false",
                 item.purchasedAt.map(WireTime.format) ?? "", item.description]
            }
            FileHandle.standardOutput.write(
                Data(CSV.document(["id", "name", "price", "owned", "purchasedAt", "description"], rows).utf8))
            return
        }
        let rows = items.map { item in
            [item.id, item.name, Money.format(item.priceCents), item.owned ? StoreText.gold : ""]
                + (long ? [item.description] : [])
        }
        let owned = items.filter(\.owned).count
        Output.line(Output.table(["ID", "NAME", "PRICE", "OWNED"] + (long ? ["DESCRIPTION"] : []), rows))
        Output.line(
            "cash \(Money.format(shelf.cashCents)); \(owned) of \(items.count) owned. "
                + "Buy with `logbook store buy ITEM`; `logbook store info` explains the rules.")
    }
}

struct StoreInfo: GatewayCommand {
    static let configuration = CommandConfiguration(
        commandName: "info", abstract: "How the store works.", discussion: "Example: logbook store info")

    @OptionGroup var global: GlobalOptions

    func execute(_ context: Context) async throws {
        try await StoreMethods.info.perform(context) { info in
            ([info.title] + (info.rules.isEmpty ? [info.text] : info.rules.map { "  • " + $0 })).joined(separator: "\n")
        }
    }
}

struct StoreBuy: GatewayCommand {
    static let configuration = CommandConfiguration(
        commandName: "buy", abstract: "Buy an item with your cash; it is yours forever.",
        discussion: """
            ITEM is an item's id or name, case-insensitive; a part of it works when only one \
            item matches. Too little cash fails (exit 5) and says how much is missing; an item \
            you own already fails with exit 4.
            Examples:
              logbook store buy pencil
              logbook store buy "brass metronome"
            """)

    @OptionGroup var global: GlobalOptions
    @Argument(help: "The item's id or name.") var item: String

    func execute(_ context: Context) async throws {
        let chosen = try StoreText.match(item, in: try await StoreMethods.items.call(context).items)
        try await StoreMethods.buy.perform(context, BuyRequest(itemId: chosen.id)) { bought in
            "bought \(bought.name) for \(Money.format(bought.priceCents)): it is yours forever (\(StoreText.gold))\n"
                + "cash now \(Money.format(bought.wallet.cashCents)); "
                + "net worth still \(Money.format(bought.wallet.netWorthCents))"
        }
    }
}

struct StoreLedger: GatewayCommand {
    static let configuration = CommandConfiguration(
        commandName: "ledger", abstract: "Every earning and purchase, newest first, with the cash after each.",
        discussion: """
            An earning is time you saved with `logbook timer save` (1 hour = $1.00); a purchase \
            is an item bought. BALANCE is your cash after the row. --limit here is 1–200 (the \
            store's pages are at most 200 rows).
            Examples:
              logbook store ledger
              logbook store ledger --limit 10
              logbook store ledger --all --csv > ledger.csv
            """)

    @OptionGroup var global: GlobalOptions
    @OptionGroup var options: ListOptions

    func validate() throws {
        if let limit = options.limit, limit > 200 { throw ValidationError("--limit must be between 1 and 200 (got \(limit))") }
    }

    func execute(_ context: Context) async throws {
        var entries: [LedgerEntryView] = []
        var cursor = options.cursor
        var seen = Set<String>()
        repeat {
            let page = try await StoreMethods.ledger.call(
                context, ListBody(cursor: cursor, limit: options.limit ?? (options.all ? 200 : nil)))
            entries += page.entries
            cursor = page.nextCursor
            if let next = cursor, !seen.insert(next).inserted { break }
        } while options.all && cursor != nil
        if context.json { return Output.json(LedgerResult(entries: entries, nextCursor: cursor)) }
        var names: [String: String] = [:]
        if !options.csv, entries.contains(where: { $0.kind == "purchase" }) {
            for item in (try? await StoreMethods.items.call(context))?.items ?? [] { names[item.id] = item.name }
        }
        let rows = Rows(
            headers: ["DATE", "KIND", "AMOUNT", "BALANCE", "DETAIL"],
            table: entries.map { entry in
                [
                    TimeText.local(entry.at), entry.kind, StoreText.signed(entry.amountCents),
                    Money.format(entry.balanceAfterCents), StoreText.detail(entry, names: names),
                ]
            },
            csvHeaders: ["id", "at", "kind", "amount", "balance", "netWorth", "durationMs", "reference"],
            csv: entries.map { entry in
                [
                    entry.id, WireTime.format(entry.at), entry.kind, Money.plain(entry.amountCents),
                    Money.plain(entry.balanceAfterCents), Money.plain(entry.netWorthAfterCents),
                    entry.durationMs.map(String.init) ?? "", entry.reference,
                ]
            })
        context.show(
            Fetched(items: [], nextCursor: cursor, raw: [:]), rows, options,
            empty: "nothing yet: save time with `logbook timer save ACTIVITY` to earn cash (1 hour = $1.00)")
    }
}

struct WalletCommand: GatewayCommand {
    static let configuration = CommandConfiguration(
        commandName: "wallet", abstract: "Your net worth and cash (cash = net worth − spent).",
        discussion: "Example: logbook wallet")

    @OptionGroup var global: GlobalOptions

    func execute(_ context: Context) async throws {
        try await StoreMethods.wallet.perform(context) { StoreText.wallet($0) }
    }
}

struct QuoteCommand: GatewayCommand {
    static let configuration = CommandConfiguration(
        commandName: "quote", abstract: "The quote of the day (the very first time: what Ten-Grand is about).",
        discussion: """
            Your day is counted in --time-zone, by default your account's zone (`logbook whoami`; \
            change it with `logbook settings time-zone`). The quote \
            stays the same all your day; "new today" marks the first time you see it that day.
            Examples:
              logbook quote
              logbook quote --time-zone Europe/Paris
            """)

    @OptionGroup var global: GlobalOptions
    @Option(name: .customLong("time-zone"), help: ArgumentHelp("An IANA time zone (default: your account's).", valueName: "zone"))
    var timeZone: String?

    func execute(_ context: Context) async throws {
        // sent as before: no idempotency key, and offline the quote last seen (it only records "seen")
        try await StoreMethods.quote.perform(context, QuoteRequest(timeZone: timeZone), write: false) { StoreText.quote($0) }
    }

    /// The process's zone as an IANA name the service can read, else nil (the service's UTC).
    static func localZone(_ environment: [String: String]) -> String? {
        var identifier = TimeZone.current.identifier
        if let tz = environment["TZ"], !tz.isEmpty {
            let name = tz.hasPrefix(":") ? String(tz.dropFirst()) : tz
            if TimeZone(identifier: name) != nil { identifier = name }
        }
        return TimeZone(identifier: identifier) != nil ? identifier : nil
    }
}
