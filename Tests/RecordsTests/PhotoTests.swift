// Catch photos: upload, thumbnail, retrieval, refusals, sharing by content hash and the
// files' lifecycle. Every image is generated here through libvips (Imaging.testImage) or
// written byte by byte (the oversized PNG header); nothing is downloaded.
import Foundation
import GRDB
import Imaging
import ImagingFixtures
import RecordsService
import Runtime
import Storage
import Testing
import Wire

/// A harness whose photos live in a scratch directory the test can inspect.
struct PhotoHarness {
    let scratch: ScratchFile
    let records: Harness
    var directory: String { scratch.directory + "/records-photos" }

    init(maxBytes: Int = PhotoSettings.defaultMaxBytes) throws {
        scratch = try ScratchFile()
        // with the shard moves' routes, as the service runs (records.shard.import takes 64 MiB)
        records = try Harness(
            path: scratch.path,
            photos: PhotoSettings(directory: scratch.directory + "/records-photos", maxBytes: maxBytes), guarded: true)
    }

    /// Every file under the photo directory (temporary ones included), by relative path.
    func files() -> [String] {
        guard let walker = FileManager.default.enumerator(atPath: directory) else { return [] }
        var found: [String] = []
        while let path = walker.nextObject() as? String {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: directory + "/" + path, isDirectory: &isDirectory),
                !isDirectory.boolValue
            {
                found.append(path)
            }
        }
        return found.sorted()
    }

    func file(_ hash: String) -> String { directory + "/" + hash.prefix(2) + "/" + hash.dropFirst(2) }
}

/// A generated test image, made on the imaging queue: libvips blocks, and a test that
/// blocks the cooperative pool starves every other suite running beside it.
func image(width: Int, height: Int, format: ImageFormat = .jpeg, orientation: Int = 0) async throws -> Data {
    try await Imaging.run { () throws(ImagingError) in
        try Imaging.testImage(width: width, height: height, format: format, orientation: orientation)
    }
}

/// The shared catch body with a photo (raw base64 text, spliced in as typed).
func catchBody(photo base64: String) -> String {
    String(catchBody.dropLast()) + #","photo":"\#(base64)"}"#
}

func catchBody(photo data: Data) -> String { catchBody(photo: data.base64EncodedString()) }

/// A PNG whose header claims `width`×`height` but holds almost no data: a decompression
/// bomb's shape, refused before anything is decoded.
func pngHeader(width: UInt32, height: UInt32) -> Data {
    func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }
    func bigEndian(_ value: UInt32) -> [UInt8] { withUnsafeBytes(of: value.bigEndian) { Array($0) } }
    func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let body = Array(type.utf8) + data
        return bigEndian(UInt32(data.count)) + body + bigEndian(crc32(body))
    }
    let ihdr = bigEndian(width) + bigEndian(height) + [8, 2, 0, 0, 0]  // 8-bit RGB
    let idat: [UInt8] = [0x78, 0x9C, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01]  // an empty zlib stream
    let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
    return Data(signature + chunk("IHDR", ihdr) + chunk("IDAT", idat) + chunk("IEND", []))
}

// Serialized: libvips work is CPU-heavy, and the timing tests of other suites share the
// machine's cores with it.
@Suite("Catch photos", .serialized)
struct PhotoTests {
    @Test func uploadMakesAThumbnailAndServesTheOriginalByteForByte() async throws {
        let h = try PhotoHarness()
        defer { h.scratch.remove() }
        let original = try await image(width: 1200, height: 800)
        let added = try await h.records.ok("records.catch.add", catchBody(photo: original))
        let photo = try #require(added["photo"])
        #expect(photo["hash"] == .string(Crypto.sha256Hex(original)))
        #expect(photo["contentType"] == "image/jpeg")
        #expect(photo["bytes"] == .number(.init(original.count)))
        #expect(photo["width"] == 1200)
        #expect(photo["height"] == 800)
        let thumb = try #require(photo["thumbnail"])
        #expect(thumb["width"] == 256)
        #expect(abs(thumb["height"]!.int - 171) <= 1)
        #expect(added["photoPlaceholder"] == nil)

        let id = added["id"]!.string
        #expect(try await h.records.ok("records.catch.get", #"{"id":"\#(id)"}"#) == added)
        #expect(try await h.records.ok("records.catch.list").items == [added])
        #expect(try await h.records.events().first { $0.type == "catch.created" }?.data["photo"] == photo)

        let fetched = try await h.records.ok("records.catch.photo.get", #"{"id":"\#(id)"}"#)
        #expect(fetched["contentType"] == "image/jpeg")
        #expect(Data(base64Encoded: fetched["data"]!.string) == original)
        #expect(fetched["hash"] == photo["hash"])
        #expect(fetched["width"] == 1200 && fetched["height"] == 800)

        let small = try await h.records.ok("records.catch.photo.get", #"{"id":"\#(id)","thumbnail":true}"#)
        let smallData = try #require(Data(base64Encoded: small["data"]!.string))
        #expect(small["contentType"] == "image/jpeg")
        #expect(small["hash"] == .string(Crypto.sha256Hex(smallData)))
        #expect(small["hash"] == thumb["hash"])
        let header = try await Imaging.run { () throws(ImagingError) in try Imaging.header(of: smallData) }
        #expect(header.format == .jpeg)
        #expect(header.width == thumb["width"]!.int && header.height == thumb["height"]!.int)
        // The original and its thumbnail, each stored under its hash.
        #expect(h.files().count == 2)
        #expect(
            FileManager.default.contentsEqual(
                atPath: h.file(photo["hash"]!.string), andPath: h.file(thumb["hash"]!.string)) == false)
    }

    @Test func aCatchWithoutAPhotoShowsTheFishShadow() async throws {
        let records = try Harness()
        let added = try await records.ok("records.catch.add", catchBody)
        #expect(added["photo"] == .null)
        #expect(added["photoPlaceholder"] == "fish-shadow")
        let id = added["id"]!.string
        let error = try await records.fails("records.catch.photo.get", #"{"id":"\#(id)"}"#)
        #expect(error.code == .notFound)
        #expect(error.message == "catch \(id) has no photo")
    }

    @Test(arguments: [ImageFormat.png, .webp, .heic])
    func otherFormatsAreAccepted(format: ImageFormat) async throws {
        if format == .heic && !Imaging.readsHEIC { return }  // this libvips has no libheif
        let h = try PhotoHarness()
        defer { h.scratch.remove() }
        let original = try await image(width: 400, height: 600, format: format)
        let photo = try await h.records.ok("records.catch.add", catchBody(photo: original))["photo"]
        #expect(photo?["contentType"] == .string(format.contentType))
        #expect(photo?["width"] == 400 && photo?["height"] == 600)
        #expect(photo?["thumbnail"]?["height"] == 256)
        #expect(abs((photo?["thumbnail"]?["width"]?.int ?? 0) - 171) <= 1)
    }

    @Test func exifOrientationTurnsThePhotoUpright() async throws {
        let h = try PhotoHarness()
        defer { h.scratch.remove() }
        // Stored 1200×800 but tagged "rotate 90° clockwise to display" (orientation 6).
        let original = try await image(width: 1200, height: 800, orientation: 6)
        let photo = try #require(try await h.records.ok("records.catch.add", catchBody(photo: original))["photo"])
        #expect(photo["width"] == 800 && photo["height"] == 1200)
        #expect(photo["thumbnail"]?["height"] == 256)
        #expect(abs((photo["thumbnail"]?["width"]?.int ?? 0) - 171) <= 1)
    }

    @Test func refusedPhotosAreClearInvalidArgumentsAndWriteNothing() async throws {
        let h = try PhotoHarness()
        defer { h.scratch.remove() }
        let jpeg = try await image(width: 400, height: 300)
        let cases: [(body: String, message: String)] = [
            (catchBody(photo: jpeg.prefix(jpeg.count / 2)), "photo: the image is damaged: "),
            (
                catchBody(photo: Data("Gone fishing. Bring the spoon and the worms.\n".utf8)),
                "photo: not a JPEG, PNG, WebP or HEIC image"
            ),
            (
                catchBody(photo: ""),
                "photo: is empty (0 bytes): send a JPEG, PNG, WebP or HEIC image, or leave photo out"
            ),
            (
                catchBody(photo: "not base64!"),
                "photo: must be the image's bytes in standard base64 (got 11 characters that are not)"
            ),
            (
                catchBody(photo: pngHeader(width: 100_000, height: 100_000)),
                "photo: must be at most 20,000 px on a side and 50 megapixels (got 100,000 × 100,000)"
            ),
            (
                catchBody(photo: pngHeader(width: 10_000, height: 6_000)),
                "photo: must be at most 20,000 px on a side and 50 megapixels (got 10,000 × 6,000)"
            ),
            (String(catchBody.dropLast()) + #","photo":12}"#, "photo: expected a string"),
        ]
        for (body, message) in cases {
            let error = try await h.records.fails("records.catch.add", body)
            #expect(error.code == .invalidArgument)
            #expect(error.field == "photo")
            #expect(error.message.hasPrefix(message), "\(error.message)")
        }
        #expect(try await h.records.count("fishCatch") == 0)
        #expect(try await h.records.count("photo") == 0)
        #expect(h.files() == [])
        // The service still answers, and still takes a good photo.
        #expect(try await h.records.ok("records.catch.add", catchBody(photo: jpeg))["photo"]?["width"] == 400)
    }

    @Test func aPhotoOverTheLimitIsRefusedWithBothSizes() async throws {
        let jpeg = try await image(width: 640, height: 480)
        let h = try PhotoHarness(maxBytes: jpeg.count - 1000)
        defer { h.scratch.remove() }
        let error = try await h.records.fails("records.catch.add", catchBody(photo: jpeg))
        #expect(error.code == .invalidArgument)
        #expect(error.field == "photo")
        let limit = PhotoSettings(directory: "", maxBytes: jpeg.count - 1000)
        #expect(error.message.hasPrefix("photo: must be at most "), "\(error.message)")
        #expect(error.message.hasSuffix(" KiB)"), "\(error.message)")
        #expect(limit.requestMaxBytes == (jpeg.count - 1000 + 2) / 3 * 4 + 65_536)
        #expect(h.files() == [])

        // Far over: the request itself is larger than the method accepts; the runtime answers
        // by the method read from the frame, before parsing it.
        let tooBig = try await h.records.fails(
            "records.catch.add", catchBody(photo: Data(repeating: 0xFF, count: limit.requestMaxBytes)))
        #expect(tooBig.code == .invalidArgument)
        #expect(
            tooBig.message.contains("; records.catch.add accepts at most \(limit.requestMaxBytes)"),
            "\(tooBig.message)")
        // Other methods keep the small default.
        let info = try await h.records.dispatcher.handle(Data(#"{"v":1,"id":"i","method":"$srv.info"}"#.utf8))
        let methods = try #require(try WireCoding.decode(Reply.self, from: info).result?["methods"]?.arrayValue)
        let limits = Dictionary(uniqueKeysWithValues: methods.map { ($0["name"]!.string, $0["maxBytes"]!.int) })
        #expect(limits["records.catch.add"] == limit.requestMaxBytes)
        #expect(limits["records.catch.update"] == limit.requestMaxBytes)
        #expect(limits["records.catch.get"] == 256 * 1024)
        #expect(limits["records.fillup.add"] == 256 * 1024)
        #expect(limits["records.shard.import"] == 64 * 1024 * 1024)
    }

    @Test func theDefaultLimitIs16MiB() {
        let settings = PhotoSettings(directory: "/nowhere")
        #expect(settings.maxBytes == 16 * 1024 * 1024)
        #expect(settings.requestMaxBytes == (16 * 1024 * 1024 + 2) / 3 * 4 + 64 * 1024)
    }

    @Test func theSamePhotoIsStoredOnceAndGoesWithItsLastCatch() async throws {
        let h = try PhotoHarness()
        defer { h.scratch.remove() }
        let jpeg = try await image(width: 400, height: 300)
        let first = try await h.records.ok("records.catch.add", catchBody(photo: jpeg))
        let second = try await h.records.ok("records.catch.add", catchBody(photo: jpeg))
        #expect(first["photo"] == second["photo"])
        #expect(try await h.records.count("photo") == 1)
        #expect(h.files().count == 2)

        // Another user cannot reach it through someone else's catch.
        let stranger = try await h.records.fails(
            "records.catch.photo.get", #"{"id":"\#(first["id"]!.string)"}"#, as: "bob")
        #expect(stranger.code == .notFound)
        #expect(stranger.field == "id")

        try await h.records.ok("records.catch.delete", #"{"id":"\#(first["id"]!.string)"}"#)
        #expect(try await h.records.count("photo") == 1)
        #expect(h.files().count == 2)
        let kept = try await h.records.ok("records.catch.photo.get", #"{"id":"\#(second["id"]!.string)"}"#)
        #expect(Data(base64Encoded: kept["data"]!.string) == jpeg)

        try await h.records.ok("records.catch.delete", #"{"id":"\#(second["id"]!.string)"}"#)
        #expect(try await h.records.count("photo") == 0)
        #expect(h.files() == [])
    }

    /// While a backup copies the database and then the photo folder, a photo whose catch is
    /// deleted meanwhile is still named by the backup's database: its files wait for the
    /// next sweep rather than go before they are copied.
    @Test func aBackupUnderWayKeepsThePhotosItsDatabaseNames() async throws {
        let h = try PhotoHarness()
        defer { h.scratch.remove() }
        let jpeg = try await image(width: 400, height: 300)
        let added = try await h.records.ok("records.catch.add", catchBody(photo: jpeg))
        try await h.records.photos.deletions.holding {
            try await h.records.ok("records.catch.delete", #"{"id":"\#(added["id"]!.string)"}"#)
            #expect(try await h.records.count("photo") == 0)
            #expect(h.files().count == 2, "deleted under the backup: \(h.files())")
            #expect(try await h.records.photos.sweep() == 0)
        }
        #expect(try await h.records.photos.sweep() == 2)
        #expect(h.files() == [])
    }

    @Test func concurrentUploadsAndDeletesOfOnePhotoNeverLoseItsFiles() async throws {
        let h = try PhotoHarness()
        defer { h.scratch.remove() }
        let body = catchBody(photo: try await image(width: 600, height: 400))
        let records = h.records
        // Each task adds the photo on a catch and deletes that catch again, while the
        // others do the same: the files must be there whenever a catch shows the photo.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    let id = try await records.ok("records.catch.add", body)["id"]!.string
                    let fetched = try await records.ok("records.catch.photo.get", #"{"id":"\#(id)","thumbnail":true}"#)
                    #expect(fetched["width"] == 256)
                    try await records.ok("records.catch.delete", #"{"id":"\#(id)"}"#)
                }
            }
            try await group.waitForAll()
        }
        #expect(try await records.count("photo") == 0)
        #expect(h.files() == [])
        let kept = try await records.ok("records.catch.add", body)["id"]!.string
        #expect(try await records.ok("records.catch.photo.get", #"{"id":"\#(kept)"}"#)["width"] == 600)
        #expect(h.files().count == 2)
    }

    @Test func updateReplacesRemovesOrKeepsThePhoto() async throws {
        let h = try PhotoHarness()
        defer { h.scratch.remove() }
        let one = try await image(width: 300, height: 300)
        let two = try await image(width: 300, height: 600)
        let id = try await h.records.ok("records.catch.add", catchBody(photo: one))["id"]!.string

        let renamed = try await h.records.ok("records.catch.update", #"{"id":"\#(id)","species":"Perch"}"#)
        #expect(renamed["photo"]?["hash"] == .string(Crypto.sha256Hex(one)))

        let replaced = try await h.records.ok(
            "records.catch.update", #"{"id":"\#(id)","photo":"\#(two.base64EncodedString())"}"#)
        #expect(replaced["photo"]?["hash"] == .string(Crypto.sha256Hex(two)))
        #expect(replaced["photo"]?["width"] == 300)
        #expect(try await h.records.count("photo") == 1)
        #expect(h.files().count == 2)
        #expect(!FileManager.default.fileExists(atPath: h.file(Crypto.sha256Hex(one))))

        let removed = try await h.records.ok("records.catch.update", #"{"id":"\#(id)","photo":null}"#)
        #expect(removed["photo"] == .null)
        #expect(removed["photoPlaceholder"] == "fish-shadow")
        #expect(try await h.records.count("photo") == 0)
        #expect(h.files() == [])
        #expect(try await h.records.events().last?.data["photo"] == .null)
    }

    @Test func aWriteThatFailsAfterTheUploadLeavesNoFiles() async throws {
        let h = try PhotoHarness()
        defer { h.scratch.remove() }
        let jpeg = try await image(width: 400, height: 400)
        // The image is fine; the catch is not: the commit refuses it after the files were written.
        let unknown = try await h.records.fails(
            "records.catch.update",
            #"{"id":"01900000-0000-7000-8000-000000000000","photo":"\#(jpeg.base64EncodedString())"}"#)
        #expect(unknown.code == .notFound)
        let invalid = try await h.records.fails(
            "records.catch.add",
            String(catchBody(photo: jpeg).replacingOccurrences(of: #""latitude":59.3"#, with: #""latitude":91"#)))
        #expect(invalid.field == "latitude")
        #expect(try await h.records.count("photo") == 0)
        #expect(h.files() == [])
    }

    @Test func aRetriedUploadIsAnsweredFromTheIdempotencyLog() async throws {
        let h = try PhotoHarness()
        defer { h.scratch.remove() }
        let body = catchBody(photo: try await image(width: 400, height: 300))
        let first = try await h.records.ok("records.catch.add", body, key: "catch-1")
        let again = try await h.records.ok("records.catch.add", body, key: "catch-1")
        #expect(first == again)
        #expect(try await h.records.count("fishCatch") == 1)
        #expect(try await h.records.count("photo") == 1)
        #expect(h.files().count == 2)
    }

    @Test func theSweepRemovesWhatNoRowNames() async throws {
        let h = try PhotoHarness()
        defer { h.scratch.remove() }
        let kept = try await h.records.ok(
            "records.catch.add", catchBody(photo: try await image(width: 300, height: 200)))
        // Leftovers of a crash: a file whose row was deleted, and an old temporary file.
        let orphan = Crypto.sha256Hex(Data("orphan".utf8))
        try FileManager.default.createDirectory(
            atPath: h.directory + "/" + orphan.prefix(2), withIntermediateDirectories: true)
        FileManager.default.createFile(atPath: h.file(orphan), contents: Data("x".utf8))
        let temporary = h.directory + "/" + orphan.prefix(2) + "/.tmp-crashed"
        FileManager.default.createFile(
            atPath: temporary, contents: Data("y".utf8),
            attributes: [.modificationDate: Date().addingTimeInterval(-3600)])
        let fresh = h.directory + "/" + orphan.prefix(2) + "/.tmp-writing"
        FileManager.default.createFile(atPath: fresh, contents: Data("z".utf8))
        #expect(h.files().count == 5)

        #expect(try await h.records.photos.sweep() == 2)
        #expect(h.files().count == 3)  // the photo, its thumbnail, the upload still being written
        #expect(FileManager.default.fileExists(atPath: fresh))
        #expect(FileManager.default.fileExists(atPath: h.file(kept["photo"]!["hash"]!.string)))
    }

    @Test func migratingAVersion1DatabaseKeepsItsCatches() throws {
        let database = try DatabaseQueue()
        try RecordsService.migrator.migrate(database, upTo: "records.v1")
        try database.write { db in
            try db.execute(
                sql: """
                    INSERT INTO fishCatch (id, userId, species, weight, weightUnit, weightMg, bait, water, latitude,
                        longitude, caughtAt, released, conditionsStatus, createdAt, updatedAt)
                    VALUES ('c1', 'alice', 'Pike', 2500, 'kg', 2500000, 'spoon', 'fresh', 59.3, 18.1, 1, 0, 'pending', 1, 1)
                    """)
        }
        try RecordsService.migrator.migrate(database)
        let row = try database.read { db in try Row.fetchOne(db, sql: "SELECT * FROM catchView WHERE id = 'c1'") }
        #expect(row?["species"] == "Pike")
        #expect(row?["photoHash"] == nil)
        // photoHash is now a foreign key: it cannot name a photo that is not stored.
        #expect(throws: DatabaseError.self) {
            try database.write { db in
                try db.execute(
                    sql: "UPDATE fishCatch SET photoHash = ? WHERE id = 'c1'",
                    arguments: [String(repeating: "a", count: 64)])
            }
        }
    }

    @Test func deletingAnAccountDropsItsPhotosAndTheSweepTheirFiles() async throws {
        let h = try PhotoHarness()
        defer { h.scratch.remove() }
        try await h.records.ok("records.catch.add", catchBody(photo: try await image(width: 300, height: 200)))
        let bobs = try await h.records.ok(
            "records.catch.add", catchBody(photo: try await image(width: 200, height: 300)), as: "bob")
        let event = Event(seq: 1, type: AuthEvents.userDeleted, userId: "alice", at: Date(), data: ["userId": "alice"])
        try await h.records.host.database.write { db in try RecordsService.applyAuthEvent(db, event) }
        #expect(try await h.records.count("photo") == 1)
        #expect(try await h.records.photos.sweep() == 2)
        #expect(h.files().count == 2)
        #expect(FileManager.default.fileExists(atPath: h.file(bobs["photo"]!["hash"]!.string)))
    }
}
