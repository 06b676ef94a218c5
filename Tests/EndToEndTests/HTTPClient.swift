// A plain HTTP client for the edge's tests: URLSession (FoundationNetworking), a real
// client over a real socket; plus raw sockets for what URLSession will not do (a client
// that dribbles, hundreds of connections at once).
import Foundation
import Testing
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

struct HTTPAnswer {
    var status: Int
    var headers: [String: String]
    var body: Data

    var json: [String: Any] { (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] ?? [:] }
    var text: String { String(decoding: body, as: UTF8.self) }
    func header(_ name: String) -> String? { headers[name.lowercased()] }
}

struct EdgeClient: Sendable {
    let base: String
    let session: URLSession

    init(base: String) {
        self.base = base
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 15
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        session = URLSession(configuration: configuration)
    }

    func send(
        _ method: String, _ path: String, json: Any? = nil, body: Data? = nil, token: String? = nil,
        headers: [String: String] = [:]
    ) async throws -> HTTPAnswer {
        var request = URLRequest(url: try #require(URL(string: path.hasPrefix("http") ? path : base + path)))
        request.httpMethod = method
        if let json {
            request.httpBody = try JSONSerialization.data(withJSONObject: json)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        if let body { request.httpBody = body }
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let (data, response) = try await session.data(for: request)
        let http = try #require(response as? HTTPURLResponse)
        var fields: [String: String] = [:]
        for (key, value) in http.allHeaderFields { fields[String(describing: key).lowercased()] = String(describing: value) }
        return HTTPAnswer(status: http.statusCode, headers: fields, body: data)
    }
}

extension TestStack {
    /// The edge's URL once it listens (it writes run/logbook-http.url) and answers /healthz.
    func edge() async throws -> EdgeClient {
        var base: String?
        let ready = try await eventually(timeout: .seconds(20)) {
            guard let text = try? String(contentsOfFile: runDirectory + "/logbook-http.url", encoding: .utf8) else { return false }
            let url = text.trimmingCharacters(in: .whitespacesAndNewlines)
            guard let answer = try? await EdgeClient(base: url).send("GET", "/healthz"), answer.status == 200 else { return false }
            base = url
            return true
        }
        try #require(ready, "the HTTP edge did not answer /healthz: \(log("logbook-http"))")
        return EdgeClient(base: try #require(base))
    }

    /// Registers and logs `user` in over HTTP; the bearer token.
    func httpUser(_ client: EdgeClient, _ user: String) async throws -> String {
        let registered = try await client.send("POST", "/v1/users", json: ["username": user, "password": Self.password])
        try #require(registered.status == 201, "register: \(registered.status) \(registered.text)")
        let login = try await client.send("POST", "/v1/session", json: ["username": user, "password": Self.password])
        try #require(login.status == 201, "login: \(login.status) \(login.text)")
        return try #require(login.json["token"] as? String)
    }
}

/// A raw TCP connection to 127.0.0.1:port (blocking, with a receive timeout).
final class RawConnection {
    let fd: Int32

    init(port: Int, receiveTimeout: Double = 10) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw HarnessError("socket: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            close(fd)
            throw HarnessError("connect: errno \(errno)")
        }
        var timeout = timeval(tv_sec: Int(receiveTimeout), tv_usec: Int((receiveTimeout - receiveTimeout.rounded(.down)) * 1_000_000))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close(fd) }

    /// Writes; false when the peer has closed the connection.
    @discardableResult
    func write(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        return bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } == bytes.count
    }

    /// Reads until the peer closes, the timeout passes or `until` is in what was read.
    func read(until marker: String? = nil) -> (text: String, closed: Bool) {
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = recv(fd, &buffer, buffer.count, 0)
            if n == 0 { return (String(decoding: data, as: UTF8.self), true) }
            if n < 0 { return (String(decoding: data, as: UTF8.self), errno == ECONNRESET) }
            data.append(contentsOf: buffer[0..<n])
            if let marker, String(decoding: data, as: UTF8.self).contains(marker) { return (String(decoding: data, as: UTF8.self), false) }
        }
    }
}
