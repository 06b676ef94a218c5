// Calling a service. `Transport` is the seam: `ServiceClient` speaks ZeroMQ (a DEALER on
// its own thread, the Lazy Pirate pattern: a deadline per request, bounded retries, a fresh
// socket after a timeout), `InProcessTransport` hands frames straight to a dispatcher.
// Retries resend the same request id and idempotency key, so a write is never doubled.
import Dispatch
import Foundation
import Logging
import Synchronization
import Wire
import ZMQ

public protocol Transport: Sendable {
    /// The service this transport reaches (used in error messages).
    var service: String { get }
    /// Sends one request frame and returns the reply frame, or throws a `ServiceError`
    /// (`unavailable`, `deadline_exceeded`) when no reply came in time.
    func exchange(_ frame: Data, id: String, timeout: Duration) async throws -> Data
    /// The stack key this transport presents on every request (members of the stack);
    /// nil for none.
    var stackKey: String? { get }
}

extension Transport {
    public var stackKey: String? { nil }
}

public struct CallOptions: Sendable {
    public var token: String?
    public var idempotencyKey: String?
    public var timeout: Duration
    /// The stack key to present; nil: the transport's own (`Transport.stackKey`).
    public var stackKey: String?

    public init(token: String? = nil, idempotencyKey: String? = nil, timeout: Duration = .seconds(5), stackKey: String? = nil) {
        self.token = token
        self.idempotencyKey = idempotencyKey
        self.timeout = timeout
        self.stackKey = stackKey
    }
}

extension Transport {
    /// Calls a method and returns its reply, successful or not (for `logbook call`).
    public func reply(_ method: String, body: JSONValue = [:], options: CallOptions = CallOptions()) async throws -> Reply {
        let data = try await send(method, body: body, options: options)
        do {
            return try WireCoding.decode(Reply.self, from: data)
        } catch {
            throw ServiceError(.internal, "\(service) sent a reply that is not protocol v1: \(WireCoding.describe(error))")
        }
    }

    /// Calls a method and returns the reply frame as it came, undecoded (for benchmarks
    /// that time the service apart from the caller's decoding of its answer).
    public func replyFrame<Body: Encodable & Sendable>(
        _ method: String, _ body: Body, options: CallOptions = CallOptions()
    ) async throws -> Data {
        try await send(method, body: body, options: options)
    }

    /// Calls a method; returns its result decoded, or throws the service's error. The
    /// result is decoded once, straight from the reply frame.
    public func call<Body: Encodable & Sendable, Result: Decodable>(
        _ method: String, _ body: Body, as: Result.Type = Result.self, options: CallOptions = CallOptions()
    ) async throws -> Result {
        try await call(method, body, options: options) { try WireCoding.decode(Result.self, from: $0) }
    }

    /// `call`, with a success's result read from its bytes by `read` (a reader made for one
    /// result, like `EventsSinceResult.read`); any other reply is read as `call` reads it.
    public func call<Body: Encodable & Sendable, Result: Decodable>(
        _ method: String, _ body: Body, options: CallOptions = CallOptions(), read: (Data) throws -> Result
    ) async throws -> Result {
        let data = try await send(method, body: body, options: options)
        // The common case: a success reply, whose envelope is read without parsing and whose
        // result is decoded alone, from its own bytes.
        if let raw = EnvelopeScan.successResult(data), let result = try? read(raw) {
            return result
        }
        // Otherwise one parse of the reply gives its status and its result.
        if let reply = try? WireCoding.decode(TypedReply<Result>.self, from: data) {
            if let error = reply.error { throw error }
            if reply.ok, let result = reply.result { return result }
        }
        // Something is off (an error, a null result, a result of another shape): parse in
        // steps to say exactly what.
        let status: ReplyStatus
        do {
            status = try WireCoding.decode(ReplyStatus.self, from: data)
        } catch {
            throw ServiceError(.internal, "\(service) sent a reply that is not protocol v1: \(WireCoding.describe(error))")
        }
        if let error = status.error { throw error }
        do {
            if let result = try WireCoding.decode(OptionalResult<Result>.self, from: data).result {
                return result
            }
            return try WireCoding.decoder.decode(Result.self, from: Data("null".utf8))  // a null result
        } catch {
            throw ServiceError(.internal, "\(service) answered \(method) with an unexpected result: \(WireCoding.describe(error))")
        }
    }

    /// Encodes the typed body straight into the frame: a detour through JSONValue would
    /// turn integers above 2^53 into doubles. Every request carries an idempotency key (a
    /// fresh one unless the caller gave its own): the client's retries resend the same frame,
    /// so a write whose first reply was lost is answered from the log, never applied twice.
    /// Read methods ignore the key. Returns the reply frame.
    private func send<Body: Encodable & Sendable>(_ method: String, body: Body, options: CallOptions) async throws -> Data {
        let id = ID.make()
        let ms = options.timeout.components.seconds * 1000 + options.timeout.components.attoseconds / 1_000_000_000_000_000
        let header = RequestHeader(
            id: id, method: method, token: options.token, idempotencyKey: options.idempotencyKey ?? id,
            deadlineMs: Int(ms), stackKey: options.stackKey ?? stackKey)
        let frame = try Self.encodeRequest(header, body: body)
        return try await exchange(frame, id: id, timeout: options.timeout)
    }

    /// Whole milliseconds of `duration`, at least 1.
    static func milliseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return max(1, seconds * 1000 + attoseconds / 1_000_000_000_000_000)
    }

    /// `frame` with its top-level `deadlineMs` set to `ms` (a frame without one, or one the
    /// scan cannot read plainly, is sent as it was).
    static func frame(_ frame: Data, deadlineMs ms: Int64) -> Data {
        let members = frame.withUnsafeBytes { EnvelopeScan.requestMembers($0.bindMemory(to: UInt8.self)) }
        guard members.plain, let range = members.deadlineMs else { return frame }
        var patched = frame
        let base = patched.startIndex
        patched.replaceSubrange((base + range.lowerBound)..<(base + range.upperBound), with: Data(String(ms).utf8))
        return patched
    }

    /// The request frame, written as encoding `OutgoingRequest` with the shared encoder
    /// writes it (members in key order), with only the body going through the encoder.
    static func encodeRequest<Body: Encodable>(_ header: RequestHeader, body: Body) throws -> Data {
        var frame: [UInt8] = []
        frame.reserveCapacity(384)
        frame.appendUTF8("{\"body\":")
        if Body.self == Empty.self {
            frame.appendUTF8("{}")
        } else {
            frame.append(try WireCoding.encode(body))
        }
        if let deadlineMs = header.deadlineMs { frame.appendUTF8(",\"deadlineMs\":\(deadlineMs)") }
        frame.appendUTF8(",\"id\":")
        frame.appendQuoted(header.id)
        if let key = header.idempotencyKey {
            frame.appendUTF8(",\"idempotencyKey\":")
            frame.appendQuoted(key)
        }
        frame.appendUTF8(",\"method\":")
        frame.appendQuoted(header.method)
        if let stackKey = header.stackKey {
            frame.appendUTF8(",\"stackKey\":")
            frame.appendQuoted(stackKey)
        }
        if let token = header.token {
            frame.appendUTF8(",\"token\":")
            frame.appendQuoted(token)
        }
        frame.appendUTF8(",\"v\":\(header.v)}")
        return Data(frame)
    }
}

/// A reply's outcome without its result (which the caller decodes as its own type).
private struct ReplyStatus: Decodable {
    var ok: Bool
    var error: ServiceError?
}

private struct OptionalResult<Result: Decodable>: Decodable {
    var result: Result?
}

private struct TypedReply<Result: Decodable>: Decodable {
    var ok: Bool
    var error: ServiceError?
    var result: Result?
}

/// Hands frames to a dispatcher in the same process: the service under test runs exactly
/// as it does behind ZeroMQ, minus the socket.
public struct InProcessTransport: Transport {
    public let dispatcher: Dispatcher
    public var service: String { dispatcher.descriptor.name }

    public init(_ dispatcher: Dispatcher) { self.dispatcher = dispatcher }

    public func exchange(_ frame: Data, id: String, timeout: Duration) async throws -> Data {
        await dispatcher.handle(frame)
    }
}

public struct ClientSettings: Sendable {
    /// Tries per request, each with an equal share of the request's timeout.
    public var attempts: Int
    public var maxMessageSize: Int64
    /// When set, the DEALER is a CURVE client with this host's pair, expecting the
    /// service's public key.
    public var curve: CurveSettings?
    /// Presented on every request: this process is a member of the stack.
    public var stackKey: String?

    public init(
        attempts: Int = 3, maxMessageSize: Int64 = 64 * 1024 * 1024, curve: CurveSettings? = nil, stackKey: String? = nil
    ) {
        self.attempts = max(1, attempts)
        self.maxMessageSize = maxMessageSize
        self.curve = curve
        self.stackKey = stackKey
    }

    /// A member's settings: the stack's CURVE settings and stack key.
    public init(configuration: StackConfiguration) {
        self.init(curve: configuration.curve, stackKey: configuration.stackKey)
    }
}

public final class ServiceClient: Transport, Sendable {
    public let service: String
    public let endpoint: String
    let settings: ClientSettings
    public var stackKey: String? { settings.stackKey }
    private let pump: SocketPump
    private let waiters: Waiters
    private let reconnects = Atomic<Int>(0)

    /// How many times this client replaced its socket because the peer fell silent.
    public var reconnectCount: Int { reconnects.load(ordering: .relaxed) }

    public init(service: String, endpoint: String, settings: ClientSettings = ClientSettings()) throws {
        self.service = service
        self.endpoint = endpoint
        self.settings = settings
        let waiters = Waiters()
        self.waiters = waiters
        let maxSize = settings.maxMessageSize
        let curve = settings.curve
        pump = try SocketPump(
            name: "client.\(service)",
            setup: {
                let socket = try Socket(.dealer)
                try curve?.configureClient(socket, service: service)
                // Queue only to completed connections: a request to a service that is down
                // stays ours (and is reported `unavailable`), it is not delivered late.
                try socket.set(.immediate(true))
                try socket.set(.linger(milliseconds: 0))
                try socket.set(.maxMessageSize(maxSize))
                try socket.set(.reconnectInterval(milliseconds: 50))
                try socket.connect(endpoint)
                return socket
            },
            onEvent: { event in
                switch event {
                case .message(let frames):
                    guard let payload = frames.last, let id = Self.replyId(payload) else { return }
                    waiters.resolve(id, with: .reply(payload))
                case .delivered(let tag):
                    waiters.markDelivered(tag)
                case .dropped, .failed:
                    break
                }
            })
    }

    deinit { pump.stop() }

    /// Starts ZeroMQ (`Context.warmUp`) beside whatever the process does before its first
    /// call; for a short-lived process, the `logbook` CLI.
    public static func warmUp() { ZMQ.Context.warmUp() }

    /// The client's socket thread as a task executor. A caller that makes one request at a
    /// time (the ping and single-write benchmarks do; the CLI and services do not yet) and runs
    /// under `withTaskExecutorPreference(executor)` sends and waits for its reply right on
    /// that thread (`SocketPump.exchangeHere`): no thread hand-off, continuation or queue.
    /// While it waits, the thread serves no one else, so a client shared by parallel callers
    /// must not be used this way.
    public var executor: SocketPump { pump }

    /// Closes the socket now (it is also closed when the client is released).
    public func close() { pump.stop() }

    public func exchange(_ frame: Data, id: String, timeout: Duration) async throws -> Data {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        let attempts = settings.attempts
        var everDelivered = false
        var frame = frame
        for attempt in 1...attempts {
            let remaining = deadline - clock.now
            if remaining <= .zero { break }
            // A retry tells the service the time the caller has left, not the whole of it
            // again: counted from its arrival, the first deadline would let the service
            // apply a write after the caller has given up (docs/protocol.md, `deadlineMs`).
            if attempt > 1 { frame = Self.frame(frame, deadlineMs: Self.milliseconds(remaining)) }
            let share = attempt == attempts ? remaining : min(remaining, timeout / attempts)
            let sent = clock.now
            let outcome: Waiters.Outcome
            // A caller on the socket's own thread sends and waits right there (see
            // `executor`); anyone else, or when that cannot be done, hands the request over.
            if let here = pump.exchangeHere([Data(), frame], until: sent + share, isReply: { Self.isReply($0, to: id) }) {
                switch here {
                case .reply(let frames):
                    waiters.heard()
                    outcome = .reply(frames[frames.count - 1])
                case .timedOut:
                    outcome = .timedOut(delivered: true)
                }
            } else {
                outcome = await waiters.wait(id: id, timeout: share) {
                    pump.send([Data(), frame], tag: id, expires: clock.now + share)
                }
            }
            switch outcome {
            case .reply(let data):
                return data
            case .timedOut(let delivered):
                try Task.checkCancellation()
                everDelivered = everDelivered || delivered
                // Lazy Pirate: a peer that took the request and has said nothing since gets a
                // fresh socket. A peer that answered other requests meanwhile is alive: the
                // request is sent again on the same socket, so the replies still on their
                // way to the other requests in flight are not thrown away with it. When
                // nothing was delivered, libzmq is still connecting by itself.
                if delivered, !waiters.heardFrom(since: sent) {
                    reconnects.add(1, ordering: .relaxed)
                    pump.reconnect()
                }
            }
        }
        let ms = Int(timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000)
        if everDelivered {
            throw ServiceError(.deadlineExceeded, "\(service) did not answer within \(ms) ms (\(attempts) tries)")
        }
        throw ServiceError(.unavailable, "\(service) is not reachable at \(endpoint) (waited \(ms) ms); is the stack running? try `logbook stack up`")
    }

    /// The reply's top-level `id`, read without parsing the whole reply (it is parsed
    /// once, by the caller that waits for it).
    static func replyId(_ payload: Data) -> String? {
        EnvelopeScan.id(payload)
    }

    /// Whether a message read from the socket is the reply to request `id`.
    static func isReply(_ frames: [Data], to id: String) -> Bool {
        guard let payload = frames.last else { return false }
        return replyId(payload) == id
    }
}

/// Requests waiting for their reply, by id. Whoever removes an entry resumes it: the reply,
/// or the timer. So each continuation is resumed exactly once. One timer serves all of a
/// client's requests: it is set for the earliest deadline and, when it fires, times out
/// whatever is due and sets itself for the next one.
final class Waiters: Sendable {
    enum Outcome: Sendable {
        case reply(Data)
        case timedOut(delivered: Bool)
    }

    private struct Entry {
        var continuation: CheckedContinuation<Outcome, Never>
        var delivered: Bool
        var deadline: ContinuousClock.Instant
    }

    private struct State {
        var entries: [String: Entry] = [:]
        /// When the last reply (to any request) arrived.
        var lastReply: ContinuousClock.Instant?
        /// The deadline the timer is set for; nil: not set.
        var armedFor: ContinuousClock.Instant?
    }

    private let state = Mutex(State())
    private let timer: TimerSource

    init() {
        timer = TimerSource()
        timer.start { [weak self] in self?.expire() }
    }

    deinit { timer.cancel() }

    /// Waits for the reply to `id`, at most `timeout`; a cancelled task stops waiting at once.
    func wait(id: String, timeout: Duration, send: () -> Void) async -> Outcome {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let deadline = ContinuousClock.now + timeout
                state.withLock { state in
                    state.entries[id] = Entry(continuation: continuation, delivered: false, deadline: deadline)
                    // Set under the lock, so two requests cannot leave it set for the later one.
                    if state.armedFor.map({ deadline < $0 }) ?? true {
                        state.armedFor = deadline
                        timer.schedule(after: timeout)
                    }
                }
                if Task.isCancelled {  // cancelled before the handler could see the entry
                    resolve(id, with: .timedOut(delivered: false))
                    return
                }
                send()
            }
        } onCancel: {
            resolve(id, with: .timedOut(delivered: false))
        }
    }

    func resolve(_ id: String, with outcome: Outcome) {
        let entry = state.withLock { state -> Entry? in
            if case .reply = outcome { state.lastReply = .now }
            return state.entries.removeValue(forKey: id)
        }
        entry?.continuation.resume(returning: outcome)
    }

    /// A reply was read by its caller itself (`SocketPump.exchangeHere`): the peer is alive.
    func heard() {
        state.withLock { $0.lastReply = .now }
    }

    /// True when a reply (to any request, even one no longer waited for) arrived at or after
    /// `instant`: the peer is alive.
    func heardFrom(since instant: ContinuousClock.Instant) -> Bool {
        state.withLock { $0.lastReply.map { $0 >= instant } ?? false }
    }

    func markDelivered(_ id: String) {
        state.withLock { $0.entries[id]?.delivered = true }
    }

    /// The timer fired: time out every request past its deadline, set the next one.
    private func expire() {
        let now = ContinuousClock.now
        let due = state.withLock { state -> [Entry] in
            var due: [Entry] = []
            var next: ContinuousClock.Instant?
            for (id, entry) in state.entries {
                if entry.deadline <= now {
                    due.append(entry)
                    state.entries[id] = nil
                } else if next.map({ entry.deadline < $0 }) ?? true {
                    next = entry.deadline
                }
            }
            state.armedFor = next
            if let next { timer.schedule(after: next - now) }
            return due
        }
        for entry in due { entry.continuation.resume(returning: .timedOut(delivered: entry.delivered)) }
    }
}

/// One dispatch timer, re-set with `schedule`. Dispatch sources may be set from any thread.
private final class TimerSource: @unchecked Sendable {
    private let source = DispatchSource.makeTimerSource(queue: DispatchQueue.global())

    func start(_ handler: @escaping @Sendable () -> Void) {
        source.setEventHandler(handler: handler)
        source.schedule(deadline: .distantFuture)
        source.resume()
    }

    func schedule(after delay: Duration) {
        let nanoseconds = max(0, delay.components.seconds * 1_000_000_000 + delay.components.attoseconds / 1_000_000_000)
        source.schedule(deadline: .now() + .nanoseconds(Int(nanoseconds)), leeway: .milliseconds(1))
    }

    func cancel() { source.cancel() }
}

/// One `ServiceClient` per service (or records instance), made on first use and reused: what
/// the CLI keeps for one command and the HTTP edge for its whole life.
public final class ServiceClients: Sendable {
    public let configuration: StackConfiguration
    private let clients = Mutex<[String: ServiceClient]>([:])

    public init(configuration: StackConfiguration) {
        self.configuration = configuration
    }

    public func client(_ service: String) throws -> ServiceClient {
        try clients.withLock { clients in
            if let client = clients[service] { return client }
            let client = try ServiceClient(
                service: service, endpoint: configuration.endpoint(service), settings: ClientSettings(configuration: configuration))
            clients[service] = client
            return client
        }
    }
}
