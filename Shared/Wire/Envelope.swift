// Wire protocol v1 (docs/protocol.md): one UTF-8 JSON frame per request and per reply.
//   request: {"v":1,"id":"…","method":"records.fillup.add","token":"…",
//             "idempotencyKey":"…","deadlineMs":3000,"body":{…}}
//   reply:   {"v":1,"id":"…","ok":true,"result":{…}}
//            {"v":1,"id":"…","ok":false,"error":{"code":"…","message":"…","field":"…"}}
import Foundation

public enum Protocol {
    public static let version = 1
}

/// Everything in a request except its body. Decoded first, so a request with a body of the
/// wrong shape can still be answered with its own id.
public struct RequestHeader: Codable, Sendable {
    public var v: Int
    public var id: String
    public var method: String
    public var token: String?
    public var idempotencyKey: String?
    /// The time the caller will wait for this request, in milliseconds from sending.
    public var deadlineMs: Int?
    /// The stack key, from a member of the stack (Shared/Runtime/StackKeys.swift).
    public var stackKey: String?

    public init(
        v: Int = Protocol.version, id: String, method: String, token: String? = nil,
        idempotencyKey: String? = nil, deadlineMs: Int? = nil, stackKey: String? = nil
    ) {
        self.v = v
        self.id = id
        self.method = method
        self.token = token
        self.idempotencyKey = idempotencyKey
        self.deadlineMs = deadlineMs
        self.stackKey = stackKey
    }
}

/// Attached to the reply envelope of a read answered from a projection that is behind its
/// producers (docs/protocol.md, "Health and freshness").
public struct Freshness: Codable, Sendable, Equatable {
    /// The projection reflects its producers up to about this time.
    public var asOf: Date?
    /// Events the producers have that the projection has not applied (nil: unknown, the
    /// producer has not been heard from).
    public var behindEvents: Int64?
    /// The producers it is behind.
    public var producers: [String]

    public init(asOf: Date?, behindEvents: Int64?, producers: [String]) {
        self.asOf = asOf
        self.behindEvents = behindEvents
        self.producers = producers
    }
}

/// Only the body of a request (decoding skips the header fields).
public struct RequestBody<Body: Decodable>: Decodable {
    public var body: Body
}

/// A reply whose result is left as JSON: what clients decode first.
public struct Reply: Codable, Sendable {
    public var v: Int
    public var id: String
    public var ok: Bool
    public var result: JSONValue?
    public var error: ServiceError?
    /// Present on a read answered from a projection that is behind its producers.
    public var freshness: Freshness?

    public init(id: String, result: JSONValue) {
        v = Protocol.version
        self.id = id
        ok = true
        self.result = result
        error = nil
    }

    public init(id: String, error: ServiceError) {
        v = Protocol.version
        self.id = id
        ok = false
        result = nil
        self.error = error
    }
}

/// A body with no fields: `{}`. Any object is read as one (its members are not looked
/// at); anything else is refused as a body of another method would be.
public struct Empty: Codable, Sendable, Equatable {
    public init() {}

    public init(from decoder: any Decoder) throws {
        _ = try decoder.container(keyedBy: AnyMember.self)
    }

    private struct AnyMember: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }
}

/// Shared JSON settings: dates as ISO-8601 with an offset, sorted keys. One encoder and one
/// decoder serve the whole process (their settings never change after they are made;
/// encoding and decoding with them from many threads at once is safe): a coder per call was
/// a visible part of every request's CPU.
public enum WireCoding {
    public static let encoder: JSONEncoder = makeEncoder()
    public static let decoder: JSONDecoder = makeDecoder()

    static func makeEncoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(WireTime.format(date))
        }
        return encoder
    }

    public static let prettyEncoder: JSONEncoder = {
        let encoder = makeEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        return encoder
    }()

    static func makeDecoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            let text = try container.decode(String.self)
            guard let date = WireTime.parse(text) else {
                throw DecodingError.dataCorruptedError(
                    in: container,
                    debugDescription: "expected an ISO-8601 time with an offset, like 2026-05-01T14:45:00Z (got \"\(text)\")")
            }
            return date
        }
        return decoder
    }

    /// A value that writes its own JSON (JSONWritable) writes it; anything else goes through
    /// the shared encoder. The same bytes either way (each writer is held to the encoder by a
    /// test), so every caller (a reply, an event payload, an idempotent write's stored
    /// answer) gets the writer without knowing of it.
    public static func encode(_ value: some Encodable) throws -> Data {
        // A JSON value (every `logbook` request's body) is found by its type alone: the cast
        // to a protocol below costs a scan of every conformance in the binary the first
        // time a type is asked, a visible part of a one-shot command.
        if let json = value as? JSONValue { return json.jsonData }
        if let writable = value as? any JSONWritable { return writable.jsonData }
        return try encoder.encode(value)
    }

    /// Decodes a frame (a request, a reply, an event). Read from the bytes in one pass
    /// (JSONParser) and decoded from those values (JSONValueDecoder): Foundation's decoder
    /// parses into values of its own and then decodes, and it read a JSONValue inside (an
    /// event's payload) by trying each kind in turn. Whatever the fast way does not read, or
    /// reads as an error, Foundation reads from the start, so a failure is always Foundation's,
    /// in its words; Tests/RuntimeTests/FrameDecodingTests.swift holds every success to
    /// Foundation's.
    public static func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
        if data.count <= fastDecodeLimit, let value = JSONParser.parse(data) {
            if T.self == JSONValue.self { return value as! T }
            if let decoded = try? JSONValueDecoder.decode(T.self, from: value, path: []) { return decoded }
        }
        return try decoder.decode(type, from: data)
    }

    /// Frames above this (a shard import, a large photo) go to Foundation at once: a tree of
    /// values for megabytes, to be thrown away on an error, is not worth it.
    static let fastDecodeLimit = 4 * 1024 * 1024

    /// A decoding failure in words a person can act on, with the field's dotted path.
    public static func describe(_ error: any Error) -> String {
        guard let error = error as? DecodingError else { return "\(error)" }
        switch error {
        case .typeMismatch(let type, let context):
            return "\(valuePath(context)): expected \(typeName(type))"
        case .valueNotFound(let type, let context):
            return "\(valuePath(context)): expected \(typeName(type)), got null"
        case .keyNotFound(let key, let context):
            let parent = path(context)
            return parent == "body" || parent.isEmpty
                ? "\(key.stringValue): is required" : "\(parent).\(key.stringValue): is required"
        case .dataCorrupted(let context):
            let reason = context.debugDescription
            let at = valuePath(context)
            return at.isEmpty ? reason : "\(at): \(reason)"
        @unknown default:
            return "\(error)"
        }
    }

    /// The path of a value at fault: as `path`, but the body itself (a body that is not an
    /// object) is `body`, not the empty path.
    private static func valuePath(_ context: DecodingError.Context) -> String {
        let p = path(context)
        if p.isEmpty, context.codingPath.count == 1, context.codingPath[0].stringValue == "body" { return "body" }
        return p
    }

    /// The dotted path of the field a decoding error is about (without the leading "body").
    public static func field(of error: any Error) -> String? {
        guard let error = error as? DecodingError else { return nil }
        switch error {
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
            let p = valuePath(context)
            return p.isEmpty ? nil : p
        case .keyNotFound(let key, let context):
            let p = path(context)
            return p.isEmpty ? key.stringValue : "\(p).\(key.stringValue)"
        @unknown default:
            return nil
        }
    }

    private static func path(_ context: DecodingError.Context) -> String {
        var parts: [String] = []
        for key in context.codingPath {
            if let index = key.intValue {
                parts.append("[\(index)]")
            } else {
                parts.append(key.stringValue)
            }
        }
        if parts.first == "body" { parts.removeFirst() }
        return parts.reduce(into: "") { result, part in
            if part.hasPrefix("[") || result.isEmpty { result += part } else { result += "." + part }
        }
    }

    private static func typeName(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Int.Type, is Int64.Type, is Int32.Type: "a whole number"
        case is Double.Type, is Decimal.Type: "a number"
        case is Bool.Type: "true or false"
        case is Date.Type: "an ISO-8601 time"
        default:
            if "\(type)".hasPrefix("Array") { "an array" } else if "\(type)".hasPrefix("Dictionary") { "an object" } else { "a value of type \(type)" }
        }
    }
}
