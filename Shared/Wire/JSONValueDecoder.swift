// Decoding a typed value straight from a `JSONValue` (an event's payload, already parsed
// once off the wire), without writing it back to JSON text and parsing that again: a
// projection replaying its history decodes every event's payload, and the round trip was
// most of the cost. It reads what `WireCoding.decoder` reads: times as ISO-8601 strings
// (WireTime), integers only from whole numbers in range; a Decimal from a number's exact
// digits (JSONNumber); Data from base64 as Foundation's default; URLs and other Decimals go
// through WireCoding.decoder (the few values that have them). WireCoding.decode reads frames
// with it, so wherever it decodes a value at all, it must decode what Foundation decodes
// (Tests/RuntimeTests/FrameDecodingTests.swift holds the two to that over every documented
// Contracts type and every kind of leaf).
import Foundation

struct JSONValueDecoder: Decoder {
    let value: JSONValue
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    init(_ value: JSONValue, codingPath: [any CodingKey] = []) {
        self.value = value
        self.codingPath = codingPath
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .object(let object) = value else {
            throw DecodingError.typeMismatch(
                [String: JSONValue].self,
                .init(codingPath: codingPath, debugDescription: "expected an object, found \(value.kindName)"))
        }
        return KeyedDecodingContainer(KeyedContainer<Key>(object: object, codingPath: codingPath))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .array(let items) = value else {
            throw DecodingError.typeMismatch(
                [JSONValue].self, .init(codingPath: codingPath, debugDescription: "expected an array, found \(value.kindName)"))
        }
        return UnkeyedContainer(items: items, codingPath: codingPath)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        SingleContainer(value: value, codingPath: codingPath)
    }

    /// Decodes `type` from `value` at `path`: the few Foundation types JSONDecoder treats
    /// specially are handled as it does; everything else by its own `init(from:)`.
    /// The path is built only when it is needed (an error, or a value decoded by its own
    /// `init(from:)`): a payload's dates and quantities need none.
    static func decode<T: Decodable>(
        _ type: T.Type, from value: JSONValue, path: @autoclosure () -> [any CodingKey]
    ) throws -> T {
        // A quantity from the number's canonical digits (JSONNumber.swift); anything unusual
        // (an exponent, more than three decimals, out of range) goes through Decimal below,
        // which says exactly what is wrong with it.
        if T.self == Milli.self, case .number(let number) = value, let milli = number.thousandths {
            return Milli(thousandths: milli) as! T
        }
        if T.self == Date.self {
            guard case .string(let text) = value else {
                throw DecodingError.typeMismatch(
                    String.self, .init(codingPath: path(), debugDescription: "expected a time string, found \(value.kindName)"))
            }
            guard let date = WireTime.parse(text) else {
                throw DecodingError.dataCorrupted(
                    .init(
                        codingPath: path(),
                        debugDescription: "expected an ISO-8601 time with an offset, like 2026-05-01T14:45:00Z (got \"\(text)\")"))
            }
            return date as! T
        }
        // A number's Decimal from its digits (JSONNumber.swift): the quantities (`Milli`) of
        // every fill-up and catch a projection replays come here, never through a Double.
        if T.self == Decimal.self, case .number(let number) = value, let decimal = number.decimal {
            return decimal as! T
        }
        if T.self == JSONNumber.self, case .number(let number) = value { return number as! T }
        // Data as Foundation's default (.base64) reads it: the string's base64, else an error.
        if T.self == Data.self, case .string(let text) = value, let data = Data(base64Encoded: text) {
            return data as! T
        }
        if T.self == Data.self || T.self == URL.self || T.self == Decimal.self {
            return try WireCoding.decoder.decode(T.self, from: WireCoding.encode(value))
        }
        if T.self == JSONValue.self { return value as! T }
        return try T(from: JSONValueDecoder(value, codingPath: path()))
    }
}

/// An array element's key in a coding path ("Index 3", as Foundation names it); the
/// encoder (JSONValueEncoder.swift) names its elements with it too.
struct IndexKey: CodingKey {
    var intValue: Int?
    var stringValue: String
    init(_ index: Int) {
        intValue = index
        stringValue = "Index \(index)"
    }
    init?(stringValue: String) { nil }
    init?(intValue: Int) { self.init(intValue) }
}

private struct KeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let object: [String: JSONValue]
    let codingPath: [any CodingKey]

    var allKeys: [Key] { object.keys.compactMap { Key(stringValue: $0) } }

    func contains(_ key: Key) -> Bool { object[key.stringValue] != nil }

    private func value(_ key: Key) throws -> JSONValue {
        guard let value = object[key.stringValue] else {
            throw DecodingError.keyNotFound(
                key, .init(codingPath: codingPath, debugDescription: "No value associated with key \(key.stringValue)"))
        }
        return value
    }

    func decodeNil(forKey key: Key) throws -> Bool {
        if case .null = try value(key) { return true }
        return false
    }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try JSONValueDecoder.decode(T.self, from: try value(key), path: codingPath + [key])
    }

    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        try present(key).map { try JSONValueDecoder.decode(T.self, from: $0, path: codingPath + [key]) }
    }

    /// The field's value unless it is absent or null.
    private func present(_ key: Key) -> JSONValue? {
        guard let value = object[key.stringValue] else { return nil }
        if case .null = value { return nil }
        return value
    }

    // The primitives are read in place (SingleContainer's reads, the path built only for an
    // error); an optional one with one look-up, where the standard library's default asks
    // `contains`, then `decodeNil`, then `decode`.

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try SingleContainer.bool(value(key), codingPath + [key]) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String {
        try SingleContainer.string(value(key), codingPath + [key])
    }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double {
        try SingleContainer.double(value(key), codingPath + [key])
    }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int {
        try SingleContainer.integer(type, value(key), codingPath + [key])
    }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 {
        try SingleContainer.integer(type, value(key), codingPath + [key])
    }

    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? {
        try present(key).map { try SingleContainer.bool($0, codingPath + [key]) }
    }
    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? {
        try present(key).map { try SingleContainer.string($0, codingPath + [key]) }
    }
    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? {
        try present(key).map { try SingleContainer.double($0, codingPath + [key]) }
    }
    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? {
        try present(key).map { try SingleContainer.integer(type, $0, codingPath + [key]) }
    }
    func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? {
        try present(key).map { try SingleContainer.integer(type, $0, codingPath + [key]) }
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
        -> KeyedDecodingContainer<NestedKey>
    {
        try JSONValueDecoder(try value(key), codingPath: codingPath + [key]).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try JSONValueDecoder(try value(key), codingPath: codingPath + [key]).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder { JSONValueDecoder(.object(object), codingPath: codingPath) }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        JSONValueDecoder(object[key.stringValue] ?? .null, codingPath: codingPath + [key])
    }
}

private struct UnkeyedContainer: UnkeyedDecodingContainer {
    let items: [JSONValue]
    let codingPath: [any CodingKey]
    var currentIndex = 0

    init(items: [JSONValue], codingPath: [any CodingKey]) {
        self.items = items
        self.codingPath = codingPath
    }

    var count: Int? { items.count }
    var isAtEnd: Bool { currentIndex >= items.count }

    private mutating func next<T>(_ type: T.Type) throws -> (JSONValue, [any CodingKey]) {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(
                type, .init(codingPath: codingPath + [IndexKey(currentIndex)], debugDescription: "Unkeyed container is at end."))
        }
        defer { currentIndex += 1 }
        return (items[currentIndex], codingPath + [IndexKey(currentIndex)])
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd else { return false }
        if case .null = items[currentIndex] {
            currentIndex += 1
            return true
        }
        return false
    }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let (value, path) = try next(type)
        return try JSONValueDecoder.decode(T.self, from: value, path: path)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws
        -> KeyedDecodingContainer<NestedKey>
    {
        let (value, path) = try next([String: JSONValue].self)
        return try JSONValueDecoder(value, codingPath: path).container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let (value, path) = try next([JSONValue].self)
        return try JSONValueDecoder(value, codingPath: path).unkeyedContainer()
    }

    mutating func superDecoder() throws -> any Decoder {
        let (value, path) = try next(JSONValue.self)
        return JSONValueDecoder(value, codingPath: path)
    }
}

fileprivate struct SingleContainer: SingleValueDecodingContainer {
    let value: JSONValue
    let codingPath: [any CodingKey]

    func decodeNil() -> Bool { value == .null }

    func decode(_ type: Bool.Type) throws -> Bool { try Self.bool(value, codingPath) }
    func decode(_ type: String.Type) throws -> String { try Self.string(value, codingPath) }
    func decode(_ type: Double.Type) throws -> Double { try Self.double(value, codingPath) }
    /// A Float from the number's digits (one rounding, as Foundation's), refused when it is
    /// out of a Float's range, as Foundation refuses it.
    func decode(_ type: Float.Type) throws -> Float {
        guard case .number(let n) = value else { throw Self.mismatch(type, "a number", value, codingPath) }
        guard let float = Float(n.description), float.isFinite else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: codingPath, debugDescription: "Number \(n) is not representable in Swift as Float."))
        }
        return float
    }
    private func integer<T: BinaryInteger>(_ type: T.Type) throws -> T { try Self.integer(type, value, codingPath) }

    // The reads themselves, with the path built only for an error: KeyedContainer reads a
    // field in place with them (a path array per field was an allocation each).

    private static func mismatch<T>(_ type: T.Type, _ expected: String, _ value: JSONValue, _ path: [any CodingKey])
        -> DecodingError
    {
        .typeMismatch(type, .init(codingPath: path, debugDescription: "Expected \(expected) but found \(value.kindName) instead."))
    }

    static func bool(_ value: JSONValue, _ path: @autoclosure () -> [any CodingKey]) throws -> Bool {
        guard case .bool(let b) = value else { throw mismatch(Bool.self, "Bool", value, path()) }
        return b
    }

    static func string(_ value: JSONValue, _ path: @autoclosure () -> [any CodingKey]) throws -> String {
        guard case .string(let s) = value else { throw mismatch(String.self, "String", value, path()) }
        return s
    }

    static func double<T>(
        _ value: JSONValue, _ path: @autoclosure () -> [any CodingKey], as type: T.Type = Double.self
    ) throws -> Double {
        guard case .number(let n) = value else { throw mismatch(type, "a number", value, path()) }
        return n.double
    }

    static func integer<T: BinaryInteger>(
        _ type: T.Type, _ value: JSONValue, _ path: @autoclosure () -> [any CodingKey]
    ) throws -> T {
        guard case .number(let n) = value else { throw mismatch(type, "a number", value, path()) }
        guard let integer = n.int64, let exact = T(exactly: integer) else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: path(), debugDescription: "Number \(n) is not representable in Swift as \(type)."))
        }
        return exact
    }

    func decode(_ type: Int.Type) throws -> Int { try integer(type) }
    func decode(_ type: Int8.Type) throws -> Int8 { try integer(type) }
    func decode(_ type: Int16.Type) throws -> Int16 { try integer(type) }
    func decode(_ type: Int32.Type) throws -> Int32 { try integer(type) }
    func decode(_ type: Int64.Type) throws -> Int64 { try integer(type) }
    func decode(_ type: UInt.Type) throws -> UInt { try integer(type) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try integer(type) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try integer(type) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try integer(type) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try integer(type) }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try JSONValueDecoder.decode(T.self, from: value, path: codingPath)
    }
}

extension JSONValue {
    /// What kind of value this is, for error messages.
    var kindName: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}
