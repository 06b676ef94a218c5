// Records shards, measured on a real stack (`logbook stack up` with LOGBOOK_RECORDS_SHARDS=2
// in a scratch directory: real processes, ZeroMQ, SQLite files):
//   shards      — records.expense.add writes/s with one shard taking every write (one user
//                 on shard 1), then with two shards taking them at once (a user on each),
//                 the same number in flight in total, in the same run
//   shard-move  — the time `logbook shard move` takes for a user with N records (default
//                 10,000 expenses), and how long that user's writes were held
// The executables are the ones beside this one (build them with the same configuration:
// `swift build -c release --static-swift-stdlib`, then `.build/release/logbook-bench shards`).
import ArgumentParser
import Foundation
import Runtime
import Wire

struct ShardsBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "shards", abstract: "records.expense.add writes/s with one vs two records shards (real stack).")

    @Option(help: "Writes per measurement.") var count = 5_000
    @Option(help: "Requests in flight in total (split over the shards).") var inFlight = 64
    @Option(help: "LOGBOOK_DURABILITY of the stack: full or normal.") var durability = "full"

    func run() async throws {
        let stack = try ShardBenchStack(durability: durability)
        defer { stack.down() }
        try stack.up()
        let alice = try await stack.user("alice")
        let bob = try await stack.user("bob")
        guard alice.shard == 1, bob.shard == 2 else {
            throw ValidationError("expected alice on shard 1 and bob on shard 2; auth said \(alice.shard), \(bob.shard)")
        }
        print("logbook-bench shards: \(count) writes per run, \(inFlight) in flight in total, durability \(durability), \(ProcessInfo.processInfo.activeProcessorCount) cores")
        // Warm both shards up (connections, page cache) before measuring.
        _ = try await stack.drive([(alice, 16), (bob, 16)], count: 500)
        let one = try await stack.drive([(alice, inFlight)], count: count)
        print(String(format: "one shard  (records):             %.0f writes/s", Double(count) / one))
        let two = try await stack.drive([(alice, inFlight / 2), (bob, inFlight - inFlight / 2)], count: count)
        print(String(format: "two shards (records, records-2):  %.0f writes/s (%.2f× one shard)", Double(count) / two, one / two))
    }
}

struct ShardMoveBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "shard-move", abstract: "`logbook shard move` of a user with N records (real stack).")

    @Option(help: "Expenses the user has before the move.") var records = 10_000
    @Option(help: "Seconds to wait after loading, before the move (lets the consumers catch up first).")
    var settle = 0.0
    @Option(help: "LOGBOOK_DURABILITY of the stack: full or normal.") var durability = "full"

    func run() async throws {
        let stack = try ShardBenchStack(durability: durability)
        defer { stack.down() }
        try stack.up()
        let alice = try await stack.user("alice")
        let clock = ContinuousClock()
        let start = clock.now
        _ = try await stack.drive([(alice, 64)], count: records)
        print(String(format: "loaded %d expenses for alice on shard %d in %.1f s", records, alice.shard, seconds(clock.now - start)))
        if settle > 0 { try await Task.sleep(for: .milliseconds(Int64(settle * 1000))) }
        let moved = try stack.logbook(["shard", "move", "alice", "2", "--json", "--timeout", "60"], config: alice.config)
        guard moved.status == 0, let object = try? JSONValue.parse(moved.stdout) else {
            throw ValidationError("shard move failed: \(moved.stdout)\(moved.stderr)")
        }
        print(String(
            format: "shard move of %d rows: %.2f s in all, alice's writes held %.2f s (%.0f rows/s)", object["rows"]?.intValue ?? -1,
            object["seconds"]?.doubleValue ?? -1, object["heldSeconds"]?.doubleValue ?? -1,
            Double(object["rows"]?.intValue ?? 0) / max(0.001, object["seconds"]?.doubleValue ?? 1)))
        let list = try stack.logbook(["expense", "list", "--limit", "1", "--json"], config: alice.config)
        print("after the move, alice's first page answers: \(list.status == 0 ? "yes" : "no (\(list.stderr))")")
    }

    func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}

/// A scratch two-shard stack run by the real `logbook` next to this executable.
final class ShardBenchStack: Sendable {
    let home: String
    let bin: String
    let environment: [String: String]

    struct User: Sendable {
        var token: String
        var shard: Int
        var config: String
    }

    init(durability: String) throws {
        home = "/tmp/lb-shard-bench-\(ProcessInfo.processInfo.processIdentifier)"
        try? FileManager.default.removeItem(atPath: home)
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        bin = URL(fileURLWithPath: exe).deletingLastPathComponent().path
        guard FileManager.default.isExecutableFile(atPath: bin + "/logbook") else {
            throw ValidationError("no logbook executable beside logbook-bench in \(bin): build every product first")
        }
        environment = [
            "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin", "HOME": home, "LOGBOOK_HOME": home,
            "LOGBOOK_LOG_LEVEL": "warning", "LOGBOOK_RECORDS_SHARDS": "2", "LOGBOOK_DURABILITY": durability,
            // Nothing here reaches the internet.
            "LOGBOOK_WEATHER_FETCHER_FORECAST_URL": "http://127.0.0.1:9/v1/forecast",
            "LOGBOOK_WEATHER_FETCHER_ARCHIVE_URL": "http://127.0.0.1:9/v1/archive",
            "LOGBOOK_WEATHER_FETCHER_MARINE_URL": "http://127.0.0.1:9/v1/marine",
            "LOGBOOK_WEATHER_FETCHER_NOAA_URL": "http://127.0.0.1:9", "LOGBOOK_STORE_QUOTES_URL": "http://127.0.0.1:9",
            "LOGBOOK_HTTP_LISTEN": "127.0.0.1:0",
        ]
    }

    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// Runs `logbook arguments…` to completion (output through files).
    func logbook(_ arguments: [String], config: String? = nil, stdin: String? = nil) throws -> Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: bin + "/logbook")
        process.arguments = arguments
        var env = environment
        env["LOGBOOK_CONFIG_DIR"] = config ?? home + "/config"
        process.environment = env
        let id = UUID().uuidString
        let out = home + "/.out-" + id, err = home + "/.err-" + id
        _ = FileManager.default.createFile(atPath: out, contents: nil)
        _ = FileManager.default.createFile(atPath: err, contents: nil)
        defer {
            try? FileManager.default.removeItem(atPath: out)
            try? FileManager.default.removeItem(atPath: err)
        }
        process.standardOutput = FileHandle(forWritingAtPath: out)
        process.standardError = FileHandle(forWritingAtPath: err)
        if let stdin {
            let input = Pipe()
            process.standardInput = input
            try process.run()
            input.fileHandleForWriting.write(Data(stdin.utf8))
            try input.fileHandleForWriting.close()
        } else {
            process.standardInput = FileHandle.nullDevice
            try process.run()
        }
        process.waitUntilExit()
        return Result(
            status: process.terminationStatus, stdout: (try? String(contentsOfFile: out, encoding: .utf8)) ?? "",
            stderr: (try? String(contentsOfFile: err, encoding: .utf8)) ?? "")
    }

    func up() throws {
        let up = try logbook(["stack", "up"])
        guard up.status == 0 else { throw ValidationError("stack up failed: \(up.stdout)\(up.stderr)") }
    }

    func down() {
        _ = try? logbook(["stack", "down"])
        try? FileManager.default.removeItem(atPath: home)
    }

    /// Registers `name` through the CLI; its token and shard from the saved session.
    func user(_ name: String) async throws -> User {
        let config = home + "/config-" + name
        let register = try logbook(["register", name, "--password-stdin"], config: config, stdin: "correct horse battery staple\n")
        guard register.status == 0 else { throw ValidationError("register \(name): \(register.stderr)") }
        let session = try JSONValue.parse(String(contentsOfFile: config + "/session.json", encoding: .utf8))
        guard let token = session["token"]?.stringValue else { throw ValidationError("no session for \(name)") }
        return User(token: token, shard: session["shard"]?.intValue ?? 1, config: config)
    }

    /// `count` writes of records.expense.add split over `users` (each with its number in
    /// flight, to its own shard), all at once; returns the seconds the whole took.
    func drive(_ users: [(User, Int)], count: Int) async throws -> Double {
        let configuration = try StackConfiguration.load(environment: environment)
        let clock = ContinuousClock()
        let start = clock.now
        let total = users.map(\.1).reduce(0, +)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (user, inFlight) in users {
                let share = count * inFlight / max(1, total)
                let instance = StackConfiguration.recordsInstance(user.shard)
                let client = try ServiceClient(
                    service: instance, endpoint: configuration.endpoint(instance),
                    settings: ClientSettings(configuration: configuration))
                group.addTask {
                    try await withThrowingTaskGroup(of: Void.self) { lanes in
                        for lane in 0..<inFlight {
                            lanes.addTask {
                                var i = lane
                                while i < share {
                                    let options = CallOptions(token: user.token, idempotencyKey: ID.make(), timeout: .seconds(30))
                                    _ = try await client.call(
                                        "records.expense.add", ["name": .string("coffee \(i)"), "amountMinor": 350] as JSONValue,
                                        as: JSONValue.self, options: options)
                                    i += inFlight
                                }
                            }
                        }
                        try await lanes.waitForAll()
                    }
                }
            }
            try await group.waitForAll()
        }
        return Double((clock.now - start).components.seconds)
            + Double((clock.now - start).components.attoseconds) / 1e18
    }
}
