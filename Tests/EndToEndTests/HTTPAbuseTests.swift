// The HTTP edge under abuse, with small limits so each case takes a second or two: an
// oversize body (413), a client dribbling its request head a byte a second (cut off) or
// its body (408), the per-token rate limit (429 with Retry-After), and a thousand
// connections open at once, all answered.
import Foundation
import Testing

@Suite("HTTP edge abuse", .serialized)
struct HTTPAbuseTests {
    static let limits = [
        "LOGBOOK_HTTP_MAX_BODY": "2048",
        "LOGBOOK_HTTP_REQUEST_TIMEOUT": "1.5",
        "LOGBOOK_HTTP_RATE_LIMIT": "5",
        "LOGBOOK_HTTP_RATE_BURST": "5",
    ]

    @Test("oversize bodies, slow clients, the rate limit and 1,000 connections at once")
    func abuse() async throws {
        try await withStack(environment: Self.limits) { stack in
            let up = try await stack.logbook("stack", "up")
            try #require(up.status == 0, "\(up.stderr)")
            let client = try await stack.edge()
            let port = try #require(URLComponents(string: client.base)?.port)

            // 413: declared too large (refused before reading), and sent too large.
            let big = Data(repeating: UInt8(ascii: "a"), count: 4096)
            let oversize = try await client.send("POST", "/v1/users", body: big, headers: ["Content-Type": "application/json"])
            #expect(oversize.status == 413 && oversize.json["code"] as? String == "payload_too_large", "\(oversize.text)")
            let chunked = try RawConnection(port: port)
            chunked.write("POST /v1/users HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
            chunked.write("1000\r\n" + String(repeating: "b", count: 4096) + "\r\n0\r\n\r\n")
            #expect(chunked.read(until: "\r\n\r\n").text.hasPrefix("HTTP/1.1 413"))

            // A head dribbled a byte a second: the connection is closed within the timeout.
            let slow = try RawConnection(port: port, receiveTimeout: 6)
            let clock = ContinuousClock()
            let start = clock.now
            var cut = false
            for byte in "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n" {
                if !slow.write(String(byte)) { cut = true; break }
                if clock.now - start > .seconds(5) { break }
                try await Task.sleep(for: .seconds(1))
                var probe = pollfd(fd: slow.fd, events: Int16(POLLIN), revents: 0)
                if poll(&probe, 1, 0) > 0 {
                    let (text, closed) = slow.read()
                    if closed || text.isEmpty { cut = true; break }
                }
            }
            #expect(cut, "a client sending a byte a second is cut off")
            #expect(clock.now - start < .seconds(5))

            // A body that stops arriving: 408.
            let stalled = try RawConnection(port: port, receiveTimeout: 6)
            stalled.write("POST /v1/session HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"user")
            let answer = stalled.read(until: "\r\n\r\n").text
            #expect(answer.hasPrefix("HTTP/1.1 408"), "\(answer)")

            // 1,000 connections open at once, each asking for /healthz, all answered.
            var connections: [RawConnection] = []
            // (Each asks at once: a connection silent for the 1.5 s request timeout is closed.)
            for _ in 0..<1000 {
                let connection = try RawConnection(port: port, receiveTimeout: 10)
                connection.write("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
                connections.append(connection)
            }
            var answered = 0
            for connection in connections where connection.read(until: "\"ok\"").text.hasPrefix("HTTP/1.1 200") { answered += 1 }
            #expect(answered == 1000, "\(stack.log("logbook-http").suffix(3000))")
            connections.removeAll()

            // The rate limit, per token: the sixth request in a burst of five is 429.
            var statuses: [Int] = []
            var retryAfter: String?
            for _ in 0..<7 {
                let answer = try await client.send("GET", "/v1/me", token: "lbk_forged")
                statuses.append(answer.status)
                if answer.status == 429 { retryAfter = answer.header("Retry-After") }
            }
            #expect(statuses.prefix(5).allSatisfy { $0 == 401 } && statuses.last == 429, "\(statuses)")
            #expect(retryAfter.flatMap(Int.init).map { $0 >= 1 } == true)
            let other = try await client.send("GET", "/v1/me", token: "lbk_another")
            #expect(other.status == 401, "another token has a bucket of its own")

            // The edge is still fine, and says so in `logbook status`.
            let status = try await stack.logbook("status")
            #expect(status.stdout.contains("logbook-http") && status.status == 0, "\(status.stdout)\(status.stderr)")
        }
    }
}
