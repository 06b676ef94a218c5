// The HTTP edge: registers every route of `Routes.all` on a Hummingbird router, turns each
// request into one service call (path parameters, query parameters and the JSON body
// become the wire body; the bearer token and Idempotency-Key go into the envelope) and the
// reply into HTTP (the result as JSON, a page with a Link header, a photo's bytes with an
// ETag, or a problem document). The edge validates nothing the services validate: what it
// refuses itself is only what HTTP brings (a body too large or too slow, a media type it
// cannot read, a body that is not a JSON object, the rate limit).
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import Logging
import NIOCore
import Runtime
import Synchronization
import Wire

public struct EdgeContext: Hummingbird.RequestContext, RemoteAddressRequestContext {
    public var coreContext: CoreRequestContextStorage
    public let remoteAddress: SocketAddress?

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
    }
}

public final class Edge: Sendable {
    public let settings: EdgeSettings
    public let calls: ServiceCalls
    public let metrics: EdgeMetrics
    let limiter: RateLimiter
    /// Tokens seen to be real: only these get a rate-limit bucket of their own.
    let known = KnownTokens()
    /// Photo bodies being read or sent now: at most `settings.photoUploads` in all, one per
    /// token (so one account cannot hold every slot with slow bodies).
    let photoUploads = Mutex(PhotoUploads())

    struct PhotoUploads {
        var total = 0
        var byToken: Set<String> = []
    }
    let logger: Logger
    /// The OpenAPI document, served at /openapi.json.
    public let document: Data

    /// The certificate and key when the edge speaks HTTPS itself (TLS.swift).
    public let tls: EdgeTLS?

    public init(configuration: StackConfiguration, settings: EdgeSettings, tls: EdgeTLS? = nil, logger: Logger) {
        self.settings = settings
        self.tls = tls
        calls = ServiceCalls(configuration: configuration)
        metrics = EdgeMetrics()
        limiter = RateLimiter(perSecond: settings.ratePerSecond, burst: settings.rateBurst)
        self.logger = logger
        document = OpenAPI.document()
    }

    /// The (method, path) pairs this router answers: what the document test compares.
    public static var registered: [(method: String, path: String)] {
        Routes.all.map { ($0.method.rawValue, $0.path) } + Routes.own.map { ($0.method.rawValue, $0.path) }
    }

    public func router() -> Hummingbird.Router<EdgeContext> {
        let router = Hummingbird.Router(context: EdgeContext.self)
        router.add(middleware: EdgeMiddleware(edge: self))
        for route in Routes.all {
            router.on(RouterPath(route.path), method: route.method.http) { request, context in
                try await self.handle(route, request, context)
            }
        }
        router.on("/healthz", method: .get) { _, _ in
            try Self.json(200, ["status": "ok"])
        }
        // /readyz and /metrics call every service: each request is charged to a bucket of
        // the caller's address kept for these two (not the address's bucket for user routes:
        // behind a proxy every anonymous request comes from the proxy's address, and its
        // traffic must not starve the local monitoring; /healthz and the document cost nothing).
        router.on("/readyz", method: .get) { _, context in
            try self.charge(context)
            return await self.readiness()
        }
        router.on("/metrics", method: .get) { _, context in
            try self.charge(context)
            let text = await self.metrics.exposition(calls: self.calls)
            return Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(string: text)))
        }
        router.on("/openapi.json", method: .get) { _, _ in
            Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: self.document)))
        }
        return router
    }

    /// The application: the router on HTTP/1.1 at the configured address, every request
    /// head due within the request timeout (SlowClients.swift). `onListening` gets the URL
    /// it answers at (with the port the system chose when the setting said 0).
    public func application(onListening: @escaping @Sendable (String) async -> Void = { _ in }) throws -> some ApplicationProtocol {
        let settings = settings
        let timeout = TimeAmount.nanoseconds(
            settings.requestTimeout.components.seconds * 1_000_000_000 + settings.requestTimeout.components.attoseconds / 1_000_000_000)
        let http1 = HTTPServerBuilder.http1(configuration: .init(additionalChannelHandlers: [RequestHeadDeadline(timeout: timeout)]))
        // With TLS the head deadline runs from the connection's start too: a handshake that
        // never finishes holds the connection no longer than a head that never comes.
        let server = try tls.map { try HTTPServerBuilder.tls(http1, tlsConfiguration: $0.configuration) } ?? http1
        return Application(
            router: router(),
            server: server,
            configuration: .init(
                address: .hostname(settings.host, port: settings.port), serverName: "logbook-http",
                availableConnectionsDelegate: MaximumAvailableConnections(settings.maxConnections)),
            onServerRunning: { channel in
                var bound = settings
                bound.port = channel.localAddress?.port ?? settings.port
                await onListening(bound.localURL)
            },
            logger: logger)
    }

    // MARK: One route, one call

    /// Takes a request from the client address's bucket for /readyz and /metrics, or throws 429.
    func charge(_ context: EdgeContext) throws {
        try take("probe:" + (context.remoteAddress?.ipAddress ?? "?"))
    }

    /// Takes a request from bucket `key`, or throws 429 with the wait.
    func take(_ key: String) throws {
        if let wait = limiter.take(key) {
            var problem = Problem.edge(429, "rate_limited", "Too many requests", "more than \(settings.ratePerSecond) requests a second; slow down")
            problem.retryAfterMs = wait
            throw problem
        }
    }

    func handle(_ route: Route, _ request: Request, _ context: EdgeContext) async throws -> Response {
        let token = Self.bearer(request.headers[.authorization])
        // A token of its own bucket only once known to be real (RateLimiter.swift): forged
        // ones share their client address's bucket with requests that carry none.
        let key = token.flatMap { known.contains($0) ? "token:" + $0 : nil } ?? "address:" + (context.remoteAddress?.ipAddress ?? "?")
        try take(key)
        var body: [String: JSONValue] = [:]
        var uploading: String?
        defer {
            if let uploading {
                photoUploads.withLock {
                    $0.total -= 1
                    $0.byToken.remove(uploading)
                }
            }
        }
        switch route.body {
        case .none:
            break
        case .json(_, let required):
            let bytes = try await collect(request, limit: settings.maxJSONBody)
            if bytes.readableBytes > 0 {
                guard Self.isJSON(request.headers[.contentType]) else {
                    throw Problem.edge(
                        415, "unsupported_media_type", "Unsupported media type",
                        "send the body as application/json (got \(request.headers[.contentType] ?? "no Content-Type"))")
                }
                // Parsed as JSON values, whose numbers keep their digits (Shared/Wire/JSONNumber.swift):
                // a volume of 11.2 reaches records as 11.2, not as the nearest Double.
                // Text that is not JSON says why ("body: not valid JSON: …"); JSON that is not
                // an object says that.
                let value: JSONValue
                do {
                    value = try JSONValue.parse(Data(buffer: bytes))
                } catch let error as ServiceError {
                    throw Problem.badRequest("body: \(error.message)")
                }
                guard let object = value.objectValue else { throw Problem.badRequest("body: must be a JSON object") }
                body = object
            } else if required {
                body = [:]  // the service names what is missing
            }
        case .photo(let field):
            guard let type = request.headers[.contentType], type.lowercased().hasPrefix("image/") else {
                throw Problem.edge(
                    415, "unsupported_media_type", "Unsupported media type",
                    "send the photo's bytes with their media type, e.g. image/jpeg (got \(request.headers[.contentType] ?? "no Content-Type"))")
            }
            // A photo is many megabytes held and copied until records answers: only a caller
            // known to be signed in may send one (a stranger's forged token is answered 401
            // before a byte of the body is read), and only so many at once.
            let caller = try await proveSignedIn(token)
            let taken = photoUploads.withLock { uploads in
                guard uploads.total < settings.photoUploads, !uploads.byToken.contains(caller) else { return false }
                uploads.total += 1
                uploads.byToken.insert(caller)
                return true
            }
            guard taken else {
                var problem = Problem(
                    ServiceError(
                        .unavailable, "too many photos are being uploaded at once (one at a time per session); try again in a moment"))
                problem.retryAfterMs = 1000
                throw problem
            }
            uploading = caller
            let bytes = try await collect(request, limit: settings.maxPhotoBody)
            body[field] = .string(Data(buffer: bytes).base64EncodedString())
        }
        let query = request.uri.queryParameters
        for field in route.query {
            if let raw = query.get(field.name) { body[field.wire] = Self.queryValue(raw, field.kind) }
        }
        for (parameter, field) in route.pathFields {
            body[field] = .string(context.parameters.get(parameter) ?? "")
        }
        for field in route.clears { body[field] = .null }

        let outcome: ServiceCalls.Outcome
        do {
            outcome = try await calls.call(
                route.service, route.wireMethod, body: body, token: token,
                idempotencyKey: route.write ? request.headers[.idempotencyKey] : nil, timeout: settings.serviceTimeout)
        } catch let error as ServiceError where error.code == .internal {
            // The edge's own internal error (a reply it could not read): the detail to the
            // log, never to the caller (a service's internal errors come without one).
            logger.error("service call failed", metadata: ["service": "\(route.service)", "error.detail": "\(error.message)"])
            throw Problem(ServiceError(.internal, "internal error; see the edge's log"))
        } catch let error as ServiceError {
            throw Problem(error)
        }
        learn(route, token: token, outcome: outcome)
        if let error = outcome.error { throw Problem(error) }
        var headers: HTTPFields = [:]
        if let freshness = outcome.freshness {
            // A figure computed from a projection that is behind: shown, but marked.
            var parts = ["producers=\(freshness.producers.joined(separator: ","))"]
            if let behind = freshness.behindEvents { parts.append("behindEvents=\(behind)") }
            if let asOf = freshness.asOf { parts.append("asOf=\(WireTime.format(asOf))") }
            headers[.logbookStale] = parts.joined(separator: "; ")
        }
        switch route.answer {
        case .json:
            return try Self.json(route.status, outcome.result, headers: headers)
        case .page(let key):
            if let next = outcome.result?["nextCursor"]?.stringValue {
                headers[.link] = "<\(Self.link(request.uri, cursor: next))>; rel=\"next\""
            }
            if let format = Representations.negotiate(request.headers[.accept], offered: route.formats) {
                let items = outcome.result?[key]?.arrayValue ?? []
                headers[.contentType] = format == .csv ? "text/csv; charset=utf-8" : format.rawValue
                let body = format == .csv ? Representations.csv(items) : Representations.geojson(items)
                return Response(status: .init(code: route.status), headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: body)))
            }
            return try Self.json(route.status, outcome.result, headers: headers)
        case .photo:
            return try photo(outcome.result, request: request, headers: headers)
        }
    }

    /// Returns when `token` is a live session's (known here, or auth says so now); else
    /// throws what auth answered (401 for a missing, forged, expired or revoked token).
    @discardableResult
    func proveSignedIn(_ token: String?) async throws -> String {
        guard let token else { throw Problem(ServiceError.unauthenticated()) }
        if known.contains(token) { return token }
        let outcome: ServiceCalls.Outcome
        do {
            outcome = try await calls.call(
                "auth", "auth.whoami", body: [:], token: token, idempotencyKey: nil, timeout: settings.serviceTimeout)
        } catch let error as ServiceError {
            throw Problem(error)
        }
        if let error = outcome.error {
            if error.code == .unauthenticated { known.remove(token) }
            throw Problem(error)
        }
        known.insert(token)
        return token
    }

    /// What an answer says about the caller's token: a user route answered successfully
    /// proves it (the service resolved it first); `unauthenticated` or a logout ends it; a
    /// login through the edge answers a new one. Nothing else counts: an anonymous route
    /// ignores the token, and an error may come before the token was looked at.
    func learn(_ route: Route, token: String?, outcome: ServiceCalls.Outcome) {
        if let token, route.access == .user {
            if outcome.error?.code == .unauthenticated || (route.wireMethod == "auth.logout" && outcome.error == nil) {
                known.remove(token)
            } else if outcome.error == nil {
                known.insert(token)
            }
        }
        if route.wireMethod == "auth.login", outcome.error == nil, let issued = outcome.result?["token"]?.stringValue {
            known.insert(issued)
        }
    }

    /// The photo's bytes, with an ETag from its hash; `If-None-Match` answers 304.
    func photo(_ result: JSONValue?, request: Request, headers: HTTPFields) throws -> Response {
        guard let object = result, let base64 = object["data"]?.stringValue, let data = Data(base64Encoded: base64)
        else {
            // (an internal error's detail goes to the log, never to the caller)
            logger.error("records answered a photo without its bytes")
            throw Problem(ServiceError(.internal, "internal error; see the edge's log"))
        }
        var headers = headers
        let thumbnail = Self.queryValue(request.uri.queryParameters.get("thumbnail") ?? "false", .boolean).boolValue ?? false
        let tag = "\"\(object["hash"]?.stringValue ?? "")\(thumbnail ? "-thumb" : "")\""
        headers[.eTag] = tag
        headers[.cacheControl] = "private, max-age=0, must-revalidate"
        if let match = request.headers[.ifNoneMatch], match.split(separator: ",").contains(where: { $0.trimmingCharacters(in: .whitespaces) == tag || $0.trimmingCharacters(in: .whitespaces) == "*" }) {
            return Response(status: .notModified, headers: headers)
        }
        headers[.contentType] = object["contentType"]?.stringValue ?? "application/octet-stream"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    /// The body, at most `limit` bytes, arriving within the request timeout: 413 or 408.
    func collect(_ request: Request, limit: Int) async throws -> ByteBuffer {
        if let length = request.headers[.contentLength].flatMap({ Int($0) }), length > limit {
            throw Self.tooLarge(limit)
        }
        let timeout = settings.requestTimeout
        let body = request.body
        do {
            return try await withThrowingTaskGroup(of: ByteBuffer?.self) { group in
                group.addTask { try await body.collect(upTo: limit) }
                group.addTask {
                    try await Task.sleep(for: timeout)
                    return nil
                }
                let first = try await group.next() ?? nil
                group.cancelAll()
                guard let buffer = first else {
                    throw Problem.edge(408, "request_timeout", "Request timeout", "the body did not arrive within \(timeout)")
                }
                return buffer
            }
        } catch is NIOTooManyBytesError {
            throw Self.tooLarge(limit)
        } catch let error as Hummingbird.HTTPError where error.status == .contentTooLarge {
            throw Self.tooLarge(limit)
        }
    }

    static func tooLarge(_ limit: Int) -> Problem {
        Problem.edge(413, "payload_too_large", "Payload too large", "this route takes a body of at most \(limit) bytes", field: "body")
    }

    // MARK: Health

    func readiness() async -> Response {
        // (with records shards, each shard: a user's calls go to theirs)
        let services = calls.configuration.instances
        let answers = await withTaskGroup(of: (String, String).self) { group in
            for service in services {
                group.addTask {
                    do {
                        _ = try await self.calls.reserved(service, "$srv.ping", timeout: .seconds(1))
                        return (service, "up")
                    } catch {
                        // The code only: the message names the service's endpoint, which is
                        // the log's to tell (this route answers anyone).
                        self.logger.warning(
                            "readiness: a service does not answer",
                            metadata: ["service": "\(service)", "error.detail": "\(error)"])
                        return (service, (error as? ServiceError)?.code.rawValue ?? "unavailable")
                    }
                }
            }
            var answers: [String: String] = [:]
            for await (service, state) in group { answers[service] = state }
            return answers
        }
        let ready = answers.values.allSatisfy { $0 == "up" }
        return (try? Self.json(ready ? 200 : 503, ["ready": .bool(ready), "services": .object(answers.mapValues(JSONValue.string))]))
            ?? Response(status: .internalServerError)
    }

    // MARK: Helpers

    static func bearer(_ header: String?) -> String? {
        guard let header else { return nil }
        let parts = header.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        let token = parts[1].trimmingCharacters(in: .whitespaces)
        return token.isEmpty ? nil : token
    }

    static func isJSON(_ contentType: String?) -> Bool {
        guard let type = contentType?.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased() else { return false }
        return type == "application/json" || (type.hasPrefix("application/") && type.hasSuffix("+json"))
    }

    /// A query value as the JSON type the document gives it; a value that does not read
    /// as that type goes as the string it is, and the service says what is wrong with it.
    static func queryValue(_ raw: String, _ kind: Route.Field.Kind) -> JSONValue {
        switch kind {
        case .integer: return Int64(raw).map { .number(.init($0)) } ?? .string(raw)
        case .number: return JSONNumber(text: raw).map(JSONValue.number) ?? .string(raw)
        case .boolean:
            switch raw.lowercased() {
            case "true", "1": return .bool(true)
            case "false", "0": return .bool(false)
            default: return .string(raw)
            }
        default: return .string(raw)
        }
    }

    /// The same request with `cursor` replaced.
    static func link(_ uri: URI, cursor: String) -> String {
        var components = URLComponents()
        components.path = uri.path
        var items = (URLComponents(string: "http://x/?" + (uri.query ?? ""))?.queryItems ?? []).filter { $0.name != "cursor" }
        items.append(URLQueryItem(name: "cursor", value: cursor))
        components.queryItems = items
        // `+` reads as a space in a query: encode it, as base64url cursors never need, but be safe.
        return (components.string ?? uri.path).replacingOccurrences(of: "+", with: "%2B")
    }

    static func json(_ status: Int, _ value: JSONValue?, headers: HTTPFields = [:]) throws -> Response {
        let data = try WireCoding.encode(value ?? .null)
        var headers = headers
        headers[.contentType] = "application/json"
        return Response(status: .init(code: status), headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    static func problem(_ problem: Problem) -> Response {
        var headers: HTTPFields = [.contentType: "application/problem+json"]
        if let seconds = problem.retryAfterSeconds { headers[.retryAfter] = String(seconds) }
        if problem.status == 401 { headers[.wwwAuthenticate] = "Bearer" }
        if let allow = problem.allow { headers[.allow] = allow.joined(separator: ", ") }
        if problem.status == 408 || problem.status == 413 { headers[.connection] = "close" }
        return Response(status: .init(code: problem.status), headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: problem.json)))
    }
}

extension HTTPField.Name {
    static let idempotencyKey = Self("Idempotency-Key")!
    static let logbookStale = Self("Logbook-Stale")!
    static let link = Self("Link")!
}

extension Route.Method {
    var http: HTTPRequest.Method {
        switch self {
        case .get: .get
        case .post: .post
        case .put: .put
        case .patch: .patch
        case .delete: .delete
        }
    }
}

/// Rate limit, metrics and problem documents around every route.
struct EdgeMiddleware: RouterMiddleware {
    typealias Context = EdgeContext
    let edge: Edge

    func handle(_ request: Request, context: EdgeContext, next: (Request, EdgeContext) async throws -> Response) async throws -> Response {
        let clock = ContinuousClock()
        let start = clock.now
        let response: Response
        do {
            response = try await next(request, context)
        } catch let problem as Problem {
            response = Edge.problem(problem)
        } catch let error as any HTTPResponseError where !(error is Hummingbird.HTTPError) {
            let status = Int(error.status.code)
            response = Edge.problem(.edge(status, "http_\(status)", error.status.reasonPhrase, error.status.reasonPhrase))
        } catch let error as Hummingbird.HTTPError
            where error.status == .notFound
                && AllowedMethods.methods(for: request.uri.path).map({ !$0.contains(request.method.rawValue) }) == true
        {
            // (The router's not-found answer: only it throws HTTPError; handlers throw Problem.)
            // The path is one of ours, the method is not (AllowedMethods.swift).
            let allowed = AllowedMethods.methods(for: request.uri.path) ?? []
            var problem = Problem.edge(
                405, "method_not_allowed", "Method not allowed",
                "\(request.method.rawValue) is not answered at \(request.uri.path); it answers \(allowed.joined(separator: ", "))")
            problem.allow = allowed
            response = Edge.problem(problem)
        } catch let error as Hummingbird.HTTPError {
            let status = Int(error.status.code)
            let detail = status == 404 ? "no route \(request.method.rawValue) \(request.uri.path)" : error.body ?? error.status.reasonPhrase
            response = Edge.problem(.edge(status, status == 404 ? "not_found" : "http_\(status)", error.status.reasonPhrase, detail))
        } catch {
            edge.logger.error("request failed", metadata: ["path": "\(request.uri.path)", "error.detail": "\(error)"])
            response = Edge.problem(.edge(500, "internal", "Internal error", "internal error"))
        }
        edge.metrics.record(
            // (Hummingbird names the not-found responder's requests "NotFound".)
            route: context.endpointPath.flatMap { $0 == "NotFound" ? nil : $0 } ?? "(unmatched)", method: request.method.rawValue, status: Int(response.status.code),
            duration: clock.now - start)
        return response
    }
}
