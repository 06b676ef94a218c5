// SocketPump: one ZeroMQ socket owned by one dedicated OS thread for its whole life,
// bridged to Swift concurrency. Other threads hand it messages through a locked queue;
// received messages go out through a callback (usually an AsyncStream continuation).
// Blocking calls therefore never run on Swift's cooperative pool, and libzmq's
// one-thread-per-socket rule always holds.
//
// Waking the thread: it sleeps in zmq_poll on the socket and a wake-up descriptor (an
// eventfd on Linux, a pipe elsewhere). A sender writes to that descriptor only when the
// thread is parked in that poll and no wake-up is pending yet: while the thread is awake
// (reading a burst, sending replies) it takes the queue on its next turn anyway, so a
// reply handed over then costs no system call and no second wake-up. "Pending" must mean
// a write the thread has not read yet: the thread reads the descriptor first and only then
// says no wake-up is pending (see `drainWakePipe`).
//
// The thread is also a task executor: a sequential caller that runs under
// `withTaskExecutorPreference(pump)` sends from the socket's thread and is resumed there
// when its reply is read, with no hand-off to another thread either way. Such a caller can
// go further with `exchangeHere`: send on the socket and wait on it for the reply, right in
// its own task step, with no queue, continuation or second turn of the loop in between.
import CZMQ
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

public final class SocketPump: Sendable {
    /// How the pump creates (and, on `reconnect`, re-creates) its socket, on its own thread.
    public typealias Setup = @Sendable () throws -> Socket

    public enum Event: Sendable {
        /// A whole multipart message arrived.
        case message([Data])
        /// A message given with a tag was accepted by libzmq (queued to a connected peer).
        case delivered(tag: String)
        /// A message could not be sent and was dropped (peer gone, expired in the backlog).
        case dropped(tag: String?, reason: String)
        /// The socket could not be (re)created; the pump makes it again on a timer (0.1 s, doubling to 2 s).
        case failed(String)
    }

    private enum Command {
        case send(frames: [Data], tag: String?, expires: ContinuousClock.Instant?)
        case reconnect
        case stop
    }

    private struct Queue {
        var commands: [Command] = []
        /// Tasks to run on this thread (the pump as their executor).
        var jobs: [UnownedJob] = []
        var stopped = false
        /// The thread has ended: jobs go to the global executor.
        var ended = false
        var hasWork: Bool { !commands.isEmpty || !jobs.isEmpty }
    }

    private let queue = Mutex(Queue())
    /// What only the socket's thread touches: its socket and whether messages wait in its
    /// backlog, published by the loop for `exchangeHere`.
    private let here = ThreadConfined()
    private let wakeRead: Int32
    private let wakeWrite: Int32
    /// The thread is in (or about to enter) its blocking poll: a sender must wake it.
    private let parked = Atomic<Bool>(false)
    /// A wake-up was written and not yet consumed: further senders need not write.
    private let signalled = Atomic<Bool>(false)
    private let betweenDrainSteps: (@Sendable () -> Void)?
    private let finished = DispatchSemaphore(value: 0)
    /// The socket thread's pthread id, so `stop()` called from a job on it does not wait
    /// for itself.
    private let owner = Atomic<UInt>(0)
    public let name: String

    /// Answers a message on the socket's own thread, or returns nil to hand it to `onEvent`.
    /// For answers that cost less than a hand-off to another thread (`$srv.ping`).
    public typealias Responder = @Sendable (_ frames: [Data]) -> [Data]?

    /// Creates the socket and starts its thread, which takes the socket over. Throws if the
    /// first setup fails (e.g. the endpoint cannot be bound), so a service learns at
    /// start-up, not later. The first socket is made on the caller's thread and handed to
    /// the new one (libzmq lets a socket move between threads across a full memory barrier,
    /// which starting a thread is): the caller does not wait for the thread to start, and
    /// a request sent meanwhile waits in the queue, which the thread reads before it first
    /// sleeps. Later sockets (after a reconnect) are made on the socket's thread.
    public convenience init(
        name: String, setup: @escaping Setup, respond: Responder? = nil, onEvent: @escaping @Sendable (Event) -> Void
    ) throws {
        try self.init(name: name, setup: setup, respond: respond, onEvent: onEvent, betweenDrainSteps: nil)
    }

    /// - Parameter betweenDrainSteps: for tests only: runs on the socket's thread between
    ///   reading the wake-up descriptor and clearing `signalled`, where a sender that saw the
    ///   thread parked a moment earlier can still be signalling.
    init(
        name: String, setup: @escaping Setup, respond: Responder? = nil, onEvent: @escaping @Sendable (Event) -> Void,
        betweenDrainSteps: (@Sendable () -> Void)?
    ) throws {
        self.betweenDrainSteps = betweenDrainSteps
        #if os(Linux)
            let fd = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
            guard fd >= 0 else { throw ZMQError(errno: errno, operation: "eventfd") }
            wakeRead = fd
            wakeWrite = fd
        #else
            var fds: [Int32] = [0, 0]
            guard pipe(&fds) == 0 else { throw ZMQError(errno: errno, operation: "pipe") }
            _ = fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK)
            _ = fcntl(fds[1], F_SETFL, fcntl(fds[1], F_GETFL) | O_NONBLOCK)
            _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
            _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
            wakeRead = fds[0]
            wakeWrite = fds[1]
        #endif
        self.name = name
        let first: Handover
        do {
            first = Handover(try setup())
        } catch {
            // (the wake-up descriptor is closed by deinit, as self is complete here)
            throw PumpSetupError(message: "\(error)")
        }
        let thread = Thread { [self] in
            // Named from inside, and through the OS as well as Foundation: a new thread
            // starts with its creator's name, Foundation does not pass on a name set before
            // `start()`, and its setter called here did not always reach the OS thread (now
            // and then a pump kept its creator's name in top, perf and gdb, and failed
            // Tests/RuntimeTests/SocketThreadTests.swift: 2 runs in 10 of that suite).
            // Linux takes at most 15 bytes.
            let threadName = String(decoding: "zmq.\(name)".utf8.prefix(15), as: UTF8.self)
            Thread.current.name = threadName
            #if os(Linux)
                _ = logbook_name_this_thread(threadName)
            #endif
            self.loop(first: first.take(), setup: setup, respond: respond, onEvent: onEvent)
        }
        thread.start()
    }

    /// The first socket on its way from the thread that made it to the socket's thread,
    /// which takes it (and alone uses it from then on): nothing else keeps it, so a socket
    /// replaced after a timeout is closed when the thread lets it go.
    private final class Handover: @unchecked Sendable {
        private var socket: Socket?
        init(_ socket: Socket) { self.socket = socket }
        func take() -> Socket? {
            defer { socket = nil }
            return socket
        }
    }

    deinit {
        close(wakeRead)
        if wakeWrite != wakeRead { close(wakeWrite) }
    }

    /// Queues a message for the socket's thread. `expires` bounds how long a message that
    /// cannot be sent yet (no peer connected, high-water mark) waits in the backlog.
    public func send(_ frames: [Data], tag: String? = nil, expires: ContinuousClock.Instant? = nil) {
        enqueue(.send(frames: frames, tag: tag, expires: expires))
    }

    /// Closes the socket and opens a fresh one (the Lazy Pirate pattern's remedy for a
    /// peer that stopped answering). Messages still in the backlog were never handed to
    /// libzmq: they wait for the new socket, within their expiry.
    public func reconnect() { enqueue(.reconnect) }

    /// Stops the thread and closes the socket; waits until it is done (except when called
    /// on the socket's own thread, by a task it runs: the thread stops after that job).
    /// Idempotent.
    public func stop() {
        let first = queue.withLock { state -> Bool in
            if state.stopped { return false }
            state.stopped = true
            state.commands.append(.stop)
            return true
        }
        guard first else { return }
        if isCurrentThread { return }
        wake(force: true)
        finished.wait()
    }

    /// True when called on the socket's own thread (by a task the pump runs, or its callbacks).
    public var isCurrentThread: Bool { owner.load(ordering: .acquiring) == Self.currentThread }

    private static var currentThread: UInt {
        #if canImport(Darwin)
            UInt(bitPattern: pthread_self())
        #else
            UInt(pthread_self())
        #endif
    }

    private func enqueue(_ command: Command) {
        let accepted = queue.withLock { state -> Bool in
            guard !state.stopped else { return false }
            state.commands.append(command)
            return true
        }
        if accepted { wake() }
    }

    /// Wakes the thread if it is parked in its poll (see the header). The queue was
    /// changed under its lock before this is called: a thread that announced parking
    /// after that change looks at the queue before it sleeps.
    private func wake(force: Bool = false) {
        guard force || parked.load(ordering: .sequentiallyConsistent) else { return }
        signal(force: force)
    }

    /// The second half of `wake`: what a sender does once it has seen the thread parked,
    /// possibly a moment before the thread woke up anyway (internal for the test that
    /// signals in exactly that window).
    func signal(force: Bool = false) {
        guard !signalled.exchange(true, ordering: .sequentiallyConsistent) || force else { return }
        #if os(Linux)
            var one: UInt64 = 1
            _ = write(wakeWrite, &one, 8)
        #else
            var byte: UInt8 = 1
            _ = write(wakeWrite, &byte, 1)  // EAGAIN means a wake-up is already pending: fine.
        #endif
    }

    /// Reads every pending wake-up, then says none is pending. In this order, a sender that
    /// signals in between finds `signalled` still set and does not write; its command is
    /// in the queue already, and the thread takes the queue after this. The other order
    /// (clear, then read) could swallow that sender's write while `signalled` stayed set:
    /// every later sender then skipped its write, and the parked thread slept through their
    /// commands until traffic on the socket woke it (a reply held until the client's
    /// timeout; `logbook-bench writes` at 64 in flight saw it under load).
    private func drainWakePipe() {
        var buffer = (UInt64(0), UInt64(0), UInt64(0), UInt64(0))
        while withUnsafeMutableBytes(of: &buffer, { read(wakeRead, $0.baseAddress, $0.count) }) > 0 {}
        betweenDrainSteps?()
        signalled.store(false, ordering: .sequentiallyConsistent)
    }

    private var hasWork: Bool { queue.withLock { $0.hasWork } }

    // MARK: The socket's thread

    private struct Pending {
        var frames: [Data]
        var tag: String?
        var expires: ContinuousClock.Instant?
    }

    private func loop(first: Socket?, setup: Setup, respond: Responder?, onEvent: @escaping @Sendable (Event) -> Void) {
        owner.store(Self.currentThread, ordering: .releasing)
        here.onEvent = onEvent
        here.answers = respond != nil
        defer {
            // Tasks still waiting for this thread carry on on the global executor.
            let left = queue.withLock { state -> [UnownedJob] in
                state.ended = true
                defer { state.jobs.removeAll() }
                return state.jobs
            }
            for job in left { globalConcurrentExecutor.enqueue(ExecutorJob(job)) }
            finished.signal()
        }
        var socket: Socket? = first
        defer { here.socket = nil }

        var backlog: [Pending] = []
        /// libzmq said the socket could take a message and the backlog still did not move
        /// (a ROUTER at its high-water mark reports writable): retry on the timer instead of
        /// waking at once again.
        var stalled = false
        let clock = ContinuousClock()
        /// When to make the socket again after its setup failed (a reconnect's, or the first).
        var setupRetry: (at: ContinuousClock.Instant, delay: Duration)?
        while true {
            guard let current = socket else {
                // Setup failed (no descriptor left, say): made again on a timer, 0.1 s doubling
                // to 2 s. Waiting for a command would wait forever: a request queued here is
                // never delivered, so its client never asks for a reconnect.
                let retry = setupRetry ?? (clock.now + .milliseconds(100), .milliseconds(100))
                setupRetry = retry
                parked.store(true, ordering: .sequentiallyConsistent)
                if !hasWork { _ = try? waitForWake(timeoutMs: 100) }
                parked.store(false, ordering: .sequentiallyConsistent)
                drainWakePipe()
                if processCommands(socket: &socket, backlog: &backlog, setup: setup, onEvent: onEvent) { return }
                if socket == nil, clock.now >= retry.at {
                    do {
                        socket = try setup()
                    } catch {
                        onEvent(.failed("\(error)"))
                        let delay = min(retry.delay * 2, .seconds(2))
                        setupRetry = (clock.now + delay, delay)
                    }
                }
                if socket != nil { setupRetry = nil }
                here.socket = nil
                runJobs()
                continue
            }
            // Announce parking, then look at the queue: a command queued before the
            // announcement (whose sender saw the thread awake and did not write) is taken
            // now instead of sleeping on it.
            parked.store(true, ordering: .sequentiallyConsistent)
            // A backlog (a DEALER's first request while its connection is being set up)
            // wakes the thread as soon as the socket can take it; the 5 ms timer only
            // expires messages and covers a stalled backlog.
            let timeout = hasWork ? 0 : backlog.isEmpty ? -1 : 5
            let readiness: (socket: Bool, fd: Bool, writable: Bool)
            do {
                readiness = try current.poll(
                    timeoutMs: timeout, alsoFD: wakeRead, writable: !backlog.isEmpty && !stalled)
            } catch {
                parked.store(false, ordering: .sequentiallyConsistent)
                onEvent(.failed("\(error)"))
                return
            }
            parked.store(false, ordering: .sequentiallyConsistent)
            if readiness.socket {
                // Read everything waiting, so one wake-up serves a burst.
                while let frames = try? current.receive(dontWait: true) {
                    if let respond, let reply = respond(frames) {
                        let item = Pending(frames: reply, tag: nil, expires: clock.now + .seconds(5))
                        if !backlog.isEmpty || !trySend(item, on: current, onEvent: onEvent) { backlog.append(item) }
                    } else {
                        onEvent(.message(frames))
                    }
                }
            }
            if readiness.fd { drainWakePipe() }
            if processCommands(socket: &socket, backlog: &backlog, setup: setup, onEvent: onEvent) { return }
            // Tasks resumed by the replies just read run now; what they send leaves at once.
            here.socket = socket
            here.backlogWaiting = !backlog.isEmpty
            if runJobs(), processCommands(socket: &socket, backlog: &backlog, setup: setup, onEvent: onEvent) {
                return
            }
            if !backlog.isEmpty, let current = socket {
                let now = clock.now
                let waiting = backlog.count
                backlog = backlog.compactMap { item in
                    if let expires = item.expires, expires < now {
                        onEvent(.dropped(tag: item.tag, reason: "expired before a peer could take it"))
                        return nil
                    }
                    return trySend(item, on: current, onEvent: onEvent) ? nil : item
                }
                stalled = readiness.writable && !backlog.isEmpty && backlog.count == waiting
            } else {
                stalled = false
            }
        }
    }

    /// The outcome of `exchangeHere`.
    public enum HereOutcome: Sendable {
        /// The message `isReply` accepted.
        case reply([Data])
        /// Sent, and no reply came before the deadline.
        case timedOut
    }

    /// Sends `frames` and waits for the reply on the socket, on the calling thread: for a
    /// caller that runs on the socket's own thread (a task under
    /// `withTaskExecutorPreference(pump)`), which makes one request at a time. Messages that
    /// are not the reply (`isReply` false) go to `onEvent` as usual. Returns nil when this
    /// cannot be done here — not on the socket's thread, no socket, messages waiting in the
    /// backlog (they leave first), commands not yet taken (a `reconnect` asked after a
    /// timeout must replace the socket before anything else is sent; other threads' sends
    /// keep their order), the pump stopping or answering messages itself (a server's), or
    /// libzmq not taking the message at once — and the caller then sends the usual way
    /// (`send`).
    ///
    /// While it waits, this thread does nothing else: commands from other threads and other
    /// tasks for this executor wait until the reply or the deadline. Only a caller that is
    /// the socket's one user runs on its thread (the clients' sequential callers), so there
    /// are none in practice; the wait is bounded by the caller's deadline either way.
    public func exchangeHere(
        _ frames: [Data], until deadline: ContinuousClock.Instant, isReply: ([Data]) -> Bool
    ) -> HereOutcome? {
        guard isCurrentThread, let socket = here.socket, !here.backlogWaiting, !here.answers,
            queue.withLock({ !$0.stopped && $0.commands.isEmpty }),
            (try? socket.send(frames, dontWait: true)) == true
        else { return nil }
        let clock = ContinuousClock()
        let onEvent = here.onEvent
        while true {
            let remaining = deadline - clock.now
            if remaining <= .zero { return .timedOut }
            let ms = remaining.components.seconds * 1000 + remaining.components.attoseconds / 1_000_000_000_000_000
            // Up to a millisecond more than asked, never less: a wait cut short would time
            // out a reply still on its way.
            // (An interrupted poll reads as nothing ready; a socket that cannot be polled at all
            // ends the wait as a timeout, whose remedy is a fresh socket, not a spin until the
            // deadline.)
            guard let readiness = try? socket.poll(timeoutMs: Int(ms) + 1) else { return .timedOut }
            guard readiness.socket else { continue }
            while let message = try? socket.receive(dontWait: true) {
                if isReply(message) { return .reply(message) }
                onEvent?(.message(message))
            }
        }
    }

    /// Runs the tasks queued for this thread; true when there were any.
    @discardableResult
    private func runJobs() -> Bool {
        let jobs = queue.withLock { state -> [UnownedJob] in
            defer { state.jobs.removeAll(keepingCapacity: true) }
            return state.jobs
        }
        for job in jobs { job.runSynchronously(on: asUnownedTaskExecutor()) }
        return !jobs.isEmpty
    }

    private func waitForWake(timeoutMs: Int32) throws {
        var pfd = pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)
        _ = poll(&pfd, 1, timeoutMs)
    }

    /// Runs queued commands; returns true when the pump must stop.
    private func processCommands(
        socket: inout Socket?, backlog: inout [Pending], setup: Setup, onEvent: @Sendable (Event) -> Void
    ) -> Bool {
        let commands = queue.withLock { state -> [Command] in
            defer { state.commands.removeAll(keepingCapacity: true) }
            return state.commands
        }
        for command in commands {
            switch command {
            case .stop:
                socket?.close()
                socket = nil
                return true
            case .reconnect:
                socket?.close()
                socket = nil
                do {
                    socket = try setup()
                } catch {
                    onEvent(.failed("\(error)"))
                }
            case .send(let frames, let tag, let expires):
                let item = Pending(frames: frames, tag: tag, expires: expires)
                if let current = socket, backlog.isEmpty, trySend(item, on: current, onEvent: onEvent) {
                    continue
                }
                backlog.append(item)
            }
        }
        return false
    }

    /// True when the message left the backlog (sent, or dropped for good).
    private func trySend(_ item: Pending, on socket: Socket, onEvent: @Sendable (Event) -> Void) -> Bool {
        do {
            guard try socket.send(item.frames, dontWait: true) else { return false }
            if let tag = item.tag { onEvent(.delivered(tag: tag)) }
            return true
        } catch {
            onEvent(.dropped(tag: item.tag, reason: "\(error)"))
            return true
        }
    }
}

extension SocketPump: TaskExecutor {
    /// Runs a task's next step on the socket's thread (see the header). Once the thread has
    /// ended, steps go to the global executor, so no task is ever stranded.
    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let accepted = queue.withLock { state -> Bool in
            guard !state.ended else { return false }
            state.jobs.append(job)
            return true
        }
        if accepted {
            wake()
        } else {
            globalConcurrentExecutor.enqueue(ExecutorJob(job))
        }
    }
}

/// State the socket's thread alone reads and writes (its loop, and `exchangeHere` called by
/// a task the loop runs), so it needs no lock.
private final class ThreadConfined: @unchecked Sendable {
    var socket: Socket?
    var backlogWaiting = false
    var onEvent: (@Sendable (SocketPump.Event) -> Void)?
    /// The pump answers some messages itself (a server's `respond`): it never exchanges here.
    var answers = false
}

public struct PumpSetupError: Error, CustomStringConvertible {
    public let message: String
    public var description: String { message }
}
