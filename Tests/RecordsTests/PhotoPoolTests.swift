// Bounded photo work: one user's burst of large uploads runs one job at a time on the pool,
// so another user's small upload is not held behind more than one of them; images beyond
// the pixel budget are refused from their header.
import Foundation
import Imaging
import ImagingFixtures
import RecordsService
import Runtime
import Synchronization
import Testing
import Wire

@Suite(.serialized) struct PhotoPoolTests {
    @Test func fourLargeUploadsHoldAnotherUsersSmallUploadBehindAtMostOne() async throws {
        // 49 MP each: flat PNGs (PNG has no shrink-on-load, so each decodes in full).
        let large = try await Imaging.run { () throws(ImagingError) in
            try Imaging.flatImage(width: 7000, height: 7000, format: .png)
        }
        let small = try await image(width: 300, height: 200)
        for workers in [1, 2] {
            let scratch = try ScratchFile()
            defer { scratch.remove() }
            let records = try Harness(
                path: scratch.path,
                photos: PhotoSettings(directory: scratch.directory + "/records-photos", workers: workers))
            let finished = FinishOrder()
            try await withThrowingTaskGroup(of: Void.self) { group in
                for i in 0..<4 {
                    group.addTask {
                        let reply = try await records.send("records.catch.add", catchBody(photo: large), as: "alice")
                        #expect(reply.reply.ok, "\(reply.text.prefix(300))")
                        finished.append("large \(i)")
                    }
                }
                // Bob sends once alice's first upload is done: her other three are then
                // running or waiting, however fast this machine decodes them. (A fixed
                // 300 ms wait let two of hers finish first on a fast machine, one of them
                // before bob had even sent his.)
                for _ in 0..<3_000 where !finished.list.contains(where: { $0.hasPrefix("large") }) {
                    try await Task.sleep(for: .milliseconds(5))
                }
                finished.append("small sent")
                group.addTask {
                    let reply = try await records.send("records.catch.add", catchBody(photo: small), as: "bob")
                    #expect(reply.reply.ok, "\(reply.text.prefix(300))")
                    finished.append("small")
                }
                try await group.waitForAll()
            }
            let order = finished.list
            let sent = order.firstIndex(of: "small sent") ?? 0
            let done = order.firstIndex(of: "small") ?? order.count
            let alicesBefore = order[..<sent].filter { $0.hasPrefix("large") }.count
            let heldBehind = order[sent..<done].filter { $0.hasPrefix("large") }.count
            #expect(alicesBefore <= 2, "\(workers) workers: alice had fewer than two uploads left when bob sent: \(order)")
            #expect(heldBehind <= 1, "\(workers) workers: bob's upload finished after \(heldBehind) of alice's: \(order)")
            #expect(order.count == 6)
        }
    }

    @Test func thePixelBudgetRefusesBeforeDecoding() async throws {
        let flat = try await Imaging.run { () throws(ImagingError) in
            try Imaging.flatImage(width: 4000, height: 3000, format: .png)
        }
        let scratch = try ScratchFile()
        defer { scratch.remove() }
        let records = try Harness(
            path: scratch.path,
            photos: PhotoSettings(
                directory: scratch.directory + "/records-photos", thumbnailer: Thumbnailer(maxPixels: 10_000_000)))
        let error = try await records.fails("records.catch.add", catchBody(photo: flat))
        #expect(error.field == "photo")
        #expect(error.message.contains("10 megapixels") && error.message.contains("4,000 × 3,000"), "\(error.message)")
        #expect(try await records.count("photo") == 0)
    }

    @Test func theSettingsAreRead() throws {
        let stack = try StackConfiguration.scratch(
            "/tmp/lb-none", extra: ["LOGBOOK_RECORDS_PHOTO_MAX_PIXELS": "24000000", "LOGBOOK_RECORDS_PHOTO_WORKERS": "3"])
        let settings = try PhotoSettings(stack: stack)
        #expect(settings.thumbnailer.maxPixels == 24_000_000 && settings.workers == 3)
        #expect(try PhotoSettings(stack: StackConfiguration.scratch("/tmp/lb-none")).thumbnailer.maxPixels == 50_000_000)
        for bad in ["0", "many", "500000000"] {
            #expect(throws: ConfigurationError.self) {
                try PhotoSettings(stack: StackConfiguration.scratch("/tmp/lb-none", extra: ["LOGBOOK_RECORDS_PHOTO_MAX_PIXELS": bad]))
            }
        }
    }
}

final class FinishOrder: Sendable {
    private let names = Mutex<[String]>([])
    func append(_ name: String) { names.withLock { $0.append(name) } }
    var list: [String] { names.withLock { $0 } }
}
