// The dispatcher turns one request frame into one reply frame: decode the envelope, check
// version, size, deadline and session, run the route, map any error once, and gather stats
// around every handler. It knows nothing of sockets: the ZeroMQ server and the in-process
// transport used by tests both call `handle(_:)`.
import Foundation
import GRDB
import Logging
import Storage
import Synchronization
import Wire

/// Resolves a session token to the user it belongs to.
public protocol SessionResolver: Sendable {
    func resolve(token: String) async throws -> Principal
}

public struct ServiceDescriptor: Sendable {
    public var name: String
    public var version: String

    public init(name: String, version: String = LogbookVersion.current) {
        self.name = name
        self.version = version
    }
}

public enum LogbookVersion {
    public static let current = "0.1.0"
}

public final class Dispatcher: Sendable {
    public let descriptor: ServiceDescriptor
    public let instanceId = ID.make()
    public let started = Date()
    let routes: [String: Route]
    let sessions: (any SessionResolver)?
    let events: (any DatabaseReader)?
    let health: ServiceHealth?
    let backup: ServiceBackup?
    let logger: Logger
    let endpoint: Mutex<String>
    /// The stack key members present; nil: every caller counts as a member (an in-process
    /// dispatcher in tests). Services always run with one (ServiceMain).
    let stackKey: String?
    private let stats = Mutex(Statistics())
    private let startInstant = ContinuousClock().now
    /// `,"ok":true,"result":{"instanceId":…,"service":…,"uptimeMs":` (keys sorted, as
    /// encoding `Ping` writes them), made once.
    private let pingResultPrefix: Data

    /// The largest request any route accepts; the socket's hard limit is set from it.
    /// (Computed once: every request is checked against it.)
    public let largestRequest: Int

    /// - Parameters:
    ///   - sessions: resolves tokens for `.user` routes; nil refuses them all.
    ///   - events: the database holding the service's outbox; enables `events.since`.
    ///   - health: consumers' progress and parts' problems, reported by `$srv.info` and
    ///     `$srv.stats`, and the freshness of replies to read routes.
    ///   - stackKey: what members of the stack present (StackKeys.swift); by default the
    ///     process's, which `ServiceMain` sets before building the service.
    public init(
        descriptor: ServiceDescriptor, router: Router, sessions: (any SessionResolver)?,
        events: (any DatabaseReader)? = nil, health: ServiceHealth? = nil, backup: ServiceBackup? = nil,
        stackKey: String? = StackKeys.processKey, logger: Logger
    ) {
        self.stackKey = stackKey
        self.backup = backup
        self.descriptor = descriptor
        self.routes = router.routes
        largestRequest = router.routes.values.map(\.maxBytes).max() ?? Router.defaultMaxBytes
        self.sessions = sessions
        self.events = events
        self.health = health
        self.logger = logger
        self.endpoint = Mutex("in-process")
        var prefix = Data(",\"ok\":true,\"result\":{\"instanceId\":".utf8)
        prefix.append((try? WireCoding.encode(instanceId)) ?? Data("\"\"".utf8))
        prefix.appendUTF8(",\"service\":")
        prefix.append((try? WireCoding.encode(descriptor.name)) ?? Data("\"\"".utf8))
        prefix.appendUTF8(",\"uptimeMs\":")
        pingResultPrefix = prefix
    }

    func setEndpoint(_ value: String) { endpoint.withLock { $0 = value } }

    // MARK: Handling one frame

    /// Answers one request frame. Every input gets a reply frame; nothing throws.
    public func handle(_ frame: Data) async -> Data {
        let clock = ContinuousClock()
        let start = clock.now
        let header: RequestHeader
        var body: (any Sendable)?
        do {
            if let decoded = decodeAtOnce(frame) {
                (header, body) = decoded
            } else {
                header = try decodeHeader(frame)
            }
        } catch let error as ServiceError {
            record(method: nil, duration: clock.now - start, error: error)
            return Self.encodeError(id: Self.salvageId(frame), error)
        } catch {
            return Self.encodeError(id: "", .internal())
        }
        do {
            let result = try await run(header: header, frame: frame, body: body)
            record(method: statsName(header.method), duration: clock.now - start, error: nil)
            // A read answered while a projection it is computed from is behind says so.
            let freshness = routes[header.method].map { $0.kind != .write } == true ? health?.freshness : nil
            return Self.encodeSuccess(id: header.id, resultJSON: result, freshness: freshness)
        } catch {
            let mapped = ServiceError.from(error)
            // The request's metadata is set only on a logger that will log (setting it cost
            // 11–13 µs of every request; docs/performance.md, "The write path, a third round").
            if mapped.code == .internal {
                requestLogger(header).error("request failed", metadata: ["error.detail": "\(String(reflecting: error))"])
            } else if logger.logLevel <= .debug {
                requestLogger(header).debug("request refused", metadata: ["error.code": "\(mapped.code)"])
            }
            record(method: statsName(header.method), duration: clock.now - start, error: mapped)
            return Self.encodeError(id: header.id, mapped)
        }
    }

    /// `$srv.ping`, answered synchronously where the frame arrived (the server's socket
    /// thread) exactly as `handle` would answer it; nil for any other request (and for a
    /// ping `handle` must refuse), which then takes the usual path. Other requests cost one
    /// scan of the frame's top level here.
    public func answerInline(_ frame: Data) -> Data? {
        guard frame.count <= Router.defaultMaxBytes else { return nil }
        let clock = ContinuousClock()
        let start = clock.now
        // A plain ping (every header member of the type the header wants, the whole frame
        // JSON without escapes) is answered from the bytes; another ping is decoded.
        let (isPing, plainAnswer) = frame.withUnsafeBytes { raw -> (Bool, Data?) in
            let bytes = raw.bindMemory(to: UInt8.self)
            let members = EnvelopeScan.requestMembers(bytes)
            // A repeated member or an escaped name: the usual path reads it as the decoder does.
            guard members.plain, let method = members.method, bytes[method].elementsEqual(Self.pingMethodJSON) else {
                return (false, nil)
            }
            return (true, plainPingReply(frame, bytes, members))
        }
        guard isPing else { return nil }
        if let plainAnswer {
            record(method: "$srv.ping", duration: clock.now - start, error: nil)
            return plainAnswer
        }
        // A ping the decoder must read.
        guard let header = try? decodeHeader(frame), header.method == "$srv.ping" else { return nil }
        if let ms = header.deadlineMs, ms <= 0 { return nil }
        guard let result = try? WireCoding.encode(Ping(service: descriptor.name, instanceId: instanceId, uptimeMs: uptimeMs))
        else { return nil }
        record(method: header.method, duration: clock.now - start, error: nil)
        return Self.encodeSuccess(id: header.id, resultJSON: result)
    }

    private static let nullJSON = Data("null".utf8)

    /// The reply to a ping whose header reads exactly as `RequestHeader` would decode it,
    /// written from the frame's bytes: nil when the frame needs the decoder's judgement.
    private func plainPingReply(_ frame: Data, _ bytes: UnsafeBufferPointer<UInt8>, _ members: EnvelopeScan.Members) -> Data? {
        func isPlainString(_ range: Range<Int>) -> Bool {
            range.count >= 2 && bytes[range.lowerBound] == UInt8(ascii: "\"") && bytes[range.upperBound - 1] == UInt8(ascii: "\"")
        }
        guard let v = members.v, bytes[v].elementsEqual(Self.versionJSON), let id = members.id, isPlainString(id) else {
            return nil
        }
        func isNullOrPlainString(_ range: Range<Int>?) -> Bool {
            guard let range else { return true }
            return bytes[range].elementsEqual(Self.nullJSON) || isPlainString(range)
        }
        guard isNullOrPlainString(members.token), isNullOrPlainString(members.idempotencyKey),
            isNullOrPlainString(members.stackKey)
        else { return nil }
        if let range = members.deadlineMs, !bytes[range].elementsEqual(Self.nullJSON) {
            // An integer of up to 15 digits, more than 0 (0 or less: deadline_exceeded).
            var ms = 0
            guard range.count <= 15 else { return nil }
            for digit in bytes[range] {
                guard digit >= UInt8(ascii: "0"), digit <= UInt8(ascii: "9") else { return nil }
                ms = ms * 10 + Int(digit - UInt8(ascii: "0"))
            }
            guard ms > 0 else { return nil }
        }
        // The whole frame is JSON the decoder reads without question (no escapes, so the
        // strings above are their own text), or the decoder decides.
        guard CanonicalJSON.text(frame) != nil else { return nil }
        var reply: [UInt8] = []
        reply.reserveCapacity(96 + id.count + pingResultPrefix.count)
        reply.appendUTF8("{\"id\":")
        reply.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[id]))
        reply.append(pingResultPrefix)
        reply.appendUTF8(String(uptimeMs))
        reply.appendUTF8("},\"v\":\(Protocol.version)}")
        return Data(reply)
    }

    private static let pingMethodJSON = Data("\"$srv.ping\"".utf8)
    private static let versionJSON = Data("\(Protocol.version)".utf8)

    /// The usual request to a route in one parse: its method read from the frame's top
    /// level without parsing, then header and body decoded together by the route. Nil for
    /// anything unusual (a reserved method, an unknown one, a repeated member, a version
    /// not written as the integer, a body that does not decode), which `decodeHeader` and
    /// the route then read step by step, answering exactly as they always have.
    private func decodeAtOnce(_ frame: Data) -> (RequestHeader, any Sendable)? {
        guard !frame.isEmpty, frame.count <= largestRequest, let name = Self.plainMethod(frame),
            let route = routes[name],
            frame.count <= route.maxBytes,
            let (header, body) = route.decode(frame), header.v == Protocol.version, header.method == route.method
        else { return nil }
        return (header, body)
    }

    /// The method of a plainly written request (protocol version 1 as the integer, the
    /// method a string without escapes), read from the frame's top level without parsing.
    private static func plainMethod(_ frame: Data) -> String? {
        frame.withUnsafeBytes { raw -> String? in
            let bytes = raw.bindMemory(to: UInt8.self)
            let members = EnvelopeScan.requestMembers(bytes)
            guard members.plain, let v = members.v, bytes[v].elementsEqual(Self.versionJSON), let method = members.method,
                method.count >= 2, bytes[method.lowerBound] == UInt8(ascii: "\""),
                bytes[method.upperBound - 1] == UInt8(ascii: "\""), !bytes[method].contains(UInt8(ascii: "\\"))
            else { return nil }
            return String(decoding: UnsafeBufferPointer(rebasing: bytes[(method.lowerBound + 1)..<(method.upperBound - 1)]), as: UTF8.self)
        }
    }

    /// The runtime's own methods: `$srv.*` and `events.since`.
    static func isReserved(_ method: String) -> Bool { method.hasPrefix("$srv.") || method == "events.since" }

    private func decodeHeader(_ frame: Data) throws -> RequestHeader {
        let hardLimit = largestRequest
        if frame.count > hardLimit {
            throw ServiceError(
                .invalidArgument, "request is \(frame.count) bytes; no method of \(descriptor.name) accepts more than \(hardLimit)")
        }
        // A large request over its own method's limit (under the largest: records' shard
        // import takes 64 MiB) is refused before it is parsed, by the method read from its
        // top level.
        if frame.count > Router.defaultMaxBytes, let name = Self.plainMethod(frame) {
            // (the reserved methods take the default limit, whatever the largest route's)
            let limit = Self.isReserved(name) ? Router.defaultMaxBytes : routes[name]?.maxBytes
            if let limit, frame.count > limit {
                throw ServiceError(.invalidArgument, "request is \(frame.count) bytes; \(name) accepts at most \(limit)")
            }
        }
        guard !frame.isEmpty else { throw ServiceError(.invalidArgument, "empty request frame: expected a JSON object") }
        // The common case costs one parse; only a request that fails it is parsed again,
        // loosely, to say exactly what is wrong with it.
        if let header = try? WireCoding.decode(RequestHeader.self, from: frame) {
            // A decoder reads 1.0 and 1e0 as the integer 1; the contract says an integer.
            if let raw = EnvelopeScan.members(frame, ["v"])["v"], raw != Data("\(Protocol.version)".utf8) {
                throw ServiceError(
                    .invalidArgument,
                    "v: must be the integer \(Protocol.version) (got \(String(decoding: raw.prefix(40), as: UTF8.self)))",
                    field: "v")
            }
            guard header.v == Protocol.version else {
                throw ServiceError(
                    .invalidArgument, "unsupported protocol version \(header.v): this service speaks v\(Protocol.version)",
                    field: "v")
            }
            guard !header.method.isEmpty else { throw ServiceError.invalid("method", "must not be empty") }
            return header
        }
        let value: JSONValue
        do {
            value = try JSONDecoder().decode(JSONValue.self, from: frame)
        } catch {
            throw ServiceError(.invalidArgument, "request is not valid UTF-8 JSON: \(WireCoding.describe(error))")
        }
        guard case .object(let object) = value else {
            throw ServiceError(.invalidArgument, "request must be a JSON object")
        }
        if let v = object["v"], v != .number(.init(Protocol.version)) {
            throw ServiceError(
                .invalidArgument, "unsupported protocol version \(v.jsonText): this service speaks v\(Protocol.version)",
                field: "v")
        }
        do {
            _ = try WireCoding.decoder.decode(RequestHeader.self, from: frame)
            throw ServiceError(.invalidArgument, "request header could not be read")
        } catch let error as DecodingError {
            throw ServiceError(.invalidArgument, WireCoding.describe(error), field: WireCoding.field(of: error))
        }
    }

    /// The service's logger with the request's id and method.
    private func requestLogger(_ header: RequestHeader) -> Logger {
        var logger = self.logger
        logger[metadataKey: "request.id"] = "\(header.id)"
        logger[metadataKey: "request.method"] = "\(header.method)"
        return logger
    }

    private func run(header: RequestHeader, frame: Data, body: (any Sendable)?) async throws -> Data {
        let deadline: ContinuousClock.Instant? = header.deadlineMs.map { ContinuousClock().now + .milliseconds($0) }
        if let ms = header.deadlineMs, ms <= 0 {
            throw ServiceError(.deadlineExceeded, "deadlineMs was \(ms): the caller had no time left")
        }
        if Self.isReserved(header.method) {
            // Reserved methods take small requests: the default limit, not the largest route's.
            if frame.count > Router.defaultMaxBytes {
                throw ServiceError(
                    .invalidArgument,
                    "request is \(frame.count) bytes; \(header.method) accepts at most \(Router.defaultMaxBytes)")
            }
            return try await builtin(header.method, frame: frame, member: isMember(header))
        }
        guard let route = routes[header.method] else {
            throw ServiceError(
                .notFound, "unknown method \"\(header.method)\" on \(descriptor.name); $srv.info lists its methods",
                field: "method")
        }
        if frame.count > route.maxBytes {
            throw ServiceError(
                .invalidArgument, "request is \(frame.count) bytes; \(route.method) accepts at most \(route.maxBytes)")
        }
        var principal: Principal?
        if route.access == .user {
            guard let token = header.token, !token.isEmpty else { throw ServiceError.unauthenticated() }
            guard let sessions else { throw ServiceError.unauthenticated("this service cannot check sessions") }
            principal = try await sessions.resolve(token: token)
        }
        if let key = header.idempotencyKey {
            guard !key.isEmpty, key.utf8.count <= 128 else {
                throw ServiceError.invalid("idempotencyKey", "must be 1–128 characters")
            }
        }
        let context = RequestContext(
            requestId: header.id, method: header.method, token: header.token,
            idempotencyKey: header.idempotencyKey, deadline: deadline, principal: principal, logger: logger)
        return try await route.handle(frame, body, context)
    }

    // MARK: Methods every service answers

    /// The reserved methods, documented in docs/protocol.md.
    public static let builtinMethods = ["$srv.ping", "$srv.info", "$srv.stats", "$srv.backup", "events.since"]

    /// Whether the caller presented the stack key (compared in constant time).
    func isMember(_ header: RequestHeader) -> Bool {
        guard let stackKey else { return true }
        return StackKeys.matches(header.stackKey, stackKey)
    }

    private func builtin(_ method: String, frame: Data, member: Bool) async throws -> Data {
        switch method {
        case "$srv.ping":
            return try WireCoding.encode(Ping(service: descriptor.name, instanceId: instanceId, uptimeMs: uptimeMs))
        case "$srv.info":
            let methods = routes.values.sorted { $0.method < $1.method }.map {
                MethodInfo(name: $0.method, access: $0.access, kind: $0.kind, maxBytes: $0.maxBytes)
            }
            return try WireCoding.encode(
                Info(
                    name: descriptor.name, version: descriptor.version, instanceId: instanceId, started: started,
                    uptimeMs: uptimeMs, endpoint: endpoint.withLock { $0 }, methods: methods,
                    reserved: Self.builtinMethods.filter {
                        ($0 != "events.since" || events != nil) && ($0 != "$srv.backup" || backup != nil)
                    },
                    health: health?.report ?? HealthReport(state: .ok, ready: true, problems: [], consumers: []),
                    storage: health?.storage))
        case "$srv.stats":
            var snapshot = stats.withLock { $0.snapshot(service: descriptor.name, member: member) }
            snapshot.consumers = health?.report.consumers ?? []
            return try WireCoding.encode(snapshot)
        case "$srv.backup":
            guard let backup else {
                throw ServiceError(.notFound, "\(descriptor.name) keeps no database to back up", field: "method")
            }
            // A copy of every user's data, written where the service keeps its own: members only.
            try Self.requireMember(member, method)
            let body = try Router.decodeBody(BackupRequest.self, from: frame)
            let result = try await Self.offPool { try backup.run(body) }
            logger.notice(
                "backup written",
                metadata: ["backup.directory": "\(result.directory)", "backup.bytes": "\(result.bytes)", "backup.ms": "\(result.durationMs)"])
            return try WireCoding.encode(result)
        case "events.since":
            guard let events else {
                throw ServiceError(.notFound, "\(descriptor.name) publishes no events", field: "method")
            }
            try Self.requireMember(member, method)
            let body = try Router.decodeBody(EventsSince.self, from: frame)
            guard body.after >= 0 else { throw ServiceError.invalid("after", "must be 0 or more (got \(body.after))") }
            let limit = body.limit ?? 500
            guard (1...EventsSince.maxLimit).contains(limit) else {
                throw ServiceError.invalid("limit", "must be between 1 and \(EventsSince.maxLimit) (got \(limit))")
            }
            do {
                // Written on the reader's queue: the socket thread only sends it.
                let page = try await events.read { db in try EventsSinceResult.encodedPage(db, after: body.after, limit: limit) }
                health?.report("events.since", nil)
                return page
            } catch let error as DatabaseError {
                // Consumers replaying from here are stuck until the file is repaired.
                logger.error("events.since cannot read the outbox", metadata: ["error.detail": "\(error)"])
                health?.report("events.since", "the event outbox cannot be read (database error \(error.resultCode))")
                throw error
            }
        default:
            throw ServiceError(.notFound, "unknown method \"\(method)\"; reserved methods: \(Self.builtinMethods.joined(separator: ", "))", field: "method")
        }
    }

    /// Methods that hand out every user's data answer only members of the stack.
    static func requireMember(_ member: Bool, _ method: String) throws {
        guard member else {
            throw ServiceError(
                .permissionDenied, "\(method) answers only members of the stack (requests carrying the stack key)",
                field: "stackKey")
        }
    }

    /// Runs blocking file work on a dispatch queue, never on the cooperative pool.
    static func offPool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(with: Result { try work() }) }
        }
    }

    var uptimeMs: Int64 {
        let elapsed = ContinuousClock().now - startInstant
        return elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000
    }

    /// Unknown method names are counted together, so callers cannot grow the stats map.
    private func statsName(_ method: String) -> String {
        routes[method] != nil || Self.builtinMethods.contains(method) ? method : "(unknown)"
    }

    private func record(method: String?, duration: Duration, error: ServiceError?) {
        stats.withLock { $0.record(method: method, duration: duration, error: error) }
    }

    // MARK: Encoding replies

    static func encodeSuccess(id: String, resultJSON: Data, freshness: Freshness? = nil) -> Data {
        var reply: [UInt8] = []
        reply.reserveCapacity(resultJSON.count + 96)
        reply.appendUTF8("{\"id\":")
        reply.appendQuoted(id)
        if let freshness, let encoded = try? WireCoding.encode(freshness) {
            reply.appendUTF8(",\"freshness\":")
            reply.append(encoded)
        }
        reply.appendUTF8(",\"ok\":true,\"result\":")
        reply.append(resultJSON)
        reply.appendUTF8(",\"v\":\(Protocol.version)}")
        return Data(reply)
    }

    static func encodeError(id: String, _ error: ServiceError) -> Data {
        (try? WireCoding.encode(Reply(id: id, error: error)))
            ?? Data("{\"v\":1,\"id\":\"\",\"ok\":false,\"error\":{\"code\":\"internal\",\"message\":\"internal error\"}}".utf8)
    }

    /// The id of a request whose envelope is otherwise unusable (even cut short), so the
    /// error still matches.
    static func salvageId(_ frame: Data) -> String {
        EnvelopeScan.id(frame) ?? ""
    }
}

// MARK: Wire types of the reserved methods

public struct Ping: Codable, Sendable {
    public var service: String
    public var instanceId: String
    public var uptimeMs: Int64
}

public struct MethodInfo: Codable, Sendable {
    public var name: String
    public var access: Access
    public var kind: Route.Kind
    public var maxBytes: Int
}

public struct Info: Codable, Sendable {
    public var name: String
    public var version: String
    public var instanceId: String
    public var started: Date
    public var uptimeMs: Int64
    public var endpoint: String
    public var methods: [MethodInfo]
    public var reserved: [String]
    /// ok or degraded, readiness, and each event consumer's progress (Health.swift).
    public var health: HealthReport
    /// The database writer connection's durability, read back from it (nil: no database).
    public var storage: StorageReport?
}

public struct EventsSince: Codable, Sendable {
    /// The most events one page holds.
    public static let maxLimit = 5_000

    public var after: Int64
    public var limit: Int?

    public init(after: Int64, limit: Int? = nil) {
        self.after = after
        self.limit = limit
    }
}

public struct EventsSinceResult: Codable, Sendable {
    public var events: [Event]
    /// The producer's highest sequence number when it answered.
    public var last: Int64
    /// Which history of the producer's outbox the numbers belong to (absent from a
    /// producer older than it).
    public var history: OutboxHistory?

    public init(events: [Event], last: Int64, history: OutboxHistory? = nil) {
        self.events = events
        self.last = last
        self.history = history
    }

    /// `events.since`'s answer, written around the stored payloads' bytes: the same bytes as
    /// encoding an `EventsSinceResult` of `Outbox.since`'s events (held to it by
    /// Tests/RuntimeTests/StorageTests.swift). Decoding every payload into values and
    /// encoding the page again with Foundation's encoder took most of a producer's CPU while
    /// a consumer replayed its history (docs/performance.md, "A rebuild through the wire").
    static func encodedPage(_ db: Database, after: Int64, limit: Int) throws -> Data {
        let rows = try Outbox.encodedSince(db, after: after, limit: limit)
        let last = try Outbox.lastSequence(db)
        let history = try Outbox.history(db)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(rows.reduce(32) { $0 + $1.json.count + 1 })
        bytes.appendUTF8("{\"events\":[")
        for (index, row) in rows.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            bytes.append(contentsOf: row.json)
        }
        bytes.appendUTF8("]")
        if let history {
            bytes.appendUTF8(",\"history\":{\"forkedAt\":")
            bytes.appendUTF8(String(history.forkedAt))
            bytes.appendUTF8(",\"id\":")
            bytes.appendQuoted(history.id)
            bytes.append(UInt8(ascii: "}"))
        }
        bytes.appendUTF8(",\"last\":")
        bytes.appendUTF8(String(last))
        bytes.append(UInt8(ascii: "}"))
        return Data(bytes)
    }

    /// A page read from its bytes: parsed once, and each event taken from the parsed values
    /// as they are, its payload kept as parsed. The decoder turned the parsed page into
    /// events through `Decoder`'s containers and built every payload's objects again; with
    /// `JSONNumber.isShortCanonical`, the threads decoding a replay's pages went from 0.7 of
    /// a core to 0.4 (docs/performance.md, "Rebuild, a second look"). Anything but the shape
    /// `encodedPage` writes (a field missing or of another type) is decoded by the decoder,
    /// so the result or the error is the decoder's (Tests/RuntimeTests/StorageTests.swift
    /// compares the two).
    public static func read(_ raw: Data) throws -> EventsSinceResult {
        guard case .object(let page)? = try? JSONValue.parse(raw), case .array(let items)? = page["events"],
            let last = page["last"]?.int64Value
        else { return try WireCoding.decode(Self.self, from: raw) }
        var history: OutboxHistory?
        switch page["history"] {
        case nil, .null?: history = nil
        case .object(let fields)?:
            guard case .string(let id)? = fields["id"], let forkedAt = fields["forkedAt"]?.int64Value else {
                return try WireCoding.decode(Self.self, from: raw)
            }
            history = OutboxHistory(id: id, forkedAt: forkedAt)
        default: return try WireCoding.decode(Self.self, from: raw)
        }
        var events: [Event] = []
        events.reserveCapacity(items.count)
        for item in items {
            guard case .object(let fields) = item, let seq = fields["seq"]?.int64Value,
                case .string(let type)? = fields["type"], case .string(let at)? = fields["at"],
                let date = WireTime.parse(at), let data = fields["data"]
            else { return try WireCoding.decode(Self.self, from: raw) }
            let userId: String?
            switch fields["userId"] {
            case nil, .null?: userId = nil
            case .string(let id)?: userId = id
            default: return try WireCoding.decode(Self.self, from: raw)
            }
            events.append(Event(seq: seq, type: type, userId: userId, at: date, data: data))
        }
        return EventsSinceResult(events: events, last: last, history: history)
    }
}

public struct MethodStats: Codable, Sendable {
    public var requests: Int = 0
    public var errors: Int = 0
    public var totalMs: Double = 0
    public var maxMs: Double = 0
    public var averageMs: Double { requests == 0 ? 0 : totalMs / Double(requests) }

    enum CodingKeys: String, CodingKey { case requests, errors, totalMs, maxMs, averageMs }

    public init() {}

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        requests = try c.decode(Int.self, forKey: .requests)
        errors = try c.decode(Int.self, forKey: .errors)
        totalMs = try c.decode(Double.self, forKey: .totalMs)
        maxMs = try c.decode(Double.self, forKey: .maxMs)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(requests, forKey: .requests)
        try c.encode(errors, forKey: .errors)
        try c.encode(totalMs, forKey: .totalMs)
        try c.encode(maxMs, forKey: .maxMs)
        try c.encode(averageMs, forKey: .averageMs)
    }
}

/// The last error a service answered. Everyone sees its code, method and time; only
/// members of the stack see its message and field, which may quote a user's input.
public struct LastError: Codable, Sendable, Equatable {
    public var code: ErrorCode
    /// The method that failed; "(malformed)" for a request that could not be read,
    /// "(unknown)" for an unknown method.
    public var method: String
    public var at: Date
    public var message: String?
    public var field: String?

    /// Without anything a caller sent.
    public var redacted: LastError { LastError(code: code, method: method, at: at) }
}

public struct StatsSnapshot: Codable, Sendable {
    public var service: String
    /// Whether this is the members' view (with `lastError.message`/`field`).
    public var member: Bool
    public var requests: Int
    public var errors: Int
    /// null when there was none (always present).
    public var lastError: LastError?
    public var methods: [String: MethodStats]
    /// Each event consumer's progress: checkpoint, producer's position, events behind.
    public var consumers: [ConsumerStatus] = []

    enum CodingKeys: String, CodingKey { case service, member, requests, errors, lastError, methods, consumers }

    init(service: String, member: Bool, requests: Int, errors: Int, lastError: LastError?, methods: [String: MethodStats]) {
        self.service = service
        self.member = member
        self.requests = requests
        self.errors = errors
        self.lastError = lastError
        self.methods = methods
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        service = try c.decode(String.self, forKey: .service)
        member = try c.decode(Bool.self, forKey: .member)
        requests = try c.decode(Int.self, forKey: .requests)
        errors = try c.decode(Int.self, forKey: .errors)
        lastError = try c.decodeIfPresent(LastError.self, forKey: .lastError)
        methods = try c.decode([String: MethodStats].self, forKey: .methods)
        consumers = try c.decodeIfPresent([ConsumerStatus].self, forKey: .consumers) ?? []
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(service, forKey: .service)
        try c.encode(member, forKey: .member)
        try c.encode(requests, forKey: .requests)
        try c.encode(errors, forKey: .errors)
        try c.encode(lastError, forKey: .lastError)  // null, not left out
        try c.encode(methods, forKey: .methods)
        try c.encode(consumers, forKey: .consumers)
    }
}

struct Statistics {
    var requests = 0
    var errors = 0
    var lastError: LastError?
    var methods: [String: MethodStats] = [:]

    mutating func record(method: String?, duration: Duration, error: ServiceError?) {
        requests += 1
        let ms = Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
        let name = method ?? "(malformed)"
        if let error {
            errors += 1
            lastError = LastError(code: error.code, method: name, at: Date(), message: error.message, field: error.field)
        }
        var entry = methods[name] ?? MethodStats()
        entry.requests += 1
        entry.totalMs += ms
        entry.maxMs = max(entry.maxMs, ms)
        if error != nil { entry.errors += 1 }
        methods[name] = entry
    }

    func snapshot(service: String, member: Bool) -> StatsSnapshot {
        StatsSnapshot(
            service: service, member: member, requests: requests, errors: errors,
            lastError: member ? lastError : lastError?.redacted, methods: methods)
    }
}
