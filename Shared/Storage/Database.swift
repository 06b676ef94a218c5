// Opening a service's SQLite file: one GRDB DatabasePool per service, owned by one process
// (an OS lock on the file), WAL, foreign keys on, `synchronous=FULL` on the writer by
// default so an acknowledged write survives power loss, a bounded integrity check, then
// migrations in code. Tests open the same schema in memory.
import Dispatch
import Foundation
import GRDB
import Synchronization
import Wire

/// How durable a commit is. `full` (the default) survives power loss in WAL mode;
/// `normal` survives a process crash but may lose the last commits on power loss.
public enum Durability: String, Sendable, Codable, CaseIterable {
    case full
    case normal
}

public struct DatabaseSettings: Sendable {
    /// The SQLite file; nil opens a private in-memory database (tests).
    public var path: String?
    public var durability: Durability
    /// How long a connection waits for a lock held by another connection of this process.
    public var busyTimeout: TimeInterval
    /// The writer connection's page cache in KiB (`PRAGMA cache_size = -N`); nil keeps
    /// SQLite's default (2 MiB). Only the writer: readers keep the default each. The cache
    /// fills only with pages actually read, so an idle service does not hold it.
    public var writerCacheKiB: Int?
    /// The page size in bytes of a database file this creates (`PRAGMA page_size`); nil
    /// keeps SQLite's default (4,096). A file that exists keeps the size it was made with.
    public var pageSize: Int?

    public init(path: String?, durability: Durability = .full, busyTimeout: TimeInterval = 5) {
        self.path = path
        self.durability = durability
        self.busyTimeout = busyTimeout
    }

    public static var inMemory: DatabaseSettings { DatabaseSettings(path: nil) }
}

public enum ServiceDatabase {
    /// Opens (creating it and its directory when missing), checks and migrates a service's
    /// database. A file is first locked for the life of the returned writer (`DatabaseLock`),
    /// so two processes never write one database; then the writer connection is set to the
    /// configured `synchronous` level and a bounded `PRAGMA quick_check` refuses a damaged
    /// file before anything reads or migrates it.
    public static func open(
        _ settings: DatabaseSettings, migrator: DatabaseMigrator, check: IntegrityCheck = .quick(limit: .seconds(10))
    ) throws -> any DatabaseWriter {
        SQLiteProcess.configure()
        var configuration = Configuration()
        configuration.foreignKeysEnabled = true
        configuration.busyMode = .timeout(settings.busyTimeout)
        let writer: any DatabaseWriter
        if let path = settings.path {
            let directory = URL(fileURLWithPath: path).deletingLastPathComponent()
            try FileManager.default.createDirectory(
                at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            let lock = try DatabaseLock.acquire(path: path)
            // Under the lock: nobody else makes the file meanwhile.
            let creating = ((try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0) == 0
            let pageSize = creating ? settings.pageSize : nil
            // The pool keeps its configuration, and so this closure and the lock, for its whole
            // life: the lock is released when the last reference to the writer goes. The page
            // size is set before the pool turns WAL on, which writes the file's first page.
            configuration.prepareDatabase { db in
                withExtendedLifetime(lock) {}
                // A PRAGMA takes no bound parameters; the value is an Int, never text.
                if let pageSize { try db.execute(sql: "PRAGMA page_size = " + String(pageSize)) }
                db.add(function: foldFunction)
            }
            do {
                writer = try DatabasePool(path: path, configuration: configuration)
                // After the pool's own set-up: GRDB's WAL set-up leaves the writer at NORMAL.
                try setDurability(settings.durability, on: writer)
            } catch let error as DatabaseError where [.SQLITE_CORRUPT, .SQLITE_NOTADB].contains(error.resultCode) {
                throw DamagedDatabase(path: path, problems: [error.message ?? "\(error.resultCode)"])
            }
            try check.run(on: writer, path: path)
            if let pageSize {
                let actual = try writer.writeWithoutTransaction { try Int.fetchOne($0, sql: "PRAGMA page_size") }
                guard actual == pageSize else {
                    throw DatabaseOpenError(
                        "the new database's page size is \(actual.map(String.init) ?? "unset"), not \(pageSize)")
                }
            }
        } else {
            configuration.prepareDatabase { db in db.add(function: foldFunction) }
            writer = try DatabaseQueue(configuration: configuration)
            try setDurability(settings.durability, on: writer)
        }
        if let kib = settings.writerCacheKiB { try setWriterPragma(.cacheSize, to: -kib, on: writer) }
        if settings.path != nil { try setWriterPragma(.journalSizeLimit, to: walSizeLimit, on: writer) }
        var migrator = migrator
        #if DEBUG
            migrator.eraseDatabaseOnSchemaChange = false
        #endif
        migrator.registerSharedTables()
        try migrator.migrate(writer)
        return writer
    }

    /// `logbook_fold(text)`: the text as Logbook compares names without case
    /// (`String.foldedForComparison`), on every connection of every service's database, so
    /// SQL groups and filters names as the Swift code does (SQLite's `lower()` and NOCASE
    /// fold A–Z only). Any value other than text is answered as it is.
    static let foldFunction = DatabaseFunction("logbook_fold", argumentCount: 1, pure: true) { values in
        guard case .string(let text) = values[0].storage else { return values[0] }
        return text.foldedForComparison
    }

    /// Sets `synchronous` on the writer connection, the one whose commits must reach the
    /// disk, and reads it back from that same connection.
    static func setDurability(_ durability: Durability, on writer: any DatabaseWriter) throws {
        let wanted = durability.synchronousLevel
        let actual = try writer.writeWithoutTransaction { db -> Int in
            try db.execute(sql: durability == .full ? "PRAGMA synchronous = FULL" : "PRAGMA synchronous = NORMAL")
            return try Int.fetchOne(db, sql: "PRAGMA synchronous") ?? -1
        }
        guard actual == wanted else {
            throw DatabaseOpenError("the writer connection runs synchronous=\(actual), not \(durability.rawValue) (\(wanted))")
        }
    }

    /// The size, in bytes, the writer cuts the WAL file back to when it starts the file over
    /// (SQLite's `journal_size_limit`): about what SQLite's checkpoint every 1,000 pages lets
    /// it reach. Without a limit the file keeps the largest size it ever had, and a catch-up's
    /// backlog grows it to tens of MB (`DatabaseEventSink.backlogWALPages`, which lifts the
    /// limit while a backlog lasts).
    public static let walSizeLimit = 4 * 1024 * 1024

    /// The integer PRAGMAs `setWriterPragma` sets: a closed set, so the statement's text
    /// never holds anything from outside.
    enum WriterPragma: String {
        case cacheSize = "cache_size"
        case journalSizeLimit = "journal_size_limit"
    }

    /// Sets an integer PRAGMA on the writer connection and reads it back from that same
    /// connection; opening fails if it did not take.
    static func setWriterPragma(_ pragma: WriterPragma, to value: Int, on writer: any DatabaseWriter) throws {
        let actual = try writer.writeWithoutTransaction { db -> Int? in
            // A PRAGMA takes no bound parameters; the value is an Int, never text.
            try db.execute(sql: "PRAGMA " + pragma.rawValue + " = " + String(value))
            return try Int.fetchOne(db, sql: "PRAGMA " + pragma.rawValue)
        }
        guard actual == value else {
            throw DatabaseOpenError(
                "the writer connection's \(pragma.rawValue) is \(actual.map(String.init) ?? "unset"), not \(value)")
        }
    }

    /// The `synchronous` level (off, normal, full, extra) and journal mode the writer
    /// connection runs, read on that connection.
    public static func writerSettings(_ writer: any DatabaseWriter) throws -> (synchronous: String, journalMode: String) {
        try writer.writeWithoutTransaction { db in
            let level = try Int.fetchOne(db, sql: "PRAGMA synchronous") ?? -1
            let names = ["off", "normal", "full", "extra"]
            let journal = try String.fetchOne(db, sql: "PRAGMA journal_mode") ?? "?"
            return (names.indices.contains(level) ? names[level] : "\(level)", journal)
        }
    }

    /// After SQLITE_FULL: fold the WAL back into the database and truncate it, so a disk
    /// that has a little room again is not held full by the log. Best effort.
    public static func relieve(_ writer: any DatabaseWriter) {
        _ = try? writer.writeWithoutTransaction { try $0.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
    }
}

extension DatabaseReader {
    /// A read of a few rows found through an index (a session by its token's hash, a user by
    /// id), run in one read transaction on the caller's own thread. `await read` hands the
    /// work to a reader's queue and the result back, two thread wake-ups that cost more than
    /// such a read itself (docs/performance.md, "Point reads"). Anything that scans or returns
    /// many rows goes through `await read`, so it never holds a socket thread.
    public func pointRead<T>(_ work: (Database) throws -> T) throws -> T {
        try read(work)
    }
}

extension Durability {
    /// The value `PRAGMA synchronous` reads back for this level.
    public var synchronousLevel: Int { self == .full ? 2 : 1 }
}

/// How much of a database is checked when it is opened.
public enum IntegrityCheck: Sendable {
    case none
    /// `PRAGMA quick_check`, interrupted after `limit` (a large file is checked as far as
    /// the limit allows; being cut short is logged by the caller, not an error).
    case quick(limit: Duration)

    func run(on writer: any DatabaseWriter, path: String) throws {
        guard case .quick(let limit) = self else { return }
        let done = Atomic<Bool>(false)
        let timer = DispatchWorkItem { if !done.load(ordering: .acquiring) { writer.interrupt() } }
        let seconds = Double(limit.components.seconds) + Double(limit.components.attoseconds) / 1e18
        DispatchQueue.global().asyncAfter(deadline: .now() + seconds, execute: timer)
        defer {
            done.store(true, ordering: .releasing)
            timer.cancel()
        }
        let problems: [String]
        do {
            problems = try writer.writeWithoutTransaction { db in
                try String.fetchAll(db, sql: "PRAGMA quick_check(20)")
            }
        } catch let error as DatabaseError where error.resultCode == .SQLITE_INTERRUPT {
            return  // cut short by the limit: what was read was sound
        } catch let error as DatabaseError where [.SQLITE_CORRUPT, .SQLITE_NOTADB].contains(error.resultCode) {
            throw DamagedDatabase(path: path, problems: [error.message ?? "\(error.resultCode)"])
        }
        if problems != ["ok"] { throw DamagedDatabase(path: path, problems: problems) }
    }
}

/// A database file that failed its check at start-up.
public struct DamagedDatabase: Error, CustomStringConvertible {
    public let path: String
    public let problems: [String]
    public var description: String {
        "\(path) is damaged (quick_check: \(problems.prefix(3).joined(separator: "; "))\(problems.count > 3 ? "; …" : ""))"
    }
}

public struct DatabaseOpenError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// An exclusive `flock` on the database file itself, held by the one process that owns it.
/// It lives with the data, so neither removing the run directory nor a race between two
/// starts can put a second writer on the file: the second process fails here with the
/// holder's pid. (flock and SQLite's own fcntl locks do not interact on Linux.) Within one
/// process the lock is shared: tests reopen a file to stand for a restart, and the old pool
/// may not be gone yet.
final class DatabaseLock: Sendable {
    let descriptor: Int32
    let key: String

    private final class Weak: @unchecked Sendable {
        weak var lock: DatabaseLock?
        init(_ lock: DatabaseLock) { self.lock = lock }
    }
    private static let held = Mutex<[String: Weak]>([:])

    private init(descriptor: Int32, key: String) {
        self.descriptor = descriptor
        self.key = key
    }

    static func acquire(path: String) throws -> DatabaseLock {
        let fd = Foundation.open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw DatabaseOpenError("cannot open \(path): \(String(cString: strerror(errno)))")
        }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            close(fd)
            throw DatabaseOpenError("cannot stat \(path): \(String(cString: strerror(errno)))")
        }
        let key = "\(info.st_dev):\(info.st_ino)"
        return try held.withLock { held in
            if let existing = held[key]?.lock {
                close(fd)
                return existing
            }
            guard FileLocks.lockExclusively(fd) else {
                let holder = FileLocks.holder(inode: info.st_ino).map { " (pid \($0))" } ?? ""
                close(fd)
                throw DatabaseOpenError(
                    "\(path) is in use by another process\(holder): one process owns a database; "
                        + "is this stack already running (`logbook stack status`)?")
            }
            let lock = DatabaseLock(descriptor: fd, key: key)
            held[key] = Weak(lock)
            return lock
        }
    }

    deinit {
        Self.held.withLock { held in
            if held[key]?.lock == nil { held[key] = nil }
        }
        close(descriptor)
    }

}

/// Taking a file's `flock`, and who holds file locks, from /proc/locks.
public enum FileLocks {
    /// Takes an exclusive flock on `fd`, waiting up to `patience` for a holder of a moment:
    /// a probe (`logbook stack up` asking whether a supervisor runs, `restore` whether a
    /// service holds its database) takes the lock shared for a few microseconds, and a child
    /// between fork and exec holds a copy of its parent's descriptor until it execs. A lone
    /// non-blocking attempt that met one of those failed as if another owner held the file
    /// (a CI run saw a new supervisor exit so). False when the lock is still held after that.
    public static func lockExclusively(_ fd: Int32, patience: Duration = .milliseconds(500)) -> Bool {
        let clock = ContinuousClock()
        let deadline = clock.now + patience
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            guard clock.now < deadline else { return false }
            usleep(5_000)
        }
        return true
    }

    /// The pid holding a flock on the file with this inode.
    public static func holder(inode: ino_t) -> Int32? {
        guard let text = try? String(contentsOfFile: "/proc/locks", encoding: .utf8) else { return nil }
        // "1: FLOCK  ADVISORY  WRITE 12345 08:01:1234567 0 EOF"
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 6, fields[1] == "FLOCK", fields[5].split(separator: ":").last == Substring("\(inode)")
            else { continue }
            return Int32(fields[4])
        }
        return nil
    }
}

extension DatabaseMigrator {
    /// Tables every service has: the idempotency log, the event outbox, consumer checkpoints.
    /// Registered after the service's own migrations; each is created only once.
    mutating func registerSharedTables() {
        registerMigration("shared.v1") { db in
            try db.execute(
                sql: """
                    CREATE TABLE IF NOT EXISTS idempotency (
                        principal TEXT NOT NULL,
                        key TEXT NOT NULL,
                        requestHash TEXT NOT NULL,
                        method TEXT NOT NULL,
                        result BLOB NOT NULL,
                        createdAt DOUBLE NOT NULL,
                        PRIMARY KEY (principal, key)
                    ) WITHOUT ROWID;
                    CREATE TABLE IF NOT EXISTS outbox (
                        seq INTEGER PRIMARY KEY AUTOINCREMENT,
                        type TEXT NOT NULL,
                        userId TEXT,
                        at DOUBLE NOT NULL,
                        data BLOB NOT NULL
                    );
                    CREATE TABLE IF NOT EXISTS eventCheckpoint (
                        producer TEXT PRIMARY KEY NOT NULL,
                        seq INTEGER NOT NULL CHECK (seq >= 0)
                    );
                    """)
        }
        // Which history of the outbox this is (Outbox.swift, `OutboxHistory`): a new
        // database (a rebuild) starts a new one, as a restore does; a consumer that sees
        // its producer's change replays from where the two histories part. An existing
        // database starts its first history at its last event.
        registerMigration("shared.v2-history") { db in
            try db.execute(
                sql: """
                    CREATE TABLE outboxHistory (
                        one INTEGER PRIMARY KEY NOT NULL CHECK (one = 1),
                        id TEXT NOT NULL,
                        forkedAt INTEGER NOT NULL CHECK (forkedAt >= 0)
                    );
                    ALTER TABLE eventCheckpoint ADD COLUMN history TEXT;
                    """)
            try Outbox.startHistory(db)
        }
    }
}

extension ServiceError {
    /// Maps storage failures to wire errors, once for every service. Constraint failures
    /// become the codes a caller can act on; anything else is `internal`.
    public static func from(_ error: any Error) -> ServiceError {
        if let error = error as? ServiceError { return error }
        if let error = error as? DatabaseError {
            switch error.extendedResultCode {
            case .SQLITE_CONSTRAINT_UNIQUE, .SQLITE_CONSTRAINT_PRIMARYKEY:
                return ServiceError(.alreadyExists, "a record with the same unique values already exists")
            case .SQLITE_CONSTRAINT_FOREIGNKEY:
                return ServiceError(.notFound, "a referenced record does not exist")
            case .SQLITE_CONSTRAINT_NOTNULL, .SQLITE_CONSTRAINT_CHECK:
                return ServiceError(.invalidArgument, "a value breaks a rule of the schema")
            default:
                break
            }
            switch error.resultCode {
            case .SQLITE_BUSY, .SQLITE_LOCKED:
                return ServiceError(.unavailable, "the database is busy; try again")
            case .SQLITE_FULL:
                return ServiceError(.resourceExhausted, "the disk is full")
            default:
                return .internal()
            }
        }
        if error is DecodingError {
            return ServiceError(.invalidArgument, WireCoding.describe(error), field: WireCoding.field(of: error))
        }
        return .internal()
    }
}
