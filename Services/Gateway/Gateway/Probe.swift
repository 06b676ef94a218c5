// Asks every service for `$srv.info` at once, with a short deadline, and reports each as
// up (version, uptime, round-trip time), down, or not installed. Shared by `logbook status`
// and `logbook stack status`; a service that does not answer is a row, never a crash.
import Foundation
import Runtime
import Wire

struct ServiceStatus: Codable, Sendable {
    enum State: String, Codable, Sendable {
        case up
        case down
        case notInstalled = "not installed"
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
}

enum Probe {
    static func all(_ context: Context, timeout: Duration = .seconds(1)) async -> [ServiceStatus] {
        let executables = Executables(configuration: context.configuration)
        return await withTaskGroup(of: ServiceStatus.self) { group in
            for service in StackConfiguration.services {
                group.addTask { await one(service, context: context, installed: executables.isInstalled(service), timeout: timeout) }
            }
            var statuses: [ServiceStatus] = []
            for await status in group { statuses.append(status) }
            return StackConfiguration.services.compactMap { name in statuses.first { $0.service == name } }
        }
    }

    static func one(_ service: String, context: Context, installed: Bool, timeout: Duration) async -> ServiceStatus {
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
        } catch {
            status.state = installed ? .down : .notInstalled
            status.error = (error as? ServiceError)?.message ?? "\(error)"
        }
        return status
    }

    /// True when every installed service is up.
    static func healthy(_ statuses: [ServiceStatus]) -> Bool {
        !statuses.contains { $0.state == .down }
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
