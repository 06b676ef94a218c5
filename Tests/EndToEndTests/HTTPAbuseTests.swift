// The HTTP edge under abuse, with small limits so each case takes a second or two: an
// oversize body (413), a client dribbling its request head a byte a second (cut off) or
// its body (408), the rate limit (429 with Retry-After: per real token, and one bucket per
// client address for everything else, forged tokens included), and a thousand
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

            // A photo with a forged token, or none: 401 before a byte of its body is read
            // (not 408 once the unsent body times out).
            for authorization in ["Authorization: Bearer lbk_forged_photo\r\n", ""] {
                let stranger = try RawConnection(port: port, receiveTimeout: 6)
                let started = clock.now
                stranger.write(
                    "PUT /v1/catches/c_1/photo HTTP/1.1\r\nHost: x\r\n\(authorization)Content-Type: image/jpeg\r\n"
                        + "Content-Length: 16000000\r\n\r\nJFIF")
                let refused = stranger.read(until: "\r\n\r\n").text
                #expect(refused.hasPrefix("HTTP/1.1 401"), "\(refused)")
                #expect(clock.now - started < .seconds(1.5), "answered before the body's timeout")
            }
            // Photo bodies at once: one per session, two in all (LOGBOOK_HTTP_PHOTO_UPLOADS);
            // beyond either, 503 with Retry-After; the slots come back when the bodies end.
            try await Task.sleep(for: .milliseconds(1200))  // the address's bucket refills
            let pia = try await stack.httpUser(client, "pia")
            let quinn = try await stack.httpUser(client, "quinn")
            func slowUpload(_ token: String) throws -> RawConnection {
                let upload = try RawConnection(port: port, receiveTimeout: 6)
                upload.write(
                    "PUT /v1/catches/c_1/photo HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(token)\r\n"
                        + "Content-Type: image/jpeg\r\nContent-Length: 100000\r\n\r\nJFIF")
                return upload
            }
            func quickUpload(_ token: String) async throws -> HTTPAnswer {
                try await client.send(
                    "PUT", "/v1/catches/c_1/photo", body: Data("JFIF".utf8), token: token, headers: ["Content-Type": "image/jpeg"])
            }
            var uploads = [try slowUpload(pia)]
            try await Task.sleep(for: .milliseconds(300))
            let again = try await quickUpload(pia)
            #expect(again.status == 503 && again.header("Retry-After") == "1", "one at a time per session: \(again.status) \(again.text)")
            uploads.append(try slowUpload(quinn))
            try await Task.sleep(for: .milliseconds(300))
            let second = try await client.send("POST", "/v1/session", json: ["username": "pia", "password": TestStack.password])
            let piaAgain = try #require(second.json["token"] as? String, "\(second.text)")
            let full = try await quickUpload(piaAgain)
            #expect(full.status == 503, "two in all: \(full.status) \(full.text)")
            for upload in uploads {
                let timedOut = upload.read(until: "\r\n\r\n").text
                #expect(timedOut.hasPrefix("HTTP/1.1 408"), "\(timedOut)")
            }
            uploads.removeAll()
            let after = try await quickUpload(pia)
            #expect(after.status != 503, "the slots are given back: \(after.status) \(after.text)")

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

            // The rate limit. A real token (from a login through the edge) has a bucket of
            // its own; requests without one or with a token no service has accepted share
            // their client address's bucket, so forged tokens cannot each get five.
            try await Task.sleep(for: .milliseconds(1200))  // the address's bucket refills
            let token = try await stack.httpUser(client, "rita")  // 2 of the address's 5
            try await Task.sleep(for: .milliseconds(1200))
            var statuses: [Int] = []
            var retryAfter: String?
            for index in 0..<7 {
                let answer = try await client.send("GET", "/v1/me", token: "lbk_forged_\(index)")
                statuses.append(answer.status)
                if answer.status == 429 { retryAfter = answer.header("Retry-After") }
            }
            #expect(statuses.prefix(5).allSatisfy { $0 == 401 } && statuses.suffix(2).allSatisfy { $0 == 429 }, "\(statuses)")
            #expect(retryAfter.flatMap(Int.init).map { $0 >= 1 } == true)
            let anonymous = try await client.send("POST", "/v1/session", json: ["username": "rita", "password": "x"])
            #expect(anonymous.status == 429, "no token: the same address bucket, now empty: \(anonymous.status)")
            #expect(anonymous.header("Content-Type") == "application/problem+json")
            // /readyz and /metrics call every service: a bucket of the address's own, which
            // the anonymous requests above did not drain, and which runs out in turn.
            #expect(try await client.send("GET", "/metrics").status == 200)
            var probes: [Int] = []
            for _ in 0..<6 { probes.append(try await client.send("GET", "/readyz").status) }
            #expect(probes.last == 429, "\(probes)")
            // the real token is not held back by the forgeries, and has a limit of its own
            var own: [Int] = []
            for _ in 0..<6 { own.append(try await client.send("GET", "/v1/me", token: token).status) }
            #expect(own.prefix(5).allSatisfy { $0 == 200 } && own.last == 429, "\(own)")
            // after logout the token is forgotten: back to the address's bucket (still empty)
            try await Task.sleep(for: .milliseconds(1200))
            let logout = try await client.send("DELETE", "/v1/session", token: token)
            #expect(logout.status == 200, "\(logout.text)")
            for index in 0..<7 { _ = try await client.send("GET", "/v1/me", token: "lbk_forged_more_\(index)") }
            let revoked = try await client.send("GET", "/v1/me", token: token)
            #expect(revoked.status == 429, "a revoked token shares the address's bucket: \(revoked.status)")

            // The edge is still fine, and says so in `logbook status`.
            let status = try await stack.logbook("status")
            #expect(status.stdout.contains("logbook-http") && status.status == 0, "\(status.stdout)\(status.stderr)")
        }
    }
}
