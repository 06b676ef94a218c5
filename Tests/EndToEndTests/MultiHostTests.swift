// Three hosts on one machine: network namespaces, each with its own address, joined by veth
// pairs to a bridge (in a fourth namespace, the "switch"). Host A runs auth and the CLI,
// host B records, host C analytics, the store and weather-fetcher; every endpoint is TCP
// between the hosts' addresses, so every link is CURVE, with a keypair per host, one
// allow-list and one stack key (docs/operations.md, "Two hosts, step by step"). The test
// writes through the CLI on A, cuts B's link for a few seconds in the middle of the writes
// (`ip link set … down` on the switch's port), restores it, and then checks that every
// acknowledged write (added, or queued by the CLI and synced afterwards) is stored exactly
// once, that every event consumer on every host reached its producer's last event, and that
// analytics' figures (host C) add up to what records (host B) holds.
//
// It needs root (namespaces, links). Without it, it is reported as skipped, with the reason;
// deploy/test.sh runs as root in CI, where it runs. Everything it starts runs inside its
// namespaces; at the end, even on failure, every process in them is killed and the
// namespaces (and with them the links) are deleted.
import Foundation
import Testing

/// The three hosts, their switch, and how to run things on them.
final class Hosts: Sendable {
    static let ip = Tool.find("ip") ?? "/usr/sbin/ip"

    /// Whether this machine lets us make network namespaces (root, iproute2, a kernel with
    /// them): tried once, for real, with a throwaway namespace.
    static let available: Bool = {
        guard getuid() == 0, FileManager.default.isExecutableFile(atPath: ip) else { return false }
        let name = "lbprobe\(getpid())"
        func run(_ arguments: [String]) -> Int32 {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: ip)
            process.arguments = arguments
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            guard (try? process.run()) != nil else { return -1 }
            process.waitUntilExit()
            return process.terminationStatus
        }
        guard run(["netns", "add", name]) == 0 else { return false }
        _ = run(["netns", "del", name])
        return true
    }()

    struct Host: Sendable {
        var name: String
        var namespace: String
        var address: String
        var services: [String]
        var home: String
        /// The switch's end of this host's link.
        var port: String
    }

    let tag: String
    let switchNamespace: String
    let hosts: [Host]
    let binDirectory: String

    init(layout: [(String, [String])]) throws {
        let tag = String(UUID().uuidString.prefix(5)).lowercased()
        self.tag = tag
        switchNamespace = "lb\(tag)sw"
        binDirectory = try TestStack.findBinaries()
        hosts = layout.enumerated().map { index, entry in
            Host(
                name: entry.0, namespace: "lb\(tag)\(entry.0)", address: "10.213.0.\(index + 1)", services: entry.1,
                home: "/tmp/lbm-\(tag)-\(entry.0)", port: "lb\(tag)p\(index + 1)")
        }
    }

    func ip(_ arguments: String...) async throws {
        let result = try await Tool.run(Self.ip, arguments, timeout: .seconds(10))
        guard result.status == 0 else {
            throw HarnessError("ip \(arguments.joined(separator: " ")): \(result.stderr)")
        }
    }

    /// Namespaces, links, addresses; each host's bin folder holds `logbook` and its services.
    func create() async throws {
        try await ip("netns", "add", switchNamespace)
        try await ip("-n", switchNamespace, "link", "add", "br0", "type", "bridge")
        try await ip("-n", switchNamespace, "link", "set", "br0", "up")
        for (index, host) in hosts.enumerated() {
            try await ip("netns", "add", host.namespace)
            let nic = "lb\(tag)h\(index + 1)"
            try await ip("link", "add", nic, "netns", host.namespace, "type", "veth", "peer", "name", host.port, "netns", switchNamespace)
            try await ip("-n", switchNamespace, "link", "set", host.port, "master", "br0")
            try await ip("-n", switchNamespace, "link", "set", host.port, "up")
            try await ip("-n", host.namespace, "addr", "add", host.address + "/24", "dev", nic)
            try await ip("-n", host.namespace, "link", "set", nic, "up")
            try await ip("-n", host.namespace, "link", "set", "lo", "up")
            try FileManager.default.createDirectory(atPath: host.home + "/bin", withIntermediateDirectories: true)
            for executable in ["logbook"] + host.services {
                try FileManager.default.createSymbolicLink(
                    atPath: host.home + "/bin/" + executable, withDestinationPath: binDirectory + "/" + executable)
            }
        }
    }

    /// Kills every process in the namespaces, deletes them (their links go with them) and
    /// the hosts' folders. Safe to call whatever state things are in — also from a test the
    /// time limit has cancelled: the work runs in a task of its own, because in a cancelled
    /// task `Tool.run` throws at its first wait, and the supervisors were left running in
    /// namespaces that had been deleted (seen after a run at load 49).
    func destroy() async {
        let namespaces = hosts.map(\.namespace) + [switchNamespace]
        let homes = hosts.map(\.home)
        await Task.detached {
            for namespace in namespaces {
                // A supervisor may start a service while we kill: list again until none is left.
                for _ in 0..<5 {
                    guard let pids = try? await Tool.run(Self.ip, ["netns", "pids", namespace], timeout: .seconds(30)) else { break }
                    let alive = pids.stdout.split(separator: "\n").compactMap { pid_t($0) }
                    if alive.isEmpty { break }
                    for pid in alive { kill(pid, SIGKILL) }
                    try? await Task.sleep(for: .milliseconds(100))
                }
                _ = try? await Tool.run(Self.ip, ["netns", "del", namespace], timeout: .seconds(30))
            }
            for home in homes { try? FileManager.default.removeItem(atPath: home) }
        }.value
    }

    /// `logbook arguments…` on `host`, inside its namespace, with its environment.
    @discardableResult
    func logbook(
        _ host: Host, _ arguments: [String], environment: [String: String], stdin: String? = nil,
        timeout: Duration = .seconds(60)
    ) async throws -> CommandResult {
        try await Tool.run(
            Self.ip, ["netns", "exec", host.namespace, host.home + "/bin/logbook"] + arguments, environment: environment,
            stdin: stdin, timeout: timeout)
    }
}

@Suite("several hosts", .serialized)
struct MultiHostTests {
    static let services = SystemdTests.services
    static let ports: [String: (Int, Int)] = [
        "auth": (7101, 7102), "records": (7103, 7104), "weather-fetcher": (7105, 7106), "analytics": (7107, 7108),
        "store": (7109, 7110),
    ]

    static func setting(_ service: String) -> String { service.uppercased().replacingOccurrences(of: "-", with: "_") }

    @Test(
        "auth and the CLI, records, and the consumers on three hosts: a link cut during writes loses and doubles nothing",
        .enabled(if: Hosts.available, "needs root and iproute2 to make network namespaces (CI runs deploy/test.sh as root)"),
        .timeLimit(.minutes(2)))
    func linkCut() async throws {
        let clock = ContinuousClock()
        let started = clock.now
        let hosts = try Hosts(layout: [("a", ["auth"]), ("b", ["records"]), ("c", ["analytics", "store", "weather-fetcher"])])
        do {
            try await run(hosts)
        } catch {
            for host in hosts.hosts {
                for service in host.services {
                    let log = (try? String(contentsOfFile: "\(host.home)/logs/\(service).log", encoding: .utf8)) ?? ""
                    print("--- host \(host.name) \(service).log (last lines)\n" + log.split(separator: "\n").suffix(15).joined(separator: "\n"))
                }
            }
            await hosts.destroy()
            throw error
        }
        await hosts.destroy()
        print("multi-host test took \(clock.now - started)")
    }

    func run(_ hosts: Hosts) async throws {
        try await hosts.create()
        let a = hosts.hosts[0], b = hosts.hosts[1], c = hosts.hosts[2]

        // A keypair per host (from the real `logbook keys generate`), one allow-list, one stack key.
        var keys: [String: (public: String, secret: String)] = [:]
        for host in hosts.hosts {
            let generated = try await Tool.run(hosts.binDirectory + "/logbook", ["keys", "generate", "--json"])
            try #require(generated.status == 0, "\(generated.stderr)")
            let object = generated.object
            keys[host.name] = (try #require(object["publicKey"] as? String), try #require(object["secretKey"] as? String))
        }
        let stackKey = (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
        func environment(_ host: Hosts.Host) -> [String: String] {
            var env: [String: String] = [
                "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin",
                "HOME": host.home, "LOGBOOK_HOME": host.home, "LOGBOOK_CONFIG_DIR": host.home + "/config",
                "LOGBOOK_BIN_DIR": host.home + "/bin", "LOGBOOK_LOG_LEVEL": "info",
                "LOGBOOK_CURVE_PUBLIC_KEY": keys[host.name]!.public, "LOGBOOK_CURVE_SECRET_KEY": keys[host.name]!.secret,
                "LOGBOOK_CURVE_ALLOW": hosts.hosts.map { keys[$0.name]!.public }.joined(separator: ","),
                "LOGBOOK_STACK_KEY": stackKey,
                // a consumer that hears nothing for this long counts as stalled; the cut is shorter
                "LOGBOOK_EVENTS_STALL_AFTER": "30",
            ].merging(TestStack.offline) { $1 }
            for owner in hosts.hosts {
                for service in owner.services {
                    let name = Self.setting(service)
                    let (request, events) = Self.ports[service]!
                    env["LOGBOOK_\(name)_ENDPOINT"] = "tcp://\(owner.address):\(request)"
                    env["LOGBOOK_\(name)_EVENTS"] = "tcp://\(owner.address):\(events)"
                    env["LOGBOOK_\(name)_CURVE_PUBLIC_KEY"] = keys[owner.name]!.public
                }
            }
            return env
        }

        // Each host starts only the services installed in its bin folder.
        for host in [b, c, a] {
            let up = try await hosts.logbook(host, ["stack", "up"], environment: environment(host))
            try #require(up.status == 0, "stack up on \(host.name): \(up.stdout)\(up.stderr)")
        }
        // From A every service answers, over CURVE, at the other hosts' addresses.
        let clock = ContinuousClock()
        var status = CommandResult(status: -1, stdout: "", stderr: "")
        let deadline = clock.now + .seconds(20)
        while clock.now < deadline {
            status = try await hosts.logbook(a, ["status", "--json", "--timeout", "2"], environment: environment(a))
            if status.status == 0 { break }
            try await Task.sleep(for: .milliseconds(300))
        }
        try #require(status.status == 0, "status on A: \(status.stdout)\(status.stderr)")
        for host in hosts.hosts {
            for service in host.services {
                let log = (try? String(contentsOfFile: "\(host.home)/logs/\(service).log", encoding: .utf8)) ?? ""
                #expect(log.contains("service.curve=on"), "\(service) on \(host.name) did not listen with CURVE")
            }
        }

        let register = try await hosts.logbook(
            a, ["register", "alice", "--password-stdin"], environment: environment(a), stdin: TestStack.password + "\n")
        try #require(register.status == 0, "register: \(register.stderr)")

        // Writes through the CLI on A; B's link is cut after the 10th and restored 4 s later.
        let count = 30
        var acknowledged: [String] = []
        var queued = 0
        var failed: [String] = []
        var restore: Task<Void, any Error>?
        let writesStarted = clock.now
        for index in 0..<count {
            if index == 10 {
                try await hosts.ip("-n", hosts.switchNamespace, "link", "set", b.port, "down")
                restore = Task {
                    try await Task.sleep(for: .seconds(4))
                    try await hosts.ip("-n", hosts.switchNamespace, "link", "set", b.port, "up")
                }
                // while B is cut off, `logbook status` on A says records is unreachable (exit 7)
                let cut = try await hosts.logbook(a, ["status", "--json", "--timeout", "1"], environment: environment(a))
                #expect(cut.status == 7, "status during the cut: \(cut.stdout)\(cut.stderr)")
                let rows = (cut.json as? [[String: Any]]) ?? (cut.object["services"] as? [[String: Any]]) ?? []
                let records = rows.first { $0["service"] as? String == "records" }
                #expect(records?["state"] as? String == "unreachable", "\(cut.stdout)")
            }
            let name = "w\(index)"
            let write = try await hosts.logbook(
                a, ["expense", "add", name, "1.\(String(format: "%02d", index))", "--json", "--timeout", "1.5"],
                environment: environment(a))
            if write.status == 0 {
                acknowledged.append(name)
                if write.object["queued"] as? Bool == true { queued += 1 }
            } else {
                failed.append(name + ": " + write.stderr)
            }
        }
        try await restore?.value
        let writing = clock.now - writesStarted
        #expect(queued > 0, "no write was queued: the cut did not happen during the writes (\(writing))")
        #expect(failed.isEmpty, "writes refused: \(failed)")

        // The link is back: what the CLI queued is sent again (same idempotency keys).
        var synced = false
        let syncDeadline = clock.now + .seconds(20)
        while clock.now < syncDeadline {
            // exit 0: everything queued was sent (7 while it cannot reach records, 9 if refused)
            let sync = try await hosts.logbook(a, ["sync", "--json", "--timeout", "2"], environment: environment(a))
            if sync.status == 0 {
                synced = true
                break
            }
            try await Task.sleep(for: .milliseconds(500))
        }
        #expect(synced, "the queued writes were not synced")

        // Every acknowledged write stored exactly once (and nothing else).
        let list = try await hosts.logbook(
            a, ["expense", "list", "--json", "--all", "--timeout", "5"], environment: environment(a))
        try #require(list.status == 0, "\(list.stderr)")
        let items = (list.object["items"] as? [[String: Any]]) ?? (list.json as? [[String: Any]]) ?? []
        let names = items.compactMap { $0["name"] as? String }
        var counts: [String: Int] = [:]
        for name in names { counts[name, default: 0] += 1 }
        for name in acknowledged { #expect(counts[name] == 1, "\(name) stored \(counts[name] ?? 0) times") }
        #expect(Set(names).isSubset(of: Set((0..<count).map { "w\($0)" })), "\(names)")
        #expect(names.count == Set(names).count, "a write stored twice: \(names.sorted())")
        let storedTotal = items.compactMap { ($0["amountMinor"] as? NSNumber)?.int64Value }.reduce(0, +)

        // Every consumer, on every host, reaches its producer's last event; analytics (C)
        // adds up what records (B) holds.
        var lagging: [String] = []
        var consumersSeen = 0
        var recordsLast: Int64 = -1
        let catchUp = clock.now + .seconds(15)
        repeat {
            lagging = []
            consumersSeen = 0
            var last: [String: Int64] = [:]
            for producer in ["auth", "records", "weather-fetcher", "analytics", "store"] {
                let since = try await hosts.logbook(
                    a, ["call", producer, "events.since", #"{"after":0,"limit":1}"#, "--timeout", "3"], environment: environment(a))
                if let value = (since.object["result"] as? [String: Any])?["last"] as? NSNumber ?? since.object["last"] as? NSNumber {
                    last[producer] = value.int64Value
                }
            }
            for service in Self.services {
                let info = try await hosts.logbook(a, ["call", service, "$srv.info", "--timeout", "3"], environment: environment(a))
                let result = (info.object["result"] as? [String: Any]) ?? info.object
                let consumers = ((result["health"] as? [String: Any])?["consumers"] as? [[String: Any]]) ?? []
                consumersSeen += consumers.count
                for consumer in consumers {
                    let producer = consumer["producer"] as? String ?? "?"
                    let position = (consumer["position"] as? NSNumber)?.int64Value ?? -1
                    if let target = last[producer], position != target {
                        lagging.append("\(service) at \(position) of \(producer)'s \(target)")
                    } else if last[producer] == nil {
                        lagging.append("\(service): no last event of \(producer)")
                    }
                }
            }
            recordsLast = last["records"] ?? -1
            let summary = try await hosts.logbook(
                a, ["call", "analytics", "analytics.expense.summary", #"{"by":"year"}"#, "--timeout", "3"], environment: environment(a))
            let currencies = (((summary.object["result"] as? [String: Any]) ?? summary.object)["currencies"] as? [[String: Any]]) ?? []
            let total = currencies.first.flatMap { ($0["totalMinor"] as? NSNumber)?.int64Value } ?? -1
            let counted = currencies.first.flatMap { ($0["count"] as? NSNumber)?.intValue } ?? -1
            if total != storedTotal || counted != names.count {
                lagging.append("analytics counts \(counted) expenses, \(total) minor; records holds \(names.count), \(storedTotal)")
            }
            if lagging.isEmpty { break }
            try await Task.sleep(for: .milliseconds(500))
        } while clock.now < catchUp
        #expect(lagging.isEmpty, "not caught up: \(lagging)")
        // not vacuous: the consumers were found, and records' log holds at least the writes
        #expect(consumersSeen >= 3, "only \(consumersSeen) event consumers reported")
        #expect(recordsLast >= Int64(names.count), "records' last event is \(recordsLast)")
        print("multi-host: \(acknowledged.count) writes acknowledged (\(queued) queued during the cut) in \(writing)")
    }
}
