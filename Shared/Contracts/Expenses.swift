// The expenses logbook's contract (records), docs/protocol.md "Expenses". Amounts are
// integer minor units with their currency.
import Foundation
import Wire

/// An expense as records keeps it, answers it and publishes it (`expense.created|updated`).
public struct Expense: Documented, Equatable {
    public var id: String
    public var name: String
    public var description: String?
    public var amountMinor: Int64
    public var currency: String
    public var date: Date
    public var category: String?
    public var createdAt: Date
    public var updatedAt: Date

    public init(
        id: String, name: String, description: String?, amountMinor: Int64, currency: String, date: Date,
        category: String?, createdAt: Date, updatedAt: Date
    ) {
        self.id = id
        self.name = name
        self.description = description
        self.amountMinor = amountMinor
        self.currency = currency
        self.date = date
        self.category = category
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }

    public static let sample = Expense(
        id: "e", name: "Lunch", description: "d", amountMinor: 1250, currency: "USD", date: Date(timeIntervalSince1970: 0),
        category: "food", createdAt: Date(timeIntervalSince1970: 0), updatedAt: Date(timeIntervalSince1970: 0))
}

/// Keys in UTF-8 byte order, optionals left out when nil: what the synthesized `Encodable`
/// gives through the shared encoder (Shared/Wire/JSONWritable.swift). Written on every
/// `expense.add` twice (the answer and the event) and for every item of a list;
/// Tests/RuntimeTests/JSONOutputTests.swift holds it to the encoder.
extension Expense: JSONWritable {
    public func writeJSON(to out: inout JSONOutput) {
        out.beginObject()
        out.key("amountMinor")
        out.int(amountMinor)
        if let category {
            out.key("category")
            out.string(category)
        }
        out.key("createdAt")
        out.date(createdAt)
        out.key("currency")
        out.string(currency)
        out.key("date")
        out.date(date)
        if let description {
            out.key("description")
            out.string(description)
        }
        out.key("id")
        out.string(id)
        out.key("name")
        out.string(name)
        out.key("updatedAt")
        out.date(updatedAt)
        out.endObject()
    }
}

public struct ExpenseAdd: Documented, Equatable {
    public var name: String
    public var description: String?
    public var amountMinor: Int64
    public var currency: String?
    public var date: Date?
    public var category: String?

    public init(
        name: String, description: String? = nil, amountMinor: Int64, currency: String? = nil, date: Date? = nil,
        category: String? = nil
    ) {
        self.name = name
        self.description = description
        self.amountMinor = amountMinor
        self.currency = currency
        self.date = date
        self.category = category
    }

    public static let sample = ExpenseAdd(
        name: "Lunch", description: "d", amountMinor: 1250, currency: "USD", date: Date(timeIntervalSince1970: 0),
        category: "food")
}

public struct ExpenseUpdate: Documented {
    public var id: String
    public var name: String?
    public var description: Patch<String>
    public var amountMinor: Int64?
    public var currency: String?
    public var date: Date?
    public var category: Patch<String>

    public init(
        id: String, name: String? = nil, description: Patch<String> = .unchanged, amountMinor: Int64? = nil,
        currency: String? = nil, date: Date? = nil, category: Patch<String> = .unchanged
    ) {
        self.id = id
        self.name = name
        self.description = description
        self.amountMinor = amountMinor
        self.currency = currency
        self.date = date
        self.category = category
    }

    public static let sample = ExpenseUpdate(
        id: "e", name: "Lunch", description: .clear, amountMinor: 1, currency: "USD", date: Date(timeIntervalSince1970: 0),
        category: .set("food"))
}

public enum ExpenseSort: String, WireEnum { case date, amount }

public struct ExpenseList: Documented, Equatable {
    public var from: Date?
    public var to: Date?
    public var sort: ExpenseSort?
    public var category: String?
    public var cursor: String?
    public var limit: Int?

    public init(
        from: Date? = nil, to: Date? = nil, sort: ExpenseSort? = nil, category: String? = nil, cursor: String? = nil,
        limit: Int? = nil
    ) {
        self.from = from
        self.to = to
        self.sort = sort
        self.category = category
        self.cursor = cursor
        self.limit = limit
    }

    public static let sample = ExpenseList(
        from: Date(timeIntervalSince1970: 0), to: Date(timeIntervalSince1970: 1), sort: .amount, category: "food",
        cursor: "c", limit: 50)
}

/// `expense.deleted`.
public struct ExpenseDeleted: Documented, Equatable {
    public var id: String
    public var userId: String

    public init(id: String, userId: String) {
        self.id = id
        self.userId = userId
    }

    public static let sample = ExpenseDeleted(id: "e", userId: "u")
}

// MARK: Summary (analytics)

public struct ExpenseSummaryGroup: Codable, Sendable, Equatable {
    /// `2026-05-10`, `2026-W19`, `2026-05`, `2026`, or the category (by category).
    public var key: String
    /// The category when grouping by category (null: expenses without one).
    public var category: String?
    public var totalMinor: Int64
    public var count: Int

    public init(key: String, category: String?, totalMinor: Int64, count: Int) {
        self.key = key
        self.category = category
        self.totalMinor = totalMinor
        self.count = count
    }
}

public struct LargestExpense: Codable, Sendable, Equatable {
    public var id: String
    public var name: String
    public var amountMinor: Int64
    public var date: Date
    public var category: String?

    public init(id: String, name: String, amountMinor: Int64, date: Date, category: String?) {
        self.id = id
        self.name = name
        self.amountMinor = amountMinor
        self.date = date
        self.category = category
    }
}

public struct CurrencySummary: Codable, Sendable, Equatable {
    public var currency: String
    public var totalMinor: Int64
    public var count: Int
    /// Total over the days of the range (2 decimals, minor units).
    public var averagePerDayMinor: Decimal
    public var groups: [ExpenseSummaryGroup]
    /// The five largest expenses in the range.
    public var largest: [LargestExpense]

    public init(
        currency: String, totalMinor: Int64, count: Int, averagePerDayMinor: Decimal, groups: [ExpenseSummaryGroup],
        largest: [LargestExpense]
    ) {
        self.currency = currency
        self.totalMinor = totalMinor
        self.count = count
        self.averagePerDayMinor = averagePerDayMinor
        self.groups = groups
        self.largest = largest
    }
}

/// `analytics.expense.summary`: per currency (amounts in different currencies are never added).
public struct ExpenseSummary: Codable, Sendable, Equatable {
    public var by: String
    /// The days summarised: `from` inclusive, `to` exclusive (null when there is nothing).
    public var from: String?
    public var to: String?
    public var days: Int
    public var currencies: [CurrencySummary]
    /// The IANA zone the days are counted in (the user's, from auth).
    public var timeZone: String

    public init(by: String, from: String?, to: String?, days: Int, currencies: [CurrencySummary], timeZone: String) {
        self.by = by
        self.from = from
        self.to = to
        self.days = days
        self.currencies = currencies
        self.timeZone = timeZone
    }
}

public enum ExpenseMethods {
    public static let add = Method<ExpenseAdd, Expense>("records.expense.add", .write)
    public static let get = Method<IdBody, Expense>("records.expense.get", .read)
    public static let update = Method<ExpenseUpdate, Expense>("records.expense.update", .write)
    public static let delete = Method<IdBody, Deleted>("records.expense.delete", .write)
    public static let list = Method<ExpenseList, Page<Expense>>("records.expense.list", .read)
    /// `by`: `day` | `week` | `month` (default) | `year` | `category`.
    public static let summary = Method<SummaryRequest, ExpenseSummary>("analytics.expense.summary", .read)
}

public enum ExpenseEvents {
    public static let created = "expense.created"
    public static let updated = "expense.updated"
    public static let deleted = "expense.deleted"
}
