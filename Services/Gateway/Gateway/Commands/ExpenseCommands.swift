// `logbook expense add|list|edit|delete`: spending records (seed 002). Amounts are typed as
// decimals and kept exactly as minor units of their currency.
import ArgumentParser
import Contracts
import Foundation
import Wire

struct ExpenseGroup: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "expense",
        abstract: "Your expenses: add, list, edit, delete, and a summary by day, week, month, year or category.",
        discussion: """
            Examples:
              logbook expense add Lunch 12.50 --category food
              logbook expense add "Train ticket" 2300 --currency JPY --date 2026-05-01
              logbook expense list --from 2026-05-01 --to 2026-05-31 --sort amount
              logbook expense list --all --csv > expenses.csv
              logbook expense edit 0196… --amount 13.00 --description "with coffee"
              logbook expense delete 0196… --yes
            """,
        subcommands: [ExpenseAdd.self, ExpenseList.self, ExpenseEdit.self, ExpenseDelete.self, ExpenseSummary.self])
}

extension ExpenseSort: EnumArgument {}

enum Expenses {
    static func amount(_ expense: Expense) -> String { Money.format(expense.amountMinor, currency: expense.currency) }

    static func describe(_ expense: Expense) -> String {
        "\(expense.name) \(amount(expense)) on \(TimeText.local(expense.date))"
    }
}

struct ExpenseAdd: GatewayCommand {
    static let configuration = CommandConfiguration(
        commandName: "add", abstract: "Record an expense.",
        discussion: "Example: logbook expense add Lunch 12.50 --category food --description \"with Sam\"")

    @OptionGroup var global: GlobalOptions
    @Argument(help: "What it was (1–80 characters).") var name: String
    @Argument(help: "How much, as a decimal: 12.50.") var amount: String
    @Option(help: "ISO 4217 currency (default USD).") var currency: String?
    @Option(help: ArgumentHelp("When: ISO-8601, \"2026-05-01 12:30\" (local) or a date (default now).", valueName: "time"))
    var date: String?
    @Option(help: "A category, e.g. food.") var category: String?
    @Option(help: "A longer description.") var description: String?

    func execute(_ context: Context) async throws {
        var request = Contracts.ExpenseAdd(
            name: name, description: description,
            amountMinor: try Money.parse(amount, currency: currency ?? "USD", field: "amount"),
            currency: currency?.uppercased(), category: category)
        if let date { request.date = try TimeText.parse(date, field: "date") }
        try await ExpenseMethods.add.perform(context, request) { expense in
            "added expense \(expense.id): \(Expenses.describe(expense))"
        }
    }
}

struct ExpenseList: GatewayCommand {
    static let configuration = CommandConfiguration(
        commandName: "list", abstract: "List expenses, newest first (or largest first).",
        discussion: """
            --from is inclusive; --to is exclusive for a time and inclusive for a plain date \
            (--to 2026-05-31 includes the whole of May 31).
            Examples:
              logbook expense list --from 2026-05-01 --to 2026-05-31
              logbook expense list --category food --sort amount --csv
            """)

    @OptionGroup var global: GlobalOptions
    @Option(help: ArgumentHelp("From this time or date (inclusive).", valueName: "time")) var from: String?
    @Option(help: ArgumentHelp("Until this time (exclusive) or date (inclusive).", valueName: "time")) var to: String?
    @Option(help: "date (newest first, default) or amount (largest first).") var sort: ExpenseSort = .date
    @Option(help: "Only this category.") var category: String?
    @OptionGroup var options: ListOptions

    func execute(_ context: Context) async throws {
        var request = Contracts.ExpenseList(sort: sort, category: category)
        request.from = try from.map { try TimeText.parse($0, field: "from") }
        if let to {
            var end = try TimeText.parse(to, field: "to")
            if TimeText.isDateOnly(to) {
                end = Calendar.current.date(byAdding: .day, value: 1, to: end) ?? end
            }
            // refused here, in the words typed: the service would echo the shifted end
            if let start = request.from, let from, end <= start {
                throw ServiceError.invalid("to", "must not be before --from (got --from \(from) --to \(to))")
            }
            request.to = end
        }
        let listed = try await context.list(ExpenseMethods.list, request, options)
        let rows = Rows(
            headers: ["ID", "DATE", "NAME", "AMOUNT", "CATEGORY", "DESCRIPTION"],
            table: listed.items.map { expense in
                [
                    expense.id, TimeText.local(expense.date), expense.name, Expenses.amount(expense), expense.category ?? "-",
                    expense.description ?? "-",
                ]
            },
            csvHeaders: ["id", "date", "name", "amount", "currency", "category", "description"],
            csv: listed.items.map { expense in
                [
                    expense.id, WireTime.format(expense.date), expense.name,
                    Money.plain(expense.amountMinor, currency: expense.currency), expense.currency, expense.category ?? "",
                    expense.description ?? "",
                ]
            })
        var notes: [String] = []
        if !listed.items.isEmpty && !options.csv {
            var totals: [String: Int64] = [:]
            for expense in listed.items { totals[expense.currency, default: 0] += expense.amountMinor }
            let shown = totals.keys.sorted().map { Money.format(totals[$0]!, currency: $0) }.joined(separator: " + ")
            notes.append("total of these \(listed.items.count): \(shown)")
        }
        // A cursor belongs to the list asked for: a relative --from or --to (now, today,
        // yesterday) is named as the time it stood for, so the next page asks for the same.
        let relative = [from, to].contains { $0.map { !TimeText.isAbsolute($0) } ?? false }
        let resume =
            relative
            ? ([request.from.map { "--from " + WireTime.format($0) }, request.to.map { "--to " + WireTime.format($0) }]
                .compactMap { $0 }.joined(separator: " ")) : ""
        context.show(listed.fetched, rows, options, empty: "no expenses", notes: notes, resume: resume)
    }
}

struct ExpenseEdit: GatewayCommand {
    static let configuration = CommandConfiguration(
        commandName: "edit", abstract: "Change any field of an expense.",
        discussion: "--category \"\" and --description \"\" clear those.\nExample: logbook expense edit 0196… --amount 13.00 --category \"\"")

    @OptionGroup var global: GlobalOptions
    @Argument(help: "The expense's id.") var id: String
    @Option(help: "What it was.") var name: String?
    @Option(help: "How much, as a decimal.") var amount: String?
    @Option(help: "ISO 4217 currency.") var currency: String?
    @Option(help: ArgumentHelp("When.", valueName: "time")) var date: String?
    @Option(help: "A category (\"\" clears it).") var category: String?
    @Option(help: "A description (\"\" clears it).") var description: String?

    func execute(_ context: Context) async throws {
        var request = ExpenseUpdate(id: id, name: name, currency: currency?.uppercased())
        if let amount {
            var money = currency
            if money == nil { money = try await ExpenseMethods.get.call(context, IdBody(id: id)).currency }
            request.amountMinor = try Money.parse(amount, currency: money ?? "USD", field: "amount")
        }
        if let date { request.date = try TimeText.parse(date, field: "date") }
        request.category = Patch.option(category)
        request.description = Patch.option(description)
        guard try request.body().count > 1 else {
            throw ValidationError("nothing to change: give at least one field to edit")
        }
        try await ExpenseMethods.update.perform(context, request) { expense in
            "updated expense \(expense.id): \(Expenses.describe(expense))"
        }
    }
}

struct ExpenseDelete: GatewayCommand {
    static let configuration = CommandConfiguration(
        commandName: "delete", abstract: "Delete an expense.",
        discussion: "Asks first; --yes skips the question.\nExample: logbook expense delete 0196… --yes")

    @OptionGroup var global: GlobalOptions
    @Argument(help: "The expense's id.") var id: String
    @Flag(help: "Do not ask for confirmation.") var yes = false

    func execute(_ context: Context) async throws {
        let expense = try await ExpenseMethods.get.call(context, IdBody(id: id))
        let what = "expense \(Expenses.describe(expense))"
        try Confirm.delete("Delete the \(what)?", yes: yes)
        let result = try await ExpenseMethods.delete.call(context, IdBody(id: id))
        if context.json { Output.json(result) } else { Output.line("deleted the \(what)") }
    }
}
