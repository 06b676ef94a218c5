// An online backup of a records database of N expenses (default 100,000): `$srv.backup`
// through the dispatcher, as `logbook backup` calls it, while a writer keeps adding
// expenses; prints the copy's size and the time it took, and how many writes went on
// meanwhile.
import ArgumentParser
import Foundation
import GRDB
import Logging
import RecordsService
import Runtime
import Storage
import Synchronization
import Wire

struct BackupBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backup", abstract: "$srv.backup of a records database of N records, under a write load.")

    @Option(help: "Expenses in the database before the backup.") var records = 100_000

    func run() async throws {
        let directory = "/tmp/lb-backup-bench-\(ProcessInfo.processInfo.processIdentifier)"
        try? FileManager.default.removeItem(atPath: directory)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var logger = Logger(label: "bench")
        logger.logLevel = .error
        let host = try ServiceHost(
            descriptor: ServiceDescriptor(name: "records"), database: DatabaseSettings(path: directory + "/records.sqlite"),
            migrator: RecordsService.migrator, eventsEndpoint: nil, logger: logger)
        let photos = PhotoStore(
            settings: PhotoSettings(directory: directory + "/records-photos"), database: host.database, logger: logger)
        host.backUpAlso(directory + "/records-photos")
        let service = InProcessTransport(
            host.dispatcher(router: RecordsService.router(host: host, photos: photos), sessions: BenchSessions()))

        let clock = ContinuousClock()
        let loadStart = clock.now
        try await write(records, to: service, inFlight: 64)
        print(String(format: "loaded %d expenses through records.expense.add in %.1f s", records, seconds(clock.now - loadStart)))

        let writes = Atomic<Int>(0)
        let stop = Atomic<Bool>(false)
        let writer = Task {
            while !stop.load(ordering: .relaxed) {
                try await write(1, to: service, inFlight: 1)
                writes.add(1, ordering: .relaxed)
            }
        }
        let start = clock.now
        let reply = try await service.call("$srv.backup", BackupRequest(name: "bench"), as: BackupResult.self,
            options: CallOptions(timeout: .seconds(600)))
        let elapsed = clock.now - start
        stop.store(true, ordering: .relaxed)
        _ = try await writer.value
        print(String(
            format: "backup of %d expenses: %.1f MB (%d pages) in %.0f ms (service's own measure %d ms); %d writes acknowledged meanwhile",
            records, Double(reply.bytes) / 1e6, reply.pages, seconds(elapsed) * 1000, reply.durationMs,
            writes.load(ordering: .relaxed)))
        let copy = try DatabaseQueue(path: reply.directory + "/" + reply.database)
        let (count, check) = try await copy.read {
            (try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM expense") ?? -1, try String.fetchAll($0, sql: "PRAGMA integrity_check"))
        }
        print("the copy holds \(count) expenses; integrity_check: \(check.joined(separator: "; "))")
    }

    func write(_ n: Int, to service: InProcessTransport, inFlight: Int) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            var started = 0
            func launch(_ i: Int) {
                group.addTask {
                    _ = try await service.call(
                        "records.expense.add", ExpenseBody(name: "coffee \(i)", amountMinor: 350), as: JSONValue.self,
                        options: CallOptions(token: "bench", idempotencyKey: ID.make(), timeout: .seconds(30)))
                }
            }
            while started < min(inFlight, n) {
                launch(started)
                started += 1
            }
            while try await group.next() != nil {
                if started < n {
                    launch(started)
                    started += 1
                }
            }
        }
    }
}
