// `logbook-bench rebuild`: analytics rebuilt the way `logbook stack rebuild analytics` has it
// rebuild. The analytics benchmark's workload (fill-ups, catches and their conditions) is
// stored in two producers' outboxes, records' and weather-fetcher's, each served by
// `events.since` on its own ROUTER socket; analytics' two consumers replay both over ZeroMQ
// into an empty database, page by page, several pages per transaction, as the service does on an
// empty file. `logbook-bench analytics` hands the same events to the projection in memory;
// the difference is what the producers' reads, the wire and the consumers' decoding add.
// Only the replay is timed: the producers' histories are written before the clock starts.
//   swift build -c release --static-swift-stdlib && .build/release/logbook-bench rebuild [--size 50000]
import AnalyticsService
import ArgumentParser
import Foundation
import GRDB
import Logging
import Runtime
import ServiceLifecycle
import Storage
import Wire

struct RebuildBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rebuild",
        abstract: "Analytics replaying records' and weather-fetcher's events over ZeroMQ into an empty database.")

    @Option(help: "Fill-ups (and as many catches, each with its conditions) in the producers' history.")
    var size = 50_000
    @Option(help: "Users, one vehicle each (fewer when the size is small: at least 10 fill-ups per vehicle).")
    var users = 1_000
    @Option(help: "Events per `events.since` page (default: the consumers' own).") var page: Int?
    @Option(help: "Most events applied per catch-up transaction (default: the consumers' own).") var transaction: Int?

    func run() async throws {
        let result = try await Self.measure(size: size, users: users, page: page, transaction: transaction)
        print(
            String(
                format: "replayed %d events in %.2f s: %.0f events/s (every event applied after %.2f s, then settled)",
                result.events, result.seconds, Double(result.events) / result.seconds, result.applied))
    }

    /// The events replayed and the seconds from the consumers' start until both had applied
    /// their producer's last event and nothing was left behind (`applied`: until the last
    /// event was applied; the rest is the settle of what the backlog left behind).
    static func measure(size: Int, users: Int, page: Int? = nil, transaction: Int? = nil) async throws
        -> (events: Int, seconds: Double, applied: Double)
    {
        let directory = "/tmp/lb-bench-rebuild-\(getpid())"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var logger = Logger(label: "bench")
        logger.logLevel = .error
        func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

        // The producers' histories (not timed; their own durability does not matter here).
        let producers = ["records", "weather-fetcher"]
        var databases: [any DatabaseWriter] = []
        for name in producers {
            databases.append(
                try ServiceDatabase.open(
                    DatabaseSettings(path: "\(directory)/\(name).sqlite", durability: .normal), migrator: DatabaseMigrator()))
        }
        var workload = Workload(users: max(1, min(users, size / 10)), fills: size, catches: size)
        var last: [Int64] = [0, 0]
        while let (recordEvents, weatherEvents) = workload.next(20_000) {
            for (index, events) in [recordEvents, weatherEvents].enumerated() where !events.isEmpty {
                last[index] = try await databases[index].write { db in
                    var seq: Int64 = 0
                    for event in events {
                        seq = try Outbox.append(db, type: event.type, userId: event.userId, data: event.data, at: event.at)
                    }
                    return seq
                }
            }
        }
        let total = Int(last[0] + last[1])
        say("rebuild: \(last[0]) records events and \(last[1]) weather-fetcher events stored; replaying")

        let analytics = try AnalyticsService(
            database: DatabaseSettings(path: "\(directory)/analytics.sqlite"), sessions: AnalyticsBenchSessions(),
            logger: logger)
        var servers: [any Service] = []
        var consumers: [EventConsumer] = []
        var clients: [ServiceClient] = []
        for (index, name) in producers.enumerated() {
            let endpoint = "ipc://\(directory)/\(name).sock"
            let dispatcher = Dispatcher(
                descriptor: ServiceDescriptor(name: name), router: Router(), sessions: nil, events: databases[index],
                stackKey: nil, logger: logger)
            servers.append(ServiceServer(dispatcher: dispatcher, settings: ServerSettings(endpoint: endpoint), logger: logger))
            let client = try ServiceClient(service: name, endpoint: endpoint)
            clients.append(client)
            consumers.append(
                EventConsumer(
                    settings: .init(
                        producer: name, eventsEndpoint: "ipc://\(directory)/\(name)-events.sock",
                        catchUpPageSize: page ?? EventConsumer.Settings.defaultCatchUpPageSize,
                        catchUpTransactionSize: transaction ?? EventConsumer.Settings.defaultCatchUpTransactionSize),
                    producerRPC: client,
                    sink: DatabaseEventSink(
                        producer: name, writer: analytics.host.database, batch: analytics.batchHandler(for: name),
                        backlog: analytics.backlog(for: name)),
                    feedsReplies: true, logger: logger))
        }
        defer { for client in clients { client.close() } }
        let serverGroup = ServiceGroup(services: servers, logger: logger)
        let serving = Task { try await serverGroup.run() }
        try await Task.sleep(for: .milliseconds(200))  // bound before the clock starts

        let clock = ContinuousClock()
        let start = clock.now
        let consumerGroup = ServiceGroup(services: consumers, logger: logger)
        let consuming = Task { try await consumerGroup.run() }
        var appliedAt: ContinuousClock.Instant?
        func stop() async {
            await consumerGroup.triggerGracefulShutdown()
            _ = await consuming.result
            await serverGroup.triggerGracefulShutdown()
            _ = await serving.result
        }
        do {
            var lastReport = start
            var applied: Int64 = 0
            var lastProgress = start
            // Done when every event is applied and nothing a backlog left behind is still
            // behind: neither catch counters nor vehicle aggregates (a catch-up settles both
            // after its last page: CatchProjection.settle, FuelProjection.settle).
            func settled() async throws -> Bool {
                try await analytics.host.database.read {
                    try Bool.fetchOne(
                        $0,
                        sql: """
                            SELECT NOT EXISTS (SELECT 1 FROM catchTallyStale) AND NOT EXISTS (SELECT 1 FROM vehicleStale)
                            """) ?? false
                }
            }
            func done() async throws -> Bool {
                if zip(consumers, last).contains(where: { $0.progress.status.position < $1 }) { return false }
                if appliedAt == nil { appliedAt = clock.now }
                return try await settled()
            }
            while try await !done() {
                let now = consumers.reduce(Int64(0)) { $0 + $1.progress.status.position }
                if now != applied { (applied, lastProgress) = (now, clock.now) }
                if clock.now - lastReport > .seconds(15) {
                    lastReport = clock.now
                    say("  replayed \(applied) of \(total) events in \(seconds(clock.now - start)) s")
                }
                if let failed = consumers.first(where: { $0.progress.status.state == .stalled }) {
                    throw ServiceError(.internal, "the \(failed.progress.producer) consumer stalled: \(failed.progress.status)")
                }
                if clock.now - lastProgress > .seconds(60) {
                    throw ServiceError(.internal, "the replay made no progress for 60 s at \(applied) of \(total) events")
                }
                try await Task.sleep(for: .milliseconds(2))
            }
        } catch {
            await stop()
            throw error
        }
        let elapsed = seconds(clock.now - start)
        await stop()
        return (total, elapsed, seconds((appliedAt ?? clock.now) - start))
    }

    static func seconds(_ d: Duration) -> Double { Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18 }
}
