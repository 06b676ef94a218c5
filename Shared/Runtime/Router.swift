// Routes: method name → typed handler. Handlers take Codable bodies and never see sockets.
// Reads run concurrently; writes run inside the service's group-committed transaction with
// idempotency handled here, once, for every service.
import Contracts
import Foundation
import GRDB
import Logging
import Storage
import Wire

/// Who a request acts for, resolved from its session token.
public struct Principal: Codable, Sendable, Equatable {
    public var userId: String
    public var username: String
    public var sessionId: String
    /// The user's IANA time zone (auth's `users.timeZone`); nil from an older auth.
    public var timeZone: String?
    /// The user's records shard (auth's `users.shard`, Shards.swift); nil from an older auth: shard 1.
    public var shard: Int?

    public init(userId: String, username: String, sessionId: String, timeZone: String? = nil, shard: Int? = nil) {
        self.userId = userId
        self.username = username
        self.sessionId = sessionId
        self.timeZone = timeZone
        self.shard = shard
    }
}

/// Who may call a method.
public enum Access: String, Sendable, Codable {
    /// A valid session token is required; `context.principal` is set.
    case user
    /// No token needed (register, login, `$srv.*`, `events.since`).
    case `public`
}

public struct RequestContext: Sendable {
    public let requestId: String
    public let method: String
    public let token: String?
    public let idempotencyKey: String?
    public let deadline: ContinuousClock.Instant?
    public let principal: Principal?
    public let receivedAt: Date
    /// The service's logger, without the request's metadata (see `logger`).
    public let serviceLogger: Logger

    /// The service's logger with the request's id, method and user as metadata. It is made
    /// when a handler logs: setting the metadata on every request cost 11–13 µs of a 300 µs
    /// write (docs/performance.md, "The write path, a third round").
    public var logger: Logger {
        var logger = serviceLogger
        logger[metadataKey: "request.id"] = "\(requestId)"
        logger[metadataKey: "request.method"] = "\(method)"
        if let principal { logger[metadataKey: "user.id"] = "\(principal.userId)" }
        return logger
    }

    public init(
        requestId: String, method: String, token: String?, idempotencyKey: String?,
        deadline: ContinuousClock.Instant?, principal: Principal?, receivedAt: Date = Date(), logger: Logger
    ) {
        self.requestId = requestId
        self.method = method
        self.token = token
        self.idempotencyKey = idempotencyKey
        self.deadline = deadline
        self.principal = principal
        self.receivedAt = receivedAt
        self.serviceLogger = logger
    }

    /// The caller's user id; only nil on `.public` methods.
    public var userId: String {
        guard let principal else { preconditionFailure("userId read on a public method") }
        return principal.userId
    }

    /// Throws `deadline_exceeded` when the caller has stopped waiting.
    public func checkDeadline() throws {
        if let deadline, ContinuousClock().now >= deadline {
            throw ServiceError(.deadlineExceeded, "the caller's deadline passed before the request could run")
        }
    }
}

public struct Route: Sendable {
    public let method: String
    public let access: Access
    public let kind: Kind
    /// Largest request frame this method accepts, in bytes.
    public let maxBytes: Int
    /// Reads the header and the body in one parse of the frame; nil when anything is off
    /// (the dispatcher then reads the frame step by step, to say exactly what).
    let decode: @Sendable (_ frame: Data) -> (header: RequestHeader, body: any Sendable)?
    /// Runs the handler on the request frame, with the body `decode` read (nil: read it
    /// from the frame); returns the result's JSON.
    let handle: @Sendable (_ frame: Data, _ body: (any Sendable)?, _ context: RequestContext) async throws -> Data

    /// read, write or own-write (Contracts' `RouteKind`).
    public typealias Kind = RouteKind
}

public struct Router: Sendable {
    /// Default request size limit for a method (photo methods ask for more).
    public static let defaultMaxBytes = 256 * 1024

    public private(set) var routes: [String: Route] = [:]
    let commits: GroupCommitter?
    /// Run in every write's transaction before its handler (after the deadline check): a
    /// service's own refusal of a write whose caller has lost the right to it since the
    /// request was let in (records: a user whose deletion was applied meanwhile). Write
    /// routes keep the check set when they were registered.
    public var commitCheck: (@Sendable (Database, RequestContext) throws -> Void)?

    /// - Parameter commits: the service's group committer; required for `write` routes.
    public init(commits: GroupCommitter? = nil) {
        self.commits = commits
    }

    /// A method that changes nothing.
    public mutating func read<Body: Decodable & Sendable, Result: Encodable & Sendable>(
        _ method: String, access: Access = .user, maxBytes: Int = Router.defaultMaxBytes,
        _ handler: @escaping @Sendable (Body, RequestContext) async throws -> Result
    ) {
        unlogged(method, kind: .read, access: access, maxBytes: maxBytes, handler)
    }

    /// A method that writes rows of its own, in transactions of its own: not group-committed,
    /// not answered from the idempotency log (`auth.login`, `store.quote`, shard-move steps).
    public mutating func ownWrite<Body: Decodable & Sendable, Result: Encodable & Sendable>(
        _ method: String, access: Access = .user, maxBytes: Int = Router.defaultMaxBytes,
        _ handler: @escaping @Sendable (Body, RequestContext) async throws -> Result
    ) {
        unlogged(method, kind: .ownWrite, access: access, maxBytes: maxBytes, handler)
    }

    /// A read method of the contract: its name, kind, request and result types come from
    /// Contracts.
    public mutating func read<Body, Result>(
        _ method: Method<Body, Result>, access: Access = .user, maxBytes: Int = Router.defaultMaxBytes,
        _ handler: @escaping @Sendable (Body, RequestContext) async throws -> Result
    ) {
        precondition(method.kind == .read, "\(method.name) is a \(method.kind.rawValue): register it with write or ownWrite")
        unlogged(method.name, kind: method.kind, access: access, maxBytes: maxBytes, handler)
    }

    /// A group-committed write of the contract.
    public mutating func write<Body, Result>(
        _ method: Method<Body, Result>, access: Access = .user, maxBytes: Int = Router.defaultMaxBytes,
        _ handler: @escaping @Sendable (Body, RequestContext, Database) throws -> Result
    ) {
        precondition(method.kind == .write, "\(method.name) is a \(method.kind.rawValue): register it with read(_:)")
        write(method.name, access: access, maxBytes: maxBytes, handler)
    }

    /// A group-committed write of the contract with slow preparation outside the transaction
    /// (`recordsKey` as for the untyped one).
    public mutating func write<Body, Prepared: Sendable, Result>(
        _ method: Method<Body, Result>, access: Access = .user, maxBytes: Int = Router.defaultMaxBytes,
        prepare: @escaping @Sendable (Body, RequestContext) async throws -> Prepared,
        _ commit: @escaping @Sendable (Prepared, RequestContext, Database) throws -> Result,
        recordsKey: Bool = true
    ) {
        precondition(method.kind == .write, "\(method.name) is a \(method.kind.rawValue): register it with read(_:)")
        write(method.name, access: access, maxBytes: maxBytes, prepare: prepare, commit, recordsKey: recordsKey)
    }

    /// An own-write of the contract (its writes are its own, outside the group commit).
    public mutating func ownWrite<Body, Result>(
        _ method: Method<Body, Result>, access: Access = .user, maxBytes: Int = Router.defaultMaxBytes,
        _ handler: @escaping @Sendable (Body, RequestContext) async throws -> Result
    ) {
        precondition(method.kind == .ownWrite, "\(method.name) is a \(method.kind.rawValue), not an own-write")
        unlogged(method.name, kind: .ownWrite, access: access, maxBytes: maxBytes, handler)
    }

    private mutating func unlogged<Body: Decodable & Sendable, Result: Encodable & Sendable>(
        _ method: String, kind: RouteKind, access: Access, maxBytes: Int,
        _ handler: @escaping @Sendable (Body, RequestContext) async throws -> Result
    ) {
        add(
            Route(method: method, access: access, kind: kind, maxBytes: maxBytes, decode: Self.envelopeDecoder(Body.self)) {
                frame, decoded, context in
                let body = try Self.body(Body.self, decoded, frame)
                return try WireCoding.encode(try await handler(body, context))
            })
    }

    /// A write: runs inside the next group-committed transaction, idempotent by key.
    public mutating func write<Body: Decodable & Sendable, Result: Encodable & Sendable>(
        _ method: String, access: Access = .user, maxBytes: Int = Router.defaultMaxBytes,
        _ handler: @escaping @Sendable (Body, RequestContext, Database) throws -> Result
    ) {
        write(
            method, access: access, maxBytes: maxBytes, prepare: { body, _ in body }, handler, settle: { _ in },
            checksLogFirst: false)
    }

    /// A write with slow preparation outside the transaction (hashing a password, making a
    /// thumbnail); `commit` then runs inside the group-committed transaction.
    /// - Parameter recordsKey: false for a write that removes its own principal (an account's
    ///   deletion): a key recorded after that would outlive everything else of the user, and
    ///   a retry cannot reach the log anyway (the session is gone: `unauthenticated`).
    public mutating func write<Body: Decodable & Sendable, Prepared: Sendable, Result: Encodable & Sendable>(
        _ method: String, access: Access = .user, maxBytes: Int = Router.defaultMaxBytes,
        prepare: @escaping @Sendable (Body, RequestContext) async throws -> Prepared,
        _ commit: @escaping @Sendable (Prepared, RequestContext, Database) throws -> Result,
        recordsKey: Bool = true
    ) {
        write(
            method, access: access, maxBytes: maxBytes, prepare: prepare, commit, settle: { _ in }, checksLogFirst: true,
            recordsKey: recordsKey)
    }

    /// A write whose preparation leaves something outside the database (files a photo
    /// upload wrote, files a deleted photo no longer needs): `settle` runs once the
    /// transaction is over, committed or not, with what `prepare` made. It is not called
    /// when `prepare` throws or when the request is answered from the idempotency log
    /// before preparing.
    public mutating func write<Body: Decodable & Sendable, Prepared: Sendable, Result: Encodable & Sendable>(
        _ method: String, access: Access = .user, maxBytes: Int = Router.defaultMaxBytes,
        prepare: @escaping @Sendable (Body, RequestContext) async throws -> Prepared,
        _ commit: @escaping @Sendable (Prepared, RequestContext, Database) throws -> Result,
        settle: @escaping @Sendable (Prepared) async -> Void
    ) {
        write(method, access: access, maxBytes: maxBytes, prepare: prepare, commit, settle: settle, checksLogFirst: true)
    }

    /// - Parameter checksLogFirst: look the key up before `prepare`, so a replay skips slow
    ///   preparation. Routes without a preparation step skip that extra read: the lookup
    ///   inside the transaction answers replays anyway.
    private mutating func write<Body: Decodable & Sendable, Prepared: Sendable, Result: Encodable & Sendable>(
        _ method: String, access: Access, maxBytes: Int,
        prepare: @escaping @Sendable (Body, RequestContext) async throws -> Prepared,
        _ commit: @escaping @Sendable (Prepared, RequestContext, Database) throws -> Result,
        settle: @escaping @Sendable (Prepared) async -> Void, checksLogFirst: Bool, recordsKey: Bool = true
    ) {
        guard let commits else { preconditionFailure("write route \(method) needs a GroupCommitter") }
        let commitCheck = self.commitCheck
        add(
            Route(method: method, access: access, kind: .write, maxBytes: maxBytes, decode: Self.envelopeDecoder(Body.self)) {
                frame, decoded, context in
                let body = try Self.body(Body.self, decoded, frame)
                let requestHash = try Self.requestHash(method: method, frame: frame)
                let principal = context.principal?.userId ?? ""
                let key = context.idempotencyKey
                // A retry whose first attempt committed is answered without preparing again.
                if checksLogFirst, let key {
                    let lookup = try await commits.writer.read { db in
                        try Idempotency.lookup(db, principal: principal, key: key, requestHash: requestHash)
                    }
                    if case .replay(let stored) = lookup { return stored }
                }
                let prepared = try await prepare(body, context)
                let encoded: Data
                do {
                    encoded = try await commits.write { db in
                        if let key,
                            case .replay(let stored) = try Idempotency.lookup(
                                db, principal: principal, key: key, requestHash: requestHash)
                        {
                            return stored
                        }
                        try context.checkDeadline()
                        try commitCheck?(db, context)
                        let encoded = try WireCoding.encode(try commit(prepared, context, db))
                        if recordsKey, let key {
                            try Idempotency.record(
                                db, principal: principal, key: key, requestHash: requestHash, method: method,
                                result: encoded)
                        }
                        return encoded
                    }
                } catch {
                    await settle(prepared)
                    throw error
                }
                await settle(prepared)
                return encoded
            })
    }

    public mutating func add(_ route: Route) {
        precondition(routes[route.method] == nil, "method \(route.method) registered twice")
        precondition(!route.method.hasPrefix("$srv."), "$srv.* methods belong to the runtime")
        routes[route.method] = route
    }

    /// The body `decode` read, or else the body read from the frame.
    static func body<Body: Decodable>(_ type: Body.Type, _ decoded: (any Sendable)?, _ frame: Data) throws -> Body {
        if let body = decoded as? Body { return body }
        return try decodeBody(Body.self, from: frame)
    }

    /// Header and body in one parse. A body that is missing or null (read as `{}`) or that
    /// does not decode is left to `decodeBody`, whose errors name the field.
    static func envelopeDecoder<Body: Decodable & Sendable>(
        _ type: Body.Type
    ) -> @Sendable (Data) -> (header: RequestHeader, body: any Sendable)? {
        { frame in
            guard let envelope = try? WireCoding.decode(Envelope<Body>.self, from: frame), let body = envelope.body
            else { return nil }
            return (envelope.header, body)
        }
    }

    static func decodeBody<Body: Decodable>(_ type: Body.Type, from frame: Data) throws -> Body {
        do {
            // A missing or null body is read as `{}`, so the error names the missing field.
            if let body = try WireCoding.decoder.decode(OptionalBody<Body>.self, from: frame).body {
                return body
            }
            return try WireCoding.decoder.decode(Body.self, from: Data("{}".utf8))
        } catch let error as DecodingError {
            if case .dataCorrupted(let context) = error, context.codingPath.isEmpty,
                let located = locateNumberError(Body.self, frame: frame)
            {
                throw located
            }
            throw ServiceError(.invalidArgument, WireCoding.describe(error), field: WireCoding.field(of: error))
        }
    }

    /// Foundation on Linux reports a number that does not fit its field (1.5 for an Int,
    /// 1e20 for an Int32) as "not valid JSON" with no path. The frame is valid JSON (the
    /// header was read from it), so find the culprit: the number that, replaced by 0, makes
    /// that error go away.
    static func locateNumberError<Body: Decodable>(_ type: Body.Type, frame: Data) -> ServiceError? {
        guard let envelope = try? JSONDecoder().decode(JSONValue.self, from: frame) else { return nil }
        let body = envelope["body"] ?? [:]
        var candidates: [(path: [String], value: JSONNumber)] = []
        func walk(_ value: JSONValue, _ path: [String]) {
            switch value {
            case .number(let n) where n.int64 == nil || abs(n.double) >= 9.0e15:
                candidates.append((path, n))
            case .array(let items):
                for (i, item) in items.enumerated() { walk(item, path + ["[\(i)]"]) }
            case .object(let fields):
                for (key, item) in fields { walk(item, path + [key]) }
            default:
                break
            }
        }
        walk(body, [])
        for candidate in candidates {
            let patched = replacing(body, at: candidate.path[...], with: .number(0))
            guard let data = try? WireCoding.encode(patched) else { continue }
            do {
                _ = try WireCoding.decoder.decode(Body.self, from: data)
            } catch let DecodingError.dataCorrupted(context) where context.codingPath.isEmpty {
                continue  // still broken: not this one
            } catch {}
            let field = candidate.path.reduce(into: "") { result, part in
                result += part.hasPrefix("[") || result.isEmpty ? part : "." + part
            }
            let shown = JSONValue.number(candidate.value).jsonText
            let rule = candidate.value.isWhole ? "is too large" : "must be a whole number"
            return ServiceError.invalid(field, "\(rule) (got \(shown))")
        }
        return nil
    }

    private static func replacing(_ value: JSONValue, at path: ArraySlice<String>, with new: JSONValue) -> JSONValue {
        guard let head = path.first else { return new }
        switch value {
        case .object(var fields):
            if let inner = fields[head] { fields[head] = replacing(inner, at: path.dropFirst(), with: new) }
            return .object(fields)
        case .array(var items):
            if let index = Int(head.dropFirst().dropLast()), items.indices.contains(index) {
                items[index] = replacing(items[index], at: path.dropFirst(), with: new)
            }
            return .array(items)
        default:
            return value
        }
    }

    /// What the idempotency log holds for this request: the first attempt's answer when its
    /// key was recorded for the same request (nil when there is no key or it is not there);
    /// `already_exists` when the key was used for a different request. For a write refused
    /// before it reaches its route (a held user), so a retry of one that did commit is still
    /// told so.
    public static func loggedAnswer(_ db: Database, method: String, frame: Data, context: RequestContext) throws -> Data? {
        guard let key = context.idempotencyKey else { return nil }
        let requestHash = try requestHash(method: method, frame: frame)
        let lookup = try Idempotency.lookup(db, principal: context.principal?.userId ?? "", key: key, requestHash: requestHash)
        if case .replay(let stored) = lookup { return stored }
        return nil
    }

    /// A hash of the method and the body in canonical form (keys sorted), so that the same
    /// request written with other whitespace or key order is still "the same body". Taken
    /// over the body's bytes (CanonicalJSON), without parsing the frame again; a body the
    /// byte-level writer does not handle exactly takes the long way, which gives the same
    /// text, so a hash stored by either way matches the other.
    static func requestHash(method: String, frame: Data) throws -> String {
        var input = Data(method.utf8)
        input.append(UInt8(ascii: "\n"))
        let canonical = frame.withUnsafeBytes { raw -> [UInt8]?? in
            let bytes = raw.bindMemory(to: UInt8.self)
            let members = EnvelopeScan.requestMembers(bytes)
            guard members.plain else { return nil }
            guard let body = members.body else { return .some(nil) }
            return CanonicalJSON.text(UnsafeBufferPointer(rebasing: bytes[body])).map { .some($0) }
        }
        // A missing or null body reads as {} (docs/protocol.md): the same request, so the same hash.
        switch canonical {
        case nil:
            return slowRequestHash(method: method, frame: frame)
        case .some(nil):
            input.appendUTF8("{}")
        case .some(let text?):
            if text.elementsEqual("null".utf8) { input.appendUTF8("{}") } else { input.append(contentsOf: text) }
        }
        return Crypto.sha256Hex(input)
    }

    /// The request hash through a parse of the whole frame: the reference `requestHash`
    /// agrees with (RuntimeTests' WireTests compare the two).
    static func slowRequestHash(method: String, frame: Data) -> String {
        let body = (try? WireCoding.decoder.decode(RequestBody<JSONValue>.self, from: frame).body) ?? .null
        return Crypto.sha256Hex(method + "\n" + (body == .null ? "{}" : body.jsonText))
    }
}

private struct OptionalBody<Body: Decodable>: Decodable {
    var body: Body?
}

/// A whole request: its header (decoded as `RequestHeader` decodes it) and its body.
private struct Envelope<Body: Decodable>: Decodable {
    var header: RequestHeader
    var body: Body?

    enum CodingKeys: String, CodingKey { case body }

    init(from decoder: any Decoder) throws {
        header = try RequestHeader(from: decoder)
        body = try decoder.container(keyedBy: CodingKeys.self).decodeIfPresent(Body.self, forKey: .body)
    }
}
