// Password spraying against the real auth service (in this process, served over ZeroMQ on a
// throwaway ipc endpoint, production Argon2id cost): `--clients` callers guess passwords
// across `--usernames` names for `--seconds`, while the owner logs in from a known device
// every second. Reports how many guesses a minute reached a password check, how many were
// refused by the throttle, and the owner's login latency. `--budget 0` switches the global
// failed-attempt budget off (the behaviour before it existed).
import ArgumentParser
import AuthService
import Foundation
import Logging
import Runtime
import ServiceLifecycle
import Storage
import Synchronization
import Wire

struct LoginSprayBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "login-spray", abstract: "Guessing passwords across many usernames, and the owner's login meanwhile.")

    @Option(help: "Failed sign-ins a minute allowed (LOGBOOK_AUTH_FAILED_LOGINS_PER_MINUTE); 0: no global budget.")
    var budget = 60
    @Option(help: "Usernames sprayed.") var usernames = 200
    @Option(help: "Concurrent guessing clients.") var clients = 3
    @Option(help: "How long to spray.") var seconds = 30.0

    func run() async throws {
        let directory = "/tmp/lbb-\(UUID().uuidString.prefix(8).lowercased())"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var logger = Logger(label: "bench")
        logger.logLevel = .critical
        let configuration = AuthConfiguration(failedLoginsPerMinute: budget)
        let auth = try AuthService(
            configuration: configuration, database: DatabaseSettings(path: directory + "/auth.sqlite"), logger: logger)
        let endpoint = "ipc://\(directory)/auth.sock"
        let group = ServiceGroup(services: auth.services(endpoint: endpoint), logger: logger)
        print(
            "logbook-bench login-spray: budget \(budget)/min, \(usernames) usernames, \(clients) clients, \(seconds) s, "
                + "Argon2id \(configuration.argon2.opslimit) passes × \(configuration.argon2.memlimit / 1_048_576) MiB, "
                + "\(configuration.hashingConcurrency) hashing lanes, \(ProcessInfo.processInfo.activeProcessorCount) cores")
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            defer { tasks.cancelAll() }
            try await Task.sleep(for: .milliseconds(300))
            try await measure(endpoint: endpoint)
            await group.triggerGracefulShutdown()
        }
    }

    private func measure(endpoint: String) async throws {
        let owner = try ServiceClient(service: "auth", endpoint: endpoint)
        let timeout = CallOptions(timeout: .seconds(60))
        _ = try await owner.reply("auth.register", body: ["username": "owner", "password": "correct horse"], options: timeout)
        let first = try await owner.reply("auth.login", body: ["username": "owner", "password": "correct horse"], options: timeout)
        guard let device = first.result?["deviceToken"]?.stringValue else { throw ValidationError("no device token") }

        let tally = Tally()
        let clock = ContinuousClock()
        let end = clock.now + .milliseconds(Int(seconds * 1000))
        var ownerLatencies: [Double] = []
        var ownerFailures = 0
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            for c in 0..<clients {
                tasks.addTask {
                    let client = try ServiceClient(service: "auth", endpoint: endpoint)
                    let (clients, usernames) = (self.clients, self.usernames)
                    var i = c
                    while clock.now < end {
                        let name = "user\(i % usernames)"
                        i += clients
                        let reply = try await client.reply(
                            "auth.login", body: ["username": .string(name), "password": .string("guess \(i)")],
                            options: timeout)
                        if reply.error?.code == .resourceExhausted {
                            tally.refused.add(1, ordering: .relaxed)
                            // A patient attacker waits as told (capped so the run ends on time).
                            let wait = min(reply.error?.details?["retryAfterMs"]?.doubleValue ?? 100, 1000)
                            try await Task.sleep(for: .milliseconds(Int(wait)))
                        } else {
                            tally.checked.add(1, ordering: .relaxed)
                        }
                    }
                }
            }
            while clock.now < end {
                try await Task.sleep(for: .seconds(1))
                let start = clock.now
                let reply = try await owner.reply(
                    "auth.login", body: ["username": "owner", "password": "correct horse", "deviceToken": .string(device)],
                    options: timeout)
                let elapsed = clock.now - start
                if reply.ok {
                    ownerLatencies.append(Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15)
                } else {
                    ownerFailures += 1
                }
            }
            try await tasks.waitForAll()
        }
        let minutes = seconds / 60
        print(String(format: "guesses checked: %d (%.0f a minute)", tally.checked.load(ordering: .relaxed), Double(tally.checked.load(ordering: .relaxed)) / minutes))
        print(String(format: "guesses refused by the throttle: %d", tally.refused.load(ordering: .relaxed)))
        print(
            String(
                format: "owner's logins (known device): %d ok, %d failed; p50 %.0f ms, max %.0f ms",
                ownerLatencies.count, ownerFailures, percentile(ownerLatencies, 0.5), ownerLatencies.max() ?? 0))
    }
}

private final class Tally: Sendable {
    let checked = Atomic<Int>(0)
    let refused = Atomic<Int>(0)
}
