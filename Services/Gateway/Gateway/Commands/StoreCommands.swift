// `logbook store [list]|info|buy|ledger`, `logbook wallet` and `logbook quote`: the Ten-Grand
// store (seed 004) on the store service (docs/protocol.md, "Store service"). Cash is earned by tracked
// time (1 hour = $1.00) and spent on ten items; an item bought is owned forever ("gold").
import ArgumentParser
import Foundation
import Wire

/// The store's pure parts: item matching and the texts people read (unit-tested).
enum StoreText {
    static let gold = "★ gold"

    /// The item `reference` names among `items`: an id or a name, case-insensitively; else
    /// the one item whose id or name starts with it (or whose name contains it). No match is
    /// `not_found`, several are `invalid_argument` listing them.
    static func match(_ reference: String, in items: [JSONValue]) throws -> JSONValue {
        let wanted = reference.trimmingCharacters(in: .whitespaces).lowercased()
        let id = { (item: JSONValue) in item["id"]?.stringValue?.lowercased() ?? "" }
        let name = { (item: JSONValue) in item["name"]?.stringValue?.lowercased() ?? "" }
        guard !wanted.isEmpty else { throw ServiceError.invalid("item", "must name an item by id or name (got \"\")") }
        let exact = items.filter { id($0) == wanted || name($0) == wanted }
        let found = exact.isEmpty
            ? items.filter { id($0).hasPrefix(wanted) || name($0).hasPrefix(wanted) || name($0).contains(wanted) }
            : exact
        switch found.count {
        case 1: return found[0]
        case 0:
            let ids = items.compactMap { $0["id"]?.stringValue }.joined(separator: ", ")
            throw ServiceError(.notFound, "no store item matches \"\(reference)\"; the items are: \(ids)", field: "item")
        default:
            let candidates = found.map { "\(Output.cell($0["id"])) (\(Output.cell($0["name"])))" }.joined(separator: ", ")
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
    static func detail(_ entry: JSONValue, names: [String: String] = [:]) -> String {
        let ms = entry["durationMs"]?.int64Value
        let reference = entry["reference"]?.stringValue ?? ""
        switch entry["kind"]?.stringValue {
        case "earning": return "\(TimeText.clock(milliseconds: ms ?? 0)) tracked"
        case "purchase": return "bought \(names[reference] ?? reference)"
        case "correction": return "\(TimeText.clock(milliseconds: ms ?? 0)) taken back (time entry deleted)"
        default: return reference
        }
    }

    /// The wallet, explained: net worth, spent, cash, and the rule that links them.
    static func wallet(_ wallet: JSONValue) -> String {
        let worth = wallet["netWorthCents"]?.int64Value ?? 0
        let ms = wallet["netWorthMs"]?.int64Value ?? 0
        let spent = wallet["spentCents"]?.int64Value ?? 0
        let cash = wallet["cashCents"]?.int64Value ?? 0
        return Output.fields([
            ("net worth", "\(Money.format(worth))  (\(TimeText.clock(milliseconds: ms)) tracked, all time)"),
            ("spent", Money.format(spent)),
            ("cash", Money.format(cash)),
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
    static func quote(_ quote: JSONValue) -> String {
        let text = quote["text"]?.stringValue ?? ""
        guard quote["kind"]?.stringValue == "quote" else { return wrap(text) }
        var lines: [String] = []
        let day = quote["day"]?.stringValue.map { " for \($0)" } ?? ""
        lines.append("Quote of the day\(day)" + (quote["isNew"]?.boolValue == true ? " (new today)" : ""))
        lines.append("")
        lines.append("  “\(text)”")
        if let author = quote["author"]?.stringValue, !author.isEmpty { lines.append("    — \(author)") }
        if let attribution = quote["attribution"]?.stringValue, !attribution.isEmpty {
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
              logbook store                   # the ten items, price, ★ for the ones you own
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
        let shelf = try await context.send("store", "store.items")
        let items = shelf["items"]?.arrayValue ?? []
        if context.json { return Output.json(shelf) }
        if csv {
            let rows = items.map { item in
                CSV.cells(item, ["id", "name"]) + [item["priceCents"]?.int64Value.map { Money.plain($0) } ?? ""]
                    + CSV.cells(item, ["owned", "purchasedAt", "description"])
            }
            FileHandle.standardOutput.write(
                Data(CSV.document(["id", "name", "price", "owned", "purchasedAt", "description"], rows).utf8))
            return
        }
        let rows = items.map { item in
            [
                Output.cell(item["id"]), Output.cell(item["name"]),
                item["priceCents"]?.int64Value.map { Money.format($0) } ?? "-",
                item["owned"]?.boolValue == true ? StoreText.gold : "",
            ] + (long ? [Output.cell(item["description"])] : [])
        }
        let owned = items.filter { $0["owned"]?.boolValue == true }.count
        Output.line(Output.table(["ID", "NAME", "PRICE", "OWNED"] + (long ? ["DESCRIPTION"] : []), rows))
        Output.line(
            "cash \(Money.format(shelf["cashCents"]?.int64Value ?? 0)); \(owned) of \(items.count) owned. "
                + "Buy with `logbook store buy ITEM`; `logbook store info` explains the rules.")
    }
}

struct StoreInfo: GatewayCommand {
    static let configuration = CommandConfiguration(
        commandName: "info", abstract: "How the store works.", discussion: "Example: logbook store info")

    @OptionGroup var global: GlobalOptions

    func execute(_ context: Context) async throws {
        try await context.perform("store", "store.info") { info in
            let rules = info["rules"]?.arrayValue?.map { "  • " + Output.cell($0) } ?? []
            return ([Output.cell(info["title"])] + (rules.isEmpty ? [Output.cell(info["text"])] : rules))
                .joined(separator: "\n")
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
        let items = try await context.send("store", "store.items")["items"]?.arrayValue ?? []
        let chosen = try StoreText.match(item, in: items)
        try await context.perform("store", "store.buy", body: ["itemId": chosen["id"] ?? .null], write: true) { bought in
            let price = bought["priceCents"]?.int64Value ?? 0
            let wallet = bought["wallet"] ?? [:]
            return "bought \(Output.cell(bought["name"])) for \(Money.format(price)): it is yours forever (\(StoreText.gold))\n"
                + "cash now \(Money.format(wallet["cashCents"]?.int64Value ?? 0)); "
                + "net worth still \(Money.format(wallet["netWorthCents"]?.int64Value ?? 0))"
        }
    }
}

struct StoreLedger: GatewayCommand {
    static let configuration = CommandConfiguration(
        commandName: "ledger", abstract: "Every earning and purchase, newest first, with the cash after each.",
        discussion: """
            An earning is time you saved with `logbook timer save` (1 hour = $1.00); a purchase \
            is an item bought. BALANCE is your cash after the row.
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
        var entries: [JSONValue] = []
        var cursor = options.cursor
        var seen = Set<String>()
        repeat {
            var body: [String: JSONValue] = [:]
            if let limit = options.limit ?? (options.all ? 200 : nil) { body["limit"] = .number(Double(limit)) }
            if let cursor { body["cursor"] = .string(cursor) }
            let page = try await context.send("store", "store.ledger", body: .object(body))
            entries += page["entries"]?.arrayValue ?? []
            cursor = page["nextCursor"]?.stringValue
            if let next = cursor, !seen.insert(next).inserted { break }
        } while options.all && cursor != nil
        if context.json {
            var result: [String: JSONValue] = ["entries": .array(entries)]
            if let cursor { result["nextCursor"] = .string(cursor) }
            return Output.json(JSONValue.object(result))
        }
        var names: [String: String] = [:]
        if !options.csv, entries.contains(where: { $0["kind"]?.stringValue == "purchase" }) {
            for item in (try? await context.send("store", "store.items"))?["items"]?.arrayValue ?? [] {
                if let id = item["id"]?.stringValue, let name = item["name"]?.stringValue { names[id] = name }
            }
        }
        let money = { (value: JSONValue?) in value?.int64Value.map { Money.plain($0) } ?? "" }
        let rows = Rows(
            headers: ["DATE", "KIND", "AMOUNT", "BALANCE", "DETAIL"],
            table: entries.map { entry in
                [
                    TimeText.local(entry["at"]), Output.cell(entry["kind"]),
                    StoreText.signed(entry["amountCents"]?.int64Value ?? 0),
                    Money.format(entry["balanceAfterCents"]?.int64Value ?? 0), StoreText.detail(entry, names: names),
                ]
            },
            csvHeaders: ["id", "at", "kind", "amount", "balance", "netWorth", "durationMs", "reference"],
            csv: entries.map { entry in
                CSV.cells(entry, ["id", "at", "kind"])
                    + [money(entry["amountCents"]), money(entry["balanceAfterCents"]), money(entry["netWorthAfterCents"])]
                    + CSV.cells(entry, ["durationMs", "reference"])
            })
        context.show(
            Fetched(items: entries, nextCursor: cursor, raw: [:]), rows, options,
            empty: "nothing yet: save time with `logbook timer save ACTIVITY` to earn cash (1 hour = $1.00)")
    }
}

struct WalletCommand: GatewayCommand {
    static let configuration = CommandConfiguration(
        commandName: "wallet", abstract: "Your net worth and cash (cash = net worth − spent).",
        discussion: "Example: logbook wallet")

    @OptionGroup var global: GlobalOptions

    func execute(_ context: Context) async throws {
        try await context.perform("store", "store.wallet") { StoreText.wallet($0) }
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
        var body: [String: JSONValue] = [:]
        if let timeZone { body["timeZone"] = .string(timeZone) }
        try await context.perform("store", "store.quote", body: .object(body)) { StoreText.quote($0) }
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
