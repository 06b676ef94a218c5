// Asks every service for `$srv.info` at once, with a short deadline, and reports each as
// up (version, uptime, round-trip time), degraded (answering, but its health says a
// consumer is behind or stalled, or a part is failing), down (installed here, no answer),
// unreachable (configured at an endpoint of its own, no answer) or not installed. Shared
// by `logbook status` and `logbook stack status`; a service that does not answer is a row,
// never a crash.
import Foundation
import Runtime
import StackSupervisor
import Wire

struct ServiceStatus: Codable, Sendable {
    enum State: String, Codable, Sendable {
        case up
        case degraded
        case down
        case unreachable
        case notInstalled = "not installed"
        /// The HTTP edge in a Kubernetes pod that does not run it (a service pod: the image
        /// holds every executable, the edge runs in pods of its own).
        case notRunHere = "not run here"
    }

    var service: String
    var state: State
    var endpoint: String
    var version: String?
    var instanceId: String?
    var uptimeMs: Int64?
    var rttMs: Double?
    var pid: Int32?
    var error: String?
    /// Why it is degraded (consumers behind or stalled, an unreadable outbox).
    var problems: [String]?
    /// Each event consumer's progress, from `$srv.info`.
    var consumers: [ConsumerStatus]?
    /// The writer connection's `synchronous` level, read back by the service.
    var synchronous: String?
}

enum Probe {
    static func all(_ context: Context, timeout: Duration = .seconds(1)) async -> [ServiceStatus] {
        let executables = Executables(configuration: context.configuration)
        return await withTaskGroup(of: ServiceStatus.self) { group in
            // Every records shard is a row of its own (`records`, `records-2`, …).
            for service in context.configuration.instances {
                let configured = context.configuration.isConfigured(service)
            group.addTask {
                await one(
                    service, context: context, installed: executables.isInstalled(service), configured: configured,
                    timeout: timeout)
            }
            }
            for edge in executables.installedEdges {
                group.addTask { await http(edge, context: context, timeout: timeout) }
            }
            var statuses: [ServiceStatus] = []
            for await status in group { statuses.append(status) }
            return (context.configuration.instances + Executables.edges).compactMap { name in statuses.first { $0.service == name } }
        }
    }

    /// The HTTP edge has no ZeroMQ socket: it is up when its /healthz answers 200.
    static func http(_ edge: String, context: Context, timeout: Duration) async -> ServiceStatus {
        let base = Executables.httpURL(context.configuration)
        var status = ServiceStatus(service: edge, state: .down, endpoint: base)
        let clock = ContinuousClock()
        let start = clock.now
        do {
            if base.hasPrefix("https:") {
                // TLS in the edge: the CLI has no TLS of its own (EdgeHealth.swift), and a
                // self-signed certificate, or one for a public name, would fail a check for
                // 127.0.0.1 anyway. The edge's own probe speaks TLS to it without asking who
                // it is (Services/HTTPGateway/HTTPGateway/Probe.swift).
                try await edgeProbe(Executables(configuration: context.configuration).path(edge), timeout: timeout)
            } else {
                let code = try await EdgeHealth.status(base, path: "/healthz", timeout: timeout)
                guard code == 200 else { throw EdgeHealth.Failure("\(base)/healthz: answered \(code)") }
            }
            let elapsed = clock.now - start
            let ms = Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
            status.rttMs = (ms * 10).rounded() / 10
            status.state = .up
        } catch {
            // In a Kubernetes pod (the kubelet sets KUBERNETES_SERVICE_HOST in every one) where
            // nothing started the edge, it runs elsewhere. Anywhere else an installed edge that
            // does not answer is down: a systemd unit that failed before it listened wrote
            // no address either.
            let configuration = context.configuration
            let startedHere =
                FileManager.default.fileExists(atPath: configuration.runDirectory + "/logbook-http.url")
                || configuration.values["LOGBOOK_HTTP_LISTEN"]?.isEmpty == false || StackFiles(configuration).liveSupervisor() != nil
            let inPod = ProcessInfo.processInfo.environment["KUBERNETES_SERVICE_HOST"]?.isEmpty == false
            if inPod && !startedHere { status.state = .notRunHere } else { status.error = "\(error)" }
        }
        return status
    }

    /// `logbook-http --probe --path /healthz`: returns when it exits 0, throws its message otherwise.
    static func edgeProbe(_ executable: String, timeout: Duration) async throws {
        let seconds = max(0.1, Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = ["--probe", "--path", "/healthz", "--timeout", String(seconds)]
        let output = Pipe()
        process.standardOutput = FileHandle.nullDevice
        process.standardError = output
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let clock = ContinuousClock()
        let deadline = clock.now + timeout + .seconds(2)
        while process.isRunning {
            if clock.now >= deadline {
                process.terminate()
                throw EdgeHealth.Failure("no answer from \(executable) --probe in time")
            }
            try await Task.sleep(for: .milliseconds(10))
        }
        guard process.terminationStatus == 0 else {
            let said = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            throw EdgeHealth.Failure("\(executable) --probe: \(said.trimmingCharacters(in: .whitespacesAndNewlines))")
        }
    }

    /// - Parameter configured: its endpoint is set explicitly (it may run on another host),
    ///   so silence is `unreachable`, never `not installed`.
    static func one(
        _ service: String, context: Context, installed: Bool, configured: Bool, timeout: Duration
    ) async -> ServiceStatus {
        var status = ServiceStatus(service: service, state: .down, endpoint: context.configuration.endpoint(service))
        let clock = ContinuousClock()
        let start = clock.now
        do {
            let info = try await context.send(service, "$srv.info", caller: .anonymous, timeout: timeout)
            let elapsed = clock.now - start
            status.state = .up
            let ms = Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
            status.rttMs = (ms * 10).rounded() / 10
            status.version = info["version"]?.stringValue
            status.instanceId = info["instanceId"]?.stringValue
            status.uptimeMs = info["uptimeMs"]?.intValue.map(Int64.init)
            status.synchronous = info["storage"]?["synchronous"]?.stringValue
            if let health = try? info["health"]?.decode(HealthReport.self) {
                status.consumers = health.consumers
                if health.state == .degraded || !health.ready {
                    status.state = .degraded
                    status.problems = health.problems
                }
            }
        } catch {
            status.state = installed ? .down : configured ? .unreachable : .notInstalled
            status.error = (error as? ServiceError)?.message ?? "\(error)"
        }
        return status
    }

    /// True when every installed or configured service is up.
    static func healthy(_ statuses: [ServiceStatus]) -> Bool {
        statuses.allSatisfy { $0.state == .up || $0.state == .notInstalled || $0.state == .notRunHere }
    }

    /// The exit status of `status`: 0 all up, 7 any down or unreachable, 9 some degraded.
    static func exitCode(_ statuses: [ServiceStatus]) -> Int32 {
        if statuses.contains(where: { $0.state == .down || $0.state == .unreachable }) {
            return ExitStatus.unavailable
        }
        return statuses.contains { $0.state == .degraded } ? ExitStatus.partial : 0
    }

    /// With more than one records shard: a line naming each shard that does not answer
    /// (only its users are affected).
    static func shardLines(_ statuses: [ServiceStatus], configuration: StackConfiguration) -> [String] {
        guard configuration.recordsShards > 1 else { return [] }
        return statuses.compactMap { status in
            guard let shard = StackConfiguration.shard(of: status.service), status.state == .down || status.state == .unreachable
            else { return nil }
            return "records shard \(shard) (\(status.service)) is \(status.state.rawValue): its users' records cannot be reached; "
                + "users on the other shards are not affected"
        }
    }

    /// One line per problem of a degraded service (under the table).
    static func problems(_ statuses: [ServiceStatus]) -> [String] {
        statuses.flatMap { status in (status.problems ?? []).map { "\(status.service): \($0)" } }
    }

    static func table(_ statuses: [ServiceStatus], pids: Bool = false) -> String {
        var headers = ["SERVICE", "STATE", "VERSION", "UPTIME", "RTT"]
        if pids { headers.append("PID") }
        let rows = statuses.map { s -> [String] in
            var row = [
                s.service, s.state.rawValue, s.version ?? "-",
                s.uptimeMs.map { Output.duration(milliseconds: $0) } ?? "-",
                s.rttMs.map { String(format: "%.1f ms", $0) } ?? "-",
            ]
            if pids { row.append(s.pid.map(String.init) ?? "-") }
            return row
        }
        return Output.table(headers, rows)
    }
}
