// Records shards on two hosts (docs/operations.md, "Two hosts with two shards, step by
// step"): network namespaces as in MultiHostTests. Host A runs auth, records shard 1 and
// the CLI; host B runs records shard 2, analytics, the store and weather-fetcher; every
// link is TCP with CURVE. Two users land on the two shards and use the same commands; B's
// link is cut: only the user on shard 2 is affected and `status` on A names shard 2; then
// `logbook shard move` moves the shard-1 user's records to B, across the hosts.
//
// Needs root (namespaces). Without it, it is reported as skipped, with the reason.
import Foundation
import Testing

@Suite("records shards on two hosts", .serialized)
struct MultiHostShardTests {
    static let ports: [String: (Int, Int)] = [
        "auth": (7101, 7102), "records": (7103, 7104), "records-2": (7111, 7112), "weather-fetcher": (7105, 7106),
        "analytics": (7107, 7108), "store": (7109, 7110),
    ]

    @Test(
        "two shards on two hosts: users on both, one host cut off affects only its users, a user moved across",
        .enabled(if: Hosts.available, "needs root and iproute2 to make network namespaces (CI runs deploy/test.sh as root)"),
        .timeLimit(.minutes(2)))
    func twoHosts() async throws {
        let hosts = try Hosts(layout: [("a", ["auth", "records"]), ("b", ["records", "analytics", "store", "weather-fetcher"])])
        // Which instances each host runs (both hold the `records` executable).
        let instances = ["a": ["auth", "records"], "b": ["records-2", "analytics", "store", "weather-fetcher"]]
        do {
            try await run(hosts, instances: instances)
        } catch {
            for host in hosts.hosts {
                for service in instances[host.name]! {
                    let log = (try? String(contentsOfFile: "\(host.home)/logs/\(service).log", encoding: .utf8)) ?? ""
                    print("--- host \(host.name) \(service).log (last lines)\n" + log.split(separator: "\n").suffix(15).joined(separator: "\n"))
                }
            }
            await hosts.destroy()
            throw error
        }
        await hosts.destroy()
    }

    func run(_ hosts: Hosts, instances: [String: [String]]) async throws {
        try await hosts.create()
        let a = hosts.hosts[0], b = hosts.hosts[1]
        var keys: [String: (public: String, secret: String)] = [:]
        for host in hosts.hosts {
            let generated = try await Tool.run(hosts.binDirectory + "/logbook", ["keys", "generate", "--json"])
            try #require(generated.status == 0, "\(generated.stderr)")
            keys[host.name] = (
                try #require(generated.object["publicKey"] as? String), try #require(generated.object["secretKey"] as? String)
            )
        }
        let stackKey = (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
        func environment(_ host: Hosts.Host, user: String = "admin") -> [String: String] {
            var env: [String: String] = [
                "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin",
                "HOME": host.home, "LOGBOOK_HOME": host.home, "LOGBOOK_CONFIG_DIR": host.home + "/config-" + user,
                "LOGBOOK_BIN_DIR": host.home + "/bin", "LOGBOOK_LOG_LEVEL": "info",
                "LOGBOOK_CURVE_PUBLIC_KEY": keys[host.name]!.public, "LOGBOOK_CURVE_SECRET_KEY": keys[host.name]!.secret,
                "LOGBOOK_CURVE_ALLOW": hosts.hosts.map { keys[$0.name]!.public }.joined(separator: ","),
                "LOGBOOK_STACK_KEY": stackKey, "LOGBOOK_EVENTS_STALL_AFTER": "30",
                "LOGBOOK_RECORDS_SHARDS": "2", "LOGBOOK_RECORDS_LOCAL_SHARDS": host.name == "a" ? "1" : "2",
            ].merging(TestStack.offline) { $1 }
            for owner in hosts.hosts {
                for service in instances[owner.name]! {
                    let name = MultiHostTests.setting(service)
                    let (request, events) = Self.ports[service]!
                    env["LOGBOOK_\(name)_ENDPOINT"] = "tcp://\(owner.address):\(request)"
                    env["LOGBOOK_\(name)_EVENTS"] = "tcp://\(owner.address):\(events)"
                    env["LOGBOOK_\(name)_CURVE_PUBLIC_KEY"] = keys[owner.name]!.public
                }
            }
            return env
        }
        func cli(_ user: String, _ arguments: String...) async throws -> CommandResult {
            try await hosts.logbook(a, arguments + ["--timeout", "2"], environment: environment(a, user: user))
        }

        for host in [b, a] {
            let up = try await hosts.logbook(host, ["stack", "up"], environment: environment(host))
            try #require(up.status == 0, "stack up on \(host.name): \(up.stdout)\(up.stderr)")
        }
        let clock = ContinuousClock()
        var status = CommandResult(status: -1, stdout: "", stderr: "")
        let deadline = clock.now + .seconds(20)
        while clock.now < deadline {
            status = try await cli("admin", "status", "--json")
            if status.status == 0 { break }
            try await Task.sleep(for: .milliseconds(300))
        }
        try #require(status.status == 0, "status on A: \(status.stdout)\(status.stderr)")
        let rows = status.json as? [[String: Any]] ?? []
        for instance in ["records", "records-2"] {
            #expect(rows.first { $0["service"] as? String == instance }?["state"] as? String == "up", "\(status.stdout)")
        }
        // A runs only shard 1, B only shard 2.
        #expect(FileManager.default.fileExists(atPath: a.home + "/data/records.sqlite"))
        #expect(!FileManager.default.fileExists(atPath: a.home + "/data/records-2.sqlite"))
        #expect(FileManager.default.fileExists(atPath: b.home + "/data/records-2.sqlite"))
        #expect(!FileManager.default.fileExists(atPath: b.home + "/data/records.sqlite"))

        var shards: [String: Int] = [:]
        for user in ["alice", "bob"] {
            let register = try await hosts.logbook(
                a, ["register", user, "--password-stdin"], environment: environment(a, user: user),
                stdin: TestStack.password + "\n")
            try #require(register.status == 0, "register \(user): \(register.stderr)")
            shards[user] = try await cli(user, "whoami", "--json").object["shard"] as? Int
        }
        #expect(shards == ["alice": 1, "bob": 2], "least loaded: \(shards)")
        for user in ["alice", "bob"] {
            for index in 1...3 {
                let add = try await cli(user, "expense", "add", "\(user) \(index)", "\(index)", "--json")
                #expect(add.status == 0 && add.object["queued"] as? Bool != true, "\(user): \(add.stdout)\(add.stderr)")
            }
        }

        // B cut off: bob (shard 2, on B) cannot reach his records; alice (shard 1, on A) can.
        try await hosts.ip("-n", hosts.switchNamespace, "link", "set", b.port, "down")
        let aliceAdd = try await cli("alice", "expense", "add", "alice 4", "4", "--json")
        #expect(aliceAdd.status == 0 && aliceAdd.object["queued"] as? Bool != true, "\(aliceAdd.stdout)\(aliceAdd.stderr)")
        let aliceList = try await cli("alice", "expense", "list", "--json")
        #expect((aliceList.object["items"] as? [Any])?.count == 4, "\(aliceList.stdout)\(aliceList.stderr)")
        let bobAdd = try await cli("bob", "expense", "add", "bob 4", "4", "--json")
        #expect(bobAdd.object["queued"] as? Bool == true, "bob's write waits in his queue: \(bobAdd.stdout)\(bobAdd.stderr)")
        let cut = try await cli("admin", "status")
        #expect(cut.status == 7, "\(cut.stdout)")
        #expect(cut.stdout.contains("records shard 2 (records-2) is unreachable"), "\(cut.stdout)")
        #expect(cut.stdout.split(separator: "\n").first { $0.hasPrefix("records ") }?.contains(" up ") == true, "\(cut.stdout)")
        try await hosts.ip("-n", hosts.switchNamespace, "link", "set", b.port, "up")
        var synced = false
        let syncDeadline = clock.now + .seconds(20)
        while clock.now < syncDeadline, !synced {
            synced = try await cli("bob", "sync", "--json").status == 0
            if !synced { try await Task.sleep(for: .milliseconds(300)) }
        }
        #expect(synced, "bob's queued write was sent once B was back")
        let bobList = try await cli("bob", "expense", "list", "--json")
        #expect((bobList.object["items"] as? [Any])?.count == 4, "\(bobList.stdout)\(bobList.stderr)")

        // alice moves to shard 2, across the hosts, from A.
        let moved = try await hosts.logbook(a, ["shard", "move", "alice", "2", "--json"], environment: environment(a))
        #expect(moved.status == 0 && moved.object["rows"] as? Int == 4, "\(moved.stdout)\(moved.stderr)")
        let after = try await cli("alice", "expense", "add", "alice 5", "5", "--json")
        #expect(after.status == 0 && after.object["queued"] as? Bool != true, "\(after.stdout)\(after.stderr)")
        let list = try await cli("alice", "expense", "list", "--json")
        let names = ((list.object["items"] as? [[String: Any]]) ?? []).compactMap { $0["name"] as? String }.sorted()
        #expect(names == (1...5).map { "alice \($0)" }, "every write once: \(names)")
        #expect(try await cli("alice", "whoami", "--json").object["shard"] as? Int == 2)
        // Analytics on B counts alice's five expenses once each: 1+2+3+4+5 = $15.00.
        var total: Int64 = -1
        let catchUp = clock.now + .seconds(15)
        while clock.now < catchUp {
            let summary = try await cli("alice", "call", "analytics", "analytics.expense.summary", #"{"by":"year"}"#)
            let currencies = (((summary.object["result"] as? [String: Any]) ?? [:])["currencies"] as? [[String: Any]]) ?? []
            total = currencies.first.flatMap { ($0["totalMinor"] as? NSNumber)?.int64Value } ?? -1
            if total == 1500 { break }
            try await Task.sleep(for: .milliseconds(300))
        }
        #expect(total == 1500, "analytics' total for alice: \(total)")
    }
}
