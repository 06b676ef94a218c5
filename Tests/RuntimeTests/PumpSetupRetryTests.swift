// A socket that could not be made again (a reconnect whose setup failed: no descriptor
// left, say) is made again on a timer: a message queued meanwhile is never delivered, so
// no client would ever ask for another reconnect (Shared/ZMQ/SocketPump.swift).
import Foundation
import Synchronization
import Testing

@testable import ZMQ

@Suite struct PumpSetupRetryTests {
    @Test func aFailedSetupIsTriedAgainWithoutAnotherCommand() throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let endpoint = "ipc://\(scratch.path)/echo.sock"
        let server = try SocketPump.echo(at: endpoint)
        defer { server.stop() }

        let echoes = DispatchSemaphore(value: 0)
        let failing = Atomic<Int>(0)  // setups still to fail
        let setups = Atomic<Int>(0)
        let failures = Atomic<Int>(0)
        let client = try SocketPump(
            name: "retry-test",
            setup: {
                setups.add(1, ordering: .relaxed)
                if failing.load(ordering: .acquiring) > 0 {
                    failing.subtract(1, ordering: .acquiringAndReleasing)
                    throw ZMQError(errno: EMFILE, operation: "zmq_socket")
                }
                return try SocketPump.dealer(endpoint)
            },
            onEvent: { event in
                switch event {
                case .message: echoes.signal()
                case .failed: failures.add(1, ordering: .relaxed)
                default: break
                }
            })
        defer { client.stop() }
        client.send([Data("hello".utf8)])
        try #require(echoes.wait(timeout: .now() + 5) == .success, "the echo peer never answered")

        // The reconnect's setup fails three times; then the message sent after it must
        // still arrive, with no command but the send.
        failing.store(3, ordering: .releasing)
        client.reconnect()
        client.send([Data("after".utf8)])
        #expect(echoes.wait(timeout: .now() + 10) == .success, "the socket was never made again")
        #expect(failures.load(ordering: .relaxed) == 3)
        #expect(setups.load(ordering: .relaxed) == 5)  // the first, three failed, the one that worked
    }
}
