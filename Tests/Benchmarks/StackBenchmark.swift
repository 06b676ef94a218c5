// The whole stack as a user runs it: the real `logbook` binary and the five service
// executables built beside this benchmark, in a throwaway LOGBOOK_HOME. Measures
//   - one-shot CLI commands' wall time (`whoami`, `expense list`) beside `logbook --version`
//     (process start alone), each run spawned directly (posix_spawn, output to /dev/null),
//     the three taken in turn;
//   - each service's resident memory once the stack is idle (/proc/<pid>/status VmRSS);
//   - CPU time spent by all five services per `records.expense.add` (/proc/<pid>/stat,
//     utime + stime), minus what they spend idle over the same time (heartbeats, pings).
//   swift run -c release --static-swift-stdlib logbook-bench stack [--runs 30] [--writes 5000]
import ArgumentParser
import Foundation
import Runtime
import Wire

#if canImport(Glibc)
    import Glibc
#endif

struct StackBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stack", abstract: "CLI start, idle memory and CPU per write of the real stack.")

    @Option(help: "Runs of each CLI command.") var runs = 30
    @Option(help: "records.expense.add calls for the CPU measurement.") var writes = 5_000
    @Option(help: "Requests in flight during the CPU measurement.") var inFlight = 64
    @Option(help: "Directory holding logbook and the service executables (default: beside this benchmark).")
    var bin: String?

    struct Figures {
        var versionP50: Double = 0
        var whoamiP50: Double = 0
        var listP50: Double = 0
        /// service → VmRSS in KiB
        var rss: [String: Int] = [:]
        /// ms of CPU (all five services) per write, idle subtracted
        var cpuPerWriteMs: Double = 0
        /// service → ms of CPU per write
        var cpuPerService: [String: Double] = [:]
    }

    func run() async throws {
        let figures = try await measure()
        print(String(format: "logbook --version p50 %.1f ms; whoami p50 %.1f ms (%.2f×); expense list p50 %.1f ms (%.2f×)",
            figures.versionP50, figures.whoamiP50, figures.whoamiP50 / figures.versionP50, figures.listP50,
            figures.listP50 / figures.versionP50))
        for (name, kib) in figures.rss.sorted(by: { $0.key < $1.key }) {
            print(String(format: "idle RSS %@: %.1f MiB", name, Double(kib) / 1024))
        }
        print(String(format: "CPU per records.expense.add, all services: %.3f ms", figures.cpuPerWriteMs))
        for (name, ms) in figures.cpuPerService.sorted(by: { $0.key < $1.key }) {
            print(String(format: "  %@: %.3f ms", name, ms))
        }
    }

    func measure() async throws -> Figures {
        let directory = try bin ?? Self.binaryDirectory()
        let home = "/tmp/lbb-\(getpid())"
        try? FileManager.default.removeItem(atPath: home)
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        let environment: [String: String] = [
            "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin",
            "HOME": home, "LOGBOOK_HOME": home, "LOGBOOK_CONFIG_DIR": home + "/config",
            "LOGBOOK_LOG_LEVEL": "warning",
            // No outside traffic: every provider points at a port that refuses connections.
            "LOGBOOK_WEATHER_FETCHER_FORECAST_URL": "http://127.0.0.1:9/v1/forecast",
            "LOGBOOK_WEATHER_FETCHER_ARCHIVE_URL": "http://127.0.0.1:9/v1/archive",
            "LOGBOOK_WEATHER_FETCHER_MARINE_URL": "http://127.0.0.1:9/v1/marine",
            "LOGBOOK_WEATHER_FETCHER_NOAA_URL": "http://127.0.0.1:9",
            "LOGBOOK_STORE_QUOTES_URL": "http://127.0.0.1:9",
            "LOGBOOK_HTTP_LISTEN": "127.0.0.1:0",
        ]
        let logbook = directory + "/logbook"
        func run(_ arguments: [String], stdin: String? = nil) throws -> (status: Int32, ms: Double) {
            try Self.spawn(logbook, arguments, environment: environment, stdin: stdin)
        }
        defer {
            _ = try? run(["stack", "down"])
            // Anything still alive that belongs to this home (a stuck child) is killed.
            for file in (try? FileManager.default.contentsOfDirectory(atPath: home + "/run")) ?? [] where file.hasSuffix(".pid") {
                if let pid = Self.pid(home + "/run/" + file), Self.belongs(pid, home: home) { kill(pid, SIGKILL) }
            }
            try? FileManager.default.removeItem(atPath: home)
        }
        guard try run(["stack", "up"]).status == 0 else { throw ValidationError("logbook stack up failed (logs in \(home)/logs)") }
        guard try run(["register", "bench", "--password-stdin"], stdin: "correct horse battery staple\n").status == 0 else {
            throw ValidationError("logbook register failed")
        }
        var figures = Figures()

        // One-shot commands, taken in turn (--version, whoami, expense list, --version, ...)
        // so that the machine's speed drifting during the run moves the baseline with the
        // commands instead of skewing their ratio. The first round warms the page cache.
        let commands = [["--version"], ["whoami"], ["expense", "list"]]
        var samples = [[Double]](repeating: [], count: commands.count)
        for round in 0...runs {
            for (index, arguments) in commands.enumerated() {
                let (status, ms) = try run(arguments)
                guard status == 0 else { throw ValidationError("logbook \(arguments.joined(separator: " ")) exited \(status)") }
                if round > 0 { samples[index].append(ms) }
            }
        }
        figures.versionP50 = percentile(samples[0], 0.5)
        figures.whoamiP50 = percentile(samples[1], 0.5)
        figures.listP50 = percentile(samples[2], 0.5)

        // Idle memory: the stack has served a few requests and settled.
        try await Task.sleep(for: .seconds(2))
        var pids: [String: pid_t] = [:]
        for service in StackConfiguration.services {
            guard let pid = Self.pid("\(home)/run/\(service).pid") else { throw ValidationError("no pid file for \(service)") }
            pids[service] = pid
            figures.rss[service] = Self.rssKiB(pid)
        }

        // CPU per write: idle CPU over a window first, then the writes, then the same wait
        // for consumers to catch up; idle CPU at the same rate is subtracted.
        let configuration = try StackConfiguration.load(environment: environment)
        let session = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: home + "/config/session.json")))
        guard let token = (session as? [String: Any])?["token"] as? String else { throw ValidationError("no session token") }
        let client = try ServiceClient(
            service: "records", endpoint: configuration.endpoint("records"), settings: ClientSettings(configuration: configuration))
        defer { client.close() }
        let clock = ContinuousClock()
        let idleStart = clock.now
        let idleBefore = pids.mapValues(Self.cpuTicks)
        try await Task.sleep(for: .seconds(2))
        let idleAfter = pids.mapValues(Self.cpuTicks)
        let idleSeconds = seconds(clock.now - idleStart)
        let loadStart = clock.now
        let before = pids.mapValues(Self.cpuTicks)
        try await withThrowingTaskGroup(of: Void.self) { group in
            var started = 0
            func launch() {
                let i = started
                started += 1
                group.addTask {
                    _ = try await client.call(
                        "records.expense.add", ExpenseBody(name: "coffee \(i)", amountMinor: 350), as: JSONValue.self,
                        options: CallOptions(token: token, timeout: .seconds(30)))
                }
            }
            while started < min(inFlight, writes) { launch() }
            while try await group.next() != nil {
                if started < writes { launch() }
            }
        }
        try await Task.sleep(for: .seconds(2))  // consumers (analytics, weather-fetcher) catch up
        let after = pids.mapValues(Self.cpuTicks)
        let loadSeconds = seconds(clock.now - loadStart)
        let hz = Double(sysconf(Int32(_SC_CLK_TCK)))
        var total = 0.0
        for (service, _) in pids {
            let idleRate = Double(idleAfter[service]! - idleBefore[service]!) / hz / idleSeconds
            let busy = Double(after[service]! - before[service]!) / hz - idleRate * loadSeconds
            let perWrite = max(0, busy) * 1000 / Double(writes)
            figures.cpuPerService[service] = perWrite
            total += perWrite
        }
        figures.cpuPerWriteMs = total
        return figures
    }

    // MARK: Processes

    /// The directory of this executable, where `swift build` put `logbook` and the services.
    static func binaryDirectory() throws -> String {
        let exe = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        let directory = URL(fileURLWithPath: exe).deletingLastPathComponent().path
        for name in ["logbook"] + StackConfiguration.services where !FileManager.default.isExecutableFile(atPath: directory + "/" + name) {
            throw ValidationError("\(directory)/\(name) is missing: build it first (swift build -c release --static-swift-stdlib)")
        }
        return directory
    }

    /// Runs a program to completion with its output sent to /dev/null; its wall time in ms.
    static func spawn(_ path: String, _ arguments: [String], environment: [String: String], stdin: String?) throws -> (Int32, Double) {
        var input: String?
        if let stdin {
            input = "/tmp/lbb-stdin-\(getpid())"
            try Data(stdin.utf8).write(to: URL(fileURLWithPath: input!))
        }
        defer { if let input { unlink(input) } }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, input ?? "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        let clock = ContinuousClock()
        let start = clock.now
        var pid: pid_t = 0
        let status = posix_spawn(&pid, path, &actions, nil, argv, envp)
        guard status == 0 else { throw ValidationError("cannot start \(path): errno \(status)") }
        var exit: Int32 = 0
        while waitpid(pid, &exit, 0) < 0 && errno == EINTR {}
        let elapsed = micros(clock.now - start) / 1000
        return ((exit >> 8) & 0xFF, elapsed)
    }

    static func pid(_ file: String) -> pid_t? {
        guard let text = try? String(contentsOfFile: file, encoding: .utf8) else { return nil }
        return pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// Whether `pid` runs with this LOGBOOK_HOME (a stale pid file may name someone else's).
    static func belongs(_ pid: pid_t, home: String) -> Bool {
        guard let environ = FileManager.default.contents(atPath: "/proc/\(pid)/environ") else { return false }
        return environ.split(separator: 0).contains { String(decoding: $0, as: UTF8.self) == "LOGBOOK_HOME=\(home)" }
    }

    /// VmRSS in KiB.
    static func rssKiB(_ pid: pid_t) -> Int {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return 0 }
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            return Int(line.split(separator: " ").dropFirst().first ?? "0") ?? 0
        }
        return 0
    }

    /// utime + stime of every thread, in clock ticks.
    static func cpuTicks(_ pid: pid_t) -> Int {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return 0 }
        // After "pid (comm) ": state is field 3; utime and stime are fields 14 and 15.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 13 else { return 0 }
        return (Int(fields[11]) ?? 0) + (Int(fields[12]) ?? 0)
    }
}
