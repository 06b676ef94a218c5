// Starting and stopping the local stack's supervisor, for `logbook stack up|down|supervise`:
// the CLI parses arguments and prints; what happens to processes and files happens here.
import Foundation
import Runtime
import Storage
import Wire

public enum StackControl {
    /// The supervisor running this stack's data, or a new one started detached (its own
    /// session, output in logs/supervisor.log) with `environment`. `started` is false when
    /// one already ran, or another `stack up` won the lock first.
    public static func startSupervisor(
        _ files: StackFiles, environment: [String: String]
    ) async throws -> (pid: pid_t, started: Bool) {
        if let pid = files.liveSupervisor() { return (pid, false) }
        let child = try Spawn.start(
            Executables.current, arguments: ["stack", "supervise"], environment: environment,
            log: files.log("supervisor"), newSession: true)
        let pid = try await awaitSupervisor(child, files: files)
        return (pid, pid == child)
    }

    /// Waits for the new supervisor to write its pid file, or for it to exit (another
    /// supervisor won the lock, or it failed: its log says why).
    static func awaitSupervisor(_ child: pid_t, files: StackFiles) async throws -> pid_t {
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(10)
        while clock.now < deadline {
            if let pid = files.liveSupervisor() { return pid }
            var status: Int32 = 0
            if waitpid(child, &status, WNOHANG) == child {
                if let pid = files.liveSupervisor() { return pid }
                throw ServiceError(.internal, "the supervisor exited at once; see \(files.log("supervisor"))")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw ServiceError(.deadlineExceeded, "the supervisor did not start within 10 s; see \(files.log("supervisor"))")
    }

    /// What `stop` did.
    public enum Stopped: Sendable {
        /// No supervisor ran; these services were running without one and were stopped.
        case notRunning(strays: [String])
        /// The supervisor with this pid stopped, and its services with it.
        case stopped(supervisor: pid_t)
    }

    /// Stops the supervisor (SIGTERM, which stops its services) and waits up to 20 s for it;
    /// then stops services left running without one, waits until they are gone and removes
    /// their sockets.
    public static func stop(_ files: StackFiles) async throws -> Stopped {
        guard let pid = files.liveSupervisor() else {
            unlink(files.supervisorPidFile)
            let strays = stopOrphans(files)
            files.removeSockets()
            return .notRunning(strays: strays)
        }
        kill(pid, SIGTERM)
        guard await ProcessTable.waitGone(pid, timeout: .seconds(20)) else {
            kill(pid, SIGKILL)
            _ = stopOrphans(files, grace: 0)
            files.removeSockets()
            throw ServiceError(.deadlineExceeded, "the supervisor (pid \(pid)) did not stop within 20 s; killed it and its services")
        }
        _ = stopOrphans(files)
        return .stopped(supervisor: pid)
    }

    /// The stack's services running without a supervisor: a supervisor that was killed
    /// leaves its children running, each holding its database's lock. Found by their pid
    /// files, and for a service with a database by the holder of its lock (run/ may have gone
    /// too); only a process of that service's executable counts.
    static func orphans(_ files: StackFiles) -> [(service: String, pid: pid_t)] {
        (files.configuration.instances + Executables.edges).compactMap { service in
            if let pid = files.liveService(service) { return (service, pid) }
            guard !Executables.edges.contains(service),
                let pid = databaseHolder(files.configuration.databasePath(service)), pid != getpid(),
                ProcessTable.isAlive(pid),
                let first = ProcessTable.arguments(pid).first,
                first.hasSuffix("/" + StackConfiguration.executable(of: service))
                    || first == StackConfiguration.executable(of: service)
            else { return nil }
            return (service, pid)
        }
    }

    /// Stops `orphans`: SIGTERM, up to `grace` seconds to finish what they were doing (a
    /// service drains its requests), then SIGKILL; returns when every one is gone, with their
    /// names. Their pid files go.
    @discardableResult
    static func stopOrphans(_ files: StackFiles, grace: TimeInterval = 20) -> [String] {
        let found = orphans(files)
        for (service, pid) in found {
            kill(pid, grace > 0 ? SIGTERM : SIGKILL)
            unlink(files.pidFile(service))
        }
        let deadline = Date().addingTimeInterval(grace)
        while found.contains(where: { ProcessTable.isAlive($0.pid) }) {
            if Date() >= deadline {
                for (_, pid) in found where ProcessTable.isAlive(pid) { kill(pid, SIGKILL) }
                usleep(100_000)
                break
            }
            usleep(50_000)
        }
        return found.map(\.service)
    }

    /// The pid holding the flock on a database file (its service), if any.
    static func databaseHolder(_ path: String) -> pid_t? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return FileLocks.holder(inode: info.st_ino)
    }

    /// Runs the supervisor in this process until SIGTERM/SIGINT (`logbook stack supervise`).
    /// False when another supervisor holds this stack's lock.
    public static func supervise(configuration: StackConfiguration, environment: [String: String]) throws -> Bool {
        let supervisor = Supervisor(
            files: StackFiles(configuration), executables: Executables(configuration: configuration),
            environment: environment, settings: try SupervisorSettings(configuration: configuration))
        return try supervisor.run()
    }
}
