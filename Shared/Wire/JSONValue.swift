// Any JSON value, for the places that handle JSON they do not model: `logbook call`,
// `$srv.*` answers, error details, an event's payload as the consumer parsed it, and the
// CLI's request plumbing (Context.send: the offline queue and the saved answers keep
// bodies and results as JSON values), the HTTP edge's bodies. A number is its exact decimal
// text (JSONNumber.swift), never a Double in between: `decode` reads a `Milli` or a 64-bit
// amount from the digits it was written with. Typed values (Contracts) are encoded and
// decoded through their own Codable conformance.
import Foundation

public enum JSONValue: Sendable, Equatable, Hashable {
    case null
    case bool(Bool)
    case number(JSONNumber)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    public subscript(key: String) -> JSONValue? {
        if case .object(let dict) = self { return dict[key] }
        return nil
    }

    public var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    /// The nearest Double, for measurements (coordinates, timings); a quantity reads `decode`.
    public var doubleValue: Double? {
        if case .number(let n) = self { return n.double }
        return nil
    }

    public var intValue: Int? {
        if case .number(let n) = self, let integer = n.int64 { return Int(exactly: integer) }
        return nil
    }

    public var int64Value: Int64? {
        if case .number(let n) = self { return n.int64 }
        return nil
    }

    public var boolValue: Bool? {
        if case .bool(let b) = self { return b }
        return nil
    }

    public var arrayValue: [JSONValue]? {
        if case .array(let a) = self { return a }
        return nil
    }

    public var objectValue: [String: JSONValue]? {
        if case .object(let o) = self { return o }
        return nil
    }

    /// Parses JSON text; throws `invalid_argument` with the parser's reason.
    public static func parse(_ text: String) throws -> JSONValue {
        try parse(Data(text.utf8))
    }

    public static func parse(_ data: Data) throws -> JSONValue {
        if let value = JSONParser.parse(data) { return value }
        do {
            return try JSONDecoder().decode(JSONValue.self, from: data)
        } catch {
            throw ServiceError(.invalidArgument, "not valid JSON: \(syntaxError(data) ?? WireCoding.describe(error))")
        }
    }

    /// What is wrong with text that is not JSON, in JSONSerialization's words ("Unexpected end
    /// of file during JSON parse.", "Invalid value around line 1, column 5."): the decoder
    /// only says "The given data was not valid JSON." Nil when it reads the text.
    private static func syntaxError(_ data: Data) -> String? {
        do {
            _ = try JSONSerialization.jsonObject(with: data, options: .fragmentsAllowed)
            return nil
        } catch {
            return (error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String
        }
    }

    /// Converts any Encodable to the JSONValue its JSON form parses to, without the text
    /// in between (JSONValueEncoder.swift). An empty request (`Empty`) is the empty object
    /// at once.
    public static func from(_ value: some Encodable) throws -> JSONValue {
        if value is Empty { return [:] }
        return try JSONValueEncoder.encode(value)
    }

    /// Decodes this value as a Decodable type, straight from the value (JSONValueDecoder.swift):
    /// no JSON text in between.
    public func decode<T: Decodable>(_ type: T.Type = T.self) throws -> T {
        try JSONValueDecoder.decode(T.self, from: self, path: [])
    }

    /// Compact JSON text with sorted keys (the shared encoder's bytes, written by
    /// `writeJSON`).
    public var jsonText: String { String(decoding: jsonData, as: UTF8.self) }

    /// Indented JSON text with sorted keys, for people.
    public var prettyText: String {
        (try? String(decoding: WireCoding.prettyEncoder.encode(self), as: UTF8.self)) ?? "null"
    }
}

extension JSONValue: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        // The usual kinds first (a failed attempt costs an error value).
        if container.decodeNil() {
            self = .null
        } else if let s = try? container.decode(String.self) {
            self = .string(s)
        } else if let n = try? container.decode(JSONNumber.self) {
            self = .number(n)
        } else if let b = try? container.decode(Bool.self) {
            self = .bool(b)
        } else if let a = try? container.decode([JSONValue].self) {
            self = .array(a)
        } else if let o = try? container.decode([String: JSONValue].self) {
            self = .object(o)
        } else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "not a JSON value")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let b): try container.encode(b)
        case .number(let n): try container.encode(n)
        case .string(let s): try container.encode(s)
        case .array(let a): try container.encode(a)
        case .object(let o): try container.encode(o)
        }
    }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByDictionaryLiteral, ExpressibleByArrayLiteral, ExpressibleByNilLiteral, ExpressibleByFloatLiteral
{
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int) { self = .number(JSONNumber(value)) }
    public init(floatLiteral value: Double) { self = .number(JSONNumber(value)) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(nilLiteral: ()) { self = .null }
}

// MARK: Written without the encoder (Shared/Wire/JSONWritable.swift)

/// The shared encoder's bytes for a value, written without it: every `logbook` command
/// writes its request's body, the key of the answer it saves and that answer, and the
/// encoder's first use in a process (its set-up and the runtime's type lookups) cost more
/// than the rest of saving an answer. Keys in UTF-8 byte order (`.sortedKeys`), strings
/// quoted as the encoder quotes them, a number as the encoder writes the Int64, Decimal or
/// Double that `JSONNumber.encode(to:)` hands it. Tests/RuntimeTests/JSONOutputTests.swift
/// holds this to Foundation's encoder over generated values.
extension JSONValue: JSONWritable {
    public func writeJSON(to out: inout JSONOutput) {
        switch self {
        case .null: out.raw("null")
        case .bool(let value): out.raw(value ? "true" : "false")
        case .string(let text): out.string(text)
        case .number(let number): out.number(number)
        case .array(let items): out.array(items) { $0.write($1) }
        case .object(let members):
            out.beginObject()
            for (key, value) in members.sorted(by: { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }) {
                out.key(text: key)
                out.write(value)
            }
            out.endObject()
        }
    }
}
