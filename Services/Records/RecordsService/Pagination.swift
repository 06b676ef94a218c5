// Keyset pagination for every list: rows are read in a fixed order (a sort key then the id),
// and the cursor is the last row's key and id, base64url-encoded JSON that callers treat as
// opaque. A page never skips or repeats a row while other rows are added.
import Contracts
import Foundation
import GRDB
import Wire

/// Where a list resumes: the sort the cursor belongs to, the last row's key and its id.
struct Cursor: Codable, Sendable, Equatable {
    /// The sort this cursor was made for (a cursor is refused under another sort).
    var s: String
    /// An integer sort key (dates in ms, amounts, weights).
    var n: Int64?
    /// A text sort key (species).
    var t: String?
    var id: String

    var encoded: String {
        Crypto.base64URL(Array((try? JSONEncoder().encode(self)) ?? Data()))
    }

    /// Reads a caller's cursor for `sort`; nil when none was sent.
    static func decode(_ text: String?, sort: String) throws -> Cursor? {
        guard let text else { return nil }
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        guard let data = Data(base64Encoded: base64),
            let cursor = try? JSONDecoder().decode(Cursor.self, from: data)
        else {
            throw ServiceError.invalid("cursor", "is not a cursor this list returned (got \(shown(text)))")
        }
        guard cursor.s == sort else {
            throw ServiceError.invalid(
                "cursor", "belongs to a list sorted by \(cursor.s), not \(sort): start again without a cursor")
        }
        return cursor
    }
}

enum Pagination {
    static let defaultLimit = 50
    static let maxLimit = 500

    static func limit(_ requested: Int?) throws -> Int {
        guard let requested else { return defaultLimit }
        guard (1...maxLimit).contains(requested) else {
            throw ServiceError.invalid("limit", "must be between 1 and \(maxLimit) (got \(requested))")
        }
        return requested
    }

    /// Runs a list query whose last two arguments are the row limit (`limit + 1` is
    /// asked, to learn whether another page follows) and maps the rows. The statement is
    /// compiled once per connection (each list has one fixed statement per sort).
    static func page<Item: Encodable & Sendable>(
        _ db: Database, sql: String, arguments: StatementArguments, limit: Int, sort: String,
        key: (Item) -> (n: Int64?, t: String?, id: String), row map: (Row) throws -> Item
    ) throws -> Page<Item> {
        var items = try Row.fetchAll(db.cachedStatement(sql: sql), arguments: arguments + [limit + 1]).map(map)
        var next: String?
        if items.count > limit {
            items.removeLast(items.count - limit)
            let last = key(items[items.count - 1])
            next = Cursor(s: sort, n: last.n, t: last.t, id: last.id).encoded
        }
        return Page(items: items, nextCursor: next)
    }
}
