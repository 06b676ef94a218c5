// Write throughput of the records service: `records.expense.add` over real ZeroMQ with N
// requests in flight (group commit at work), beside a raw SQLite insert loop (one
// transaction per row, same durability) on the same machine in the same run, for each
// durability level asked for. The two run in alternating blocks, so both see the same load
// on the machine (a shared disk's latency moves more between minutes than the code does). The level printed is the one read back from the writer
// connections that did the work, not the one asked for.
import ArgumentParser
import Foundation
import GRDB
import Logging
import RecordsService
import Runtime
import ServiceLifecycle
import Storage
import Wire

struct WritesBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "writes", abstract: "records.expense.add at N in flight vs a raw SQLite insert loop.")

    @Option(help: "Requests in flight, comma-separated.") var inFlight = "1,64"
    @Option(help: "Writes per measurement.") var count = 5_000
    @Option(help: "Durability levels to measure, comma-separated: full (survives power loss), normal.")
    var durability = "full,normal"

    func run() async throws {
        let durabilities = try durability.split(separator: ",").map { text in
            guard let level = Durability(rawValue: text.trimmingCharacters(in: .whitespaces)) else {
                throw ValidationError("--durability takes full and/or normal")
            }
            return level
        }
        let levels = inFlight.split(separator: ",").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }
        guard !levels.isEmpty, levels.allSatisfy({ $0 > 0 }) else { throw ValidationError("--in-flight takes positive numbers") }
        print("logbook-bench writes: \(count) writes per run, WAL, \(ProcessInfo.processInfo.activeProcessorCount) cores")
        for durability in durabilities {
            try await measure(durability, levels: levels)
        }
    }

    /// What one durability level measured: the raw loop, and each in-flight level with the
    /// raw loop's blocks run alongside it.
    struct Figures {
        var rawRate: Double = 0
        var rawP50: Double = 0
        /// in flight → (writes/s, p50 µs, and the raw loop's writes/s and p50 beside it)
        var levels: [Int: (rate: Double, p50: Double, rawRate: Double, rawP50: Double)] = [:]
    }

    /// Blocks per measurement: raw loop, service, raw loop, service, ...
    static let blocks = 5

    @discardableResult
    func measure(_ durability: Durability, levels: [Int]) async throws -> Figures {
        let directory = "/tmp/lb-writes-\(ProcessInfo.processInfo.processIdentifier)-\(durability.rawValue)"
        try? FileManager.default.removeItem(atPath: directory)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }

        // Raw SQLite: one INSERT per transaction, the same settings the services use.
        let raw = try ServiceDatabase.open(
            DatabaseSettings(path: directory + "/raw.sqlite", durability: durability), migrator: rawMigrator)
        let rawLevel = try ServiceDatabase.writerSettings(raw).synchronous
        var figures = Figures()
        print("-- synchronous=\(durability.rawValue.uppercased()) asked; the raw loop's writer runs synchronous=\(rawLevel)")

        // The records service over ZeroMQ.
        var logger = Logger(label: "bench")
        logger.logLevel = .error
        let host = try ServiceHost(
            descriptor: ServiceDescriptor(name: "records"),
            database: DatabaseSettings(path: directory + "/records.sqlite", durability: durability),
            migrator: RecordsService.migrator, eventsEndpoint: "ipc://\(directory)/records.events.sock", logger: logger)
        let photos = PhotoStore(
            settings: PhotoSettings(directory: directory + "/records-photos"), database: host.database, logger: logger)
        let dispatcher = host.dispatcher(router: RecordsService.router(host: host, photos: photos), sessions: BenchSessions())
        let endpoint = "ipc://\(directory)/records.sock"
        let group = ServiceGroup(services: host.services(dispatcher: dispatcher, endpoint: endpoint), logger: logger)
        let task = Task { try await group.run() }
        try await Task.sleep(for: .milliseconds(300))
        print("records' writer connection runs synchronous=\(try ServiceDatabase.writerSettings(host.database).synchronous)")
        let client = try ServiceClient(service: "records", endpoint: endpoint)
        var allRaw: [Double] = []
        var allRawElapsed = 0.0
        for level in levels {
            let before = host.commits.statistics
            var rawSamples: [Double] = [], samples: [Double] = []
            var rawElapsed = 0.0, steadyCount = 0, steadySeconds = 0.0
            let block = (count + Self.blocks - 1) / Self.blocks
            while samples.count < count {
                let n = min(block, count - samples.count)
                let (r, re) = try rawLoop(raw, count: n, numbering: allRaw.count + rawSamples.count)
                rawSamples += r
                rawElapsed += re
                // One at a time, the caller runs on the client's socket thread, as a sequential
                // caller can (ServiceClient.executor); with more in flight, on the task pool.
                let driven = try await withTaskExecutorPreference(level == 1 ? client.executor : nil) {
                    try await drive(client: client, inFlight: level, count: n)
                }
                samples += driven.samples
                steadyCount += driven.steadyCount
                steadySeconds += driven.steadySeconds
            }
            let after = host.commits.statistics
            let transactions = after.transactions - before.transactions
            let rate = Double(steadyCount) / steadySeconds, rawRate = Double(count) / rawElapsed
            figures.levels[level] = (rate, percentile(samples, 0.5), rawRate, percentile(rawSamples, 0.5))
            allRaw += rawSamples
            allRawElapsed += rawElapsed
            print(String(
                format: "raw SQLite insert loop (1 row per transaction), beside %d in flight: %.0f writes/s  p50 %.0f µs  p99 %.0f µs",
                level, rawRate, percentile(rawSamples, 0.5), percentile(rawSamples, 0.99)))
            print(String(
                format: "records.expense.add, %3d in flight: %.0f writes/s with the pipeline full (%.2f× raw)  p50 %.0f µs  p99 %.0f µs  (%d transactions, %.1f writes each)",
                level, rate, rate / rawRate, percentile(samples, 0.5), percentile(samples, 0.99), transactions,
                Double(count) / Double(max(1, transactions))))
        }
        figures.rawRate = Double(allRaw.count) / max(allRawElapsed, 1e-9)
        figures.rawP50 = percentile(allRaw, 0.5)
        client.close()
        await group.triggerGracefulShutdown()
        _ = await task.result
        return figures
    }

    /// One INSERT per transaction, synchronously, as a plain SQLite program would.
    func rawLoop(_ raw: any DatabaseWriter, count: Int, numbering first: Int) throws -> ([Double], Double) {
        var samples: [Double] = []
        samples.reserveCapacity(count)
        let clock = ContinuousClock()
        let begin = clock.now
        for i in first..<(first + count) {
            let start = clock.now
            try raw.write { db in
                try db.execute(
                    sql: "INSERT INTO expense (id, userId, name, amountMinor, currency, date) VALUES (?, ?, ?, ?, ?, ?)",
                    arguments: [ID.make(), "bench", "coffee \(i)", 350, "USD", Date().timeIntervalSince1970])
            }
            samples.append(micros(clock.now - start))
        }
        return (samples, seconds(clock.now - begin))
    }

    /// What `drive` measured: each request's latency, the whole time, and the steady part:
    /// completions counted from the moment the first `inFlight` replies are in (the pipeline
    /// is full) to the moment the last request is sent (it starts to drain), so a block's
    /// ramp-up and ramp-down do not count against the service's rate.
    struct Drive {
        var samples: [Double]
        var elapsed: Double
        var steadyCount: Int
        var steadySeconds: Double
    }

    /// Keeps `inFlight` requests outstanding until `count` are done.
    func drive(client: ServiceClient, inFlight: Int, count: Int) async throws -> Drive {
        let clock = ContinuousClock()
        let start = clock.now
        return try await withThrowingTaskGroup(of: Double.self) { group in
            var started = 0
            var samples: [Double] = []
            samples.reserveCapacity(count)
            func launch(_ i: Int) {
                group.addTask {
                    let t = clock.now
                    let options = CallOptions(token: "bench", idempotencyKey: ID.make(), timeout: .seconds(30))
                    _ = try await client.call(
                        "records.expense.add", ExpenseBody(name: "coffee \(i)", amountMinor: 350), as: JSONValue.self,
                        options: options)
                    return micros(clock.now - t)
                }
            }
            while started < min(inFlight, count) {
                launch(started)
                started += 1
            }
            var full: (at: ContinuousClock.Instant, done: Int)?
            var draining: (at: ContinuousClock.Instant, done: Int)?
            while let sample = try await group.next() {
                samples.append(sample)
                if full == nil, samples.count >= min(inFlight, count) { full = (clock.now, samples.count) }
                if started < count {
                    launch(started)
                    started += 1
                    if started == count { draining = (clock.now, samples.count) }
                }
            }
            let elapsed = seconds(clock.now - start)
            if let full, let draining, draining.done - full.done >= inFlight {
                return Drive(
                    samples: samples, elapsed: elapsed, steadyCount: draining.done - full.done,
                    steadySeconds: seconds(draining.at - full.at))
            }
            return Drive(samples: samples, elapsed: elapsed, steadyCount: samples.count, steadySeconds: elapsed)
        }
    }

    var rawMigrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("raw") { db in
            try db.execute(
                sql: """
                    CREATE TABLE expense (id TEXT PRIMARY KEY, userId TEXT NOT NULL, name TEXT NOT NULL,
                        amountMinor INTEGER NOT NULL, currency TEXT NOT NULL, date DOUBLE NOT NULL)
                    """)
        }
        return migrator
    }
}

struct ExpenseBody: Codable, Sendable {
    var name: String
    var amountMinor: Int
}

/// Every token is the same benchmark user: the benchmark measures writes, not sessions.
struct BenchSessions: SessionResolver {
    func resolve(token: String) async throws -> Principal {
        Principal(userId: "bench-user", username: "bench", sessionId: "bench")
    }
}

func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}
