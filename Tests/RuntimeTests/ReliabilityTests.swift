// The client's promises: a service that is down is reported `unavailable` within the
// deadline; a write retried across a service restart is applied exactly once; one request
// that goes unanswered does not cost the other requests in flight their replies.
import Foundation
import GRDB
import Logging
import Runtime
import ServiceLifecycle
import Storage
import Testing
import Wire

/// Serves TestService from `directory` until `stop()`: a "process" that can be restarted
/// on the same database file and endpoint.
final class RestartableService: Sendable {
    let endpoint: String
    let host: ServiceHost
    private let group: ServiceGroup
    private let task: Task<Void, any Error>

    init(directory: String) async throws {
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        endpoint = "ipc://\(directory)/svc.sock"
        host = try ServiceHost(
            descriptor: ServiceDescriptor(name: "test"), database: DatabaseSettings(path: directory + "/svc.sqlite"),
            migrator: TestService.migrator, eventsEndpoint: nil, logger: logger)
        let dispatcher = host.dispatcher(router: TestService.router(host: host), sessions: FakeSessions())
        let group = ServiceGroup(services: host.services(dispatcher: dispatcher, endpoint: endpoint), logger: logger)
        self.group = group
        task = Task { try await group.run() }
        for _ in 0..<300 where !FileManager.default.fileExists(atPath: directory + "/svc.sock") {
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    func stop() async {
        await group.triggerGracefulShutdown()
        _ = await task.result
    }

    func noteCount() throws -> Int {
        try host.database.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM note") ?? -1 }
    }
}

@Suite struct ReliabilityTests {
    @Test func serviceDownIsUnavailableWithinTheDeadline() async throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let client = try ServiceClient(service: "test", endpoint: "ipc://\(scratch.path)/nobody.sock")
        let clock = ContinuousClock()
        let start = clock.now
        let error = await #expect(throws: ServiceError.self) {
            _ = try await client.call("$srv.ping", Empty(), as: Ping.self, options: CallOptions(timeout: .seconds(1)))
        }
        let elapsed = clock.now - start
        #expect(error?.code == .unavailable)
        #expect(error?.message.contains("not reachable") == true)
        // The point is "gives up at its deadline, not never"; the suite runs in parallel on
        // two cores, so the upper bound is loose.
        #expect(elapsed < .seconds(10), "gave up after \(elapsed)")
        #expect(elapsed >= .milliseconds(900), "waited the deadline, not less: \(elapsed)")
    }

    @Test func writeRetriedAcrossARestartIsAppliedOnce() async throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        // 1. The first instance commits a write whose reply is lost (the caller vanished).
        var first: RestartableService? = try await RestartableService(directory: scratch.path)
        let endpoint = first!.endpoint
        let request = #"{"v":1,"id":"w1","method":"test.note.add","idempotencyKey":"k-1","body":{"text":"once"}}"#
        let lost = try await rawExchange(endpoint: endpoint, messages: [[Data(), json(request)]], expect: 1)
        let firstResult = try decodeReply(lost[0]).result
        #expect(try first!.noteCount() == 1)
        await first!.stop()
        first = nil

        // 2. The client retries the same request while the service is down; it comes back
        //    mid-way through the client's deadline and answers from its idempotency log.
        let client = try ServiceClient(service: "test", endpoint: endpoint)
        async let retried = client.call(
            "test.note.add", NoteBody(text: "once"), as: NoteResult.self,
            options: CallOptions(idempotencyKey: "k-1", timeout: .seconds(6)))
        try await Task.sleep(for: .milliseconds(700))
        let second = try await RestartableService(directory: scratch.path)
        let result = try await retried
        #expect(result.id == firstResult?["id"]?.stringValue)
        #expect(try second.noteCount() == 1)

        // 3. The same key with a different body is refused, and writes nothing.
        let error = await #expect(throws: ServiceError.self) {
            _ = try await client.call(
                "test.note.add", NoteBody(text: "other"), as: NoteResult.self,
                options: CallOptions(idempotencyKey: "k-1"))
        }
        #expect(error?.code == .alreadyExists)
        #expect(try second.noteCount() == 1)
        await second.stop()
    }

    /// One request times out (its handler outlasts the deadline) while others are in flight
    /// and replies keep coming: the peer is alive, so the client resends on the same socket
    /// instead of replacing it, and a reply on its way to another request is not lost.
    @Test func anUnansweredRequestDoesNotCostTheOthersTheirReplies() async throws {
        try await withRunningService { endpoint, _, _ in
            let client = try ServiceClient(service: "test", endpoint: endpoint, settings: ClientSettings(attempts: 3))
            defer { client.close() }
            let quiet = ContinuousClock.now + .milliseconds(1500)
            async let unanswered: ErrorCode? = {
                // Each try waits 0.4 s; the handler takes 1.5 s.
                do {
                    _ = try await client.call(
                        "test.slow", EchoBody(text: "slow", count: 1500), as: EchoBody.self,
                        options: CallOptions(timeout: .milliseconds(1200)))
                    return nil
                } catch let error as ServiceError {
                    return error.code
                }
            }()
            async let other = { () async throws -> EchoBody in
                try await Task.sleep(for: .milliseconds(100))
                // In flight when the first try above times out (at 0.4 s): answered at 0.7 s.
                return try await client.call(
                    "test.slow", EchoBody(text: "other", count: 600), as: EchoBody.self,
                    options: CallOptions(timeout: .seconds(3)))
            }()
            var echoed = 0
            while ContinuousClock.now < quiet {
                _ = try await client.call("test.echo", EchoBody(text: "e\(echoed)"), as: EchoBody.self)
                echoed += 1
                try await Task.sleep(for: .milliseconds(20))
            }
            #expect(try await unanswered == .deadlineExceeded)
            #expect(try await other.text == "other")
            #expect(echoed > 10)
            #expect(client.reconnectCount == 0, "replaced its socket \(client.reconnectCount) times while the peer answered")
        }
    }

    /// The other side of the rule: a peer that took a request and then said nothing at all
    /// gets a fresh socket (the Lazy Pirate pattern), and the next request is answered.
    @Test func aSilentPeerGetsAFreshSocket() async throws {
        try await withRunningService { endpoint, _, _ in
            let client = try ServiceClient(service: "test", endpoint: endpoint, settings: ClientSettings(attempts: 2))
            defer { client.close() }
            let error = await #expect(throws: ServiceError.self) {
                _ = try await client.call(
                    "test.slow", EchoBody(text: "slow", count: 1500), as: EchoBody.self,
                    options: CallOptions(timeout: .milliseconds(800)))
            }
            #expect(error?.code == .deadlineExceeded)
            #expect(client.reconnectCount >= 1)
            #expect(try await client.call("test.echo", EchoBody(text: "after"), as: EchoBody.self).text == "after")
        }
    }

    @Test func aWriteThatArrivesWhileTheServiceIsDownIsAppliedOnceItStarts() async throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let client = try ServiceClient(service: "test", endpoint: "ipc://\(scratch.path)/svc.sock")
        async let written = client.call(
            "test.note.add", NoteBody(text: "late"), as: NoteResult.self,
            options: CallOptions(idempotencyKey: "late-1", timeout: .seconds(6)))
        try await Task.sleep(for: .milliseconds(500))
        let service = try await RestartableService(directory: scratch.path)
        _ = try await written
        #expect(try service.noteCount() == 1)
        await service.stop()
    }
}

@Suite struct ShutdownTests {
    /// A consumer waiting on a producer that is down must not hold SIGTERM for its timeout.
    @Test func aConsumerWaitingOnADeadProducerStopsPromptly() async throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        let client = try ServiceClient(service: "ghost", endpoint: "ipc://\(scratch.path)/ghost.sock")
        let cache = SessionCache(auth: client)
        let consumer = EventConsumer(
            settings: .init(
                producer: "ghost", eventsEndpoint: "ipc://\(scratch.path)/ghost.events.sock", rpcTimeout: .seconds(60)),
            producerRPC: client, sink: cache, logger: logger)
        let group = ServiceGroup(services: [consumer], logger: logger)
        let task = Task { try await group.run() }
        try await Task.sleep(for: .milliseconds(300))
        let clock = ContinuousClock()
        let start = clock.now
        await group.triggerGracefulShutdown()
        _ = await task.result
        let took = clock.now - start
        // The consumer's call to the producer may wait 60 s; stopping must not. The bound is
        // loose for a starved machine and still far from the 60 s a stall would take.
        #expect(took < .seconds(10), "shutdown took \(took)")
    }
}
