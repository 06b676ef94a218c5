// The HTTP edge against ZeroMQ, in one run: a real stack started with `logbook stack up`
// (the executables next to this one, a throwaway LOGBOOK_HOME, the edge on a free loopback
// port, its rate limit off), one registered user; then for `POST /v1/expenses` and
// `GET /v1/expenses` at each connection count, wrk against the edge for `--seconds`,
// and the same service call (`records.expense.add` / `records.expense.list`) over ZeroMQ
// from this process with as many requests in flight, for as long. One table at the end.
//
// wrk (Debian package `wrk`) must be installed. Each POST carries a unique Idempotency-Key
// (a Lua script numbers them per wrk thread), as the ZeroMQ calls do: both paths do the same
// exactly-once bookkeeping. GET asks for the first page of 20 (`limit=20`, both paths).
// wrk's latency percentiles are from its --latency distribution; the ZeroMQ ones from every
// request's own time. Build with -c release: swift run -c release --static-swift-stdlib logbook-bench http
import ArgumentParser
import Foundation
import Runtime
import Wire

struct HTTPBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "http", abstract: "POST/GET /v1/expenses through the HTTP edge (wrk) vs the same calls over ZeroMQ.")

    @Option(help: "Connections (HTTP) and requests in flight (ZeroMQ), comma-separated.") var connections = "1,64"
    @Option(help: "Seconds per measurement.") var seconds = 10
    @Option(help: "wrk threads (at most the connection count).") var threads = 2
    @Option(help: "The wrk executable.") var wrk = "wrk"

    struct Row {
        var operation: String
        var path: String
        var connections: Int
        var rate: Double
        var p50: Double
        var p99: Double
        var errors: Int
    }

    func run() async throws {
        let levels = connections.split(separator: ",").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }
        guard !levels.isEmpty, levels.allSatisfy({ $0 > 0 }) else { throw ValidationError("--connections takes positive numbers") }
        guard seconds > 0 else { throw ValidationError("--seconds must be positive") }
        guard let wrkPath = Self.find(wrk) else {
            throw ValidationError("wrk is not installed: apt-get install wrk (Debian), then run this again")
        }
        let bin = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent().path
        for name in ["logbook", "logbook-http", "auth", "records"] where !FileManager.default.isExecutableFile(atPath: "\(bin)/\(name)") {
            throw ValidationError("no \(name) next to logbook-bench in \(bin): build the package (swift build -c release --static-swift-stdlib)")
        }
        let stack = BenchStack(bin: bin)
        defer { stack.down() }
        print("logbook-bench http: \(seconds) s per measurement, wrk \(threads) threads, \(ProcessInfo.processInfo.activeProcessorCount) cores; stack in \(stack.home)")
        try stack.up()
        let base = try await stack.edgeURL()
        let token = try stack.register()
        let records = try ServiceClient(service: "records", endpoint: "ipc://\(stack.home)/run/records.sock")
        defer { records.close() }
        let script = stack.home + "/post.lua"
        try Self.postScript.write(toFile: script, atomically: true, encoding: .utf8)

        var rows: [Row] = []
        for (operation, path) in [("POST", "/v1/expenses"), ("GET", "/v1/expenses?limit=20")] {
            for level in levels {
                var arguments = ["-t", String(min(threads, level)), "-c", String(level), "-d", "\(seconds)s", "--latency",
                                 "-H", "Authorization: Bearer \(token)"]
                if operation == "POST" { arguments += ["-s", script] }
                let http = try Self.wrk(wrkPath, arguments + [base + path])
                rows.append(Row(operation: "\(operation) \(path)", path: "HTTP (wrk)", connections: level, rate: http.rate,
                                p50: http.p50, p99: http.p99, errors: http.errors))
                let zmq = try await Self.zeroMQ(records, token: token, write: operation == "POST", inFlight: level, for: seconds)
                rows.append(Row(operation: "\(operation) \(path)", path: "ZeroMQ", connections: level, rate: zmq.rate,
                                p50: zmq.p50, p99: zmq.p99, errors: zmq.errors))
                print(String(format: "  %@ %@, %d: HTTP %.0f/s, ZeroMQ %.0f/s", operation, path, level, http.rate, zmq.rate))
            }
        }
        print("")
        print("| operation | path | connections / in flight | requests/s | p50 | p99 | errors |")
        print("|---|---|---|---|---|---|---|")
        for row in rows {
            print(String(
                format: "| %@ | %@ | %d | %.0f | %@ | %@ | %d |", row.operation, row.path, row.connections, row.rate,
                Self.shown(row.p50), Self.shown(row.p99), row.errors))
        }
        print("(errors: HTTP answers that were not 2xx/3xx, or ZeroMQ replies with an error; a row with errors is not a valid figure)")
    }

    /// Microseconds, shown in µs or ms.
    static func shown(_ micros: Double) -> String {
        micros >= 1000 ? String(format: "%.2f ms", micros / 1000) : String(format: "%.0f µs", micros)
    }

    /// A unique Idempotency-Key on every POST: the thread's number and a random prefix per
    /// run, then a counter.
    static let postScript = """
        local counter = 0
        local prefix = ""
        local threads = 0
        function setup(thread)
            threads = threads + 1
            thread:set("number", threads)
        end
        function init(args)
            math.randomseed(os.time() + (number or 0))
            prefix = string.format("%d-%d-%d", os.time(), number or 0, math.random(1, 1000000000))
        end
        request = function()
            counter = counter + 1
            -- wrk.format uses only the headers it is given: start from the command line's (-H)
            local headers = {}
            for name, value in pairs(wrk.headers) do headers[name] = value end
            headers["Content-Type"] = "application/json"
            headers["Idempotency-Key"] = prefix .. "-" .. counter
            local body = '{"name":"coffee","amountMinor":350,"currency":"USD"}'
            return wrk.format("POST", nil, headers, body)
        end

        """

    /// Runs wrk; its request rate, p50 and p99 (µs) and non-2xx/3xx answers plus socket errors.
    static func wrk(_ path: String, _ arguments: [String]) throws -> (rate: Double, p50: Double, p99: Double, errors: Int) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self)
        guard process.terminationStatus == 0 else { throw ValidationError("wrk failed: \(text)") }
        func value(after label: String) -> String? {
            text.split(separator: "\n").first { $0.trimmingCharacters(in: .whitespaces).hasPrefix(label) }
                .map { $0.trimmingCharacters(in: .whitespaces).dropFirst(label.count).trimmingCharacters(in: .whitespaces) }
        }
        guard let rate = value(after: "Requests/sec:").flatMap(Double.init),
            let p50 = value(after: "50%").flatMap(Self.wrkMicros), let p99 = value(after: "99%").flatMap(Self.wrkMicros)
        else { throw ValidationError("cannot read wrk's output:\n\(text)") }
        var errors = Int(value(after: "Non-2xx or 3xx responses:") ?? "") ?? 0
        if let socket = value(after: "Socket errors:") {
            // connect 0, read 0, write 0, timeout 0
            errors += socket.split(separator: ",").compactMap { $0.split(separator: " ").last.flatMap { Int($0) } }.reduce(0, +)
        }
        return (rate, p50, p99, errors)
    }

    /// wrk's "1.23ms", "456.00us", "1.20s" as microseconds.
    static func wrkMicros(_ text: String) -> Double? {
        for (unit, factor) in [("us", 1.0), ("ms", 1000.0), ("s", 1_000_000.0), ("m", 60_000_000.0)] where text.hasSuffix(unit) {
            return Double(text.dropLast(unit.count)).map { $0 * factor }
        }
        return nil
    }

    /// `inFlight` callers, each calling again as soon as it has its answer, for `seconds`.
    static func zeroMQ(_ client: ServiceClient, token: String, write: Bool, inFlight: Int, for duration: Int) async throws
        -> (rate: Double, p50: Double, p99: Double, errors: Int)
    {
        let clock = ContinuousClock()
        let start = clock.now
        let end = start + .seconds(duration)
        let results = try await withThrowingTaskGroup(of: ([Double], Int).self) { group in
            for _ in 0..<inFlight {
                group.addTask {
                    var samples: [Double] = []
                    var errors = 0
                    while clock.now < end {
                        let t = clock.now
                        let reply: Reply
                        if write {
                            reply = try await client.reply(
                                "records.expense.add", body: ["name": "coffee", "amountMinor": 350, "currency": "USD"],
                                options: CallOptions(token: token, idempotencyKey: ID.make(), timeout: .seconds(30)))
                        } else {
                            reply = try await client.reply(
                                "records.expense.list", body: ["limit": 20], options: CallOptions(token: token, timeout: .seconds(30)))
                        }
                        samples.append(micros(clock.now - t))
                        if reply.error != nil { errors += 1 }
                    }
                    return (samples, errors)
                }
            }
            var all: [Double] = []
            var errors = 0
            for try await (samples, failed) in group {
                all += samples
                errors += failed
            }
            return (all, errors)
        }
        let took = clock.now - start
        let elapsed = Double(took.components.seconds) + Double(took.components.attoseconds) / 1e18
        return (Double(results.0.count) / elapsed, percentile(results.0, 0.5), percentile(results.0, 0.99), results.1)
    }

    static func find(_ name: String) -> String? {
        if name.contains("/") { return FileManager.default.isExecutableFile(atPath: name) ? name : nil }
        for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
            let path = "\(directory)/\(name)"
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return nil
    }
}

/// A throwaway stack run by the real `logbook` binary; `down()` stops it and removes it.
final class BenchStack {
    let bin: String
    let home = "/tmp/lbhb-" + UUID().uuidString.prefix(8).lowercased()
    static let password = "correct horse battery staple"

    init(bin: String) { self.bin = bin }

    var environment: [String: String] {
        [
            "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin", "HOME": home, "LOGBOOK_HOME": home,
            "LOGBOOK_CONFIG_DIR": home + "/config", "LOGBOOK_LOG_LEVEL": "warning",
            // a free port, and no rate limit: one client sends everything
            "LOGBOOK_HTTP_LISTEN": "127.0.0.1:0", "LOGBOOK_HTTP_RATE_LIMIT": "0",
            // nothing reaches the internet
            "LOGBOOK_WEATHER_FETCHER_FORECAST_URL": "http://127.0.0.1:9/v1/forecast",
            "LOGBOOK_WEATHER_FETCHER_ARCHIVE_URL": "http://127.0.0.1:9/v1/archive",
            "LOGBOOK_WEATHER_FETCHER_MARINE_URL": "http://127.0.0.1:9/v1/marine",
            "LOGBOOK_WEATHER_FETCHER_NOAA_URL": "http://127.0.0.1:9", "LOGBOOK_STORE_QUOTES_URL": "http://127.0.0.1:9",
        ]
    }

    @discardableResult
    func logbook(_ arguments: [String], stdin: String? = nil) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: bin + "/logbook")
        process.arguments = arguments
        process.environment = environment
        // through files: the detached supervisor must hold no pipe of ours
        let out = home + "/.cmd-\(UUID().uuidString.prefix(8))"
        _ = FileManager.default.createFile(atPath: out, contents: nil)
        defer { unlink(out) }
        process.standardOutput = FileHandle(forWritingAtPath: out)
        process.standardError = FileHandle(forWritingAtPath: out)
        if let stdin {
            let input = out + ".in"
            _ = FileManager.default.createFile(atPath: input, contents: Data(stdin.utf8))
            process.standardInput = FileHandle(forReadingAtPath: input)
        } else {
            process.standardInput = FileHandle.nullDevice
        }
        try process.run()
        process.waitUntilExit()
        unlink(out + ".in")
        return (process.terminationStatus, (try? String(contentsOfFile: out, encoding: .utf8)) ?? "")
    }

    func up() throws {
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        let up = try logbook(["stack", "up"])
        guard up.status == 0 else { throw ValidationError("logbook stack up failed: \(up.output)") }
    }

    /// The edge's base URL, once it answers.
    func edgeURL() async throws -> String {
        let file = home + "/run/logbook-http.url"
        for _ in 0..<100 {
            if let text = try? String(contentsOfFile: file, encoding: .utf8), text.hasPrefix("http") {
                return text.trimmingCharacters(in: .whitespacesAndNewlines)
            }
            try await Task.sleep(for: .milliseconds(200))
        }
        throw ValidationError("the edge wrote no address in 20 s; see \(home)/logs/logbook-http.log")
    }

    /// Registers `bench` (which logs it in) and returns the session's token.
    func register() throws -> String {
        let registered = try logbook(["register", "bench", "--password-stdin"], stdin: Self.password + "\n")
        guard registered.status == 0 else { throw ValidationError("logbook register failed: \(registered.output)") }
        let session = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: home + "/config/session.json")))
        guard let token = (session as? [String: Any])?["token"] as? String else { throw ValidationError("no token in session.json") }
        return token
    }

    func down() {
        _ = try? logbook(["stack", "down"])
        try? FileManager.default.removeItem(atPath: home)
    }
}
