// Catch photos: checked and shrunk with libvips (Imaging.Thumbnailer), stored by SHA-256
// content hash under a directory beside records.sqlite — `<dir>/ab/cdef…` — once however
// many catches show them. The `photo` table holds one row per original; a catch
// references it by `photoHash`. A photo lives as long as a catch references it: the write
// that drops the last reference deletes the row in its transaction, and the files go once
// that transaction is over. docs/photos.md has the whole lifecycle.
//
// Files are written before the row that names them commits (in the write's `prepare`) and
// deleted only after the row is gone, so a committed row always has its files. A file is
// removed only when no row names it and no unfinished write has "pinned" it; a crash
// between commit and unlink leaves a file no row names, which the sweep at start-up (and
// every hour) removes.
import Dispatch
import Contracts
import Foundation
import GRDB
import Imaging
import Logging
import Runtime
import ServiceLifecycle
import Synchronization
import Wire

/// Where photos live and how large they may be.
public struct PhotoSettings: Sendable {
    public static let defaultMaxBytes = 16 * 1024 * 1024

    /// The content-addressed store (created when the first photo arrives).
    public var directory: String
    /// The largest photo accepted, in image bytes (before base64).
    public var maxBytes: Int
    public var thumbnailer: Thumbnailer
    /// Photo jobs (check, decode, thumbnail) run at once; each user has at most one.
    public var workers: Int

    public static let defaultMaxPixels = 50_000_000

    public init(
        directory: String, maxBytes: Int = PhotoSettings.defaultMaxBytes, thumbnailer: Thumbnailer = Thumbnailer(),
        workers: Int = 2
    ) {
        self.directory = directory
        self.maxBytes = maxBytes
        self.thumbnailer = thumbnailer
        self.workers = max(1, workers)
    }

    /// From the stack: `records-photos` beside the records database unless
    /// `LOGBOOK_RECORDS_PHOTO_DIR` says otherwise; `LOGBOOK_RECORDS_PHOTO_MAX_BYTES`,
    /// `LOGBOOK_RECORDS_PHOTO_MAX_PIXELS` (the pixel budget), `LOGBOOK_RECORDS_PHOTO_WORKERS`.
    /// A shard `records-k` keeps its photos in `records-k-photos` (or LOGBOOK_RECORDS_<k>_PHOTO_DIR).
    public init(stack: StackConfiguration, instance: String = RecordsService.name) throws {
        let database = URL(fileURLWithPath: stack.databasePath(instance))
        let directory =
            stack.setting(instance, "PHOTO_DIR")
            ?? database.deletingLastPathComponent().appendingPathComponent(instance + "-photos").path
        var maxBytes = Self.defaultMaxBytes
        if let text = stack.setting(RecordsService.name, "PHOTO_MAX_BYTES") {
            guard let value = Int(text), (1...(1 << 30)).contains(value) else {
                throw ConfigurationError(
                    "LOGBOOK_RECORDS_PHOTO_MAX_BYTES must be a whole number of bytes from 1 to 1073741824 (got \"\(text)\")"
                )
            }
            maxBytes = value
        }
        func number(_ name: String, _ range: ClosedRange<Int>, default value: Int) throws -> Int {
            guard let text = stack.setting(RecordsService.name, name) else { return value }
            guard let number = Int(text.trimmingCharacters(in: .whitespaces)), range.contains(number) else {
                throw ConfigurationError(
                    "LOGBOOK_RECORDS_\(name) must be a whole number from \(range.lowerBound) to \(range.upperBound) (got \"\(text)\")")
            }
            return number
        }
        let maxPixels = try number("PHOTO_MAX_PIXELS", 1_000_000...400_000_000, default: Self.defaultMaxPixels)
        let workers = try number("PHOTO_WORKERS", 1...64, default: 2)
        self.init(
            directory: directory, maxBytes: maxBytes, thumbnailer: Thumbnailer(maxPixels: maxPixels), workers: workers)
    }

    /// The request limit of the methods that carry a photo: its base64 (4/3 of the bytes)
    /// plus 64 KiB for the rest of the request.
    public var requestMaxBytes: Int { (maxBytes + 2) / 3 * 4 + 64 * 1024 }
}

// A stored photo as the wire shows it (and as its `photo` row holds it) is `Photo`,
// Shared/Contracts/Catches.swift.

/// What a write did to photos, handed from `prepare` to `commit` to `settle`: the photo it
/// uploaded (its files written and pinned) and the hashes whose rows its commit deleted.
final class PhotoWork: Sendable {
    let upload: Photo?
    private let released = Mutex<[String]>([])

    init(upload: Photo? = nil) { self.upload = upload }

    /// The commit deleted this photo's row: its files may go once the transaction is over.
    func release(_ photo: Photo) {
        released.withLock { $0 += [photo.hash, photo.thumbnail.hash] }
    }

    var releasedHashes: [String] { released.withLock { $0 } }
}

/// The service's photo files and their pins; one per process, shared by the routes and the
/// sweeper.
public final class PhotoStore: Sendable {
    let settings: PhotoSettings
    private let database: any DatabaseReader
    private let logger: Logger
    /// Hashes whose files an unfinished write may reference, with how many writes do.
    private let pinned = Mutex<[String: Int]>([:])
    /// Held while a backup copies the database and this folder: no file is deleted then
    /// (the next sweep deletes what waited).
    public let deletions = FileHold()
    /// File work blocks: it runs here, never on the cooperative pool.
    private let files = DispatchQueue(label: "logbook.records.photos")
    /// Image work: a few at once, one per user.
    let pool: PhotoPool

    public init(settings: PhotoSettings, database: any DatabaseReader, logger: Logger) {
        self.settings = settings
        self.database = database
        self.logger = logger
        pool = PhotoPool(workers: settings.workers)
    }

    /// The service that sweeps this store at start-up and every `interval`.
    public func sweeper(interval: Duration = .seconds(3600)) -> some Service {
        PhotoSweeper(store: self, interval: interval, logger: logger)
    }

    // MARK: Upload

    /// Checks the caller's `photo` (base64), makes the thumbnail and writes both files,
    /// pinned until `settle`. Nothing is written unless the image is accepted. The image
    /// work waits for a place in the pool, behind at most this user's own earlier upload.
    func prepare(base64: String, user: String) async throws -> PhotoWork {
        guard let data = Data(base64Encoded: base64) else {
            throw ServiceError.invalid(
                "photo",
                "must be the image's bytes in standard base64 (got \(base64.utf8.count) characters that are not)")
        }
        guard !data.isEmpty else {
            throw ServiceError.invalid(
                "photo", "is empty (0 bytes): send a JPEG, PNG, WebP or HEIC image, or leave photo out")
        }
        if data.count > settings.maxBytes {
            let (limit, got) = (Self.size(settings.maxBytes), Self.size(data.count))
            // Just over the limit, rounding would show the same size twice: give the bytes.
            throw limit == got
                ? ServiceError.invalid(
                    "photo",
                    "must be at most \(limit) = \(Digits.grouped(settings.maxBytes)) bytes (got \(Digits.grouped(data.count)) bytes)"
                )
                : ServiceError.invalid("photo", "must be at most \(limit) (got \(got))")
        }
        let made: Thumbnailer.Result
        do {
            let thumbnailer = settings.thumbnailer
            made = try await pool.run(user: user) { try await thumbnailer.make(from: data) }
        } catch let error as ImagingError {
            throw Self.refusal(error, thumbnailer: settings.thumbnailer)
        }
        let thumb = made.thumbnail
        let photo = Photo(
            hash: Crypto.sha256Hex(data), contentType: made.header.format.contentType, bytes: data.count,
            width: made.header.width, height: made.header.height,
            thumbnail: PhotoThumbnail(hash: Crypto.sha256Hex(thumb.data), width: thumb.width, height: thumb.height))
        let work = PhotoWork(upload: photo)
        pin([photo.hash, photo.thumbnail.hash])
        do {
            try await onFileQueue {
                try self.writeFile(photo.hash, data)
                try self.writeFile(photo.thumbnail.hash, thumb.data)
            }
        } catch {
            await settle(work)
            throw error
        }
        return work
    }

    /// After the write's transaction, committed or not: unpins what it uploaded and
    /// removes the files no row names any more.
    func settle(_ work: PhotoWork) async {
        var hashes = work.releasedHashes
        if let photo = work.upload {
            unpin([photo.hash, photo.thumbnail.hash])
            hashes += [photo.hash, photo.thumbnail.hash]
        }
        guard !hashes.isEmpty else { return }
        let candidates = Set(hashes)
        _ = try? await onFileQueue { self.collect(candidates) }
    }

    // MARK: Rows (inside the write's transaction)

    /// The catch now shows `photo`: its row is added unless it is already there.
    static func reference(_ db: Database, _ photo: Photo) throws {
        try db.execute(
            sql: """
                INSERT INTO photo (hash, contentType, bytes, width, height, thumbHash, thumbWidth, thumbHeight)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (hash) DO NOTHING
                """,
            arguments: [
                photo.hash, photo.contentType, photo.bytes, photo.width, photo.height, photo.thumbnail.hash,
                photo.thumbnail.width, photo.thumbnail.height,
            ])
    }

    /// A catch stopped showing `photo`: its row goes when no catch references it.
    static func dereference(_ db: Database, _ photo: Photo, work: PhotoWork) throws {
        try db.execute(
            sql: "DELETE FROM photo WHERE hash = ? AND NOT EXISTS (SELECT 1 FROM fishCatch WHERE photoHash = ?)",
            arguments: [photo.hash, photo.hash])
        if db.changesCount > 0 { work.release(photo) }
    }

    /// Rows no catch references (after an account's catches were purged); their files go
    /// at the next sweep.
    static func deleteUnreferenced(_ db: Database) throws {
        try db.execute(
            sql: "DELETE FROM photo WHERE NOT EXISTS (SELECT 1 FROM fishCatch WHERE fishCatch.photoHash = photo.hash)")
    }

    // MARK: Reading

    /// A stored file's bytes; nil when there is no such file.
    func read(_ hash: String) async throws -> Data? {
        try await onFileQueue {
            let path = self.path(hash)
            if access(path, F_OK) != 0 { return nil }
            do {
                return try Data(contentsOf: URL(fileURLWithPath: path))
            } catch {
                self.logger.error(
                    "photo file unreadable", metadata: ["photo.hash": "\(hash)", "error.detail": "\(error)"])
                throw ServiceError(.internal, "the photo's file could not be read")
            }
        }
    }

    /// A file copied from another shard (`records.shard.import`): written only when its
    /// bytes hash to its name.
    func importFile(_ hash: String, _ data: Data) async throws {
        guard Self.isHex(hash), hash.count == 64, Crypto.sha256Hex(data) == hash else {
            throw ServiceError.invalid("photos", "a photo file's bytes do not match its hash")
        }
        try await onFileQueue { try self.writeFile(hash, data) }
    }

    // MARK: Sweeping

    /// Removes every file no row names and no unfinished write pinned, and temporary files
    /// left by a crash. Returns how many files went.
    @discardableResult
    public func sweep() async throws -> Int {
        try await onFileQueue {
            let root = self.settings.directory
            let fm = FileManager.default
            guard let shards = try? fm.contentsOfDirectory(atPath: root) else { return 0 }
            var removed = 0
            var candidates = Set<String>()
            let stale = Date().addingTimeInterval(-600)
            for shard in shards where shard.utf8.count == 2 && Self.isHex(shard) {
                for name in (try? fm.contentsOfDirectory(atPath: root + "/" + shard)) ?? [] {
                    let path = root + "/" + shard + "/" + name
                    if name.hasPrefix(".tmp-") {
                        // An upload still writing is younger than ten minutes.
                        let modified =
                            (try? fm.attributesOfItem(atPath: path)[.modificationDate] as? Date) ?? .distantPast
                        if modified < stale, unlink(path) == 0 { removed += 1 }
                    } else if name.utf8.count == 62, Self.isHex(name) {
                        candidates.insert(shard + name)
                    }
                }
            }
            removed += self.collect(candidates)
            return removed
        }
    }

    /// Deletes the files of `hashes` that no photo row names and no write has pinned.
    /// The check and the unlink happen under the pin lock, so a write cannot pin a file
    /// between them. Runs on the file queue.
    @discardableResult
    private func collect(_ hashes: Set<String>) -> Int {
        var removed = 0
        for hash in hashes {
            pinned.withLock { pinned in
                guard pinned[hash, default: 0] == 0, !deletions.held else { return }
                do {
                    let named = try database.read { db in
                        try Bool.fetchOne(
                            db, sql: "SELECT EXISTS (SELECT 1 FROM photo WHERE hash = ? OR thumbHash = ?)",
                            arguments: [hash, hash]) ?? true
                    }
                    if !named, unlink(path(hash)) == 0 { removed += 1 }
                } catch {
                    logger.warning("photo sweep could not read the database", metadata: ["error.detail": "\(error)"])
                }
            }
        }
        return removed
    }

    // MARK: Files

    private func pin(_ hashes: [String]) {
        pinned.withLock { for hash in hashes { $0[hash, default: 0] += 1 } }
    }

    private func unpin(_ hashes: [String]) {
        pinned.withLock { pinned in
            for hash in hashes {
                let count = pinned[hash, default: 0] - 1
                pinned[hash] = count > 0 ? count : nil
            }
        }
    }

    func path(_ hash: String) -> String {
        settings.directory + "/" + hash.prefix(2) + "/" + hash.dropFirst(2)
    }

    /// Writes `data` as `hash` unless it is there: a temporary file in the same directory,
    /// fsync'ed, renamed into place, then the directory fsync'ed, so a crash leaves either
    /// the whole file or none under its name.
    private func writeFile(_ hash: String, _ data: Data) throws {
        let final = path(hash)
        if access(final, F_OK) == 0 { return }
        let shard = settings.directory + "/" + hash.prefix(2)
        do {
            if access(shard, F_OK) != 0 {
                try FileManager.default.createDirectory(atPath: shard, withIntermediateDirectories: true)
                try FileSync.sync(settings.directory)
            }
            // (a temporary the sweep knows: one a crash left behind is removed)
            try FileSync.write(data, to: final, mode: 0o640, temporary: shard + "/.tmp-" + UUID().uuidString)
        } catch {
            logger.error("photo storage failed", metadata: ["file.path": "\(final)", "error.detail": "\(error)"])
            throw ServiceError(.internal, "the photo could not be stored")
        }
    }

    private func onFileQueue<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            files.async { continuation.resume(with: Result { try work() }) }
        }
    }

    // MARK: Messages

    static func refusal(_ error: ImagingError, thumbnailer: Thumbnailer) -> ServiceError {
        switch error {
        case .unsupported(let detail):
            let got = detail.map { " (got \($0))" } ?? ""
            return ServiceError.invalid("photo", "not a JPEG, PNG, WebP or HEIC image\(got)")
        case .damaged(let detail):
            return ServiceError.invalid("photo", "the image is damaged: \(detail)")
        case .tooLarge(let width, let height):
            let megapixels = thumbnailer.maxPixels / 1_000_000
            return ServiceError.invalid(
                "photo",
                "must be at most \(Digits.grouped(thumbnailer.maxSide)) px on a side and \(megapixels) megapixels (got \(Digits.grouped(width)) × \(Digits.grouped(height)))"
            )
        case .failed(let detail):
            return ServiceError(.internal, "the photo could not be processed: \(detail)")
        }
    }

    /// `16 MiB`, `17.2 MiB`, `80 KiB`, `512 bytes`.
    static func size(_ bytes: Int) -> String {
        func oneDecimal(_ value: Double) -> String {
            let text = String(format: "%.1f", value)
            return text.hasSuffix(".0") ? String(text.dropLast(2)) : text
        }
        if bytes >= 1 << 20 { return oneDecimal(Double(bytes) / Double(1 << 20)) + " MiB" }
        if bytes >= 1 << 10 { return oneDecimal(Double(bytes) / Double(1 << 10)) + " KiB" }
        return "\(bytes) bytes"
    }


    static func isHex(_ text: String) -> Bool {
        text.utf8.allSatisfy { ($0 >= 48 && $0 <= 57) || ($0 >= 97 && $0 <= 102) }
    }
}

/// Sweeps the photo directory at start-up and every `interval`, so files left by a crash
/// or by an account's deletion do not stay.
struct PhotoSweeper: Service {
    let store: PhotoStore
    let interval: Duration
    let logger: Logger

    func run() async throws {
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            do {
                let removed = try await store.sweep()
                if removed > 0 {
                    logger.info("photo sweep removed orphan files", metadata: ["photo.removed": "\(removed)"])
                }
            } catch {
                logger.warning("photo sweep failed", metadata: ["error.detail": "\(error)"])
            }
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }
        }
    }
}

/// Photo work for every user on a few workers: at most `workers` jobs at once and at most one
/// per user. A free worker takes the waiting job of the user served longest ago (a user
/// with nothing running or waiting starts afresh), oldest first among equals: one user's
/// burst of large uploads takes turns with everyone else's, so another user's upload waits
/// for at most one job.
final class PhotoPool: Sendable {
    private struct Waiting {
        var user: String
        var continuation: CheckedContinuation<Void, Never>
    }

    private struct State {
        var running = 0
        var busy: Set<String> = []
        var waiting: [Waiting] = []
        /// When each user with work running or waiting last started a job (a tick count).
        var lastStarted: [String: UInt64] = [:]
        var tick: UInt64 = 0

        mutating func start(_ user: String) {
            running += 1
            busy.insert(user)
            tick += 1
            lastStarted[user] = tick
        }
    }

    let workers: Int
    private let state = Mutex(State())

    init(workers: Int) { self.workers = max(1, workers) }

    func run<T: Sendable>(user: String, _ work: () async throws -> T) async throws -> T {
        await acquire(user)
        defer { release(user) }
        return try await work()
    }

    private func acquire(_ user: String) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { state -> Bool in
                if state.running < workers && !state.busy.contains(user) {
                    state.start(user)
                    return true
                }
                state.waiting.append(Waiting(user: user, continuation: continuation))
                return false
            }
            if now { continuation.resume() }
        }
    }

    private func release(_ user: String) {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.running -= 1
            state.busy.remove(user)
            if !state.waiting.contains(where: { $0.user == user }) { state.lastStarted[user] = nil }
            var chosen: Int?
            for (index, waiting) in state.waiting.enumerated() where !state.busy.contains(waiting.user) {
                let served = state.lastStarted[waiting.user] ?? 0
                if chosen == nil || served < (state.lastStarted[state.waiting[chosen!].user] ?? 0) { chosen = index }
            }
            guard let chosen else { return nil }
            let waiting = state.waiting.remove(at: chosen)
            state.start(waiting.user)
            return waiting.continuation
        }
        next?.resume()
    }
}
