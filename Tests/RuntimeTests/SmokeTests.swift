import Foundation
import Runtime
import Testing
import Wire

@Suite struct SmokeTests {
    @Test func echoAndPingOverZeroMQ() async throws {
        try await withRunningService { endpoint, _, _ in
            let client = try ServiceClient(service: "test", endpoint: endpoint)
            let echoed = try await client.call("test.echo", EchoBody(text: "hi", count: 2), as: EchoBody.self)
            #expect(echoed == EchoBody(text: "hi", count: 2))
            let ping = try await client.call("$srv.ping", Empty(), as: Ping.self)
            #expect(ping.service == "test")
        }
    }
}
