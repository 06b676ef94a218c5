// Bad input never hurts: every malformed frame, wrong type, unknown method or version,
// oversized message gets a clear error or is dropped, and the service answers $srv.ping
// afterwards.
import Foundation
import Runtime
import Testing
import Wire
import ZMQ

@Suite struct AbuseTests {
    /// Sends `payload` as a DEALER with the REQ-style empty delimiter and returns the reply.
    func send(_ payload: Data, to endpoint: String) async throws -> Reply {
        let replies = try await rawExchange(endpoint: endpoint, messages: [[Data(), payload]], expect: 1)
        try #require(replies.count == 1, "expected one reply")
        #expect(replies[0].count == 2 && replies[0][0].isEmpty, "reply keeps the envelope")
        return try decodeReply(replies[0])
    }

    func expectAlive(_ endpoint: String) async throws {
        let client = try ServiceClient(service: "test", endpoint: endpoint)
        let ping = try await client.call("$srv.ping", Empty(), as: Ping.self, options: CallOptions(timeout: .seconds(2)))
        #expect(ping.service == "test")
    }

    @Test func malformedJSONGetsAClearError() async throws {
        try await withRunningService { endpoint, _, _ in
            for bad in ["{not json", "", "[1,2,3]", "42", "\"text\"", "{\"v\":1,\"id\":\"x\"}", "null"] {
                let reply = try await send(json(bad), to: endpoint)
                #expect(!reply.ok)
                #expect(reply.error?.code == .invalidArgument, "for \(bad): \(String(describing: reply.error))")
            }
            // Invalid UTF-8 bytes.
            let reply = try await send(Data([0xFF, 0xFE, 0x00, 0x7B]), to: endpoint)
            #expect(reply.error?.code == .invalidArgument)
            try await expectAlive(endpoint)
        }
    }

    @Test func wrongTypesNameTheField() async throws {
        try await withRunningService { endpoint, _, _ in
            let reply = try await send(
                json(#"{"v":1,"id":"r1","method":"test.echo","body":{"text":5}}"#), to: endpoint)
            #expect(reply.id == "r1")
            #expect(reply.error?.code == .invalidArgument)
            #expect(reply.error?.field == "text")
            #expect(reply.error?.message.contains("expected a string") == true)

            let missing = try await send(json(#"{"v":1,"id":"r2","method":"test.echo","body":{}}"#), to: endpoint)
            #expect(missing.error?.field == "text")
            #expect(missing.error?.message == "text: is required")

            let badHeader = try await send(json(#"{"v":1,"id":"r3","method":7}"#), to: endpoint)
            #expect(badHeader.error?.code == .invalidArgument)
            #expect(badHeader.error?.field == "method")
            try await expectAlive(endpoint)
        }
    }

    @Test func unknownMethodAndVersion() async throws {
        try await withRunningService { endpoint, _, _ in
            let unknown = try await send(json(#"{"v":1,"id":"a","method":"test.nope","body":{}}"#), to: endpoint)
            #expect(unknown.error?.code == .notFound)
            #expect(unknown.error?.message.contains("test.nope") == true)

            let version = try await send(json(#"{"v":2,"id":"b","method":"$srv.ping"}"#), to: endpoint)
            #expect(version.id == "b")
            #expect(version.error?.code == .invalidArgument)
            #expect(version.error?.field == "v")

            let reserved = try await send(json(#"{"v":1,"id":"c","method":"$srv.nope"}"#), to: endpoint)
            #expect(reserved.error?.code == .notFound)
            try await expectAlive(endpoint)
        }
    }

    /// `$srv.ping` is answered on the socket's thread from the frame's bytes when the frame
    /// is plain; every other ping is decoded. Both must answer exactly as the dispatcher does.
    @Test func pingsAnsweredOnTheSocketThreadReadLikeAnyRequest() async throws {
        try await withRunningService { endpoint, _, _ in
            let plain = try await send(
                json(#"{"v":1,"id":"p1","method":"$srv.ping","deadlineMs":1500,"body":{"x":[1,2.5,"é"]}}"#), to: endpoint)
            #expect(plain.id == "p1")
            #expect(plain.ok)
            #expect(plain.result?["service"]?.stringValue == "test")
            #expect(plain.result?["uptimeMs"]?.intValue != nil)

            let escaped = try await send(json(#"{"v":1,"id":"p\"2","method":"$srv.ping"}"#), to: endpoint)
            #expect(escaped.id == "p\"2")
            #expect(escaped.ok)

            let late = try await send(json(#"{"v":1,"id":"p3","method":"$srv.ping","deadlineMs":0}"#), to: endpoint)
            #expect(late.id == "p3")
            #expect(late.error?.code == .deadlineExceeded)

            let trailing = try await send(json(#"{"v":1,"id":"p4","method":"$srv.ping"} x"#), to: endpoint)
            #expect(trailing.id == "p4")
            #expect(trailing.error?.code == .invalidArgument)

            let version = try await send(json(#"{"v":1.0,"id":"p5","method":"$srv.ping"}"#), to: endpoint)
            #expect(version.error?.field == "v")

            let token = try await send(json(#"{"v":1,"id":"p6","method":"$srv.ping","token":5}"#), to: endpoint)
            #expect(token.error?.code == .invalidArgument)
            #expect(token.error?.field == "token")

            let noId = try await send(json(#"{"v":1,"method":"$srv.ping"}"#), to: endpoint)
            #expect(noId.error?.code == .invalidArgument)
            try await expectAlive(endpoint)
        }
    }

    @Test func oversizedFramesNeverHurt() async throws {
        try await withRunningService { endpoint, _, _ in
            // Over the route's limit but under the socket's: a clear invalid_argument.
            let big = String(repeating: "x", count: 300 * 1024)
            let reply = try await send(
                json(#"{"v":1,"id":"big","method":"test.echo","body":{"text":"\#(big)"}}"#), to: endpoint)
            #expect(reply.error?.code == .invalidArgument)
            #expect(reply.error?.message.contains("bytes") == true)

            // Over the socket's hard limit (ZMQ_MAXMSGSIZE): libzmq drops the connection.
            let huge = Data(repeating: 0x41, count: 2 * 1024 * 1024)
            let replies = try await rawExchange(endpoint: endpoint, messages: [[Data(), huge]], expect: 1, timeoutMs: 500)
            #expect(replies.isEmpty)
            try await expectAlive(endpoint)
        }
    }

    @Test func malformedEnvelopesAreDropped() async throws {
        try await withRunningService { endpoint, _, _ in
            // Four frames, a non-empty delimiter: neither REQ nor DEALER style.
            let odd: [[Data]] = [
                [Data("a".utf8), Data("b".utf8), Data("c".utf8)],
                [Data(), Data(), Data(), json("{}")],
            ]
            let replies = try await rawExchange(endpoint: endpoint, messages: odd, expect: 1, timeoutMs: 300)
            #expect(replies.isEmpty)
            try await expectAlive(endpoint)
        }
    }

    @Test func aPlainREQSocketWorks() async throws {
        try await withRunningService { endpoint, _, _ in
            let requests = (0..<3).map { i in
                [json(#"{"v":1,"id":"q\#(i)","method":"test.echo","body":{"text":"hello \#(i)"}}"#)]
            }
            let replies = try await rawExchange(.req, endpoint: endpoint, messages: requests, expect: 3)
            #expect(replies.count == 3)
            for (i, frames) in replies.enumerated() {
                #expect(frames.count == 1, "REQ strips the delimiter")
                let reply = try decodeReply(frames)
                #expect(reply.ok)
                #expect(reply.id == "q\(i)")
                #expect(reply.result?["text"]?.stringValue == "hello \(i)")
            }
        }
    }

    @Test func dealerWithoutDelimiterWorks() async throws {
        try await withRunningService { endpoint, _, _ in
            let replies = try await rawExchange(
                endpoint: endpoint, messages: [[json(#"{"v":1,"id":"d","method":"$srv.ping"}"#)]], expect: 1)
            #expect(replies.count == 1 && replies[0].count == 1)
            #expect(try decodeReply(replies[0]).ok)
        }
    }

    @Test func authRequiredMethodsRefuseMissingOrBadTokens() async throws {
        try await withRunningService { endpoint, _, _ in
            let client = try ServiceClient(service: "test", endpoint: endpoint)
            let none = try await client.reply("test.whoami")
            #expect(none.error?.code == .unauthenticated)
            let bad = try await client.reply("test.whoami", options: CallOptions(token: "bad"))
            #expect(bad.error?.code == .unauthenticated)
            let good = try await client.call("test.whoami", Empty(), as: Principal.self, options: CallOptions(token: "good-u1"))
            #expect(good.userId == "u1")
        }
    }

    @Test func thousandConcurrentRequestsFromSeveralClients() async throws {
        try await withRunningService { endpoint, _, _ in
            let clients = try (0..<5).map { _ in try ServiceClient(service: "test", endpoint: endpoint) }
            let answered = try await withThrowingTaskGroup(of: Bool.self) { group in
                for i in 0..<1000 {
                    let client = clients[i % clients.count]
                    group.addTask {
                        let body = EchoBody(text: "n\(i)", count: i)
                        let echoed = try await client.call(
                            "test.echo", body, as: EchoBody.self, options: CallOptions(timeout: .seconds(20)))
                        return echoed == body
                    }
                }
                var count = 0
                for try await ok in group where ok { count += 1 }
                return count
            }
            #expect(answered == 1000)
            let stats = try await clients[0].call("$srv.stats", Empty(), as: StatsSnapshot.self)
            #expect(stats.methods["test.echo"]?.requests == 1000)
            #expect(stats.methods["test.echo"]?.errors == 0)
        }
    }

    @Test func infoListsMethodsAndStatsCountErrors() async throws {
        try await withRunningService { endpoint, _, _ in
            let client = try ServiceClient(service: "test", endpoint: endpoint)
            let info = try await client.call("$srv.info", Empty(), as: Info.self)
            #expect(info.name == "test")
            #expect(info.endpoint == endpoint)
            #expect(info.methods.map(\.name).contains("test.note.add"))
            #expect(info.methods.first { $0.name == "test.note.add" }?.kind == .write)
            _ = try await client.reply("nope.nope")
            let stats = try await client.call("$srv.stats", Empty(), as: StatsSnapshot.self)
            #expect(stats.errors >= 1)
            #expect(stats.lastError?.code == .notFound)
            #expect(stats.methods["(unknown)"]?.errors == 1)
        }
    }
}

@Suite struct NumberFieldTests {
    struct Nested: Codable, Sendable { var count: Int }
    struct Body: Codable, Sendable { var name: String; var items: [Nested] }

    @Test func aFractionInAnIntegerFieldNamesTheField() async throws {
        var router = Router()
        router.read("t.nested", access: .public) { (body: Body, _) in body.items.count }
        let transport = InProcessTransport(
            Dispatcher(descriptor: ServiceDescriptor(name: "t"), router: router, sessions: nil, logger: .init(label: "t")))
        let reply = try await transport.reply("t.nested", body: try JSONValue.parse(#"{"name":"x","items":[{"count":1},{"count":2.5}]}"#))
        #expect(reply.error?.code == .invalidArgument)
        #expect(reply.error?.field == "items[1].count")
        #expect(reply.error?.message == "items[1].count: must be a whole number (got 2.5)")
    }
}
