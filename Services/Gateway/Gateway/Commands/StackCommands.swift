// `logbook stack up|down|status|logs`: run the whole stack on this machine under one
// detached supervisor (Services/Gateway/StackSupervisor: the supervisor, and starting and
// stopping it). `up` is harmless when the stack already runs.
import ArgumentParser
import Foundation
import Runtime
import StackSupervisor
import Wire

struct Stack: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stack",
        abstract: "Run the services on this machine.",
        discussion: """
            Data, sockets (run/, mode 0700) and logs live under LOGBOOK_HOME. Only services whose \
            executables sit next to `logbook` (or in LOGBOOK_BIN_DIR) are started.
            """,
        subcommands: [StackUp.self, StackDown.self, StackStatus.self, StackLogs.self, StackRebuild.self, StackSupervise.self])
}

struct StackUp: GatewayCommand {
    static let configuration = CommandConfiguration(
        commandName: "up",
        abstract: "Start the supervisor and wait until every service answers (and, for up to 10 s more, is ready).")

    @OptionGroup var global: GlobalOptions
    @Option(help: ArgumentHelp("Seconds to wait for every service to answer $srv.ping.", valueName: "seconds"))
    var wait: Double = 30

    func validate() throws { try GlobalOptions.checkSeconds(wait, "--wait", within: 0...3_600) }

    func execute(_ context: Context) async throws {
        // The stack's files (logs, pid files, the key files) are its owner's alone.
        umask(0o077)
        let files = StackFiles(context.configuration)
        do {
            _ = try context.configuration.localRecordsShards()
        } catch let error as ConfigurationError {
            throw ServiceError(.failedPrecondition, "configuration: \(error.description)")
        }
        let executables = Executables(configuration: context.configuration)
        let services = executables.installed
        guard !services.isEmpty else {
            throw ServiceError(.failedPrecondition, "no service executables in \(executables.directory); build with `swift build` first")
        }
        try files.prepare()
        // The stack key (and, with a TCP endpoint, the CURVE keypair) on first use; then
        // read the configuration again so this command's own clients are members too.
        do {
            try StackKeys.ensure(context.configuration)
        } catch let error as ConfigurationError {
            throw ServiceError(.failedPrecondition, "stack keys: \(error.description)")
        }
        let context = try Context(options: global)
        let supervisor: pid_t
        var started = false
        if let pid = files.liveSupervisor() {
            supervisor = pid
            if !context.json { Output.line("stack already running (supervisor pid \(pid)); checking services") }
        } else {
            var environment = context.environment
            environment.merge(context.configuration.environment) { $1 }
            (supervisor, started) = try await StackControl.startSupervisor(files, environment: environment)
            if !context.json {
                Output.line(started ? "supervisor started (pid \(supervisor))" : "stack already running (supervisor pid \(supervisor))")
            }
        }
        try await awaitServices(services, context: context, files: files)
        let catchingUp = await awaitReady(services, context: context)
        let edges = executables.installedEdges
        if context.json {
            Output.json(["supervisorPid": .number(.init(supervisor)), "started": .bool(started),
                         "services": .array(services.map { .string($0) }), "edges": .array(edges.map { .string($0) })])
        } else {
            Output.line("up: \(services.joined(separator: ", ")) (logs in \(context.configuration.logDirectory))")
            for (service, problems) in catchingUp {
                Output.line("\(service): not ready yet (\(problems.joined(separator: "; "))); `logbook status` shows its progress")
            }
            if edges.contains("logbook-http") {
                Output.line("http: \(Executables.httpURL(context.configuration)) (starting beside the services; `logbook status` shows it)")
            }
        }
    }

    /// Once every service answers: waits a little (at most `readyWait`) until each says it
    /// is ready, its event consumers having reached their producers (a service just started
    /// has not yet), so a `logbook status` right after `up` shows the stack as it runs.
    /// Those still catching up (a long backlog) are returned with their problems, not an error.
    private func awaitReady(_ services: [String], context: Context) async -> [(String, [String])] {
        let clock = ContinuousClock()
        let deadline = clock.now + .milliseconds(Int64(min(wait, Self.readyWait) * 1000))
        var pending = services.map { ($0, [String]()) }
        while !pending.isEmpty {
            var still: [(String, [String])] = []
            for (service, _) in pending {
                let info = try? await context.send(service, "$srv.info", caller: .anonymous, timeout: .milliseconds(500))
                guard let health = try? info?["health"]?.decode(HealthReport.self) else { continue }
                if !health.ready || health.state == .degraded { still.append((service, health.problems)) }
            }
            pending = still
            if pending.isEmpty || clock.now >= deadline { break }
            try? await Task.sleep(for: .milliseconds(100))
        }
        return pending
    }

    /// How long `up` waits for services to be ready once they answer.
    static let readyWait: Double = 10

    private func awaitServices(_ services: [String], context: Context, files: StackFiles) async throws {
        let clock = ContinuousClock()
        let deadline = clock.now + .milliseconds(Int64(wait * 1000))
        var pending = services
        while !pending.isEmpty {
            var still: [String] = []
            for service in pending {
                do {
                    _ = try await context.send(service, "$srv.ping", caller: .anonymous, timeout: .milliseconds(500))
                } catch {
                    still.append(service)
                }
            }
            pending = still
            if pending.isEmpty { break }
            guard files.liveSupervisor() != nil else {
                throw ServiceError(.unavailable, "the supervisor stopped; see \(files.log("supervisor"))")
            }
            if clock.now >= deadline {
                let logs = pending.map { "\($0): \(files.log($0))" }.joined(separator: ", ")
                throw ServiceError(
                    .unavailable,
                    "\(pending.joined(separator: ", ")) did not answer $srv.ping within \(Int(wait)) s; see \(logs) "
                        + "(the supervisor keeps restarting it; `logbook stack down` stops everything)")
            }
            try await Task.sleep(for: .milliseconds(200))
        }
    }
}

struct StackDown: GatewayCommand {
    static let configuration = CommandConfiguration(
        commandName: "down", abstract: "Stop the supervisor and every service; wait until they are gone.")

    @OptionGroup var global: GlobalOptions

    func execute(_ context: Context) async throws {
        switch try await StackControl.stop(StackFiles(context.configuration)) {
        case .notRunning(let strays):
            Output.line(strays.isEmpty ? "stack is not running" : "stack was not supervised; stopped \(strays.joined(separator: ", "))")
        case .stopped(let pid):
            Output.line("stack stopped (supervisor pid \(pid))")
        }
    }
}

struct StackStatus: GatewayCommand {
    static let configuration = CommandConfiguration(
        commandName: "status", abstract: "`logbook status` plus the supervisor's and services' pids.")

    @OptionGroup var global: GlobalOptions

    func execute(_ context: Context) async throws {
        let files = StackFiles(context.configuration)
        var statuses = await Probe.all(context)
        for i in statuses.indices { statuses[i].pid = files.liveService(statuses[i].service) }
        let supervisor = files.liveSupervisor()
        if context.json {
            Output.json(["supervisorPid": supervisor.map { .number(.init($0)) } ?? .null, "services": try JSONValue.from(statuses)])
        } else {
            Output.line(supervisor.map { "supervisor: pid \($0)" } ?? "supervisor: not running")
            Output.line(Probe.table(statuses, pids: true))
            Probe.problems(statuses).forEach { Output.line($0) }
        }
        if supervisor == nil { throw ExitStatus.exitCode(for: .unavailable) }
        let code = Probe.exitCode(statuses)
        if code != 0 { throw ExitCode(code) }
    }
}

struct StackLogs: GatewayCommand {
    static let configuration = CommandConfiguration(
        commandName: "logs", abstract: "Print a service's log (or every log), optionally following it.")

    @OptionGroup var global: GlobalOptions
    @Argument(help: "A service, or `supervisor`; every log when omitted.") var service: String?
    @Flag(name: [.short, .long], help: "Keep printing what is appended, until interrupted.") var follow = false
    @Option(name: [.short, .long], help: "Lines to print from the end of each log first.") var lines = 50

    func execute(_ context: Context) async throws {
        let known = ["supervisor"] + context.configuration.instances + Executables.edges
        if let service, !known.contains(service) {
            throw ValidationError("unknown service \"\(service)\"; one of: \(known.joined(separator: ", "))")
        }
        let files = StackFiles(context.configuration)
        let names = service.map { [$0] } ?? known
        let paths = names.map { files.log($0) }.filter { FileManager.default.fileExists(atPath: $0) }
        guard !paths.isEmpty else {
            throw ServiceError(.notFound, "no log yet in \(context.configuration.logDirectory)")
        }
        var offsets: [String: UInt64] = [:]
        for path in paths {
            let data = FileManager.default.contents(atPath: path) ?? Data()
            offsets[path] = UInt64(data.count)
            let tail = String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
                .dropLast().suffix(lines)
            if paths.count > 1 { Output.line("==> \(path) <==") }
            tail.forEach { Output.line(String($0)) }
        }
        guard follow else { return }
        while true {
            for path in paths {
                guard let handle = FileHandle(forReadingAtPath: path) else { continue }
                let size = (try? handle.seekToEnd()) ?? 0
                var offset = offsets[path] ?? 0
                if size < offset { offset = 0 }  // truncated
                if size > offset {
                    try? handle.seek(toOffset: offset)
                    let data = (try? handle.readToEnd()) ?? Data()
                    offsets[path] = offset + UInt64(data.count)
                    let prefix = paths.count > 1 ? "\(URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent) | " : ""
                    for line in String(decoding: data, as: UTF8.self).split(separator: "\n") { Output.line(prefix + line) }
                }
                try? handle.close()
            }
            try await Task.sleep(for: .milliseconds(250))
        }
    }
}

struct StackSupervise: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "supervise", abstract: "Run the supervisor in the foreground (started by `stack up`).",
        shouldDisplay: false)

    @OptionGroup var global: GlobalOptions

    func run() throws {
        umask(0o077)
        do {
            let context = try Context(options: global)
            var environment = context.environment
            environment.merge(context.configuration.environment) { $1 }
            _ = try StackControl.supervise(configuration: context.configuration, environment: environment)
        } catch {
            throw Failure.report(error, json: false)
        }
    }
}
