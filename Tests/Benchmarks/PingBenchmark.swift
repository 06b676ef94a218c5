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
    @Flag(
        help: """
            Also time the raw client against the runtime's server, in a third block: the server's \
            share of the overhead (the rest is the client's).
            """)
    var split = false

    func run() async throws {
        let (raw, samples) = try await measureBoth()
        let rawP50 = percentile(raw, 0.5), pingP50 = percentile(samples, 0.5)
        print(String(format: "overhead of the runtime at p50: %.1f µs (%.1fx the raw echo)", pingP50 - rawP50, pingP50 / rawP50))
    }

    /// The raw echo's round trips and `$srv.ping`'s, measured in alternating blocks so both
    /// see the same load on the machine (a shared machine's load moves more than the code).
    func measureBoth() async throws -> (raw: [Double], ping: [Double]) {
        let directory = "/tmp/lb-bench-\(ProcessInfo.processInfo.processIdentifier)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        func address(_ name: String, _ port: Int) -> String {
            transport == "tcp" ? "tcp://127.0.0.1:\(port)" : "ipc://\(directory)/\(name).sock"
        }

        print("logbook-bench ping: \(count) sequential round trips each, in alternating blocks of \(Self.block), libzmq \(Context.libraryVersion), \(ProcessInfo.processInfo.activeProcessorCount) cores")
        // Raw echo: a ROUTER thread that sends every message straight back.
        let echoEndpoint = address("echo", 47_901)
        let echo = RawEcho(endpoint: echoEndpoint)
        defer { echo.stop() }
        let raw = try RawClient(endpoint: echoEndpoint)
        defer { raw.close() }

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
        // The raw client against the runtime's server (`--split`): the server's share.
        let rawToServer = split ? try RawClient(endpoint: target) : nil
        defer { rawToServer?.close() }
        // One request at a time, as the raw loop does: the caller runs on the client's socket
        // thread (ServiceClient.executor); the raw loop's blocking calls run there too.
        let (rawSamples, samples, serverSamples) = try await withTaskExecutorPreference(client.executor) {
            for _ in 0..<warmup {
                try raw.roundTrip()
                try rawToServer?.roundTrip()
                _ = try await client.call("$srv.ping", Empty(), as: Ping.self)
            }
            var rawSamples: [Double] = [], samples: [Double] = [], serverSamples: [Double] = []
            rawSamples.reserveCapacity(count)
            samples.reserveCapacity(count)
            let clock = ContinuousClock()
            while samples.count < count {
                let n = min(Self.block, count - samples.count)
                for _ in 0..<n {
                    let start = clock.now
                    try raw.roundTrip()
                    rawSamples.append(micros(clock.now - start))
                }
                for _ in 0..<n {
                    let start = clock.now
                    _ = try await client.call("$srv.ping", Empty(), as: Ping.self)
                    samples.append(micros(clock.now - start))
                }
                for _ in 0..<n {
                    guard let rawToServer else { break }
                    let start = clock.now
                    try rawToServer.roundTrip()
                    serverSamples.append(micros(clock.now - start))
                }
            }
            return (rawSamples, samples, serverSamples)
        }
        report("raw DEALER/ROUTER echo", rawSamples)
        if split { report("raw DEALER to the runtime's server (its share)", serverSamples) }
        report("$srv.ping via runtime (\(endpoint == nil ? "in-process server" : target))", samples)
        client.close()
        if let group { await group.triggerGracefulShutdown() }
        _ = await task?.result
        return (rawSamples, samples)
    }

    /// Round trips per block before switching between the raw echo and the runtime.
    static let block = 250
}

/// A plain DEALER sending a ping-sized frame and waiting for it to come back.
final class RawClient {
    private let socket: Socket
    private let payload = [Data(), Data(#"{"v":1,"id":"0190a6b0-0000-7000-8000-000000000000","method":"$srv.ping"}"#.utf8)]

    init(endpoint: String) throws {
        socket = try Socket(.dealer)
        try socket.connect(endpoint)
    }

    func roundTrip() throws {
        _ = try socket.send(payload, dontWait: false)
        _ = try socket.receive(dontWait: false)
    }

    func close() { socket.close() }
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
