// The shared HTTP client against the local stub server: statuses are answers, only
// transport failures and timeouts throw.
import Foundation
import Outbound
import Runtime
import TestSupport
import Testing

@Suite struct HTTPTests {
    @Test func getReturnsStatusAndBody() async throws {
        let server = try StubHTTPServer { request in
            request.path == "/ok" ? .json(#"{"q":"x"}"#) : .json(#"{"error":true,"reason":"bad"}"#, status: 400)
        }
        defer { server.stop() }
        let client = HTTPClient(timeout: .seconds(5))
        let ok = try await client.get(URL(string: server.baseURL + "/ok?a=1&b=two")!)
        #expect(ok.status == 200)
        #expect(String(decoding: ok.body, as: UTF8.self) == #"{"q":"x"}"#)
        let bad = try await client.get(URL(string: server.baseURL + "/nope")!)
        #expect(bad.status == 400)
        #expect(server.requests(path: "/ok").first?.query["b"] == "two")
        #expect(server.requests.count == 2)
    }

    @Test func slowAndDeadProvidersThrow() async throws {
        let server = try StubHTTPServer { _ in StubResponse(body: Data("{}".utf8), delay: .seconds(20)) }
        defer { server.stop() }
        let client = HTTPClient(timeout: .milliseconds(300))  // rounded up to 1 s
        let clock = ContinuousClock()
        let start = clock.now
        let slow = await #expect(throws: HTTPError.self) { _ = try await client.get(URL(string: server.baseURL + "/slow")!) }
        let waited = clock.now - start
        guard case .timedOut = slow else {
            Issue.record("expected a timeout, got \(String(describing: slow))")
            return
        }
        // Rounded up to one second, and far from the provider's 20 s: a loose upper bound
        // survives a busy machine and still catches a client that waits for the answer.
        #expect(waited >= .milliseconds(900) && waited < .seconds(10), "waited \(waited)")
        server.stop()
        let dead = await #expect(throws: HTTPError.self) { _ = try await client.get(URL(string: "http://127.0.0.1:1/none")!) }
        guard case .transport = dead else {
            Issue.record("expected a transport failure, got \(String(describing: dead))")
            return
        }
    }
}
