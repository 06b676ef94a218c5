// Encoding a typed value straight to a `JSONValue`, without writing JSON text with
// Foundation's encoder and parsing it back: every typed `logbook` request becomes a JSON
// value this way (Context.send carries bodies as values), and in a one-shot command the
// encoder's first use was a quarter of a millisecond. It makes what that round trip made
// (Tests/RuntimeTests/JSONValueEncoderTests.swift holds the two to each other over every
// documented Contracts type and every kind of leaf, generated):
// - times as WireTime strings (WireCoding.encoder's strategy), Data as base64, a URL as its
//   absolute string;
// - a Decimal or a floating-point number as the text Foundation writes, read as that text is
//   read off the wire (WireCoding.decode); a non-finite Double or Float is refused as
//   Foundation refuses it;
// - a value nested in a container that encodes nothing is an empty object; at the top level
//   it is an error.
import Foundation

enum JSONValueEncoder {
    static func encode<T: Encodable>(_ value: T) throws -> JSONValue {
        guard let slot = try Slot.box(value, path: []) else {
            throw EncodingError.invalidValue(
                value, .init(codingPath: [], debugDescription: "Top-level \(T.self) did not encode any values."))
        }
        return slot.value
    }
}

/// A value being encoded: finished (a leaf, or a value that needed no container), or a
/// container that stays open, since a nested container or a super-encoder writes into it
/// after it was handed out.
private enum Slot {
    case value(JSONValue)
    case node(Node)

    var value: JSONValue {
        switch self {
        case .value(let value): value
        case .node(let node): node.value ?? .object([:])
        }
    }

    /// `value` as a slot; nil when it encodes nothing at all. The types Foundation's encoder
    /// writes its own way are written that way; everything else by its `encode(to:)`.
    static func box<T: Encodable>(_ value: T, path: @autoclosure () -> [any CodingKey]) throws -> Slot? {
        if T.self == JSONValue.self { return .value(value as! JSONValue) }
        if T.self == Date.self { return .value(.string(WireTime.format(value as! Date))) }
        if T.self == Data.self { return .value(.string((value as! Data).base64EncodedString())) }
        if T.self == URL.self { return .value(.string((value as! URL).absoluteString)) }
        if T.self == Decimal.self {
            let decimal = value as! Decimal
            return .value(.number(try number(decimal.description, of: decimal, path: path())))
        }
        let node = Node()
        try value.encode(to: NodeEncoder(node: node, codingPath: path()))
        return node.isEmpty ? nil : .node(node)
    }

    /// A Double or Float as Foundation writes it: its shortest text (a trailing ".0", which
    /// Foundation drops, reads as the same number).
    static func number<F: BinaryFloatingPoint & CustomStringConvertible>(
        _ value: F, path: [any CodingKey]
    ) throws -> JSONValue {
        guard value.isFinite else {
            throw EncodingError.invalidValue(
                value,
                .init(
                    codingPath: path,
                    debugDescription: "Unable to encode \(F.self).\(value) directly in JSON."))
        }
        return .number(try number(value.description, of: value, path: path))
    }

    /// The number `text` (as Foundation's encoder writes it) reads as: its canonical text,
    /// as the parser takes it; a number the parser leaves to Foundation (more digits than a
    /// Decimal holds exactly, or beyond its range) is read by Foundation, as it was.
    private static func number(_ text: String, of value: Any, path: [any CodingKey]) throws -> JSONNumber {
        if let canonical = JSONNumber.canonicalText(text) { return JSONNumber(canonical: canonical) }
        guard case .number(let number)? = try? WireCoding.decode(JSONValue.self, from: Data(text.utf8)) else {
            throw EncodingError.invalidValue(value, .init(codingPath: path, debugDescription: "Unable to encode \(text) in JSON."))
        }
        return number
    }
}

private final class Node {
    private enum Kind {
        case empty
        case leaf(JSONValue)
        case object
        case array
    }

    private var kind = Kind.empty
    private var fields: [String: Slot] = [:]
    private var items: [Slot] = []

    var isEmpty: Bool {
        if case .empty = kind { return true }
        return false
    }

    var value: JSONValue? {
        switch kind {
        case .empty: nil
        case .leaf(let value): value
        case .object: .object(fields.mapValues(\.value))
        case .array: .array(items.map(\.value))
        }
    }

    func set(_ value: JSONValue) { kind = .leaf(value) }

    /// Makes this node an object (kept if it is one already).
    func object() -> Node {
        if case .object = kind { return self }
        kind = .object
        fields = [:]
        return self
    }

    /// Makes this node an array (kept if it is one already).
    func array() -> Node {
        if case .array = kind { return self }
        kind = .array
        items = []
        return self
    }

    subscript(key: String) -> Slot? {
        get { fields[key] }
        set { fields[key] = newValue }
    }

    var count: Int { items.count }

    func append(_ slot: Slot) { items.append(slot) }
}

private struct NodeEncoder: Encoder {
    let node: Node
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(KeyedContainer<Key>(node: node.object(), codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        UnkeyedContainer(node: node.array(), codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        SingleContainer(node: node, codingPath: codingPath)
    }
}

private struct KeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let node: Node
    let codingPath: [any CodingKey]

    private func put(_ value: JSONValue, _ key: Key) { node[key.stringValue] = .value(value) }

    mutating func encodeNil(forKey key: Key) { put(.null, key) }
    mutating func encode(_ value: Bool, forKey key: Key) { put(.bool(value), key) }
    mutating func encode(_ value: String, forKey key: Key) { put(.string(value), key) }
    mutating func encode(_ value: Double, forKey key: Key) throws {
        put(try Slot.number(value, path: codingPath + [key]), key)
    }
    mutating func encode(_ value: Float, forKey key: Key) throws {
        put(try Slot.number(value, path: codingPath + [key]), key)
    }
    mutating func encode(_ value: Int, forKey key: Key) { put(.number(JSONNumber(value)), key) }
    mutating func encode(_ value: Int8, forKey key: Key) { put(.number(JSONNumber(value)), key) }
    mutating func encode(_ value: Int16, forKey key: Key) { put(.number(JSONNumber(value)), key) }
    mutating func encode(_ value: Int32, forKey key: Key) { put(.number(JSONNumber(value)), key) }
    mutating func encode(_ value: Int64, forKey key: Key) { put(.number(JSONNumber(value)), key) }
    mutating func encode(_ value: UInt, forKey key: Key) { put(.number(JSONNumber(value)), key) }
    mutating func encode(_ value: UInt8, forKey key: Key) { put(.number(JSONNumber(value)), key) }
    mutating func encode(_ value: UInt16, forKey key: Key) { put(.number(JSONNumber(value)), key) }
    mutating func encode(_ value: UInt32, forKey key: Key) { put(.number(JSONNumber(value)), key) }
    mutating func encode(_ value: UInt64, forKey key: Key) { put(.number(JSONNumber(value)), key) }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        node[key.stringValue] = try Slot.box(value, path: codingPath + [key]) ?? .value(.object([:]))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type, forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        let child = Node().object()
        node[key.stringValue] = .node(child)
        return KeyedEncodingContainer(KeyedContainer<NestedKey>(node: child, codingPath: codingPath + [key]))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let child = Node().array()
        node[key.stringValue] = .node(child)
        return UnkeyedContainer(node: child, codingPath: codingPath + [key])
    }

    mutating func superEncoder() -> any Encoder { superEncoder(named: SuperKey()) }

    mutating func superEncoder(forKey key: Key) -> any Encoder { superEncoder(named: key) }

    private func superEncoder(named key: any CodingKey) -> any Encoder {
        let child = Node()
        node[key.stringValue] = .node(child)
        return NodeEncoder(node: child, codingPath: codingPath + [key])
    }
}

private struct UnkeyedContainer: UnkeyedEncodingContainer {
    let node: Node
    let codingPath: [any CodingKey]
    var count: Int { node.count }

    private var nextKey: any CodingKey { IndexKey(node.count) }
    private func add(_ value: JSONValue) { node.append(.value(value)) }

    mutating func encodeNil() { add(.null) }
    mutating func encode(_ value: Bool) { add(.bool(value)) }
    mutating func encode(_ value: String) { add(.string(value)) }
    mutating func encode(_ value: Double) throws { add(try Slot.number(value, path: codingPath + [nextKey])) }
    mutating func encode(_ value: Float) throws { add(try Slot.number(value, path: codingPath + [nextKey])) }
    mutating func encode(_ value: Int) { add(.number(JSONNumber(value))) }
    mutating func encode(_ value: Int8) { add(.number(JSONNumber(value))) }
    mutating func encode(_ value: Int16) { add(.number(JSONNumber(value))) }
    mutating func encode(_ value: Int32) { add(.number(JSONNumber(value))) }
    mutating func encode(_ value: Int64) { add(.number(JSONNumber(value))) }
    mutating func encode(_ value: UInt) { add(.number(JSONNumber(value))) }
    mutating func encode(_ value: UInt8) { add(.number(JSONNumber(value))) }
    mutating func encode(_ value: UInt16) { add(.number(JSONNumber(value))) }
    mutating func encode(_ value: UInt32) { add(.number(JSONNumber(value))) }
    mutating func encode(_ value: UInt64) { add(.number(JSONNumber(value))) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        node.append(try Slot.box(value, path: codingPath + [nextKey]) ?? .value(.object([:])))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        let key = nextKey
        let child = Node().object()
        node.append(.node(child))
        return KeyedEncodingContainer(KeyedContainer<NestedKey>(node: child, codingPath: codingPath + [key]))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let key = nextKey
        let child = Node().array()
        node.append(.node(child))
        return UnkeyedContainer(node: child, codingPath: codingPath + [key])
    }

    mutating func superEncoder() -> any Encoder {
        let key = nextKey
        let child = Node()
        node.append(.node(child))
        return NodeEncoder(node: child, codingPath: codingPath + [key])
    }
}

private struct SingleContainer: SingleValueEncodingContainer {
    let node: Node
    let codingPath: [any CodingKey]

    mutating func encodeNil() { node.set(.null) }
    mutating func encode(_ value: Bool) { node.set(.bool(value)) }
    mutating func encode(_ value: String) { node.set(.string(value)) }
    mutating func encode(_ value: Double) throws { node.set(try Slot.number(value, path: codingPath)) }
    mutating func encode(_ value: Float) throws { node.set(try Slot.number(value, path: codingPath)) }
    mutating func encode(_ value: Int) { node.set(.number(JSONNumber(value))) }
    mutating func encode(_ value: Int8) { node.set(.number(JSONNumber(value))) }
    mutating func encode(_ value: Int16) { node.set(.number(JSONNumber(value))) }
    mutating func encode(_ value: Int32) { node.set(.number(JSONNumber(value))) }
    mutating func encode(_ value: Int64) { node.set(.number(JSONNumber(value))) }
    mutating func encode(_ value: UInt) { node.set(.number(JSONNumber(value))) }
    mutating func encode(_ value: UInt8) { node.set(.number(JSONNumber(value))) }
    mutating func encode(_ value: UInt16) { node.set(.number(JSONNumber(value))) }
    mutating func encode(_ value: UInt32) { node.set(.number(JSONNumber(value))) }
    mutating func encode(_ value: UInt64) { node.set(.number(JSONNumber(value))) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        node.set(try Slot.box(value, path: codingPath)?.value ?? .object([:]))
    }
}

/// A super-encoder's key, "super" (as Foundation names it).
private struct SuperKey: CodingKey {
    var stringValue: String { "super" }
    var intValue: Int? { nil }
    init() {}
    init?(stringValue: String) { nil }
    init?(intValue: Int) { nil }
}
