// Waking a parked socket thread. A sender that saw the thread parked writes one wake-up and
// sets `signalled`; the thread reads the descriptor and clears the flag. If a sender
// signals between those two steps (it saw the thread parked a moment before the thread woke
// for another reason), its write must not be lost while the flag stays set: otherwise every
// later sender skips its write and the parked thread sleeps through their messages.
// `betweenDrainSteps` puts a signal exactly in that window, every time.
import Foundation
import Synchronization
import Testing

@testable import ZMQ

@Suite struct PumpWakeTests {
    /// The client's pump, for the hook that runs on its own thread.
    final class PumpBox: Sendable {
        let pump = Mutex<SocketPump?>(nil)
    }

    @Test func aSignalBetweenTheDrainStepsDoesNotSilenceLaterSenders() throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let endpoint = "ipc://\(scratch.path)/echo.sock"
        // The peer: a ROUTER that echoes on its own thread.
        let server = try SocketPump.echo(at: endpoint)
        defer { server.stop() }

        let echoes = DispatchSemaphore(value: 0)
        let box = PumpBox()
        let armed = Atomic<Bool>(false)
        let hookRuns = Atomic<Int>(0)
        let client = try SocketPump(
            name: "wake-test",
            setup: { try SocketPump.dealer(endpoint) },
            onEvent: { event in
                if case .message = event { echoes.signal() }
            },
            betweenDrainSteps: {
                // A late sender's signal, once per armed round.
                guard armed.exchange(false, ordering: .acquiringAndReleasing) else { return }
                hookRuns.add(1, ordering: .relaxed)
                box.pump.withLock { $0 }?.signal()
            })
        box.pump.withLock { $0 = client }
        defer { client.stop() }

        // Connected and answering before the rounds start.
        client.send([Data("hello".utf8)])
        try #require(echoes.wait(timeout: .now() + 5) == .success, "the echo peer never answered")

        for round in 0..<20 {
            // Let the thread park in its poll, so the next send wakes it through the
            // descriptor (and the drain, with its hook, runs).
            Thread.sleep(forTimeInterval: 0.02)
            armed.store(true, ordering: .releasing)
            client.send([Data("first \(round)".utf8)])
            try #require(echoes.wait(timeout: .now() + 2) == .success, "round \(round): the first message got no echo")
            // Parked again, with nothing on the socket to wake it: only the next sender's
            // wake-up can.
            Thread.sleep(forTimeInterval: 0.02)
            client.send([Data("second \(round)".utf8)])
            try #require(
                echoes.wait(timeout: .now() + 2) == .success,
                "round \(round): a send to the parked thread was not woken (a wake-up was lost)")
        }
        // The window was really exercised (a thread that was never parked would not drain).
        #expect(hookRuns.load(ordering: .relaxed) >= 15, "the drain's window was exercised \(hookRuns.load(ordering: .relaxed)) times")
    }
}

extension SocketPump {
    /// A ROUTER bound at `endpoint` that echoes every message back, on its own thread: the
    /// peer of the pump tests.
    static func echo(at endpoint: String) throws -> SocketPump {
        try SocketPump(
            name: "echo",
            setup: {
                let socket = try Socket(.router)
                try socket.set(.linger(milliseconds: 0))
                try socket.bind(endpoint)
                return socket
            },
            respond: { frames in frames },
            onEvent: { _ in })
    }

    /// A DEALER connected to `endpoint` (no linger).
    static func dealer(_ endpoint: String) throws -> Socket {
        let socket = try Socket(.dealer)
        try socket.set(.linger(milliseconds: 0))
        try socket.connect(endpoint)
        return socket
    }
}
