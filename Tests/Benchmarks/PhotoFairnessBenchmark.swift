// A small upload under a burst of large ones: the records service in this process, photos
// through its pool (RecordsService/Photos.swift). Alice sends `--large` catches at once, each
// with a flat `--side`×`--side` PNG (49 MP by default: PNG has no shrink-on-load, so each
// decodes in full); shortly after, Bob sends one with a 300×200 JPEG. Reports one large job
// alone and Bob's latency under the burst. Before the pool, photo work ran on one serial
// FIFO queue, so Bob's upload waited for the whole burst: about `--large` × one large job.
import ArgumentParser
import Foundation
import Imaging
import ImagingFixtures
import Logging
import RecordsService
import Runtime
import Storage
import Wire

struct PhotoFairnessBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "photo-fairness", abstract: "Another user's small photo upload under a burst of large ones.")

    @Option(help: "Large uploads sent at once by one user.") var large = 4
    @Option(help: "Side of the large (flat PNG) photos, in pixels.") var side = 7000
    @Option(help: "Photo workers (LOGBOOK_RECORDS_PHOTO_WORKERS).") var workers = 2

    func run() async throws {
        let directory = "/tmp/lbb-\(UUID().uuidString.prefix(8).lowercased())"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var logger = Logger(label: "bench")
        logger.logLevel = .error
        let host = try ServiceHost(
            descriptor: ServiceDescriptor(name: "records"), database: DatabaseSettings(path: directory + "/records.sqlite"),
            migrator: RecordsService.migrator, eventsEndpoint: nil, logger: logger)
        let photos = PhotoStore(
            settings: PhotoSettings(directory: directory + "/records-photos", workers: workers), database: host.database,
            logger: logger)
        let dispatcher = host.dispatcher(router: RecordsService.router(host: host, photos: photos), sessions: UserSessions())
        let transport = InProcessTransport(dispatcher)
        let side = self.side
        let big = try await Imaging.run { () throws(ImagingError) in try Imaging.flatImage(width: side, height: side, format: .png) }
        let small = try await Imaging.run { () throws(ImagingError) in try Imaging.testImage(width: 300, height: 200) }
        print(
            "logbook-bench photo-fairness: \(large) × \(side)×\(side) PNG (\(big.count) bytes) from one user, then a "
                + "300×200 JPEG from another; \(workers) photo workers, \(ProcessInfo.processInfo.activeProcessorCount) cores")
        func upload(_ photo: Data, as user: String) async throws -> Double {
            let body: JSONValue = [
                "species": "Pike", "weight": 2.5, "weightUnit": "kg", "bait": "spoon", "water": "fresh", "latitude": 59.3,
                "longitude": 18.1, "photo": .string(photo.base64EncodedString()),
            ]
            let clock = ContinuousClock()
            let start = clock.now
            let reply = try await transport.reply(
                "records.catch.add", body: body, options: CallOptions(token: user, timeout: .seconds(120)))
            if let error = reply.error { throw error }
            return seconds(clock.now - start) * 1000
        }
        let alone = try await upload(big, as: "alice")
        print(String(format: "one large upload alone: %.0f ms", alone))
        let smallAlone = try await upload(small, as: "bob")
        print(String(format: "the small upload alone: %.0f ms", smallAlone))
        let bob = try await withThrowingTaskGroup(of: Double?.self) { group in
            for _ in 0..<large { group.addTask { _ = try await upload(big, as: "alice"); return nil } }
            try await Task.sleep(for: .milliseconds(100))
            group.addTask { try await upload(small, as: "bob") }
            var bob = 0.0
            for try await value in group { if let value { bob = value } }
            return bob
        }
        print(String(format: "the small upload under the burst: %.0f ms (%.1f large jobs)", bob, bob / alone))
    }
}

/// The token is the user id.
struct UserSessions: SessionResolver {
    func resolve(token: String) async throws -> Principal {
        Principal(userId: token, username: token, sessionId: token)
    }
}
