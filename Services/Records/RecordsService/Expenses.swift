// Expenses logbook: `records.expense.add|get|update|delete|list`. Amounts are integer
// minor units with their currency. The list filters by a date range (from inclusive, to
// exclusive) and a category, sorted by date (newest first) or amount (largest first).
import Contracts
import Foundation
import GRDB
import Runtime
import Storage
import Wire

extension Expense {
    /// A new expense made at `at`, before the request's fields are applied.
    init(id: String, at: Date) {
        self.init(
            id: id, name: "", description: nil, amountMinor: 0, currency: "USD", date: at, category: nil, createdAt: at,
            updatedAt: at)
    }

    static func find(_ db: Database, userId: String, id: String) throws -> Expense {
        guard let row = try ExpenseRow.find(db, userId: userId, id: id) else { throw notFound("expense", id) }
        return row.expense
    }

    /// The largest amount: 10^15 minor units (docs/protocol.md), exact as a JSON number.
    static let maxAmountMinor: Int64 = 1_000_000_000_000_000

    static func checkedAmount(_ amount: Int64) throws -> Int64 {
        try positive(amount, "amountMinor")
        try require(amount <= maxAmountMinor, "amountMinor", "must be at most 10^15", got: "\(amount)")
        return amount
    }
}

extension Records {
    func registerExpenses(_ router: inout Router) {
        router.write(ExpenseMethods.add) { body, context, db in
            let at = now()
            var expense = Expense(id: ID.make(at: at), at: at)
            expense.name = try requiredText(body.name, "name", max: 80)
            expense.description = try optionalText(body.description, "description", max: 500)
            expense.amountMinor = try Expense.checkedAmount(body.amountMinor)
            expense.currency = try currency(body.currency)
            if let date = body.date {
                try notInFuture(date, "date", now: at)
                expense.date = Date(ms: date.ms)
            }
            expense.category = try optionalText(body.category, "category", max: 40)
            try ExpenseRow(expense, userId: context.userId).insertRow(db)
            try Outbox.append(db, type: ExpenseEvents.created, userId: context.userId, data: expense, at: at)
            return expense
        }

        router.read(ExpenseMethods.get) { body, context in
            try await database.read { db in try Expense.find(db, userId: context.userId, id: body.id) }
        }

        router.write(ExpenseMethods.update) { body, context, db in
            let at = now()
            var expense = try Expense.find(db, userId: context.userId, id: body.id)
            if let name = body.name { expense.name = try requiredText(name, "name", max: 80) }
            expense.description = try optionalText(body.description.applied(to: expense.description), "description", max: 500)
            if let amount = body.amountMinor { expense.amountMinor = try Expense.checkedAmount(amount) }
            if let code = body.currency { expense.currency = try currency(code) }
            if let date = body.date {
                try notInFuture(date, "date", now: at)
                expense.date = Date(ms: date.ms)
            }
            expense.category = try optionalText(body.category.applied(to: expense.category), "category", max: 40)
            expense.updatedAt = at
            try ExpenseRow(expense, userId: context.userId).update(db)
            try Outbox.append(db, type: ExpenseEvents.updated, userId: context.userId, data: expense, at: at)
            return expense
        }

        router.write(ExpenseMethods.delete) { body, context, db in
            let expense = try Expense.find(db, userId: context.userId, id: body.id)
            try ExpenseRow.delete(db, userId: context.userId, id: expense.id)
            try Outbox.append(
                db, type: ExpenseEvents.deleted, userId: context.userId,
                data: ExpenseDeleted(id: expense.id, userId: context.userId), at: now())
            return Deleted()
        }

        router.read(ExpenseMethods.list) { body, context in
            let limit = try Pagination.limit(body.limit)
            let sort = body.sort ?? .date
            if let from = body.from, let to = body.to {
                try require(from < to, "to", "must be after from (\(WireTime.format(from)))", got: WireTime.format(to))
            }
            let category = try optionalText(body.category, "category", max: 40)
            // (compared as names are, without case: `foldedForComparison`, `logbook_fold` in SQL)
            let folded = category?.foldedForComparison
            let list = ListKey(
                ExpenseMethods.list.name, sort: sort.rawValue, position: sort == .amount ? .textAndInteger : .integer,
                filters: [body.from.map { String($0.ms) }, body.to.map { String($0.ms) }, folded])
            let cursor = try Cursor.decode(body.cursor, for: list)
            // One fixed statement per sort; the filters are bound parameters.
            let sql: String
            let key: @Sendable (Expense) -> (n: Int64?, t: String?, id: String)
            switch sort {
            case .date:
                sql = """
                    SELECT * FROM expense
                    WHERE userId = ? AND date >= ? AND date < ? AND (? IS NULL OR logbook_fold(category) = ?)
                        AND (date, id) < (?, ?)
                    ORDER BY date DESC, id DESC LIMIT ?
                    """
                key = { ($0.date.ms, nil, $0.id) }
            case .amount:
                // amounts compare only within a currency: currency by currency (A→Z), the
                // largest first in each (1,000 JPY is not more than $12.50)
                sql = """
                    SELECT * FROM expense
                    WHERE userId = ? AND date >= ? AND date < ? AND (? IS NULL OR logbook_fold(category) = ?)
                        AND (currency > ? OR (currency = ? AND (amountMinor, id) < (?, ?)))
                    ORDER BY currency, amountMinor DESC, id DESC LIMIT ?
                    """
                key = { ($0.amountMinor, $0.currency, $0.id) }
            }
            var filters: StatementArguments = [
                context.userId, body.from?.ms ?? Int64.min, body.to?.ms ?? Int64.max, folded, folded,
            ]
            if sort == .amount {
                // before the first page every currency sorts after ""
                let currency = cursor?.t ?? ""
                filters += [currency, currency, cursor?.n ?? Int64.max, cursor?.id ?? ""]
            } else {
                filters += [cursor?.n ?? Int64.max, cursor?.id ?? ""]
            }
            let arguments = filters
            return try await database.read { db in
                try Pagination.page(
                    db, sql: sql, arguments: arguments, limit: limit, list: list, key: key,
                    row: { try ExpenseRow(row: $0).expense })
            }
        }
    }
}
