// `logbook status` asks the HTTP edge's /healthz itself over a plain socket: one HTTP/1.1
// GET, the status line's code. No HTTP client library, so the `logbook` binary does not
// link FoundationNetworking (and through it libcurl, TLS and Kerberos) just for this. An
// edge speaking TLS is asked by its own probe instead (`logbook-http --probe`, Probe.swift).
import Foundation

enum EdgeHealth {
    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// The host and port of `http://host:port[/…]` (port 80 when none; brackets around an
    /// IPv6 host dropped); nil for anything else.
    static func address(_ url: String) -> (host: String, port: String)? {
        guard url.hasPrefix("http://") else { return nil }
        var rest = url.dropFirst("http://".count)
        if let slash = rest.firstIndex(of: "/") { rest = rest[..<slash] }
        var host = rest
        var port: Substring = "80"
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { return nil }
            host = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            if after.hasPrefix(":") { port = after.dropFirst() } else if !after.isEmpty { return nil }
        } else if let colon = rest.lastIndex(of: ":") {
            host = rest[..<colon]
            port = rest[rest.index(after: colon)...]
        }
        guard !host.isEmpty, !port.isEmpty, port.allSatisfy(\.isASCII), port.allSatisfy(\.isNumber) else { return nil }
        return (String(host), String(port))
    }

    /// GETs `path` from the edge at `base` within `timeout` (on a thread of its own: the
    /// socket calls block): the code of the answer's status line.
    static func status(_ base: String, path: String, timeout: Duration) async throws -> Int {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(with: Result { try blockingStatus(base, path: path, timeout: timeout) })
            }
        }
    }

    static func blockingStatus(_ base: String, path: String, timeout: Duration) throws -> Int {
        let url = base + path
        guard let (host, port) = address(base) else { throw Failure("\(url): not an http URL") }
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        /// Milliseconds left for poll; 0 once the deadline passed.
        func left() -> Int32 {
            let remaining = deadline - clock.now
            guard remaining > .zero else { return 0 }
            return Int32(clamping: remaining.components.seconds * 1000 + remaining.components.attoseconds / 1_000_000_000_000_000 + 1)
        }

        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let resolved = getaddrinfo(host, port, &hints, &list)
        guard resolved == 0, let first = list else {
            throw Failure("\(url): cannot resolve \(host): \(String(cString: gai_strerror(resolved)))")
        }
        defer { freeaddrinfo(list) }

        var reason = "no address for \(host)"
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let info = entry {
            entry = info.pointee.ai_next
            let fd = socket(info.pointee.ai_family, info.pointee.ai_socktype, info.pointee.ai_protocol)
            guard fd >= 0 else {
                reason = String(cString: strerror(errno))
                continue
            }
            defer { close(fd) }
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            if connect(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) != 0 {
                guard errno == EINPROGRESS else {
                    reason = String(cString: strerror(errno))
                    continue
                }
                guard try wait(fd, for: Int16(POLLOUT), left(), url: url) else { throw Failure("no answer from \(url) in time") }
                var error: Int32 = 0
                var size = socklen_t(MemoryLayout<Int32>.size)
                getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &size)
                guard error == 0 else {
                    reason = String(cString: strerror(error))
                    continue
                }
            }
            let shown = host.contains(":") ? "[\(host)]" : host
            let request = Array("GET \(path) HTTP/1.1\r\nHost: \(shown):\(port)\r\nConnection: close\r\n\r\n".utf8)
            var sent = 0
            while sent < request.count {
                let n = request[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                if n > 0 {
                    sent += n
                } else if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                    guard try wait(fd, for: Int16(POLLOUT), left(), url: url) else { throw Failure("no answer from \(url) in time") }
                } else if n < 0 && errno == EINTR {
                    continue
                } else {
                    throw Failure("\(url): \(String(cString: strerror(errno)))")
                }
            }
            var answer: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 1024)
            while true {
                if let end = answer.firstIndex(of: UInt8(ascii: "\r")) ?? answer.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = String(decoding: answer[..<end], as: UTF8.self)
                    let parts = line.split(separator: " ")
                    guard parts.count >= 2, parts[0].hasPrefix("HTTP/"), let code = Int(parts[1]) else {
                        throw Failure("\(url): not an HTTP answer: \(line.prefix(80))")
                    }
                    return code
                }
                guard answer.count < 8192 else { throw Failure("\(url): not an HTTP answer") }
                guard try wait(fd, for: Int16(POLLIN), left(), url: url) else { throw Failure("no answer from \(url) in time") }
                let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                if n > 0 {
                    answer += buffer[..<n]
                } else if n == 0 {
                    throw Failure("\(url): the connection closed before an HTTP answer")
                } else if errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR {
                    throw Failure("\(url): \(String(cString: strerror(errno)))")
                }
            }
        }
        throw Failure("\(url): \(reason)")
    }

    /// Waits up to `milliseconds` for `events` on `fd`: false on timeout.
    private static func wait(_ fd: Int32, for events: Int16, _ milliseconds: Int32, url: String) throws -> Bool {
        var entry = pollfd(fd: fd, events: events, revents: 0)
        while true {
            let ready = poll(&entry, 1, milliseconds)
            if ready > 0 { return true }
            if ready == 0 { return false }
            guard errno == EINTR else { throw Failure("\(url): \(String(cString: strerror(errno)))") }
        }
    }
}
