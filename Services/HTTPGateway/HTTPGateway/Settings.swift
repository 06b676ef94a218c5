// The HTTP edge's settings, read from the stack configuration (deploy/logbook.conf lists
// them): where it listens, how big a body each kind of route takes, how long a request may
// take to arrive, how many requests a token may make, how long it waits for a service.
import Foundation
import Runtime

public struct EdgeSettings: Sendable, Equatable {
    /// LOGBOOK_HTTP_LISTEN, `host:port`; loopback unless set otherwise.
    public var host = "127.0.0.1"
    public var port = 8080
    /// LOGBOOK_HTTP_MAX_BODY: bytes of a JSON body.
    public var maxJSONBody = 64 * 1024
    /// LOGBOOK_HTTP_MAX_PHOTO: bytes of an uploaded photo (the records service has its own
    /// limits on pixels and size; this only stops the edge from buffering more).
    public var maxPhotoBody = 16 * 1024 * 1024
    /// LOGBOOK_HTTP_PHOTO_UPLOADS: photo bodies read at once, one per session (each is held
    /// in memory, and copied on its way to records, until records answers); more are
    /// answered 503 with Retry-After.
    public var photoUploads = 2
    /// LOGBOOK_HTTP_REQUEST_TIMEOUT, seconds: a request must arrive whole (head and body)
    /// within this long of the connection opening or of the previous response; a client
    /// that is slower is answered 408 (body) or disconnected (head).
    public var requestTimeout: Duration = .seconds(10)
    /// LOGBOOK_HTTP_SERVICE_TIMEOUT, seconds: how long a service call may take (then 504).
    public var serviceTimeout: Duration = .seconds(5)
    /// LOGBOOK_HTTP_RATE_LIMIT, requests per second per token (or per client address
    /// without a token), with LOGBOOK_HTTP_RATE_BURST requests of burst; 0 turns it off.
    public var ratePerSecond = 20.0
    public var rateBurst = 40.0
    /// LOGBOOK_HTTP_MAX_CONNECTIONS: open connections served at once (more wait in the
    /// listen backlog).
    public var maxConnections = 2048
    /// LOGBOOK_HTTP_TLS_CERT and LOGBOOK_HTTP_TLS_KEY: a PEM certificate chain and its
    /// private key; both set, the edge speaks HTTPS only (TLS.swift). Neither: plain HTTP.
    public var tlsCertificate: String?
    public var tlsKey: String?

    public init() {}

    public init(configuration: StackConfiguration) throws {
        let values = configuration.values
        if let listen = values["LOGBOOK_HTTP_LISTEN"] {
            guard let colon = listen.lastIndex(of: ":"), let port = Int(listen[listen.index(after: colon)...]),
                (0...65535).contains(port), colon != listen.startIndex
            else {
                throw ConfigurationError("LOGBOOK_HTTP_LISTEN must be host:port, e.g. 127.0.0.1:8080 (got \"\(listen)\")")
            }
            var host = String(listen[..<colon])
            if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
            self.host = host
            self.port = port
        }
        func number(_ key: String, _ range: ClosedRange<Double>) throws -> Double? {
            guard let text = values[key] else { return nil }
            guard let value = Double(text), range.contains(value) else {
                throw ConfigurationError("\(key) must be a number from \(range.lowerBound) to \(range.upperBound) (got \"\(text)\")")
            }
            return value
        }
        func seconds(_ value: Double) -> Duration { .milliseconds(Int64(value * 1000)) }
        maxJSONBody = Int(try number("LOGBOOK_HTTP_MAX_BODY", 1024...67_108_864) ?? Double(maxJSONBody))
        maxPhotoBody = Int(try number("LOGBOOK_HTTP_MAX_PHOTO", 1024...67_108_864) ?? Double(maxPhotoBody))
        photoUploads = Int(try number("LOGBOOK_HTTP_PHOTO_UPLOADS", 1...1000) ?? Double(photoUploads))
        requestTimeout = try number("LOGBOOK_HTTP_REQUEST_TIMEOUT", 0.1...3600).map(seconds) ?? requestTimeout
        serviceTimeout = try number("LOGBOOK_HTTP_SERVICE_TIMEOUT", 0.1...600).map(seconds) ?? serviceTimeout
        ratePerSecond = try number("LOGBOOK_HTTP_RATE_LIMIT", 0...1_000_000) ?? ratePerSecond
        rateBurst = try number("LOGBOOK_HTTP_RATE_BURST", 1...1_000_000) ?? max(rateBurst, ratePerSecond)
        maxConnections = Int(try number("LOGBOOK_HTTP_MAX_CONNECTIONS", 1...1_000_000) ?? Double(maxConnections))
        func path(_ key: String) -> String? {
            guard let text = values[key]?.trimmingCharacters(in: .whitespaces), !text.isEmpty else { return nil }
            return text.hasPrefix("~/") ? NSHomeDirectory() + text.dropFirst(1) : text
        }
        tlsCertificate = path("LOGBOOK_HTTP_TLS_CERT")
        tlsKey = path("LOGBOOK_HTTP_TLS_KEY")
        guard (tlsCertificate == nil) == (tlsKey == nil) else {
            throw ConfigurationError(
                "LOGBOOK_HTTP_TLS_CERT and LOGBOOK_HTTP_TLS_KEY go together: set both for HTTPS, or neither for plain HTTP behind a proxy (\(tlsCertificate == nil ? "LOGBOOK_HTTP_TLS_KEY" : "LOGBOOK_HTTP_TLS_CERT") is set alone)")
        }
    }

    /// The certificate and key, read and checked (TLS.swift); nil without TLS settings.
    public func tls() throws -> EdgeTLS? {
        guard let tlsCertificate, let tlsKey else { return nil }
        return try EdgeTLS.load(certificate: tlsCertificate, key: tlsKey)
    }

    /// The base URL clients on this machine use (health checks, `logbook status`).
    public var localURL: String {
        let shown = host == "0.0.0.0" ? "127.0.0.1" : host == "::" ? "::1" : host
        return "\(tlsCertificate == nil ? "http" : "https")://\(shown.contains(":") ? "[\(shown)]" : shown):\(port)"
    }
}
