// The local stack's supervisor (`logbook stack supervise`, started detached by `stack up`).
// It holds run/supervisor.lock so only one runs per stack, launches every installed service
// with the stack's environment and its output appended to logs/<service>.log, and restarts
// a service that exits with exponential back-off (0.5 s doubling to 30 s, reset once it has
// stayed up 10 s). On SIGTERM/SIGINT it sends SIGTERM to every child, waits, SIGKILLs what is
// left after a grace period, and removes its pid files.
//
// It is a plain polling loop on one thread: a signal handler only sets a flag, children are
// reaped with waitpid(WNOHANG) every 100 ms. Nothing else runs in this process.
import Foundation
import Runtime
import Synchronization
import Wire

private let stopRequested = Atomic<Bool>(false)

struct SupervisorSettings: Sendable {
    var initialBackoff = 0.5
    var maxBackoff = 30.0
    /// A child that ran this long before exiting starts again with `initialBackoff`.
    var stableAfter = 10.0
    /// How long children get to stop after SIGTERM before SIGKILL.
    var stopGrace = 10.0
}

final class Supervisor {
    struct Child {
        let name: String
        let path: String
        var pid: pid_t?
        var startedAt = Date.distantPast
        var nextStart = Date.distantPast
        var backoff: Double
    }

    let files: StackFiles
    let environment: [String: String]
    let settings: SupervisorSettings
    var children: [Child]

    init(files: StackFiles, executables: Executables, environment: [String: String], settings: SupervisorSettings = .init()) {
        self.files = files
        self.environment = environment
        self.settings = settings
        children = executables.installed.map {
            Child(name: $0, path: executables.path($0), backoff: settings.initialBackoff)
        }
    }

    /// Runs until SIGTERM/SIGINT. Returns false when another supervisor holds the lock.
    func run() throws -> Bool {
        try files.prepare()
        let lock = open(files.lockFile, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard lock >= 0 else { throw ServiceError(.internal, "cannot open \(files.lockFile)") }
        guard flock(lock, LOCK_EX | LOCK_NB) == 0 else {
            log("another supervisor is running for \(files.configuration.home); exiting")
            close(lock)
            return false
        }
        defer { close(lock) }
        signal(SIGTERM) { _ in stopRequested.store(true, ordering: .relaxed) }
        signal(SIGINT) { _ in stopRequested.store(true, ordering: .relaxed) }
        signal(SIGHUP, SIG_IGN)
        signal(SIGPIPE, SIG_IGN)
        StackFiles.writePid(files.supervisorPidFile, getpid())
        log("supervisor \(getpid()) started for \(files.configuration.home): \(children.map(\.name).joined(separator: ", "))")

        while !stopRequested.load(ordering: .relaxed) {
            reap()
            startDue()
            usleep(100_000)
        }
        stopAll()
        unlink(files.supervisorPidFile)
        log("supervisor \(getpid()) stopped")
        return true
    }

    private func startDue() {
        let now = Date()
        for i in children.indices where children[i].pid == nil && children[i].nextStart <= now {
            let child = children[i]
            do {
                let pid = try Spawn.start(
                    child.path, arguments: [], environment: environment, log: files.log(child.name), newSession: false)
                children[i].pid = pid
                children[i].startedAt = now
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
            unlink(files.pidFile(children[i].name))
            let ran = Date().timeIntervalSince(children[i].startedAt)
            if ran >= settings.stableAfter { children[i].backoff = settings.initialBackoff }
            scheduleRestart(i, reason: "exited (\(Self.describe(status))) after \(String(format: "%.1f", ran)) s")
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

    private func log(_ message: String) {
        let stamp = Date().formatted(.iso8601)
        FileHandle.standardOutput.write(Data("\(stamp) supervisor: \(message)\n".utf8))
    }
}
