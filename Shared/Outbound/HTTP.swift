// Outbound HTTP for the services that read public APIs (weather, tide, quotes).
// AsyncHTTPClient on SwiftNIO (already built for the HTTP edge): a GET with one deadline
// over the whole exchange, a cap on the body, and cancellation that ends the request.
// It replaced URLSession from FoundationNetworking, whose task registry traps the process
// when a task is cancelled at the wrong moment (seen once in the suite, in
// WeatherFetcherTests) — a cancel is routine here: every shutdown cancels the fetches in
// flight. A module of its own, so the services that make no HTTP calls do not link it.
import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import Runtime

public struct HTTPResponse: Sendable {
    public var status: Int
    public var body: Data
    public var headers: [String: String]

    public init(status: Int, body: Data, headers: [String: String] = [:]) {
        self.status = status
        self.body = body
        self.headers = headers
    }
}

public enum HTTPError: Error, CustomStringConvertible, Sendable {
    /// No whole answer in time.
    case timedOut(url: String)
    /// Connection refused, DNS failure, TLS failure, an answer too large, …
    case transport(url: String, reason: String)

    public var description: String {
        switch self {
        case .timedOut(let url): "no answer from \(url) in time"
        case .transport(let url, let reason): "\(url): \(reason)"
        }
    }
}

public struct HTTPClient: Sendable {
    /// For the whole exchange: connecting, the head and the body.
    public var timeout: Duration
    public var userAgent: String
    /// Larger bodies are refused (`HTTPError.transport`): no provider answer is near it,
    /// and a misbehaving server must not grow a service's memory without bound.
    public var maxBodyBytes: Int

    public init(
        timeout: Duration = .seconds(10), userAgent: String = "logbook/\(LogbookVersion.current)",
        maxBodyBytes: Int = 4 << 20
    ) {
        self.timeout = timeout
        self.userAgent = userAgent
        self.maxBodyBytes = maxBodyBytes
    }

    /// GETs `url`; any HTTP status is a response (the caller decides), only a transport
    /// failure or a timeout throws. Cancelling the calling task ends the request.
    public func get(_ url: URL) async throws -> HTTPResponse {
        let address = url.absoluteString
        var request = HTTPClientRequest(url: address)
        request.method = .GET
        request.headers.add(name: "User-Agent", value: userAgent)
        request.headers.add(name: "Accept", value: "application/json")
        let prepared = request
        let limit = maxBodyBytes
        // The deadline covers connecting and the head; the race below covers the body too.
        let exchange: @Sendable () async throws -> HTTPResponse = {
            let response = try await outboundClient.execute(prepared, timeout: .nanoseconds(Int64(timeout.nanoseconds)))
            let buffer = try await response.body.collect(upTo: limit)
            var headers: [String: String] = [:]
            for (name, value) in response.headers {
                let key = name.lowercased()
                headers[key] = headers[key].map { $0 + ", " + value } ?? value
            }
            return HTTPResponse(status: Int(response.status.code), body: Data(buffer.readableBytesView), headers: headers)
        }
        do {
            return try await withThrowingTaskGroup(of: HTTPResponse?.self) { group in
                group.addTask { try await exchange() }
                group.addTask {
                    try await Task.sleep(for: timeout)
                    return nil
                }
                defer { group.cancelAll() }
                guard let first = try await group.next(), let response = first else {
                    throw HTTPError.timedOut(url: address)
                }
                return response
            }
        } catch let error as HTTPError {
            throw error
        } catch let error as HTTPClientError where error == .deadlineExceeded || error == .connectTimeout {
            throw HTTPError.timedOut(url: address)
        } catch let error as NIOTooManyBytesError {
            throw HTTPError.transport(url: address, reason: "answer larger than \(error.maxBytes.map { "\($0)" } ?? "\(limit)") bytes")
        } catch {
            // A cancelled fetch is a transport failure like any other: the job stays pending.
            throw HTTPError.transport(url: address, reason: "\(error)")
        }
    }
}

/// One client for the process (its connection pool is shared by every caller), on the
/// default event loop group; a global, so it is never deinitialised and needs no shutdown.
/// A refused connection fails at once (no retrying until the deadline: the caller has its
/// own retry policy); redirects are followed a few times; no decompression (the request
/// asks for none).
private let outboundClient: AsyncHTTPClient.HTTPClient = {
    var configuration = AsyncHTTPClient.HTTPClient.Configuration(
        redirectConfiguration: .follow(max: 5, allowCycles: false),
        timeout: .init(connect: .seconds(10), read: .seconds(30)))
    configuration.connectionPool.retryConnectionEstablishment = false
    return AsyncHTTPClient.HTTPClient(eventLoopGroup: AsyncHTTPClient.HTTPClient.defaultEventLoopGroup, configuration: configuration)
}()

extension Duration {
    /// Saturating: a timeout of more seconds than an Int64 of nanoseconds holds (292 years)
    /// waits that long rather than trapping.
    fileprivate var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        guard !overflow else { return seconds < 0 ? Int64.min : Int64.max }
        let (total, past) = whole.addingReportingOverflow(attoseconds / 1_000_000_000)
        return past ? (whole < 0 ? Int64.min : Int64.max) : total
    }
}
