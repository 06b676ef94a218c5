// A thin Swift layer over libzmq's C API: a context, sockets, multipart frames, options.
// A `Socket` is not thread-safe (libzmq's rule), so it is not `Sendable`: it is created,
// used and closed on one thread. `SocketPump` is how the rest of the code reaches it.
import CZMQ
import Foundation

/// An error reported by libzmq, with its errno.
public struct ZMQError: Error, CustomStringConvertible, Sendable {
    public let errno: Int32
    public let operation: String

    public var description: String {
        "\(operation): \(String(cString: zmq_strerror(errno))) (errno \(errno))"
    }

    static func last(_ operation: String) -> ZMQError {
        ZMQError(errno: zmq_errno(), operation: operation)
    }

    public var isAgain: Bool { errno == EAGAIN }
}

/// One libzmq context per process is enough; sockets of every thread share it.
public final class Context: @unchecked Sendable {
    // libzmq contexts are thread-safe; the pointer itself never changes.
    let handle: UnsafeMutableRawPointer

    public static let shared = Context()

    public init() {
        handle = zmq_ctx_new()
    }

    /// Creates the shared context and starts its I/O thread now, on a thread of its own, so
    /// a short-lived process (the `logbook` CLI) has them ready by the time it makes its
    /// first socket: libzmq's set-up (OpenPGM's protocol lookups, two threads) then runs
    /// beside whatever the process does first instead of before its first request. Called
    /// once per process (the CLI calls it as a command starts); a process that exits before
    /// that thread is done waits for it (at exit), so it never exits while the thread is
    /// inside libzmq.
    public static func warmUp() {
        guard warmUpThread == nil else { return }
        var thread = pthread_t()
        guard pthread_create(&thread, nil, startContext, nil) == 0 else { return }
        warmUpThread = thread
        atexit(joinWarmUp)
    }

    /// libzmq's version as "major.minor.patch".
    public static var libraryVersion: String {
        var major: Int32 = 0, minor: Int32 = 0, patch: Int32 = 0
        zmq_version(&major, &minor, &patch)
        return "\(major).\(minor).\(patch)"
    }
}

/// `Context.warmUp`'s thread: set once, before `joinWarmUp` is registered to run at exit.
nonisolated(unsafe) private var warmUpThread: pthread_t?

/// `Context.warmUp`'s thread: the first socket of a context starts its I/O and reaper threads.
private func startContext(_: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
    _ = try? Socket(.dealer, context: .shared)
    return nil
}

private func joinWarmUp() {
    if let thread = warmUpThread { pthread_join(thread, nil) }
}

public enum SocketType: Sendable {
    case router, dealer, req, rep, pub, sub, push, pull, pair

    var raw: Int32 {
        switch self {
        case .router: ZMQ_ROUTER
        case .dealer: ZMQ_DEALER
        case .req: ZMQ_REQ
        case .rep: ZMQ_REP
        case .pub: ZMQ_PUB
        case .sub: ZMQ_SUB
        case .push: ZMQ_PUSH
        case .pull: ZMQ_PULL
        case .pair: ZMQ_PAIR
        }
    }
}

/// Socket options the project uses, by name.
public enum SocketOption: Sendable {
    case linger(milliseconds: Int32)
    case routerMandatory(Bool)
    case maxMessageSize(Int64)
    case sendHighWaterMark(Int32)
    case receiveHighWaterMark(Int32)
    case immediate(Bool)
    case subscribe(Data)
    case routingID(Data)
    case receiveTimeout(milliseconds: Int32)
    case sendTimeout(milliseconds: Int32)
    case reconnectInterval(milliseconds: Int32)
    /// CURVE, for when services speak across machines (keys are 32 raw bytes).
    case curveServer(Bool)
    case curvePublicKey(Data)
    case curveSecretKey(Data)
    case curveServerKey(Data)
    case zapDomain(String)
}

/// One libzmq socket. Use it from a single thread for its whole life.
public final class Socket {
    private var handle: UnsafeMutableRawPointer?
    public let type: SocketType

    public init(_ type: SocketType, context: Context = .shared) throws {
        guard let handle = zmq_socket(context.handle, type.raw) else {
            throw ZMQError.last("zmq_socket")
        }
        self.handle = handle
        self.type = type
        try set(.linger(milliseconds: 0))
    }

    deinit { close() }

    public func close() {
        if let handle {
            zmq_close(handle)
            self.handle = nil
        }
    }

    var raw: UnsafeMutableRawPointer {
        guard let handle else { preconditionFailure("socket used after close") }
        return handle
    }

    public func set(_ option: SocketOption) throws {
        switch option {
        case .linger(let ms): try setInt(ZMQ_LINGER, ms)
        case .routerMandatory(let on): try setInt(ZMQ_ROUTER_MANDATORY, on ? 1 : 0)
        case .maxMessageSize(let bytes): try setInt64(ZMQ_MAXMSGSIZE, bytes)
        case .sendHighWaterMark(let n): try setInt(ZMQ_SNDHWM, n)
        case .receiveHighWaterMark(let n): try setInt(ZMQ_RCVHWM, n)
        case .immediate(let on): try setInt(ZMQ_IMMEDIATE, on ? 1 : 0)
        case .subscribe(let prefix): try setBytes(ZMQ_SUBSCRIBE, prefix)
        case .routingID(let id): try setBytes(ZMQ_ROUTING_ID, id)
        case .receiveTimeout(let ms): try setInt(ZMQ_RCVTIMEO, ms)
        case .sendTimeout(let ms): try setInt(ZMQ_SNDTIMEO, ms)
        case .reconnectInterval(let ms): try setInt(ZMQ_RECONNECT_IVL, ms)
        case .curveServer(let on): try setInt(ZMQ_CURVE_SERVER, on ? 1 : 0)
        case .curvePublicKey(let key): try setBytes(ZMQ_CURVE_PUBLICKEY, key)
        case .curveSecretKey(let key): try setBytes(ZMQ_CURVE_SECRETKEY, key)
        case .curveServerKey(let key): try setBytes(ZMQ_CURVE_SERVERKEY, key)
        case .zapDomain(let domain): try setBytes(ZMQ_ZAP_DOMAIN, Data(domain.utf8))
        }
    }

    private func setInt(_ name: Int32, _ value: Int32) throws {
        var v = value
        guard zmq_setsockopt(raw, name, &v, MemoryLayout<Int32>.size) == 0 else {
            throw ZMQError.last("zmq_setsockopt(\(name))")
        }
    }

    private func setInt64(_ name: Int32, _ value: Int64) throws {
        var v = value
        guard zmq_setsockopt(raw, name, &v, MemoryLayout<Int64>.size) == 0 else {
            throw ZMQError.last("zmq_setsockopt(\(name))")
        }
    }

    private func setBytes(_ name: Int32, _ value: Data) throws {
        let rc = value.withUnsafeBytes { zmq_setsockopt(raw, name, $0.baseAddress, value.count) }
        guard rc == 0 else { throw ZMQError.last("zmq_setsockopt(\(name))") }
    }

    public func bind(_ endpoint: String) throws {
        guard zmq_bind(raw, endpoint) == 0 else { throw ZMQError.last("zmq_bind(\(endpoint))") }
    }

    public func connect(_ endpoint: String) throws {
        guard zmq_connect(raw, endpoint) == 0 else { throw ZMQError.last("zmq_connect(\(endpoint))") }
    }

    /// The endpoint actually bound (useful after binding `tcp://127.0.0.1:*`).
    public var lastEndpoint: String {
        var buffer = [CChar](repeating: 0, count: 512)
        var size = buffer.count
        guard zmq_getsockopt(raw, ZMQ_LAST_ENDPOINT, &buffer, &size) == 0 else { return "" }
        return String(decoding: buffer.prefix(while: { $0 != 0 }).map(UInt8.init(bitPattern:)), as: UTF8.self)
    }

    /// Sends all frames as one multipart message. Returns false when the send would block
    /// (`EAGAIN` with `dontWait`); throws on any other failure (e.g. `EHOSTUNREACH`).
    @discardableResult
    public func send(_ frames: [Data], dontWait: Bool = true) throws -> Bool {
        precondition(!frames.isEmpty, "a message has at least one frame")
        for (index, frame) in frames.enumerated() {
            var flags: Int32 = dontWait ? ZMQ_DONTWAIT : 0
            if index < frames.count - 1 { flags |= ZMQ_SNDMORE }
            let rc = frame.withUnsafeBytes { zmq_send(raw, $0.baseAddress, frame.count, flags) }
            if rc < 0 {
                let error = ZMQError.last("zmq_send")
                // Only the first frame can fail with EAGAIN: libzmq queues a whole message or none.
                if error.isAgain && index == 0 { return false }
                throw error
            }
        }
        return true
    }

    /// Receives one whole multipart message, or nil when none is waiting (`dontWait`).
    public func receive(dontWait: Bool = true) throws -> [Data]? {
        var frames: [Data] = []
        while true {
            var message = zmq_msg_t()
            zmq_msg_init(&message)
            defer { zmq_msg_close(&message) }
            let rc = zmq_msg_recv(&message, raw, dontWait ? ZMQ_DONTWAIT : 0)
            if rc < 0 {
                let error = ZMQError.last("zmq_msg_recv")
                if error.isAgain && frames.isEmpty { return nil }
                if error.errno == EINTR && frames.isEmpty { return nil }
                throw error
            }
            let size = zmq_msg_size(&message)
            if size > 0, let data = zmq_msg_data(&message) {
                frames.append(Data(bytes: data, count: size))
            } else {
                frames.append(Data())
            }
            if zmq_msg_more(&message) == 0 { return frames }
        }
    }

    /// Waits until this socket is readable (with `writable`, also until it can take a
    /// message) or `timeoutMs` passes (-1 waits forever); `fd`, when given, is a plain file
    /// descriptor polled alongside (a wake-up pipe). Returns (socket readable, fd readable,
    /// socket writable when asked).
    /// `writable` lets a sender holding a backlog sleep until the peer's connection is up
    /// instead of retrying on a timer.
    public func poll(timeoutMs: Int, alsoFD fd: Int32? = nil, writable: Bool = false) throws -> (
        socket: Bool, fd: Bool, writable: Bool
    ) {
        let socketEvents = Int16(ZMQ_POLLIN) | (writable ? Int16(ZMQ_POLLOUT) : 0)
        var items = [zmq_pollitem_t(socket: raw, fd: 0, events: socketEvents, revents: 0)]
        if let fd {
            items.append(zmq_pollitem_t(socket: nil, fd: fd, events: Int16(ZMQ_POLLIN), revents: 0))
        }
        let rc = zmq_poll(&items, Int32(items.count), timeoutMs)
        if rc < 0 {
            let error = ZMQError.last("zmq_poll")
            if error.errno == EINTR { return (false, false, false) }
            throw error
        }
        let socketReady = items[0].revents & Int16(ZMQ_POLLIN) != 0
        let fdReady = items.count > 1 && items[1].revents & Int16(ZMQ_POLLIN) != 0
        return (socketReady, fdReady, items[0].revents & Int16(ZMQ_POLLOUT) != 0)
    }
}
