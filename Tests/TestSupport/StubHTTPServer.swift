// A small HTTP/1.1 server on 127.0.0.1 for tests: it stands in for the internet (Open-Meteo,
// NOAA, ZenQuotes) by serving recorded response shapes, slow answers, errors and truncated
// bodies, and counts the calls. Services under test reach it through their real HTTP code
// path, because their base URLs are settings.
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

public struct StubRequest: Sendable {
    public var method: String
    public var path: String
    public var query: [String: String]
}

public struct StubResponse: Sendable {
    public var status: Int
    public var body: Data
    public var contentType: String
    /// Wait this long before answering (a slow provider).
    public var delay: Duration
    /// Close the connection after sending only this many bytes of the body (truncated JSON).
    public var truncateAfter: Int?

    public init(status: Int = 200, body: Data, contentType: String = "application/json", delay: Duration = .zero, truncateAfter: Int? = nil) {
        self.status = status
        self.body = body
        self.contentType = contentType
        self.delay = delay
        self.truncateAfter = truncateAfter
    }

    public static func json(_ text: String, status: Int = 200) -> StubResponse {
        StubResponse(status: status, body: Data(text.utf8))
    }
}

public final class StubHTTPServer: Sendable {
    public typealias Handler = @Sendable (StubRequest) -> StubResponse

    public let port: UInt16
    private let listener: Int32
    private let handler: Mutex<Handler>
    private let log = Mutex<[StubRequest]>([])
    private let stopped = Atomic<Bool>(false)

    public var baseURL: String { "http://127.0.0.1:\(port)" }

    /// Every request received so far, in order.
    public var requests: [StubRequest] { log.withLock { $0 } }

    public func requests(path: String) -> [StubRequest] { requests.filter { $0.path == path } }

    public init(handler: @escaping Handler) throws {
        self.handler = Mutex(handler)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw StubError("socket() failed") }
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 64) == 0 else {
            close(fd)
            throw StubError("bind/listen failed")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { _ = getsockname(fd, $0, &length) }
        }
        port = UInt16(bigEndian: address.sin_port)
        listener = fd
        let thread = Thread { [self] in acceptLoop() }
        thread.start()
    }

    /// Changes how requests are answered from now on (the provider "goes down", "comes back").
    public func respond(with handler: @escaping Handler) {
        self.handler.withLock { $0 = handler }
    }

    public func stop() {
        guard !stopped.exchange(true, ordering: .relaxed) else { return }
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    deinit { stop() }

    private func acceptLoop() {
        while !stopped.load(ordering: .relaxed) {
            let client = accept(listener, nil, nil)
            if client < 0 {
                if stopped.load(ordering: .relaxed) { return }
                continue
            }
            Thread { [self] in serve(client) }.start()
        }
    }

    private func serve(_ fd: Int32) {
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 65536)
        var received = Data()
        while !received.contains(Data("\r\n\r\n".utf8)) {
            let n = read(fd, &buffer, buffer.count)
            if n <= 0 { return }
            received.append(contentsOf: buffer[0..<n])
            if received.count > 1_000_000 { return }
        }
        let head = String(decoding: received, as: UTF8.self)
        let requestLine = head.split(separator: "\r\n").first.map(String.init) ?? ""
        let parts = requestLine.split(separator: " ")
        guard parts.count >= 2 else { return }
        let target = String(parts[1])
        let components = URLComponents(string: target)
        var query: [String: String] = [:]
        for item in components?.queryItems ?? [] { query[item.name] = item.value ?? "" }
        let request = StubRequest(method: String(parts[0]), path: components?.path ?? target, query: query)
        log.withLock { $0.append(request) }
        let response = handler.withLock { $0 }(request)
        if response.delay > .zero {
            let ns = response.delay.components.seconds * 1_000_000_000 + response.delay.components.attoseconds / 1_000_000_000
            usleep(UInt32(min(ns / 1000, Int64(UInt32.max))))
        }
        var body = response.body
        let declaredLength = body.count
        if let cut = response.truncateAfter { body = body.prefix(cut) }
        let reason = response.status == 200 ? "OK" : "Status"
        let header = "HTTP/1.1 \(response.status) \(reason)\r\nContent-Type: \(response.contentType)\r\nContent-Length: \(declaredLength)\r\nConnection: close\r\n\r\n"
        var out = Data(header.utf8)
        out.append(body)
        out.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let n = write(fd, raw.baseAddress! + offset, raw.count - offset)
                if n <= 0 { return }
                offset += n
            }
        }
    }
}

public struct StubError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
