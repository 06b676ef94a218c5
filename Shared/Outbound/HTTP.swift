// Outbound HTTP for the services that read public APIs (weather, tide, quotes).
// URLSession from FoundationNetworking: it ships with the toolchain, so it costs no extra
// build time, and a GET with a timeout is all these APIs need. Every base URL is a setting.
// A module of its own, so the services that make no HTTP calls do not load FoundationNetworking.
import Foundation
import Runtime
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

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
    /// No answer in time.
    case timedOut(url: String)
    /// Connection refused, DNS failure, TLS failure, …
    case transport(url: String, reason: String)

    public var description: String {
        switch self {
        case .timedOut(let url): "no answer from \(url) in time"
        case .transport(let url, let reason): "\(url): \(reason)"
        }
    }
}

public struct HTTPClient: Sendable {
    public var timeout: Duration
    public var userAgent: String
    private let session: URLSession

    /// - Parameter timeout: for the whole request, in whole seconds (at least 1).
    public init(timeout: Duration = .seconds(10), userAgent: String = "logbook/\(LogbookVersion.current)") {
        self.timeout = timeout
        self.userAgent = userAgent
        let configuration = URLSessionConfiguration.ephemeral
        // swift-corelibs-foundation hands libcurl whole seconds: a timeout under one second
        // becomes an immediate time-out. Round up, never below one second.
        let exact = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
        let seconds = max(1, exact.rounded(.up))
        configuration.timeoutIntervalForRequest = seconds
        configuration.timeoutIntervalForResource = seconds
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        // No cache at all: with one, swift-corelibs-foundation looks a request up on a
        // background queue before the task has a protocol, and a cancel landing in that
        // window traps the process ("a task that is not in the registry").
        configuration.urlCache = nil
        session = URLSession(configuration: configuration)
    }

    /// GETs `url`; any HTTP status is a response (the caller decides), only a transport
    /// failure or a timeout throws.
    public func get(_ url: URL) async throws -> HTTPResponse {
        var request = URLRequest(url: url)
        request.httpMethod = "GET"
        request.setValue(userAgent, forHTTPHeaderField: "User-Agent")
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        do {
            let (data, response) = try await session.data(for: request)
            guard let http = response as? HTTPURLResponse else {
                throw HTTPError.transport(url: url.absoluteString, reason: "not an HTTP response")
            }
            var headers: [String: String] = [:]
            for (key, value) in http.allHeaderFields {
                headers[String(describing: key).lowercased()] = String(describing: value)
            }
            return HTTPResponse(status: http.statusCode, body: data, headers: headers)
        } catch let error as URLError where error.code == .timedOut {
            throw HTTPError.timedOut(url: url.absoluteString)
        } catch let error as HTTPError {
            throw error
        } catch {
            throw HTTPError.transport(url: url.absoluteString, reason: "\(error.localizedDescription)")
        }
    }
}
