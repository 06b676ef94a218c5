// The ZeroMQ face of a service: a ROUTER socket on its own thread (SocketPump) feeding a
// task group that runs the dispatcher. Accepts both DEALER-style [identity, payload] and
// REQ-style [identity, "", payload] envelopes and answers with the same envelope. On
// SIGTERM/SIGINT it stops taking requests, lets in-flight ones finish, then closes.
import Foundation
import Logging
import ServiceLifecycle
import Synchronization
import Wire
import ZMQ

public struct ServerSettings: Sendable {
    public var endpoint: String
    /// Requests handled at once; beyond this a request is answered `resource_exhausted`.
    public var maxInFlight: Int
    public var highWaterMark: Int32
    /// When set, the ROUTER is a CURVE server taking only clients on the allow-list.
    public var curve: CurveSettings?

    public init(endpoint: String, maxInFlight: Int = 4096, highWaterMark: Int32 = 10_000, curve: CurveSettings? = nil) {
        self.endpoint = endpoint
        self.maxInFlight = maxInFlight
        self.highWaterMark = highWaterMark
        self.curve = curve
    }
}

public final class ServiceServer: Service, Sendable {
    public let dispatcher: Dispatcher
    public let settings: ServerSettings
    let logger: Logger
    private let boundEndpoint = Mutex<String?>(nil)

    public init(dispatcher: Dispatcher, settings: ServerSettings, logger: Logger) {
        self.dispatcher = dispatcher
        self.settings = settings
        self.logger = logger
    }

    /// The endpoint actually bound (resolves `tcp://127.0.0.1:*`), once running.
    public var endpoint: String? { boundEndpoint.withLock { $0 } }

    public func run() async throws {
        // Ends when the socket fails for good or the service is asked to stop.
        let (stopped, stop) = AsyncStream.makeStream(of: Void.self)
        let endpoint = settings.endpoint
        // The hard frame limit: libzmq drops a larger frame's connection before we read it.
        // Twice the largest route limit, so a request somewhat over its limit (a photo too
        // big) still reaches the dispatcher, which answers with a clear error before parsing.
        let hardLimit = Int64(dispatcher.largestRequest) * 2 + 64 * 1024
        let hwm = settings.highWaterMark
        let logger = self.logger
        let dispatcher = self.dispatcher
        let curve = settings.curve
        let inFlight = Counter()
        let accepting = Switch()
        let maxInFlight = settings.maxInFlight
        try StackKeys.requireCurve(toBind: endpoint, curve: curve, name: dispatcher.descriptor.name)
        try Self.prepareIPC(endpoint)
        // Registered before the socket exists and cancelled after it is closed (defers run
        // in reverse), so no connection is ever made without the allow-list being asked.
        let zap = try curve?.registerServer(name: dispatcher.descriptor.name, logger: logger)
        defer { zap?.cancel() }
        let pumpHolder = PumpReference()
        let bound = Mutex<String?>(nil)
        let pump = try SocketPump(
            name: dispatcher.descriptor.name,
            setup: { [self] in
                let socket = try Socket(.router)
                if let curve, let zap { try curve.configureServer(socket, domain: zap.domain) }
                try socket.set(.routerMandatory(true))
                try socket.set(.maxMessageSize(hardLimit))
                try socket.set(.sendHighWaterMark(hwm))
                try socket.set(.receiveHighWaterMark(hwm))
                try socket.set(.linger(milliseconds: 100))
                try socket.bind(endpoint)
                // What libzmq bound: `tcp://127.0.0.1:*` becomes its real port.
                bound.withLock { $0 = socket.lastEndpoint.isEmpty ? endpoint : socket.lastEndpoint }
                return socket
            },
            respond: { frames in
                // `$srv.ping` is answered here, on the socket's thread: no hand-off at all.
                guard let (envelope, payload) = Self.split(frames), let reply = dispatcher.answerInline(payload) else {
                    return nil
                }
                return envelope + [reply]
            },
            onEvent: { event in
                switch event {
                case .message(let frames):
                    // Straight from the socket's thread to a task running the handler: one
                    // hand-off per request.
                    guard accepting.isOn else { return }
                    guard let (envelope, payload) = Self.split(frames) else {
                        logger.debug("malformed envelope dropped", metadata: ["zmq.frames": "\(frames.count)"])
                        return
                    }
                    let running = inFlight.increment()
                    if running > maxInFlight {
                        inFlight.decrement()
                        let busy = Dispatcher.encodeError(
                            id: Dispatcher.salvageId(payload),
                            ServiceError(.resourceExhausted, "\(dispatcher.descriptor.name) is at capacity; retry shortly"))
                        Task { await pumpHolder.wait().send(envelope + [busy], expires: .now + .seconds(5)) }
                        return
                    }
                    // A small request that finds the server idle runs on the socket's thread
                    // (the pump is a task executor): decoding, the hand-off to the commit
                    // queue, the resumption after it and the reply all happen here, with no
                    // wake-up of a pool thread either way. Blocking work never runs in a
                    // handler (it goes to queues of its own: the group commit, password
                    // hashing, image work, backups), so the thread is back in its poll at the
                    // handler's first suspension. A large frame (a photo, a shard import) costs
                    // milliseconds to decode and hash in the handler itself, and runs on the
                    // pool, as does any request while others are in flight: handlers then use
                    // both cores and the socket keeps reading.
                    let here = running == 1 && payload.count <= Self.socketThreadMaxBytes
                    Task(executorPreference: here ? pumpHolder.current : nil) {
                        let reply = await dispatcher.handle(payload)
                        await pumpHolder.wait().send(envelope + [reply], expires: .now + .seconds(5))
                        inFlight.decrement()
                    }
                case .dropped(_, let reason):
                    logger.debug("reply dropped", metadata: ["zmq.reason": "\(reason)"])
                case .failed(let reason):
                    logger.error("socket failed", metadata: ["zmq.reason": "\(reason)"])
                    stop.finish()
                case .delivered: break
                }
            })
        pumpHolder.set(pump)
        defer { pump.stop() }
        // Said only now, with the pump set: a request that finds the server idle runs on the
        // socket's thread only once the pump is known (before, it ran on the pool), and
        // whoever waits for `endpoint` (the tests) then sends into a server in its steady state.
        let listening = bound.withLock { $0 } ?? endpoint
        boundEndpoint.withLock { $0 = listening }
        dispatcher.setEndpoint(listening)
        logger.info(
            "listening",
            metadata: [
                "service.endpoint": "\(listening)", "service.name": "\(dispatcher.descriptor.name)",
                "service.curve": "\(curve == nil ? "off" : "on")",
            ])

        await withGracefulShutdownHandler {
            for await _ in stopped {}
        } onGracefulShutdown: {
            logger.info("shutting down: finishing requests in flight")
            stop.finish()
        }
        // Stop taking requests; let the ones in flight finish and their replies leave.
        accepting.turnOff()
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(30)
        while inFlight.value > 0, clock.now < deadline {
            await Self.pause(.milliseconds(5))
        }
        // Give the last replies a moment to leave before the socket closes.
        await Self.pause(.milliseconds(50))
        logger.info("stopped")
    }

    /// The largest request that may run on the socket's thread (see `run`).
    static let socketThreadMaxBytes = 64 * 1024

    /// Waits even in a cancelled task. The drain above must let the handlers in flight
    /// finish; `Task.sleep` in a cancelled task returns at once, and the loop would hold a
    /// thread of the pool those handlers need (with two cores, two servers draining this way
    /// held the whole pool until the deadline).
    static func pause(_ duration: Duration) async {
        await Task.detached { try? await Task.sleep(for: duration) }.value
    }

    /// [identity, payload] or [identity, "", payload] → (envelope to echo, payload).
    static func split(_ frames: [Data]) -> ([Data], Data)? {
        switch frames.count {
        case 2: return ([frames[0]], frames[1])
        case 3 where frames[1].isEmpty: return ([frames[0], frames[1]], frames[2])
        default: return nil
        }
    }

    /// For `ipc://` endpoints: make the directory (owner-only) and remove a stale socket
    /// file left by a crashed process, so a restart can bind again.
    static func prepareIPC(_ endpoint: String) throws {
        guard endpoint.hasPrefix("ipc://") else { return }
        let path = String(endpoint.dropFirst("ipc://".count))
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
        try FileManager.default.createDirectory(
            atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        if FileManager.default.fileExists(atPath: path) {
            try? FileManager.default.removeItem(atPath: path)
        }
    }
}

final class Counter: Sendable {
    private let count = Atomic<Int>(0)
    func increment() -> Int { count.add(1, ordering: .relaxed).newValue }
    func decrement() { count.subtract(1, ordering: .relaxed) }
    var value: Int { count.load(ordering: .relaxed) }
}

/// The pump, for its own callbacks (a request can arrive just before `SocketPump.init`
/// returns it).
final class PumpReference: Sendable {
    private let reference = Mutex<SocketPump?>(nil)
    func set(_ pump: SocketPump) { reference.withLock { $0 = pump } }

    /// The pump, or nil before `set`.
    var current: SocketPump? { reference.withLock { $0 } }

    func wait() async -> SocketPump {
        while true {
            if let pump = reference.withLock({ $0 }) { return pump }
            try? await Task.sleep(for: .milliseconds(1))
        }
    }
}

final class Switch: Sendable {
    private let on = Atomic<Bool>(true)
    var isOn: Bool { on.load(ordering: .acquiring) }
    func turnOff() { on.store(false, ordering: .releasing) }
}
