// Round-trip time of `$srv.ping` through the whole runtime (client → ROUTER → dispatcher
// → reply) beside a raw libzmq DEALER/ROUTER echo over the same transport, in one run.
import ArgumentParser
import Foundation
import Logging
import Runtime
import ServiceLifecycle
import Wire
import ZMQ

struct PingBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ping", abstract: "$srv.ping round trip vs a raw DEALER/ROUTER echo.")

    @Option(help: "Round trips per measurement.") var count = 20_000
    @Option(help: "Warm-up round trips before each measurement.") var warmup = 1_000
    @Option(help: "Ping this running service instead of one started by the benchmark.") var endpoint: String?
    @Option(help: "Transport for the services the benchmark starts: ipc or tcp.") var transport = "ipc"

    func run() async throws {
        let (raw, samples) = try await measureBoth()
        let rawP50 = percentile(raw, 0.5), pingP50 = percentile(samples, 0.5)
        print(String(format: "overhead of the runtime at p50: %.1f µs (%.1fx the raw echo)", pingP50 - rawP50, pingP50 / rawP50))
    }

    /// The raw echo's round trips, then `$srv.ping`'s, measured one after the other.
    func measureBoth() async throws -> (raw: [Double], ping: [Double]) {
        let directory = "/tmp/lb-bench-\(ProcessInfo.processInfo.processIdentifier)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        func address(_ name: String, _ port: Int) -> String {
            transport == "tcp" ? "tcp://127.0.0.1:\(port)" : "ipc://\(directory)/\(name).sock"
        }

        print("logbook-bench ping: \(count) sequential round trips, libzmq \(Context.libraryVersion), \(ProcessInfo.processInfo.activeProcessorCount) cores")
        // Raw echo: a ROUTER thread that sends every message straight back.
        let echoEndpoint = address("echo", 47_901)
        let echo = RawEcho(endpoint: echoEndpoint)
        let raw = try measureRaw(endpoint: echoEndpoint)
        echo.stop()
        report("raw DEALER/ROUTER echo", raw)

        // $srv.ping through the runtime.
        var logger = Logger(label: "bench")
        logger.logLevel = .error
        var group: ServiceGroup?
        var task: Task<Void, any Error>?
        let target: String
        if let endpoint {
            target = endpoint
        } else {
            target = address("ping", 47_902)
            let dispatcher = Dispatcher(
                descriptor: ServiceDescriptor(name: "bench"), router: Router(), sessions: nil, logger: logger)
            let server = ServiceServer(dispatcher: dispatcher, settings: ServerSettings(endpoint: target), logger: logger)
            let serviceGroup = ServiceGroup(services: [server], logger: logger)
            group = serviceGroup
            task = Task { try await serviceGroup.run() }
            try await Task.sleep(for: .milliseconds(200))
        }
        let client = try ServiceClient(service: "bench", endpoint: target)
        for _ in 0..<warmup { _ = try await client.call("$srv.ping", Empty(), as: Ping.self) }
        var samples: [Double] = []
        samples.reserveCapacity(count)
        let clock = ContinuousClock()
        for _ in 0..<count {
            let start = clock.now
            _ = try await client.call("$srv.ping", Empty(), as: Ping.self)
            samples.append(micros(clock.now - start))
        }
        report("$srv.ping via runtime (\(endpoint == nil ? "in-process server" : target))", samples)
        client.close()
        if let group { await group.triggerGracefulShutdown() }
        _ = await task?.result
        return (raw, samples)
    }

    func measureRaw(endpoint: String) throws -> [Double] {
        let socket = try Socket(.dealer)
        defer { socket.close() }
        try socket.connect(endpoint)
        let payload = [Data(), Data(#"{"v":1,"id":"0190a6b0-0000-7000-8000-000000000000","method":"$srv.ping"}"#.utf8)]
        for _ in 0..<warmup {
            _ = try socket.send(payload, dontWait: false)
            _ = try socket.receive(dontWait: false)
        }
        var samples: [Double] = []
        samples.reserveCapacity(count)
        let clock = ContinuousClock()
        for _ in 0..<count {
            let start = clock.now
            _ = try socket.send(payload, dontWait: false)
            _ = try socket.receive(dontWait: false)
            samples.append(micros(clock.now - start))
        }
        return samples
    }
}

/// A ROUTER on its own thread echoing every message back unchanged.
final class RawEcho: Sendable {
    private let pump: SocketPump

    init(endpoint: String) {
        let holder = PumpHolder()
        pump = try! SocketPump(
            name: "echo",
            setup: {
                let socket = try Socket(.router)
                try socket.bind(endpoint)
                return socket
            },
            onEvent: { event in
                if case .message(let frames) = event { holder.pump?.send(frames) }
            })
        holder.set(pump)
    }

    func stop() { pump.stop() }
}

final class PumpHolder: @unchecked Sendable {
    private let lock = NSLock()
    private var _pump: SocketPump?
    var pump: SocketPump? { lock.withLock { _pump } }
    func set(_ pump: SocketPump) { lock.withLock { _pump = pump } }
}

func micros(_ duration: Duration) -> Double {
    Double(duration.components.seconds) * 1e6 + Double(duration.components.attoseconds) / 1e12
}

func percentile(_ samples: [Double], _ p: Double) -> Double {
    let sorted = samples.sorted()
    guard !sorted.isEmpty else { return 0 }
    return sorted[min(sorted.count - 1, Int(Double(sorted.count - 1) * p))]
}

func report(_ name: String, _ samples: [Double]) {
    let mean = samples.reduce(0, +) / Double(max(1, samples.count))
    print(String(
        format: "%@: p50 %.1f µs  p99 %.1f µs  mean %.1f µs  (%.0f round trips/s)",
        name, percentile(samples, 0.5), percentile(samples, 0.99), mean, 1e6 / mean))
}
