// Starting and stopping the local stack's supervisor, for `logbook stack up|down|supervise`:
// the CLI parses arguments and prints; what happens to processes and files happens here.
import Foundation
import Runtime
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
    /// then stops services left running without one (by their pid files).
    public static func stop(_ files: StackFiles) async throws -> Stopped {
        guard let pid = files.liveSupervisor() else {
            unlink(files.supervisorPidFile)
            return .notRunning(strays: stopStrays(files))
        }
        kill(pid, SIGTERM)
        guard await ProcessTable.waitGone(pid, timeout: .seconds(20)) else {
            kill(pid, SIGKILL)
            _ = stopStrays(files, signal: SIGKILL)
            throw ServiceError(.deadlineExceeded, "the supervisor (pid \(pid)) did not stop within 20 s; killed it and its services")
        }
        _ = stopStrays(files)
        return .stopped(supervisor: pid)
    }

    /// Services left running without a supervisor (it was killed): signal them by pid file.
    static func stopStrays(_ files: StackFiles, signal: Int32 = SIGTERM) -> [String] {
        (files.configuration.instances + Executables.edges).compactMap { service in
            guard let pid = files.liveService(service) else { return nil }
            kill(pid, signal)
            unlink(files.pidFile(service))
            return service
        }
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
