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
        let client = HTTPClient(timeout: .milliseconds(300))
        let clock = ContinuousClock()
        let start = clock.now
        let slow = await #expect(throws: HTTPError.self) { _ = try await client.get(URL(string: server.baseURL + "/slow")!) }
        let waited = clock.now - start
        guard case .timedOut = slow else {
            Issue.record("expected a timeout, got \(String(describing: slow))")
            return
        }
        // Not before the deadline, and far from the provider's 20 s: a loose upper bound
        // survives a busy machine and still catches a client that waits for the answer.
        #expect(waited >= .milliseconds(290) && waited < .seconds(10), "waited \(waited)")
        server.stop()
        let dead = await #expect(throws: HTTPError.self) { _ = try await client.get(URL(string: "http://127.0.0.1:1/none")!) }
        guard case .transport = dead else {
            Issue.record("expected a transport failure, got \(String(describing: dead))")
            return
        }
    }

    /// A provider that streams a body past the cap gets a transport failure, not a service
    /// holding it all in memory.
    @Test func oversizeBodiesAreRefused() async throws {
        let big = Data(repeating: UInt8(ascii: "x"), count: 300_000)
        let server = try StubHTTPServer { _ in StubResponse(body: big) }
        defer { server.stop() }
        let capped = HTTPClient(timeout: .seconds(5), maxBodyBytes: 100_000)
        let refused = await #expect(throws: HTTPError.self) { _ = try await capped.get(URL(string: server.baseURL + "/big")!) }
        guard case .transport(_, let reason) = refused else {
            Issue.record("expected a transport failure, got \(String(describing: refused))")
            return
        }
        #expect(reason.contains("100000"), "\(reason)")
        let whole = try await HTTPClient(timeout: .seconds(5)).get(URL(string: server.baseURL + "/big")!)
        #expect(whole.body.count == big.count)
    }

    /// Cancellation is routine (every shutdown cancels the fetches in flight): many gets,
    /// each cancelled at a different moment, all end — each with an answer or an error —
    /// and the process is still here to count them. The previous client (URLSession in
    /// swift-corelibs-foundation) could trap the process on such a cancel.
    @Test func cancelledGetsAllEnd() async throws {
        let server = try StubHTTPServer { request in
            request.path == "/slow" ? StubResponse(body: Data("{}".utf8), delay: .milliseconds(50)) : .json("{}")
        }
        defer { server.stop() }
        let client = HTTPClient(timeout: .seconds(5))
        let rounds = 400
        let ended = try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<rounds {
                group.addTask {
                    let get = Task { try await client.get(URL(string: server.baseURL + (index % 2 == 0 ? "/slow" : "/fast"))!) }
                    if index % 4 != 0 { try? await Task.sleep(for: .microseconds(index % 7 * 300)) }
                    get.cancel()
                    _ = await get.result
                    return 1
                }
            }
            return try await group.reduce(0, +)
        }
        #expect(ended == rounds)
        // And the client still works after all of that.
        let after = try await client.get(URL(string: server.baseURL + "/fast")!)
        #expect(after.status == 200)
    }
}
