// `logbook status`'s own HTTP/1.1 GET of the edge's /healthz (EdgeHealth.swift), against a
// real HTTP server on loopback (Tests/TestSupport): the status code, a refusal, silence.
import Foundation
import Testing
import TestSupport

@testable import Gateway

@Suite struct EdgeHealthTests {
    @Test func readsTheStatusCodeOfTheAnswer() async throws {
        let server = try StubHTTPServer { request in
            request.path == "/healthz" ? .json(#"{"status":"ok"}"#) : .json("{}", status: 503)
        }
        defer { server.stop() }
        #expect(try await EdgeHealth.status(server.baseURL, path: "/healthz", timeout: .seconds(2)) == 200)
        #expect(try await EdgeHealth.status(server.baseURL, path: "/other", timeout: .seconds(2)) == 503)
        #expect(server.requests(path: "/healthz").count == 1)
    }

    @Test func nothingListeningIsAnErrorNamingTheURL() async throws {
        // A port that was just free: bind, note it, close.
        let server = try StubHTTPServer { _ in .json("{}") }
        let base = server.baseURL
        server.stop()
        try await Task.sleep(for: .milliseconds(50))
        let error = await #expect(throws: EdgeHealth.Failure.self) {
            try await EdgeHealth.status(base, path: "/healthz", timeout: .seconds(2))
        }
        #expect(error?.description.hasPrefix(base + "/healthz") == true, "\(String(describing: error))")
    }

    @Test func anAnswerTooSlowIsATimeoutWithinTheDeadline() async throws {
        let server = try StubHTTPServer { _ in StubResponse(status: 200, body: Data("{}".utf8), delay: .seconds(5)) }
        defer { server.stop() }
        let clock = ContinuousClock()
        let start = clock.now
        let error = await #expect(throws: EdgeHealth.Failure.self) {
            try await EdgeHealth.status(server.baseURL, path: "/healthz", timeout: .milliseconds(300))
        }
        #expect(error?.description.contains("in time") == true, "\(String(describing: error))")
        #expect(clock.now - start < .seconds(3))
    }

    @Test func addressesItUnderstands() {
        func parsed(_ url: String) -> String? { EdgeHealth.address(url).map { "\($0.host) \($0.port)" } }
        #expect(parsed("http://127.0.0.1:8080") == "127.0.0.1 8080")
        #expect(parsed("http://[::1]:9000/") == "::1 9000")
        #expect(parsed("http://localhost") == "localhost 80")
        #expect(parsed("https://127.0.0.1:8443") == nil)
        #expect(parsed("http://127.0.0.1:80x") == nil)
        #expect(parsed("http://[::1") == nil)
        #expect(parsed("http://:80") == nil)
    }
}
