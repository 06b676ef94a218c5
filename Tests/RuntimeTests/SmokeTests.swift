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

@Suite struct WildcardPortTests {
    /// A server bound to `tcp://127.0.0.1:*` reports (and answers on) the port libzmq chose.
    @Test func aWildcardPortIsReportedAsBound() async throws {
        let dispatcher = Dispatcher(
            descriptor: ServiceDescriptor(name: "wild"), router: Router(), sessions: nil, logger: .init(label: "t"))
        let server = ServiceServer(
            dispatcher: dispatcher, settings: ServerSettings(endpoint: "tcp://127.0.0.1:*"), logger: .init(label: "t"))
        let task = Task { try await server.run() }
        defer { task.cancel() }
        var endpoint: String?
        for _ in 0..<200 {
            endpoint = server.endpoint
            if endpoint != nil { break }
            try await Task.sleep(for: .milliseconds(10))
        }
        let bound = try #require(endpoint)
        #expect(bound.hasPrefix("tcp://127.0.0.1:") && !bound.hasSuffix(":*"), "\(bound)")
        let client = try ServiceClient(service: "wild", endpoint: bound)
        let info = try await client.call("$srv.info", Empty(), as: Info.self, options: CallOptions(timeout: .seconds(5)))
        #expect(info.endpoint == bound)
    }
}
