// Keyset pagination for every list: rows are read in a fixed order (a sort key then the id),
// and the cursor is the last row's key and id, base64url-encoded JSON that callers treat as
// opaque. A page never skips or repeats a row while other rows are added.
import Contracts
import Foundation
import GRDB
import Wire

/// Which list a cursor belongs to: the method, its sort, and the filters that choose its
/// rows (a vehicle, an activity, a water, dates, a category). A cursor is the position of
/// a row in one such list, so it is refused in any other: a fill-up cursor of one vehicle
/// would otherwise resume another vehicle's list at a date taken from the first.
struct ListKey: Sendable {
    /// The sort key a cursor of this list carries.
    enum Position: Sendable {
        case integer, text, textAndInteger
    }

    let sort: String
    let position: Position
    /// The list's fingerprint: the first 16 hex digits of SHA-256 over the method, the sort
    /// and the filters (the cursor stays short, and shows none of them).
    let list: String

    /// `filters` in a fixed order for the method, nil for one not given; texts compared
    /// without regard to case by the list's query are given folded.
    init(_ method: String, sort: String, position: Position = .integer, filters: [String?] = []) {
        self.sort = sort
        self.position = position
        let identity = ([method, sort] + filters.map { $0.map { "=" + $0 } ?? "-" }).joined(separator: "\u{1}")
        list = String(Crypto.sha256Hex(identity).prefix(16))
    }
}

/// Where a list resumes: the list and sort the cursor belongs to, the last row's key and its id.
struct Cursor: Codable, Sendable, Equatable {
    /// The sort this cursor was made for (a cursor is refused under another sort).
    var s: String
    /// The list it was made for (`ListKey.list`; refused in another list).
    var l: String?
    /// An integer sort key (dates in ms, amounts, weights).
    var n: Int64?
    /// A text sort key (species, a currency).
    var t: String?
    var id: String

    var encoded: String {
        Crypto.base64URL(Array((try? JSONEncoder().encode(self)) ?? Data()))
    }

    /// Reads a caller's cursor for the list `key`; nil when none was sent.
    static func decode(_ text: String?, for key: ListKey) throws -> Cursor? {
        guard let text else { return nil }
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        let notOurs = ServiceError.invalid("cursor", "is not a cursor this list returned (got \(shown(text)))")
        guard let data = Data(base64Encoded: base64), let cursor = try? JSONDecoder().decode(Cursor.self, from: data)
        else { throw notOurs }
        guard cursor.s == key.sort else {
            throw ServiceError.invalid(
                "cursor", "belongs to a list sorted by \(cursor.s), not \(key.sort): start again without a cursor")
        }
        guard cursor.l != nil else {
            throw ServiceError.invalid(
                "cursor", "was made by an earlier version of this service: start again without a cursor")
        }
        guard cursor.l == key.list else {
            throw ServiceError.invalid(
                "cursor",
                "belongs to another list (another method, vehicle, activity or filter): start again without a cursor")
        }
        // (every cursor this list made carries the key its sort needs: one without it would
        // start the list again instead of resuming it)
        let complete =
            switch key.position {
            case .integer: cursor.n != nil
            case .text: cursor.t != nil
            case .textAndInteger: cursor.n != nil && cursor.t != nil
            }
        guard complete else { throw notOurs }
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
        _ db: Database, sql: String, arguments: StatementArguments, limit: Int, list: ListKey,
        key: (Item) -> (n: Int64?, t: String?, id: String), row map: (Row) throws -> Item
    ) throws -> Page<Item> {
        var items = try Row.fetchAll(db.cachedStatement(sql: sql), arguments: arguments + [limit + 1]).map(map)
        var next: String?
        if items.count > limit {
            items.removeLast(items.count - limit)
            let last = key(items[items.count - 1])
            next = Cursor(s: list.sort, l: list.list, n: last.n, t: last.t, id: last.id).encoded
        }
        return Page(items: items, nextCursor: next)
    }
}
