// The local stack's files under LOGBOOK_HOME: data/, run/ (sockets and pid files, 0700),
// logs/. The supervisor's pid file is run/supervisor.pid; each service it runs has
// run/<service>.pid. Helpers here decide whether a recorded pid is still that process.
import Foundation
import Runtime
import Storage
import Wire

public struct StackFiles: Sendable {
    public let configuration: StackConfiguration

    public init(_ configuration: StackConfiguration) { self.configuration = configuration }

    public var supervisorPidFile: String { configuration.runDirectory + "/supervisor.pid" }
    /// Held (flock) by the running supervisor, which writes its pid in it. It lives in the
    /// data directory: removing run/ cannot let a second supervisor start on the same data.
    public var lockFile: String { configuration.dataDirectory + "/supervisor.lock" }
    public func pidFile(_ service: String) -> String { configuration.runDirectory + "/\(service).pid" }
    public func log(_ name: String) -> String { configuration.logDirectory + "/\(name).log" }

    /// Creates home, data, run and logs directories, private to the user.
    public func prepare() throws {
        for directory in [configuration.home, configuration.dataDirectory, configuration.runDirectory, configuration.logDirectory] {
            try FileManager.default.createDirectory(
                atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
        chmod(configuration.runDirectory, 0o700)
    }

    public static func readPid(_ path: String) -> pid_t? {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        return pid_t(text.trimmingSpaces)
    }

    public static func writePid(_ path: String, _ pid: pid_t) {
        try? Data("\(pid)\n".utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
    }

    /// Takes the stack's lock for this process and writes its pid in the lock file; nil when
    /// another process holds it (FileLocks.lockExclusively waits out a probe's moment:
    /// `liveSupervisor` below takes the lock shared to look, and `stack up` polls it while
    /// the supervisor it started takes the lock). The descriptor is the lock: keep it open.
    public func lockStack(patience: Duration = .milliseconds(500)) throws -> Int32? {
        let fd = open(lockFile, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw ServiceError(.internal, "cannot open \(lockFile): \(String(cString: strerror(errno)))") }
        guard FileLocks.lockExclusively(fd, patience: patience) else {
            close(fd)
            return nil
        }
        ftruncate(fd, 0)
        let text = "\(getpid())\n"
        _ = text.withCString { write(fd, $0, strlen($0)) }
        return fd
    }

    /// The supervisor's pid when one is running for this stack's data: the lock file is
    /// locked, and names a live `supervise` process.
    public func liveSupervisor() -> pid_t? {
        let fd = open(lockFile, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        if flock(fd, LOCK_SH | LOCK_NB) == 0 {
            flock(fd, LOCK_UN)
            return nil  // nobody holds it
        }
        guard let pid = Self.readPid(lockFile), ProcessTable.isAlive(pid),
            ProcessTable.arguments(pid).contains("supervise")
        else { return nil }
        return pid
    }

    /// Removes the ipc socket files of the stack's services that live in run/ (at stop).
    func removeSockets() {
        for service in configuration.instances {
            for endpoint in [configuration.endpoint(service), configuration.eventsEndpoint(service)]
            where endpoint.hasPrefix("ipc://" + configuration.runDirectory + "/") {
                unlink(String(endpoint.dropFirst("ipc://".count)))
            }
        }
    }

    /// The service's pid when run/<service>.pid names a live process of that executable.
    public func liveService(_ service: String) -> pid_t? {
        let executable = StackConfiguration.executable(of: service)
        guard let pid = Self.readPid(pidFile(service)), ProcessTable.isAlive(pid),
            let first = ProcessTable.arguments(pid).first, first.hasSuffix("/" + executable) || first == executable
        else { return nil }
        return pid
    }
}

/// Facts about other processes, from /proc.
public enum ProcessTable {
    /// Alive and not a zombie waiting to be reaped.
    public static func isAlive(_ pid: pid_t) -> Bool {
        guard pid > 0, kill(pid, 0) == 0 || errno == EPERM else { return false }
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return true }
        let state = stat[stat.index(after: close)...].trimmingSpaces.first
        return state != "Z" && state != "X"
    }

    public static func arguments(_ pid: pid_t) -> [String] {
        guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return [] }
        return data.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
    }

    /// Waits until `pid` is gone; false on timeout.
    public static func waitGone(_ pid: pid_t, timeout: Duration) async -> Bool {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        while isAlive(pid) {
            if clock.now >= deadline { return false }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return true
    }
}
