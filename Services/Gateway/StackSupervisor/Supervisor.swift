// The local stack's supervisor (`logbook stack supervise`, started detached by `stack up`).
// It holds a lock on data/supervisor.lock, with the data, so only one runs per set of
// databases whatever happens to run/; launches every installed service with the stack's
// environment and its output appended to logs/<service>.log; restarts a service that exits
// with exponential back-off (0.5 s doubling to 5 s, decaying while it stays up); pings
// every service and kills one that misses several pings in a row (hung, stopped), so it is
// restarted too. When run/ disappears it makes it again and restarts every service, whose
// sockets went with it. On SIGTERM/SIGINT it sends SIGTERM to every child, waits, SIGKILLs
// what is left after a grace period, and removes its pid and socket files.
//
// The main loop runs on one thread: a signal handler only sets a flag, children are reaped
// with waitpid(WNOHANG) every 100 ms. Pings run on a task of their own (HealthPings) and
// only report what they saw.
import Foundation
import Runtime
import Synchronization
import Wire

private let stopRequested = Atomic<Bool>(false)

public struct SupervisorSettings: Sendable {
    var initialBackoff = 0.5
    var maxBackoff = 5.0
    /// Each period of this long a child stayed up halves its back-off (down to `initialBackoff`).
    var stableAfter = 10.0
    /// How long children get to stop after SIGTERM before SIGKILL.
    var stopGrace = 10.0
    /// How often each service is pinged (`$srv.ping`), and how long an answer may take.
    var pingInterval = 2.0
    var pingTimeout = 1.5
    /// Pings missed in a row before a service counts as hung and is killed (0: never).
    var pingMisses = 3
    /// A service that has never answered is given this long to start before misses count.
    var startGrace = 30.0

    /// Defaults, then LOGBOOK_SUPERVISOR_PING_INTERVAL, _PING_TIMEOUT (seconds),
    /// _PING_MISSES and _START_GRACE (seconds).
    public init(configuration: StackConfiguration) throws {
        func number(_ name: String, _ range: ClosedRange<Double>) throws -> Double? {
            guard let text = configuration.setting("supervisor", name) else { return nil }
            guard let value = Double(text), range.contains(value) else {
                throw ConfigurationError(
                    "LOGBOOK_SUPERVISOR_\(name) must be a number from \(range.lowerBound) to \(range.upperBound) (got \"\(text)\")")
            }
            return value
        }
        pingInterval = try number("PING_INTERVAL", 0.1...600) ?? pingInterval
        pingTimeout = try number("PING_TIMEOUT", 0.05...60) ?? pingTimeout
        pingMisses = Int(try number("PING_MISSES", 0...100) ?? Double(pingMisses))
        startGrace = try number("START_GRACE", 0...3600) ?? startGrace
    }

    public init() {}
}

public final class Supervisor {
    struct Child {
        let name: String
        let path: String
        var pid: pid_t?
        var startedAt = Date.distantPast
        var nextStart = Date.distantPast
        var backoff: Double
        /// Why the supervisor itself stopped it, so the exit is logged as that, not a crash.
        var stopReason: String?
        /// When it was sent SIGTERM to be restarted: SIGKILL follows if it is still there
        /// `settings.stopGrace` later (a hung service does not end on SIGTERM).
        var terminatedAt: Date?
    }

    let files: StackFiles
    let environment: [String: String]
    let settings: SupervisorSettings
    var children: [Child]
    let pings: HealthPings

    public init(
        files: StackFiles, executables: Executables, environment: [String: String], settings: SupervisorSettings = .init()
    ) {
        self.files = files
        self.environment = environment
        self.settings = settings
        children = (executables.installed + executables.installedEdges).map {
            Child(name: $0, path: executables.path($0), backoff: settings.initialBackoff)
        }
        pings = HealthPings(configuration: files.configuration, settings: settings)
    }

    /// Runs until SIGTERM/SIGINT. Returns false when another supervisor holds the lock.
    public func run() throws -> Bool {
        try files.prepare()
        guard let lock = try files.lockStack() else {
            log("another supervisor (pid \(files.liveSupervisor().map(String.init) ?? "?")) runs this stack's data in \(files.configuration.dataDirectory); exiting")
            return false
        }
        defer { close(lock) }
        signal(SIGTERM) { _ in stopRequested.store(true, ordering: .relaxed) }
        signal(SIGINT) { _ in stopRequested.store(true, ordering: .relaxed) }
        signal(SIGHUP, SIG_IGN)
        signal(SIGPIPE, SIG_IGN)
        StackFiles.writePid(files.supervisorPidFile, getpid())
        // A supervisor killed before this one left its services running: each holds its
        // database, so a new copy could only fail to start, again and again, while the old
        // one went on unsupervised. They are stopped and started again under this one.
        let orphans = StackControl.stopOrphans(files)
        if !orphans.isEmpty {
            log("stopped \(orphans.joined(separator: ", ")), left running by a supervisor that is gone; starting them again")
        }
        log("supervisor \(getpid()) started for \(files.configuration.home): \(children.map(\.name).joined(separator: ", "))")
        // The edges (Executables.edges) have no ZeroMQ socket to ping.
        let pinger = pings.start(children.map(\.name).filter { !Executables.edges.contains($0) })

        while !stopRequested.load(ordering: .relaxed) {
            reap()
            checkRunDirectory()
            checkHealth()
            escalateStops()
            startDue()
            usleep(100_000)
        }
        pinger.cancel()
        stopAll()
        unlink(files.supervisorPidFile)
        files.removeSockets()
        log("supervisor \(getpid()) stopped")
        return true
    }

    /// run/ holds the services' ipc sockets and the pid files: when someone removed it,
    /// make it again and restart every service so that their sockets exist again.
    private func checkRunDirectory() {
        guard access(files.supervisorPidFile, F_OK) != 0 else { return }
        try? files.prepare()
        StackFiles.writePid(files.supervisorPidFile, getpid())
        log("\(files.configuration.runDirectory) was removed; made it again, restarting every service so its sockets exist")
        for i in children.indices {
            guard let pid = children[i].pid else { continue }
            children[i].stopReason = "restarted: its socket was removed with the run directory"
            children[i].backoff = settings.initialBackoff
            children[i].terminatedAt = Date()
            kill(pid, SIGTERM)
        }
    }

    /// A service sent SIGTERM to be restarted that is still there `stopGrace` later (hung):
    /// SIGKILL, so `reap` restarts it.
    private func escalateStops() {
        let now = Date()
        for i in children.indices {
            guard let pid = children[i].pid, let sent = children[i].terminatedAt,
                now.timeIntervalSince(sent) >= settings.stopGrace
            else { continue }
            log("\(children[i].name) (pid \(pid)) did not end \(Int(settings.stopGrace)) s after SIGTERM; killing it")
            children[i].terminatedAt = nil
            kill(pid, SIGKILL)
        }
    }

    /// A service that missed `pingMisses` pings in a row is hung (or stopped): kill it, so
    /// `reap` restarts it.
    private func checkHealth() {
        guard settings.pingMisses > 0 else { return }
        let now = Date()
        for i in children.indices {
            guard let pid = children[i].pid, children[i].stopReason == nil else { continue }
            let record = pings.record(children[i].name)
            guard record.missed >= settings.pingMisses, record.since >= children[i].startedAt else { continue }
            let answeredSinceStart = record.lastAnswer.map { $0 >= children[i].startedAt } ?? false
            guard answeredSinceStart || now.timeIntervalSince(children[i].startedAt) >= settings.startGrace else { continue }
            children[i].stopReason =
                "missed \(record.missed) pings in a row (\(record.lastError ?? "no answer")); killed it as hung"
            log("\(children[i].name) (pid \(pid)) \(children[i].stopReason!)")
            pings.reset(children[i].name)
            kill(pid, SIGKILL)
        }
    }

    private func startDue() {
        let now = Date()
        for i in children.indices where children[i].pid == nil && children[i].nextStart <= now {
            let child = children[i]
            do {
                // A records shard is told which one it is (Shards.swift).
                var environment = environment
                if let shard = StackConfiguration.shard(of: child.name) {
                    environment[StackConfiguration.recordsShardSetting] = String(shard)
                }
                let pid = try Spawn.start(
                    child.path, arguments: [], environment: environment, log: files.log(child.name), newSession: false)
                children[i].pid = pid
                children[i].startedAt = now
                children[i].stopReason = nil
                pings.reset(child.name)
                StackFiles.writePid(files.pidFile(child.name), pid)
                log("started \(child.name) (pid \(pid))")
            } catch {
                scheduleRestart(i, reason: "could not start: \(error)")
            }
        }
    }

    private func reap() {
        while true {
            var status: Int32 = 0
            let pid = waitpid(-1, &status, WNOHANG)
            guard pid > 0 else { return }
            guard let i = children.firstIndex(where: { $0.pid == pid }) else { continue }
            children[i].pid = nil
            children[i].terminatedAt = nil
            unlink(files.pidFile(children[i].name))
            let ran = Date().timeIntervalSince(children[i].startedAt)
            // Healthy uptime pays the back-off down: halved for every `stableAfter` it ran.
            let halvings = min(ran / settings.stableAfter, 30)
            children[i].backoff = max(settings.initialBackoff, children[i].backoff / pow(2, halvings.rounded(.down)))
            var reason = "exited (\(Self.describe(status))) after \(String(format: "%.1f", ran)) s"
            if let why = children[i].stopReason { reason += ": \(why)" }
            children[i].stopReason = nil
            scheduleRestart(i, reason: reason)
        }
    }

    private func scheduleRestart(_ i: Int, reason: String) {
        let delay = children[i].backoff
        children[i].nextStart = Date().addingTimeInterval(delay)
        children[i].backoff = min(delay * 2, settings.maxBackoff)
        log("\(children[i].name) \(reason); restarting in \(delay) s (see \(files.log(children[i].name)))")
    }

    private func stopAll() {
        let running = children.compactMap(\.pid)
        log("stopping \(running.count) service(s)")
        for pid in running { kill(pid, SIGTERM) }
        let deadline = Date().addingTimeInterval(settings.stopGrace)
        var left = Set(running)
        while !left.isEmpty {
            var status: Int32 = 0
            let pid = waitpid(-1, &status, WNOHANG)
            if pid > 0 {
                left.remove(pid)
                if let i = children.firstIndex(where: { $0.pid == pid }) {
                    log("\(children[i].name) stopped (\(Self.describe(status)))")
                    children[i].pid = nil
                }
                continue
            }
            if pid < 0 && errno == ECHILD { break }
            if Date() >= deadline {
                for pid in left {
                    log("pid \(pid) did not stop within \(settings.stopGrace) s; killing it")
                    kill(pid, SIGKILL)
                    waitpid(pid, nil, 0)
                }
                break
            }
            usleep(50_000)
        }
        for child in children { unlink(files.pidFile(child.name)) }
    }


    static func describe(_ status: Int32) -> String {
        let signal = status & 0x7f
        if signal == 0 { return "status \((status >> 8) & 0xff)" }
        return "signal \(signal)"
    }

    /// A line in the supervisor's log. A write that fails (the disk full, the log's folder
    /// removed) loses the line, never the supervisor: FileHandle's write traps on an error,
    /// and the supervisor is what keeps the services running and restarts them.
    private func log(_ message: String) {
        let stamp = Date().formatted(.iso8601)
        let line = Array("\(stamp) supervisor: \(message)\n".utf8)
        _ = line.withUnsafeBytes { FileDescriptor.writeAll(STDOUT_FILENO, $0) }
    }
}

/// The supervisor's pings: every `pingInterval`, `$srv.ping` to each service at once, each
/// with `pingTimeout`. It only records what it saw; the supervisor's loop decides.
final class HealthPings: Sendable {
    struct Record: Sendable {
        var missed = 0
        /// When the current run of misses (or of answers) began.
        var since = Date.distantPast
        var lastAnswer: Date?
        var lastError: String?
    }

    let configuration: StackConfiguration
    let settings: SupervisorSettings
    private let records = Mutex<[String: Record]>([:])

    init(configuration: StackConfiguration, settings: SupervisorSettings) {
        self.configuration = configuration
        self.settings = settings
    }

    func record(_ service: String) -> Record { records.withLock { $0[service] ?? Record() } }

    /// Forgets a service's misses (it was just started or killed).
    func reset(_ service: String) { records.withLock { $0[service] = Record(since: Date()) } }

    /// Starts pinging `services` until the returned task is cancelled.
    func start(_ services: [String]) -> Task<Void, Never> {
        guard settings.pingMisses > 0 else { return Task {} }
        let interval = Duration.milliseconds(Int64(settings.pingInterval * 1000))
        let timeout = Duration.milliseconds(Int64(settings.pingTimeout * 1000))
        return Task.detached { [self] in
            // One client per service for the supervisor's life; a fresh socket after an
            // unanswered ping is the client's own (Lazy Pirate).
            var clients: [String: ServiceClient] = [:]
            for service in services {
                clients[service] = try? ServiceClient(
                    service: service, endpoint: configuration.endpoint(service),
                    settings: ClientSettings(attempts: 1, curve: configuration.curve, stackKey: configuration.stackKey))
            }
            let clock = ContinuousClock()
            var next = clock.now
            while !Task.isCancelled {
                await withTaskGroup(of: Void.self) { group in
                    for (service, client) in clients {
                        group.addTask { await self.ping(service, client, timeout: timeout) }
                    }
                }
                // A steady cadence: the time spent waiting for answers is part of the interval.
                next = max(next + interval, clock.now)
                try? await Task.sleep(until: next)
            }
        }
    }

    private func ping(_ service: String, _ client: ServiceClient, timeout: Duration) async {
        do {
            _ = try await client.call("$srv.ping", Empty(), as: Ping.self, options: CallOptions(timeout: timeout))
            records.withLock {
                if ($0[service]?.missed ?? 1) > 0 { $0[service]?.since = Date() }
                $0[service, default: Record()].missed = 0
                $0[service]?.lastAnswer = Date()
                $0[service]?.lastError = nil
            }
        } catch {
            records.withLock {
                var record = $0[service] ?? Record()
                if record.missed == 0 { record.since = Date() }
                record.missed += 1
                record.lastError = (error as? ServiceError).map { "\($0.code.rawValue)" } ?? "\(error)"
                $0[service] = record
            }
        }
    }
}
