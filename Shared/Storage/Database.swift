// Opening a service's SQLite file: one GRDB DatabasePool per service, WAL, foreign keys on,
// `synchronous=FULL` by default so an acknowledged write survives power loss, migrations in
// code. Tests open the same schema in memory.
import Foundation
import GRDB
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

    public init(path: String?, durability: Durability = .full, busyTimeout: TimeInterval = 5) {
        self.path = path
        self.durability = durability
        self.busyTimeout = busyTimeout
    }

    public static var inMemory: DatabaseSettings { DatabaseSettings(path: nil) }
}

public enum ServiceDatabase {
    /// Opens (creating it and its directory when missing) and migrates a service's database.
    public static func open(_ settings: DatabaseSettings, migrator: DatabaseMigrator) throws -> any DatabaseWriter {
        var configuration = Configuration()
        configuration.foreignKeysEnabled = true
        configuration.busyMode = .timeout(settings.busyTimeout)
        let durability = settings.durability
        configuration.prepareDatabase { db in
            try db.execute(sql: durability == .full ? "PRAGMA synchronous = FULL" : "PRAGMA synchronous = NORMAL")
        }
        let writer: any DatabaseWriter
        if let path = settings.path {
            let directory = URL(fileURLWithPath: path).deletingLastPathComponent()
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            writer = try DatabasePool(path: path, configuration: configuration)
        } else {
            writer = try DatabaseQueue(configuration: configuration)
        }
        var migrator = migrator
        #if DEBUG
            migrator.eraseDatabaseOnSchemaChange = false
        #endif
        migrator.registerSharedTables()
        try migrator.migrate(writer)
        return writer
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
