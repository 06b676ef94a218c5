// Expenses: each expense is kept (for edits, deletes and the largest items) and summed into
// one `expenseDay` row per user, local day (the user's time zone), currency and category. `analytics.expense.summary`
// reads only those day rows in the range (at most days × currencies × categories of them,
// whatever the number of expenses), groups them by day, ISO week, month, year or category,
// per currency: amounts in different currencies are never added together.
import Contracts
import Foundation
import GRDB
import Runtime
import Wire

enum ExpenseProjection {
    static func put(_ db: Database, userId: String, _ expense: Expense) throws {
        try delete(db, userId: userId, id: expense.id)
        let category = expense.category.flatMap { $0.isEmpty ? nil : $0 }
        let currency = expense.currency
        let day = LocalDays.day(ms: expense.date.ms, in: try UserZones.zone(db, userId: userId))
        try db.execute(
            cached: """
                INSERT INTO expense (id, userId, name, amountMinor, currency, date, day, category)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                """,
            arguments: [
                expense.id, userId, expense.name, expense.amountMinor, currency, expense.date.ms, day, category,
            ])
        try addToDay(
            db, userId: userId, day: day, currency: currency, category: category ?? "", amount: expense.amountMinor,
            count: 1)
    }

    /// Counts the user's days again after a change of time zone: each expense's day, then
    /// the day rows from them.
    static func recount(_ db: Database, userId: String, zone: TimeZone) throws {
        let rows = try Row.fetchAll(
            db, sql: "SELECT id, date FROM expense WHERE userId = ?", arguments: [userId])
        for row in rows {
            try db.execute(
                cached: "UPDATE expense SET day = ? WHERE id = ?",
                arguments: [LocalDays.day(ms: row["date"], in: zone), row["id"] as String])
        }
        try db.execute(sql: "DELETE FROM expenseDay WHERE userId = ?", arguments: [userId])
        // The day rows again, each added up by `Total` rather than SQLite's sum(), which fails
        // the whole statement (and so the event) at an overflow.
        let groups = try Row.fetchAll(
            db,
            sql: """
                SELECT day, currency, coalesce(category, '') AS category, count(*) AS count FROM expense
                WHERE userId = ? GROUP BY day, currency, coalesce(category, '')
                """, arguments: [userId])
        for group in groups {
            let day: Int64 = group["day"]
            let currency: String = group["currency"]
            let category: String = group["category"]
            try db.execute(
                cached: """
                    INSERT INTO expenseDay (userId, day, currency, category, totalMinor, count) VALUES (?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    userId, day, currency, category,
                    try Total.of(db, userId: userId, day: day, currency: currency, category: category), group["count"],
                ])
        }
    }

    static func delete(_ db: Database, userId: String, id: String) throws {
        guard
            let old = try Row.fetchOne(
                db, cached: "SELECT day, currency, category, amountMinor FROM expense WHERE userId = ? AND id = ?",
                arguments: [userId, id])
        else { return }
        try db.execute(cached: "DELETE FROM expense WHERE id = ?", arguments: [id])
        try addToDay(
            db, userId: userId, day: old["day"], currency: old["currency"], category: old["category"] ?? "",
            amount: -(old["amountMinor"] as Int64), count: -1)
    }

    private static func addToDay(
        _ db: Database, userId: String, day: Int64, currency: String, category: String, amount: Int64, count: Int
    ) throws {
        if count > 0 {
            try db.execute(
                cached: """
                    INSERT INTO expenseDay (userId, day, currency, category, totalMinor, count) VALUES (?, ?, ?, ?, ?, ?)
                    ON CONFLICT (userId, day, currency, category) DO UPDATE SET totalMinor = totalMinor + excluded.totalMinor,
                        count = count + excluded.count
                    """,
                arguments: [userId, day, currency, category, amount, count])
        } else {
            // A total that went past Int64 is a REAL in SQLite, and no longer exact: once an
            // expense is taken away it may fit again, so it is added up again from the
            // expenses. Read before taking away: SQLite stores a whole REAL that fits as an
            // INTEGER, so afterwards a rounded total would look exact.
            let stored = try Row.fetchOne(
                db, cached: "SELECT totalMinor FROM expenseDay WHERE userId = ? AND day = ? AND currency = ? AND category = ?",
                arguments: [userId, day, currency, category])
            let inexact: Bool
            if let stored, case .double = (stored[0] as DatabaseValue).storage { inexact = true } else { inexact = false }
            // the CHECK (count >= 0) is evaluated on an upsert's candidate row, so take away with UPDATE
            try db.execute(
                cached: """
                    UPDATE expenseDay SET totalMinor = totalMinor + ?, count = count + ?
                    WHERE userId = ? AND day = ? AND currency = ? AND category = ?
                    """,
                arguments: [amount, count, userId, day, currency, category])
            try db.execute(
                cached:
                    "DELETE FROM expenseDay WHERE userId = ? AND day = ? AND currency = ? AND category = ? AND count = 0",
                arguments: [userId, day, currency, category])
            if inexact {
                try db.execute(
                    cached: "UPDATE expenseDay SET totalMinor = ? WHERE userId = ? AND day = ? AND currency = ? AND category = ?",
                    arguments: [
                        try Total.of(db, userId: userId, day: day, currency: currency, category: category), userId, day,
                        currency, category,
                    ])
            }
        }
    }
}

/// Amounts added up exactly while they fit in Int64 (records allows up to 10^15 each, so a
/// day of 9,224 of the largest does not fit): beyond it, SQLite's arithmetic gives a REAL,
/// which the projection keeps and the summary refuses (`ExpenseQueries.tooLarge`) rather than
/// trapping on it or answering a rounded total.
enum Total {
    /// The day group's total from its expenses: an Int64 when it fits, else the nearest Double.
    static func of(_ db: Database, userId: String, day: Int64, currency: String, category: String) throws
        -> DatabaseValue
    {
        let amounts = try Int64.fetchAll(
            db.cachedStatement(
                sql: """
                SELECT amountMinor FROM expense
                WHERE userId = ? AND day = ? AND currency = ? AND coalesce(category, '') = ?
                """), arguments: [userId, day, currency, category])
        var exact: Int64 = 0
        for amount in amounts {
            let (sum, overflow) = exact.addingReportingOverflow(amount)
            // (at least 2^63, which no Int64 holds: a sum of Doubles rounded below it would be
            // stored as an INTEGER and read as exact)
            if overflow { return max(amounts.reduce(0.0) { $0 + Double($1) }, 0x1p63).databaseValue }
            exact = sum
        }
        return exact.databaseValue
    }
}

// MARK: Summary

enum ExpenseQueries {
    static let groupings = Period.allCases.map(\.rawValue) + ["category"]

    /// A summary whose total does not fit in Int64 minor units has no exact answer.
    static func tooLarge(_ currency: String) -> ServiceError {
        ServiceError(
            .failedPrecondition,
            "the \(currency) expenses in this range add up to more than 9,223,372,036,854,775,807 minor units, which a summary cannot count; ask for a range without the largest of them")
    }

    static func sum(_ a: Int64, _ b: Int64, _ currency: String) throws -> Int64 {
        let (sum, overflow) = a.addingReportingOverflow(b)
        guard !overflow else { throw tooLarge(currency) }
        return sum
    }

    static func summary(_ db: Database, userId: String, body: SummaryRequest) throws -> ExpenseSummary {
        let by = body.by ?? "month"
        guard groupings.contains(by) else {
            throw ServiceError.invalid("by", "must be one of \(groupings.joined(separator: ", ")) (got \"\(by)\")")
        }
        let zone = try UserZones.zone(db, userId: userId)
        let range = try DayRange(from: body.from, to: body.to, zone: zone)
        let rows = try Row.fetchAll(
            db,
            cached: """
                SELECT day, currency, category, totalMinor, count FROM expenseDay
                WHERE userId = ? AND day >= ? AND day < ? ORDER BY currency, day
                """,
            arguments: [userId, range.lower, range.upper])
        let days = rows.map { $0["day"] as Int64 }
        // No expenses in the range, given or not: nothing was summarised (docs/protocol.md).
        guard !rows.isEmpty, let first = range.from ?? days.min(), let end = range.to ?? days.max().map({ $0 + 1 }) else {
            return ExpenseSummary(by: by, from: nil, to: nil, days: 0, currencies: [], timeZone: LocalDays.name(of: zone))
        }
        let dayCount = max(1, end - first)
        var byCurrency: [String: [Row]] = [:]
        for row in rows { byCurrency[row["currency"], default: []].append(row) }
        let currencies = try byCurrency.keys.sorted().map { currency -> CurrencySummary in
            let rows = byCurrency[currency]!
            var groups: [String: ExpenseSummaryGroup] = [:]
            var order: [String] = []
            // by category: "food" and "Food" are one group (as the list's filter folds case),
            // shown in the spelling most of its expenses use (ties: the earliest seen)
            var spellings: [String: [(String, Int)]] = [:]
            for row in rows {
                let category: String = row["category"]
                let key: String
                if let period = Period(rawValue: by) {
                    key = Day.label(row["day"], by: period)
                } else {
                    key = category.foldedForComparison
                    let count: Int = row["count"]
                    if let i = spellings[key, default: []].firstIndex(where: { $0.0 == category }) {
                        spellings[key]![i].1 += count
                    } else {
                        spellings[key, default: []].append((category, count))
                    }
                }
                if groups[key] == nil {
                    order.append(key)
                    groups[key] = ExpenseSummaryGroup(key: key, category: nil, totalMinor: 0, count: 0)
                }
                // (a REAL: the day's expenses add up past Int64; see Total)
                guard case .int64(let dayTotal) = (row["totalMinor"] as DatabaseValue).storage else {
                    throw tooLarge(currency)
                }
                groups[key]!.totalMinor = try sum(groups[key]!.totalMinor, dayTotal, currency)
                groups[key]!.count += row["count"] as Int
            }
            if by == "category" {
                for (key, names) in spellings {
                    let shown = names.enumerated().max { a, b in
                        (a.element.1, -a.offset) < (b.element.1, -b.offset)
                    }!.element.0
                    groups[key]!.key = shown.isEmpty ? "uncategorized" : shown
                    groups[key]!.category = shown.isEmpty ? nil : shown
                }
            }
            var list = order.map { groups[$0]! }
            if by == "category" {
                list.sort { ($0.totalMinor, $1.key) > ($1.totalMinor, $0.key) }
            }
            let total = try list.reduce(Int64(0)) { try sum($0, $1.totalMinor, currency) }
            let largest = try Row.fetchAll(
                db,
                cached: """
                    SELECT id, name, amountMinor, date, category FROM expense
                    WHERE userId = ? AND currency = ? AND day >= ? AND day < ?
                    ORDER BY amountMinor DESC, date DESC, id LIMIT 5
                    """,
                arguments: [userId, currency, range.lower, range.upper]
            ).map {
                LargestExpense(
                    id: $0["id"], name: $0["name"], amountMinor: $0["amountMinor"], date: Date(ms: $0["date"]),
                    category: $0["category"])
            }
            return CurrencySummary(
                currency: currency, totalMinor: total, count: list.reduce(0) { $0 + $1.count },
                averagePerDayMinor: (Decimal(total) / Decimal(dayCount)).rounded(2), groups: list, largest: largest)
        }
        return ExpenseSummary(
            by: by, from: Day.text(first), to: Day.text(end), days: Int(dayCount), currencies: currencies,
            timeZone: LocalDays.name(of: zone))
    }
}
