// Runs the real `logbook` binary (and through it the real service executables) against a
// throwaway stack: LOGBOOK_HOME and the session directory under a short /tmp path (ipc://
// socket paths must stay under ~100 characters). `withStack` always stops what it started:
// `logbook stack down`, then SIGKILL for any pid file still naming a live process.
import Foundation
import Testing

struct CommandResult {
    var status: Int32
    var stdout: String
    var stderr: String

    /// stdout parsed as JSON.
    var json: Any? { try? JSONSerialization.jsonObject(with: Data(stdout.utf8)) }
    var object: [String: Any] { json as? [String: Any] ?? [:] }
}

final class TestStack: Sendable {
    let home: String
    let configDirectory: String
    let binDirectory: String

    /// Settings for the stack beyond the harness's own (e.g. a stub server's URLs).
    let extraEnvironment: [String: String]

    /// Tests never reach the internet: every outside API points at a port that refuses
    /// connections unless the test brings a stub server (`environment`).
    static let offline: [String: String] = [
        "LOGBOOK_WEATHER_FETCHER_FORECAST_URL": "http://127.0.0.1:9/v1/forecast",
        "LOGBOOK_WEATHER_FETCHER_ARCHIVE_URL": "http://127.0.0.1:9/v1/archive",
        "LOGBOOK_WEATHER_FETCHER_MARINE_URL": "http://127.0.0.1:9/v1/marine",
        "LOGBOOK_WEATHER_FETCHER_NOAA_URL": "http://127.0.0.1:9",
        "LOGBOOK_STORE_QUOTES_URL": "http://127.0.0.1:9",
        // The HTTP edge listens on any free port (it writes it to run/logbook-http.url), so
        // stacks never fight over one.
        "LOGBOOK_HTTP_LISTEN": "127.0.0.1:0",
        // Tests send many requests from one address; HTTPAbuseTests sets a limit of its own.
        "LOGBOOK_HTTP_RATE_LIMIT": "0",
    ]

    init(environment: [String: String] = [:]) throws {
        extraEnvironment = Self.offline.merging(environment) { $1 }
        home = "/tmp/lbe-" + UUID().uuidString.prefix(8).lowercased()
        configDirectory = home + "/config"
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        binDirectory = try Self.findBinaries()
    }

    /// The build directory holding `logbook` and the services: where this test binary is.
    static func findBinaries() throws -> String {
        var candidates: [String] = []
        if let exe = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            candidates.append(URL(fileURLWithPath: exe).deletingLastPathComponent().path)
        }
        candidates.append(Bundle.main.bundleURL.deletingLastPathComponent().path)
        candidates.append(Bundle.main.bundleURL.path)
        for directory in candidates where FileManager.default.isExecutableFile(atPath: directory + "/logbook") {
            return directory
        }
        throw HarnessError("no logbook executable next to the tests (looked in \(candidates))")
    }

    var environment: [String: String] {
        [
            "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin",
            "HOME": home,
            "LOGBOOK_HOME": home,
            "LOGBOOK_CONFIG_DIR": configDirectory,
            "LOGBOOK_LOG_LEVEL": "info",
        ].merging(extraEnvironment) { $1 }
    }

    var runDirectory: String { home + "/run" }

    /// Removes a directory the stack's processes are writing in: a process may make or
    /// remove an entry while the tree is walked, so a failed walk is tried again (a few
    /// times); a last failure names what the directory held.
    func removeWhileInUse(_ path: String) throws {
        var lastError: (any Error)?
        for _ in 0..<10 {
            do {
                try FileManager.default.removeItem(atPath: path)
                return
            } catch {
                if !FileManager.default.fileExists(atPath: path) { return }
                lastError = error
                Thread.sleep(forTimeInterval: 0.05)
            }
        }
        let left = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
        throw RemovalFailed(description: "\(path) could not be removed (holding \(left)): \(lastError.map { "\($0)" } ?? "")")
    }

    struct RemovalFailed: Error, CustomStringConvertible {
        var description: String
    }
    var sessionFile: String { configDirectory + "/session.json" }

    func pid(_ name: String) -> pid_t? {
        guard let text = try? String(contentsOfFile: "\(runDirectory)/\(name).pid", encoding: .utf8) else { return nil }
        return pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    func log(_ name: String) -> String {
        (try? String(contentsOfFile: "\(home)/logs/\(name).log", encoding: .utf8)) ?? "(no \(name).log)"
    }

    /// Runs `logbook arguments…` with `stdin` (else /dev/null); kills it after `timeout`.
    /// Output goes through files, not pipes: the detached supervisor must hold nothing of ours.
    @discardableResult
    func logbook(
        _ arguments: String..., stdin: String? = nil, timeout: Duration = .seconds(60), environment: [String: String] = [:]
    ) async throws -> CommandResult {
        try await logbook(arguments: arguments, stdin: stdin, timeout: timeout, environment: environment)
    }

    /// `logbook(_:)` with the arguments as an array.
    @discardableResult
    func logbook(
        arguments: [String], stdin: String? = nil, timeout: Duration = .seconds(60), environment extra: [String: String] = [:]
    ) async throws -> CommandResult {
        // Scratch files under the stack's home: the detached supervisor must hold nothing of ours.
        try await Tool.run(
            binDirectory + "/logbook", arguments, environment: environment.merging(extra) { $1 }, stdin: stdin,
            timeout: timeout, scratch: "\(home)/.cmd-")
    }

    /// Polls `check` until it returns true or `timeout` passes.
    func eventually(timeout: Duration = .seconds(20), _ check: () async throws -> Bool) async throws -> Bool {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        while clock.now < deadline {
            if try await check() { return true }
            try await Task.sleep(for: .milliseconds(200))
        }
        return false
    }

    /// Alive and not a zombie (an orphan's zombie may linger when PID 1 does not reap).
    static func isRunning(_ pid: pid_t) -> Bool {
        guard pid > 0, kill(pid, 0) == 0 else { return false }
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return false }
        let state = stat[stat.index(after: close)...].trimmingCharacters(in: .whitespaces).first
        return state != "Z" && state != "X"
    }

    /// Stops everything this stack started, whatever state it is in, and removes its files.
    func shutdown() async {
        _ = try? await logbook("stack", "down", timeout: .seconds(40))
        // Whatever `stack down` missed (a supervisor it did not find, whose pid file it
        // removed, went on restarting its services): every process whose environment names
        // this LOGBOOK_HOME, found in /proc rather than by pid files. Twice, for a child the
        // supervisor started while the first pass ran.
        for _ in 0..<2 {
            let leftover = Self.processes(home: home)
            if leftover.isEmpty { break }
            for pid in leftover { kill(pid, SIGKILL) }
            usleep(50_000)
        }
        try? FileManager.default.removeItem(atPath: home)
    }

    /// The live processes whose environment holds `LOGBOOK_HOME=home`.
    static func processes(home: String) -> [pid_t] {
        let entry = Data("LOGBOOK_HOME=\(home)".utf8)
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { name -> pid_t? in
            guard let pid = pid_t(name), pid != getpid(), isRunning(pid),
                let environ = FileManager.default.contents(atPath: "/proc/\(pid)/environ"),
                environ.split(separator: 0).contains(where: { $0 == entry })
            else { return nil }
            return pid
        }
    }
}

extension TestStack {
    static let password = "correct horse battery staple"

    /// Brings the stack up and registers (and so logs in) `user`.
    func upAndRegister(_ user: String) async throws {
        let up = try await logbook("stack", "up")
        try #require(up.status == 0, "stack up failed: \(up.stderr)\n\(log("supervisor"))")
        let register = try await logbook("register", user, "--password-stdin", stdin: Self.password + "\n")
        try #require(register.status == 0, "\(register.stderr)")
    }

    /// `logbook arguments… --json`, which must succeed: its JSON object.
    func object(_ arguments: String...) async throws -> [String: Any] {
        let result = try await logbook(arguments: arguments + ["--json"])
        try #require(result.status == 0, "logbook \(arguments.joined(separator: " ")): \(result.stderr)")
        return result.object
    }

    /// The saved session's token (for tests that call services directly).
    func token() throws -> String {
        let session = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: sessionFile)))
        return try #require((session as? [String: Any])?["token"] as? String)
    }
}

/// Runs `body` against a fresh stack and always shuts it down.
func withStack(environment: [String: String] = [:], _ body: (TestStack) async throws -> Void) async throws {
    let stack = try TestStack(environment: environment)
    do {
        try await body(stack)
    } catch {
        await stack.shutdown()
        throw error
    }
    await stack.shutdown()
}

struct HarnessError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
