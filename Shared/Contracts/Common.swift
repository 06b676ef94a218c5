// Bodies and results every domain shares, and `Patch` for the nullable fields of updates.
import Foundation
import Wire

/// `{id}`: get and delete requests.
public struct IdBody: Documented, Equatable {
    public var id: String
    public init(id: String) { self.id = id }
    public static let sample = IdBody(id: "0190a6b0")
}

/// `{deleted: true}`: what a delete answers.
public struct Deleted: Codable, Sendable, Equatable {
    public var deleted: Bool
    public init(deleted: Bool = true) { self.deleted = deleted }
}

/// `{cursor?, limit?}`: a list with nothing else to filter on.
public struct ListBody: Documented, Equatable {
    public var cursor: String?
    public var limit: Int?
    public init(cursor: String? = nil, limit: Int? = nil) {
        self.cursor = cursor
        self.limit = limit
    }
    public static let sample = ListBody(cursor: "c", limit: 50)
}

/// One page of a list, newest first; `nextCursor` asks for the next page.
public struct Page<Item: Sendable>: Sendable {
    public var items: [Item]
    public var nextCursor: String?
    public init(items: [Item], nextCursor: String?) {
        self.items = items
        self.nextCursor = nextCursor
    }
}

extension Page: Encodable where Item: Encodable {}

/// Keys in UTF-8 byte order, `nextCursor` left out when nil (Shared/Wire/JSONWritable.swift).
extension Page: JSONWritable where Item: JSONWritable {
    public func writeJSON(to out: inout JSONOutput) {
        out.beginObject()
        out.key("items")
        out.array(items) { $0.write($1) }
        if let nextCursor {
            out.key("nextCursor")
            out.string(nextCursor)
        }
        out.endObject()
    }
}
extension Page: Decodable where Item: Decodable {}

/// An optional field of an update: absent leaves it unchanged, `null` clears it, a value
/// sets it. Read and written by the synthesized Codable through the container overloads
/// below (absent ⇄ `.unchanged`).
public enum Patch<Value: Sendable>: Sendable {
    case unchanged
    case clear
    case set(Value)

    /// `nil` clears, a value sets.
    public init(_ value: Value?) { self = value.map { .set($0) } ?? .clear }

    /// The field's new value given its current one.
    public func applied(to current: Value?) -> Value? {
        switch self {
        case .unchanged: current
        case .clear: nil
        case .set(let value): value
        }
    }
}

extension Patch: Decodable where Value: Decodable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        self = container.decodeNil() ? .clear : .set(try Value(from: decoder))
    }
}

extension Patch: Encodable where Value: Encodable {
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .unchanged, .clear: try container.encodeNil()
        case .set(let value): try container.encode(value)
        }
    }
}

extension KeyedDecodingContainer {
    /// A missing key is `.unchanged` rather than an error.
    public func decode<Value: Decodable>(_ type: Patch<Value>.Type, forKey key: Key) throws -> Patch<Value> {
        try decodeIfPresent(type, forKey: key) ?? .unchanged
    }

    public func decodeIfPresent<Value: Decodable>(_ type: Patch<Value>.Type, forKey key: Key) throws -> Patch<Value>? {
        guard contains(key) else { return nil }
        if try decodeNil(forKey: key) { return .clear }
        return .set(try decode(Value.self, forKey: key))
    }
}

extension KeyedEncodingContainer {
    /// `.unchanged` leaves the key out.
    public mutating func encode<Value: Encodable>(_ value: Patch<Value>, forKey key: Key) throws {
        switch value {
        case .unchanged: break
        case .clear: try encodeNil(forKey: key)
        case .set(let value): try encode(value, forKey: key)
        }
    }
}

/// `{}`: the body of a method that takes nothing.
extension Empty: Documented {
    public static let sample = Empty()
}

/// `{by?, from?, to?}`: a summary over local days (analytics' expense summary and worked
/// hours). `from` and `to` are `YYYY-MM-DD` in the user's zone; each method names the
/// groupings `by` accepts and its default.
public struct SummaryRequest: Documented, Equatable {
    public var by: String?
    public var from: String?
    public var to: String?

    public init(by: String? = nil, from: String? = nil, to: String? = nil) {
        self.by = by
        self.from = from
        self.to = to
    }

    public static let sample = SummaryRequest(by: "day", from: "2026-05-01", to: "2026-05-31")
}
