// Where a request's handler runs (Shared/Runtime/Server.swift): a small request that finds
// the server idle runs on the server's socket thread, the pump being its task executor; a
// large one runs on the pool; a handler suspended on the socket thread does not hold up the
// socket, and a request arriving meanwhile runs on the pool.
import Foundation
import Logging
import Runtime
import Synchronization
import Testing
import Wire

@Suite struct SocketThreadTests {
    /// The OS name of the thread running the caller ("zmq.<service>" for a socket's thread).
    static func threadName() -> String {
        ((try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? "")
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// One-shot signals between the test and a handler.
    final class Gates: Sendable {
        let entered: AsyncStream<Void>
        let enter: AsyncStream<Void>.Continuation
        let release: AsyncStream<Void>
        let open: AsyncStream<Void>.Continuation

        init() {
            (entered, enter) = AsyncStream.makeStream(of: Void.self)
            (release, open) = AsyncStream.makeStream(of: Void.self)
        }
    }

    func withServer(
        _ gates: Gates, _ body: @Sendable (_ endpoint: String) async throws -> Void
    ) async throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        var router = Router()
        router.read("threads.name", access: .public) { (_: Empty, _) -> String in Self.threadName() }
        router.read("threads.large", access: .public, maxBytes: 1024 * 1024) { (_: Large, _) -> String in
            Self.threadName()
        }
        router.read("threads.hold", access: .public) { (_: Empty, _) -> [String] in
            let before = Self.threadName()
            gates.enter.yield()
            for await _ in gates.release { break }
            return [before, Self.threadName()]
        }
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        let dispatcher = Dispatcher(
            descriptor: ServiceDescriptor(name: "threads"), router: router, sessions: nil, logger: logger)
        let endpoint = "ipc://\(scratch.path)/threads.sock"
        let server = ServiceServer(dispatcher: dispatcher, settings: ServerSettings(endpoint: endpoint), logger: logger)
        let task = Task { try await server.run() }
        defer { task.cancel() }
        for _ in 0..<200 where server.endpoint == nil { try await Task.sleep(for: .milliseconds(10)) }
        try await body(endpoint)
    }

    @Test func aRequestToAnIdleServerRunsOnItsSocketThread() async throws {
        try await withServer(Gates()) { endpoint in
            let client = try ServiceClient(service: "threads", endpoint: endpoint)
            defer { client.close() }
            for _ in 0..<5 {
                let name = try await client.call(
                    "threads.name", Empty(), as: String.self, options: CallOptions(timeout: .seconds(5)))
                #expect(name == "zmq.threads")
            }
        }
    }

    struct Large: Codable, Sendable { var text: String }

    /// A frame that costs milliseconds to decode (a photo, a shard import) runs on the pool,
    /// even at an idle server, so the socket keeps reading meanwhile.
    @Test func aLargeRequestRunsOnThePool() async throws {
        try await withServer(Gates()) { endpoint in
            let client = try ServiceClient(service: "threads", endpoint: endpoint)
            defer { client.close() }
            let options = CallOptions(timeout: .seconds(5))
            let small = Large(text: String(repeating: "x", count: 1000))
            let large = Large(text: String(repeating: "x", count: 100 * 1024))
            #expect(try await client.call("threads.large", small, as: String.self, options: options) == "zmq.threads")
            let name = try await client.call("threads.large", large, as: String.self, options: options)
            #expect(name != "zmq.threads" && !name.isEmpty, "\(name)")
        }
    }

    @Test func aHandlerSuspendedOnTheSocketThreadDoesNotHoldUpTheNext() async throws {
        let gates = Gates()
        try await withServer(gates) { endpoint in
            let holder = try ServiceClient(service: "threads", endpoint: endpoint)
            let other = try ServiceClient(service: "threads", endpoint: endpoint)
            defer {
                holder.close()
                other.close()
            }
            let held = Task {
                try await holder.call(
                    "threads.hold", Empty(), as: [String].self, options: CallOptions(timeout: .seconds(10)))
            }
            // The first request is in its handler, suspended, and has not answered.
            for await _ in gates.entered { break }
            // A second one is answered meanwhile, from the pool (the server is not idle).
            let clock = ContinuousClock()
            let start = clock.now
            let name = try await other.call(
                "threads.name", Empty(), as: String.self, options: CallOptions(timeout: .seconds(5)))
            #expect(clock.now - start < .seconds(2))
            #expect(name != "zmq.threads" && !name.isEmpty, "\(name)")
            // The first finishes where it started: on the socket's thread.
            gates.open.yield()
            let names = try await held.value
            #expect(names == ["zmq.threads", "zmq.threads"])
        }
    }
}
