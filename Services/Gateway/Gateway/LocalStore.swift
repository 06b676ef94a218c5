// The CLI's own data, one SQLite file (`local.sqlite`, mode 0600) in `LocalStore.directory`:
// - `queue`: writes that could not reach the stack, in order, each with the idempotency key
//   it will be sent with (so replaying twice, or after a crash, never doubles a record);
// - `localIds`: the real id each record created offline got once its create was replayed;
// Every row has an owner: a user id, or "anonymous" for writes made before any login.
// The read cache (the last answer of each read, shown marked stale when the stack is
// unreachable) is a directory of its own, `cache/`, a file per answer (CacheFile), dated
// by its modification time: it is saved on every read, so it is written without fsync, and
// an answer unchanged since the last save only has its time renewed. A power cut may lose
// or damage an answer; one that cannot be read is deleted. The queue keeps full durability.
// A read saves its answer without opening `local.sqlite`, and every command counts the
// queue through one read-only SQLite query (`LocalStore.counts(directory:owner:)`), so
// `local.sqlite` is opened through GRDB only when something is queued, synced or looked up
// offline, and made when a write is first queued.
import Foundation
import GRDB
import GRDBSQLite
import Runtime
import Synchronization
import Wire

/// A write waiting in the queue.
public struct QueuedWrite: Codable, Sendable, Equatable, FetchableRecord, MutablePersistableRecord {
    public static let databaseTableName = "queue"

    public enum State: String, Codable, Sendable {
        /// Not sent yet, or not answered: replayed by `logbook sync` and the next command.
        case pending
        /// Refused by its service: kept, with the error, until fixed or dropped.
        case failed
    }

    public var id: Int64?
    public var owner: String
    public var service: String
    public var method: String
    /// The request body as JSON text; `local-…` ids in it are replaced on replay.
    public var body: String
    public var idempotencyKey: String
    /// For a create: the placeholder id later writes may use for the record it will create.
    public var localId: String?
    public var createdAt: String
    public var state: State
    public var lastError: String?
    public var lastErrorCode: String?
    /// Delivered once without an answer: the service may already have applied it.
    public var uncertain: Bool
    public var attempts: Int

    public mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }

    public var bodyValue: JSONValue { (try? JSONValue.parse(body)) ?? [:] }
}

public struct LocalStore: Sendable {
    public static let anonymous = "anonymous"
    public static let localPrefix = "local-"
    public static let fileName = "local.sqlite"

    private let writer: any DatabaseWriter
    public let path: String?
    private let cache: CacheFile
    public static let cacheFileName = "cache"

    /// `$LOGBOOK_LOCAL_DIR`; else `$LOGBOOK_CONFIG_DIR` (beside the session, so the one
    /// override that isolates a session isolates its local data too); else
    /// `$XDG_DATA_HOME/logbook-cli`; else `~/.local/share/logbook-cli`.
    public static func directory(environment: [String: String]) -> String {
        if let dir = environment["LOGBOOK_LOCAL_DIR"], !dir.isEmpty { return dir }
        if let dir = environment["LOGBOOK_CONFIG_DIR"], !dir.isEmpty { return dir }
        if let xdg = environment["XDG_DATA_HOME"], !xdg.isEmpty { return xdg + "/logbook-cli" }
        return (environment["HOME"] ?? NSHomeDirectory()) + "/.local/share/logbook-cli"
    }

    /// Opens (creating it when `create`) the store in `directory`; nil when it does not
    /// exist and `create` is false. `cache` is the read cache to use (LocalData shares one
    /// between the store and the reads that do not open the store); by default its own.
    public static func open(directory: String, create: Bool = true, cache: CacheFile? = nil) throws -> LocalStore? {
        let path = directory + "/" + fileName
        if !create && !FileManager.default.fileExists(atPath: path) { return nil }
        do {
            try FileManager.default.createDirectory(
                atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            chmod(directory, 0o700)  // (also one made earlier with a wider mode)
            if !FileManager.default.fileExists(atPath: path) {
                let fd = Foundation.open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
                if fd >= 0 { close(fd) }
            }
            var configuration = Configuration()
            configuration.busyMode = .timeout(10)
            let queue = try DatabaseQueue(path: path, configuration: configuration)
            return try LocalStore(
                writer: queue, path: path, cache: cache ?? CacheFile(path: directory + "/" + cacheFileName))
        } catch let error as DatabaseError {
            throw ServiceError(.internal, "cannot open \(path): \(error.message ?? "\(error)")")
        }
    }

    /// A private in-memory store (tests).
    public static func inMemory() throws -> LocalStore {
        try LocalStore(writer: DatabaseQueue(), path: nil, cache: CacheFile(path: nil))
    }

    private init(writer: any DatabaseWriter, path: String?, cache: CacheFile) throws {
        self.writer = writer
        self.path = path
        self.cache = cache
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(
                sql: """
                    CREATE TABLE queue (
                        id INTEGER PRIMARY KEY AUTOINCREMENT,
                        owner TEXT NOT NULL,
                        service TEXT NOT NULL,
                        method TEXT NOT NULL,
                        body TEXT NOT NULL,
                        idempotencyKey TEXT NOT NULL,
                        localId TEXT UNIQUE,
                        createdAt TEXT NOT NULL,
                        state TEXT NOT NULL,
                        lastError TEXT,
                        lastErrorCode TEXT,
                        uncertain BOOLEAN NOT NULL DEFAULT 0,
                        attempts INTEGER NOT NULL DEFAULT 0
                    );
                    CREATE INDEX queue_owner ON queue(owner, id);
                    CREATE TABLE localIds (
                        localId TEXT PRIMARY KEY,
                        owner TEXT NOT NULL,
                        realId TEXT NOT NULL
                    ) WITHOUT ROWID;
                    CREATE TABLE cache (
                        owner TEXT NOT NULL,
                        key TEXT NOT NULL,
                        service TEXT NOT NULL,
                        method TEXT NOT NULL,
                        result TEXT NOT NULL,
                        fetchedAt TEXT NOT NULL,
                        PRIMARY KEY (owner, key)
                    ) WITHOUT ROWID;
                    """)
        }
        // The read cache moved to its own file (CacheFile).
        migrator.registerMigration("v2: cache in cache.sqlite") { db in
            try db.execute(sql: "DROP TABLE cache")
        }
        // one read when the file is up to date (every run of `logbook` opens it)
        if try !writer.read(migrator.hasCompletedMigrations) { try migrator.migrate(writer) }
    }

    // MARK: The queue

    /// Appends a write; a create (`localId` given) can be referred to by later writes.
    @discardableResult
    public func enqueue(
        owner: String, service: String, method: String, body: JSONValue, idempotencyKey: String,
        localId: String? = nil, uncertain: Bool = false, now: Date = Date()
    ) throws -> QueuedWrite {
        var item = QueuedWrite(
            id: nil, owner: owner, service: service, method: method, body: body.jsonText,
            idempotencyKey: idempotencyKey, localId: localId, createdAt: WireTime.format(now), state: .pending,
            lastError: nil, lastErrorCode: nil, uncertain: uncertain, attempts: uncertain ? 1 : 0)
        try writer.write { db in try item.insert(db) }
        return item
    }

    /// The owner's queued writes in order; only pending ones unless `failed`.
    public func items(owner: String, includeFailed: Bool = true) throws -> [QueuedWrite] {
        try writer.read { db in
            var request = QueuedWrite.filter(Column("owner") == owner)
            if !includeFailed { request = request.filter(Column("state") == QueuedWrite.State.pending.rawValue) }
            return try request.order(Column("id")).fetchAll(db)
        }
    }

    public func item(_ id: Int64) throws -> QueuedWrite? {
        try writer.read { db in try QueuedWrite.fetchOne(db, key: id) }
    }

    /// The queued write that creates the record `localId` stands for, if still queued.
    public func creator(of localId: String) throws -> QueuedWrite? {
        try writer.read { db in try QueuedWrite.filter(Column("localId") == localId).fetchOne(db) }
    }

    public struct Counts: Sendable, Equatable, Codable {
        public var pending: Int
        public var failed: Int
        public var total: Int { pending + failed }
    }

    /// The owner's queued writes, counted without opening the store: every command asks
    /// before its first call, and opening it through GRDB (its connection set-up, the
    /// migrations' check) was about 1.5 ms of each `logbook` run. One read-only SQLite
    /// connection and one query; no file means nothing queued. nil when the file cannot be
    /// read that way (a write in progress left a journal to roll back, a schema from before
    /// the queue): open the store then, which also repairs or migrates it.
    public static func counts(directory: String, owner: String) -> Counts? {
        let path = directory + "/" + fileName
        guard FileManager.default.fileExists(atPath: path) else { return Counts(pending: 0, failed: 0) }
        return SQLiteStatement.run(
            path: path, readOnly: true, "SELECT state, count(*) FROM queue WHERE owner = ? GROUP BY state", [owner]
        ) { statement in
            var counts = Counts(pending: 0, failed: 0)
            while true {
                switch sqlite3_step(statement) {
                case SQLITE_ROW:
                    let n = Int(sqlite3_column_int64(statement, 1))
                    let state = sqlite3_column_text(statement, 0).map { String(cString: $0) }
                    if state == QueuedWrite.State.failed.rawValue { counts.failed = n } else { counts.pending += n }
                case SQLITE_DONE: return counts
                default: return nil
                }
            }
        }
    }

    public func counts(owner: String) throws -> Counts {
        try writer.read { db in
            let rows = try Row.fetchAll(
                db, sql: "SELECT state, count(*) AS n FROM queue WHERE owner = ? GROUP BY state", arguments: [owner])
            var counts = Counts(pending: 0, failed: 0)
            for row in rows {
                let n: Int = row["n"]
                if row["state"] as String == QueuedWrite.State.failed.rawValue {
                    counts.failed = n
                } else {
                    counts.pending += n
                }
            }
            return counts
        }
    }

    /// A replayed write succeeded: it leaves the queue and, for a create, its local id now
    /// names `realId`. One transaction, so a crash leaves either both or neither.
    public func complete(_ item: QueuedWrite, realId: String?) throws {
        try writer.write { db in
            if let localId = item.localId, let realId {
                try db.execute(
                    sql: "INSERT OR REPLACE INTO localIds(localId, owner, realId) VALUES (?, ?, ?)",
                    arguments: [localId, item.owner, realId])
            }
            try db.execute(sql: "DELETE FROM queue WHERE id = ?", arguments: [item.id])
        }
    }

    /// The service refused the write: keep it, with the error, for the user.
    public func fail(_ item: QueuedWrite, code: String, message: String) throws {
        try writer.write { db in
            try db.execute(
                sql:
                    "UPDATE queue SET state = 'failed', lastError = ?, lastErrorCode = ?, attempts = attempts + 1 WHERE id = ?",
                arguments: [message, code, item.id])
        }
    }

    /// Sent without an answer (or not sent): still pending, one more attempt noted.
    public func attempted(_ item: QueuedWrite, delivered: Bool, error: String) throws {
        try writer.write { db in
            try db.execute(
                sql: "UPDATE queue SET lastError = ?, attempts = attempts + 1, uncertain = uncertain OR ? WHERE id = ?",
                arguments: [error, delivered, item.id])
        }
    }

    /// Removes one of the owner's queued writes; false if there is no such item.
    public func drop(_ id: Int64, owner: String) throws -> Bool {
        try writer.write { db in
            try db.execute(sql: "DELETE FROM queue WHERE id = ? AND owner = ?", arguments: [id, owner])
            return db.changesCount > 0
        }
    }

    /// The real ids of local ids whose creates were replayed.
    public func realIds(owner: String) throws -> [String: String] {
        try writer.read { db in
            let rows = try Row.fetchAll(
                db, sql: "SELECT localId, realId FROM localIds WHERE owner = ?", arguments: [owner])
            return Dictionary(rows.map { ($0["localId"] as String, $0["realId"] as String) }) { first, _ in first }
        }
    }

    /// Moves every queued write of `from` to `to` (an anonymous user's data claimed by a
    /// new account); returns how many moved.
    @discardableResult
    public func reassign(from: String, to: String) throws -> Int {
        try writer.write { db in
            try db.execute(sql: "UPDATE queue SET owner = ? WHERE owner = ?", arguments: [to, from])
            let moved = db.changesCount
            try db.execute(sql: "UPDATE localIds SET owner = ? WHERE owner = ?", arguments: [to, from])
            return moved
        }
    }

    /// Forgets everything kept for `owner`: queue, local ids and cached answers.
    public func removeAll(owner: String) throws {
        try writer.write { db in
            for sql in ["DELETE FROM queue WHERE owner = ?", "DELETE FROM localIds WHERE owner = ?"] {
                try db.execute(sql: sql, arguments: [owner])
            }
        }
        try cache.removeAll(owner: owner)
    }

    // MARK: The read cache

    public static func cacheKey(_ service: String, _ method: String, _ body: JSONValue) -> String {
        "\(service) \(method) \(body.jsonText)"
    }

    public struct Cached: Sendable {
        public var method: String
        public var result: JSONValue
        public var fetchedAt: String
    }

    public func remember(
        owner: String, service: String, method: String, body: JSONValue, result: JSONValue, now: Date = Date()
    ) throws {
        try cache.remember(owner: owner, service: service, method: method, body: body, result: result, now: now)
    }

    public func cached(owner: String, service: String, method: String, body: JSONValue) throws -> Cached? {
        try cache.cached(owner: owner, service: service, method: method, body: body)
    }

    /// Every cached answer of these methods, oldest first.
    public func cached(owner: String, methods: [String]) throws -> [Cached] {
        try cache.cached(owner: owner, methods: methods)
    }
}

extension JSONValue {
    /// This value with every string found in `map` replaced by its mapped value.
    func replacingStrings(_ map: [String: String]) -> JSONValue {
        switch self {
        case .string(let s): .string(map[s] ?? s)
        case .array(let a): .array(a.map { $0.replacingStrings(map) })
        case .object(let o): .object(o.mapValues { $0.replacingStrings(map) })
        default: self
        }
    }

    /// Every string in this value that starts with `prefix`.
    func strings(withPrefix prefix: String) -> [String] {
        switch self {
        case .string(let s): s.hasPrefix(prefix) ? [s] : []
        case .array(let a): a.flatMap { $0.strings(withPrefix: prefix) }
        case .object(let o): o.keys.sorted().flatMap { o[$0]!.strings(withPrefix: prefix) }
        default: []
        }
    }
}

/// The read cache: a directory (`cache`, mode 0700) with one file per saved answer (mode
/// 0600), named by the SHA-256 of its owner and key, holding the answer and what it answers
/// as one JSON object. An answer is written to a temporary file and renamed over the old
/// one, without fsync: a command that dies mid-write leaves the old answer (and a temporary
/// file that is removed later), a power cut may leave an empty or damaged file, which reads
/// as no answer and is removed (the stack still has every answer it holds a copy of).
/// Saving an answer is every read's last step: files cost an open, a write and a rename,
/// where the SQLite file this replaced (`cache.sqlite`, removed when the directory is
/// made) cost its open, schema, journal and more (docs/performance.md, "The write path, a
/// later round"). Without a path, answers are kept in memory (tests).
public final class CacheFile: Sendable {
    private let directory: String?
    private let memory = Mutex<[String: (text: Data, savedAt: Date)]>([:])

    /// - Parameter path: the cache's directory; nil keeps answers in memory.
    public init(path: String?) { directory = path }

    /// Whether there is a cache to read (a read does not make one).
    var exists: Bool { directory.map { FileManager.default.fileExists(atPath: $0) } ?? true }

    /// An answer's file name: its owner and key, hashed (a key holds a request's body).
    static func name(owner: String, key: String) -> String { Crypto.sha256Hex(owner + "\n" + key) }

    /// Saves an answer, as fetched at `now`: the file holds the answer, and its modification
    /// time says when it was fetched. An answer the same as the one saved (most reads, most
    /// of the time) only has that time renewed: one system call, where a new file and a
    /// rename over the old one cost a third of a millisecond of a `logbook` run.
    public func remember(
        owner: String, service: String, method: String, body: JSONValue, result: JSONValue, now: Date = Date()
    ) throws {
        let key = LocalStore.cacheKey(service, method, body)
        let text = JSONValue.object([
            "owner": .string(owner), "key": .string(key), "method": .string(method), "result": result,
        ]).jsonData
        let name = Self.name(owner: owner, key: key)
        guard let directory else { return memory.withLock { $0[name] = (text, now) } }
        let path = directory + "/" + name
        if Self.holds(path, text), Self.setModified(path, now) { return }
        if (try? write(text, to: directory, name: name, savedAt: now)) == nil {
            // the directory is not there yet (or was removed): make it, and try once more
            try makeDirectory(directory)
            try write(text, to: directory, name: name, savedAt: now)
        }
    }

    /// Whether the file at `path` holds exactly `text` (a size that differs answers at once).
    private static func holds(_ path: String, _ text: Data) -> Bool {
        contents(path, ifSize: text.count)?.data == text
    }

    private static func times(_ date: Date) -> [timespec] {
        let seconds = date.timeIntervalSince1970.rounded(.down)
        let time = timespec(tv_sec: Int(seconds), tv_nsec: Int((date.timeIntervalSince1970 - seconds) * 1e9))
        return [time, time]
    }

    private static func setModified(_ path: String, _ date: Date) -> Bool {
        utimensat(AT_FDCWD, path, times(date), 0) == 0
    }

    /// Writes `text` to a temporary file in `directory`, dated `savedAt`, and renames it to
    /// `name`.
    private func write(_ text: Data, to directory: String, name: String, savedAt: Date) throws {
        let temporary = "\(directory)/.tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let fd = Foundation.open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw CacheError(operation: "open", errno: errno) }
        let written = text.withUnsafeBytes { FileDescriptor.writeAll(fd, $0) } && futimens(fd, Self.times(savedAt)) == 0
        close(fd)
        guard written, rename(temporary, "\(directory)/\(name)") == 0 else {
            let code = errno
            unlink(temporary)
            throw CacheError(operation: "write", errno: code)
        }
    }

    private func makeDirectory(_ directory: String) throws {
        let parent = (directory as NSString).deletingLastPathComponent
        try? FileManager.default.createDirectory(
            atPath: parent, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        if mkdir(directory, 0o700) != 0, errno != EEXIST { throw CacheError(operation: "mkdir", errno: errno) }
        // the SQLite file this directory replaced
        for file in ["cache.sqlite", "cache.sqlite-journal", "cache.sqlite-wal", "cache.sqlite-shm"] {
            unlink(parent + "/" + file)
        }
    }

    struct CacheError: Error, CustomStringConvertible {
        var operation: String
        var errno: Int32
        var description: String { "the read cache: \(operation) failed: \(String(cString: strerror(errno)))" }
    }

    /// One saved answer, as read from its file (and the file's time, `fetchedAt`).
    private struct Entry {
        var owner: String
        var key: String
        var method: String
        var result: JSONValue
        var fetchedAt: String

        var cached: LocalStore.Cached { LocalStore.Cached(method: method, result: result, fetchedAt: fetchedAt) }
    }

    private struct Saved: Decodable {
        var owner: String
        var key: String
        var method: String
        var result: JSONValue
    }

    /// The answer in file `name`; nil when there is none, or it cannot be read (then it is
    /// removed).
    private func entry(_ name: String) -> Entry? {
        let data: Data
        let savedAt: Date
        if let directory {
            guard let read = Self.contents(directory + "/" + name) else { return nil }
            (data, savedAt) = read
        } else {
            guard let kept = memory.withLock({ $0[name] }) else { return nil }
            (data, savedAt) = kept
        }
        guard let saved = try? WireCoding.decode(Saved.self, from: data) else {
            if let directory { unlink(directory + "/" + name) }
            return nil
        }
        return Entry(
            owner: saved.owner, key: saved.key, method: saved.method, result: saved.result,
            fetchedAt: WireTime.format(savedAt))
    }

    /// A file's bytes and modification time; nil when it cannot be read, or (with `size`)
    /// when it is not that long.
    private static func contents(_ path: String, ifSize size: Int? = nil) -> (data: Data, modified: Date)? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, size.map({ $0 == Int(info.st_size) }) ?? true,
            let data = try? FileHandle(fileDescriptor: fd, closeOnDealloc: false).readToEnd()
        else { return nil }
        let modified = Date(
            timeIntervalSince1970: Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec) / 1e9)
        return (data, modified)
    }

    /// Every saved answer, with its file's name.
    private func entries() -> [(name: String, entry: Entry)] {
        let names: [String]
        if let directory {
            names = ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter {
                if $0.hasPrefix(".tmp-") {
                    removeIfStale(directory + "/" + $0)
                    return false
                }
                return !$0.hasPrefix(".")
            }
        } else {
            names = memory.withLock { Array($0.keys) }
        }
        return names.compactMap { name in entry(name).map { (name, $0) } }
    }

    /// A temporary file more than a minute old was left by a command that died mid-write.
    private func removeIfStale(_ path: String) {
        guard let modified = (try? FileManager.default.attributesOfItem(atPath: path))?[.modificationDate] as? Date,
            Date().timeIntervalSince(modified) > 60
        else { return }
        unlink(path)
    }

    public func cached(owner: String, service: String, method: String, body: JSONValue) throws -> LocalStore.Cached? {
        let key = LocalStore.cacheKey(service, method, body)
        guard let entry = entry(Self.name(owner: owner, key: key)), entry.owner == owner, entry.key == key else {
            return nil
        }
        return entry.cached
    }

    /// Every cached answer of these methods, oldest first.
    public func cached(owner: String, methods: [String]) throws -> [LocalStore.Cached] {
        guard !methods.isEmpty else { return [] }
        return entries().map(\.entry).filter { $0.owner == owner && methods.contains($0.method) }
            .sorted { $0.fetchedAt < $1.fetchedAt }.map(\.cached)
    }

    func removeAll(owner: String) throws {
        for (name, entry) in entries() where entry.owner == owner {
            if let directory { unlink(directory + "/" + name) } else { memory.withLock { _ = $0.removeValue(forKey: name) } }
        }
    }
}

/// One statement on a connection of its own through SQLite's C API, for the two reads and
/// writes every `logbook` run makes (the queue's count, an answer saved), where opening the
/// file through GRDB cost more than the work. `body` gets the prepared statement with
/// `texts` bound; nil when the file cannot be opened, set up or prepared as asked.
enum SQLiteStatement {
    static func run<T>(
        path: String, readOnly: Bool, setUp: String? = nil, _ sql: String, _ texts: [String],
        _ body: (OpaquePointer) -> T?
    ) -> T? {
        var connection: OpaquePointer?
        defer { sqlite3_close(connection) }
        guard
            sqlite3_open_v2(path, &connection, readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE, nil)
                == SQLITE_OK, let connection
        else { return nil }
        sqlite3_busy_timeout(connection, 10_000)
        if let setUp, sqlite3_exec(connection, setUp, nil, nil, nil) != SQLITE_OK { return nil }
        var statement: OpaquePointer?
        defer { sqlite3_finalize(statement) }
        guard sqlite3_prepare_v2(connection, sql, -1, &statement, nil) == SQLITE_OK, let statement else { return nil }
        let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
        for (i, text) in texts.enumerated() where sqlite3_bind_text(statement, Int32(i + 1), text, -1, transient) != SQLITE_OK {
            return nil
        }
        return body(statement)
    }
}
