// Online backups (docs/operations.md, "Backups"): `$srv.backup` makes a consistent copy of
// the service's own database with SQLite's backup API, from one read snapshot while writes
// go on, plus any directories of files the service keeps beside it (records' photos). Only
// the owning process ever opens its database, so the copy is made here and handed over as
// files: `logbook backup DIR` asks every service, then moves what they wrote into DIR.
import Foundation
import Synchronization
import GRDB
import Storage
import Wire

public struct BackupRequest: Codable, Sendable {
    /// The backup's name: the folder, under `backups/` beside the database, the copy goes in.
    public var name: String

    public init(name: String) { self.name = name }
}

public struct BackupResult: Codable, Sendable {
    public var service: String
    /// The folder the copy was written to (on the service's host).
    public var directory: String
    /// The database copy's file name inside `directory`.
    public var database: String
    public var bytes: Int64
    public var pages: Int
    /// Directories copied beside it (their names inside `directory`) and their file counts.
    public var extras: [String: Int]
    public var durationMs: Int64
}

/// Keeps a service from deleting files of a directory a backup copies, from before the
/// backup's database snapshot until the files are copied: a file whose row goes meanwhile
/// is still named by the snapshot, and must be in the copy. Deletions put off stay for the
/// service's next sweep.
public final class FileHold: Sendable {
    private let count = Mutex(0)

    public init() {}

    /// Whether deletions must wait now.
    public var held: Bool { count.withLock { $0 > 0 } }

    public func holding<T>(_ body: () throws -> T) rethrows -> T {
        count.withLock { $0 += 1 }
        defer { count.withLock { $0 -= 1 } }
        return try body()
    }

    public func holding<T>(_ body: () async throws -> T) async rethrows -> T {
        count.withLock { $0 += 1 }
        defer { count.withLock { $0 -= 1 } }
        return try await body()
    }
}

/// What a service's backup copies: its database and the directories it keeps files in.
public final class ServiceBackup: Sendable {
    let service: String
    let database: any DatabaseWriter
    let databasePath: String
    let extras: [String]
    let holds: [FileHold]

    /// - Parameter extras: directories of files the database refers to (copied as they are:
    ///   hard links where the file system allows, since such files are never rewritten).
    /// - Parameter holds: held for the whole backup, snapshot and copies.
    public init(
        service: String, database: any DatabaseWriter, databasePath: String, extras: [String] = [], holds: [FileHold] = []
    ) {
        self.service = service
        self.database = database
        self.databasePath = databasePath
        self.extras = extras
        self.holds = holds
    }

    /// The folder backups are written to: `backups/` beside the database.
    var root: String { URL(fileURLWithPath: databasePath).deletingLastPathComponent().appendingPathComponent("backups").path }

    func run(_ request: BackupRequest) throws -> BackupResult {
        try Self.holding(holds[...]) { try copy(request) }
    }

    private static func holding<T>(_ holds: ArraySlice<FileHold>, _ body: () throws -> T) throws -> T {
        guard let first = holds.first else { return try body() }
        return try first.holding { try holding(holds.dropFirst(), body) }
    }

    private func copy(_ request: BackupRequest) throws -> BackupResult {
        let name = request.name
        guard !name.isEmpty, name.count <= 64, name != ".", name != "..",
            name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-_.".contains($0)) })
        else {
            throw ServiceError.invalid("name", "must be 1–64 letters, digits, '-', '_' or '.'")
        }
        let clock = ContinuousClock()
        let start = clock.now
        let directory = root + "/" + name
        let fileManager = FileManager.default
        try fileManager.createDirectory(
            atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let file = service + ".sqlite"
        let target = directory + "/" + file
        if fileManager.fileExists(atPath: target) {
            throw ServiceError(.alreadyExists, "a backup named \(name) of \(service) already exists", field: "name")
        }
        // Written under a temporary name, renamed once complete: a half-written copy never
        // looks like a backup.
        let partial = target + ".partial"
        try? fileManager.removeItem(atPath: partial)
        var pages = 0
        do {
            let copy = try DatabaseQueue(path: partial)
            // One step: the copy is taken from a single read snapshot while writers go on.
            try database.backup(to: copy) { progress in pages = progress.totalPageCount }
            try copy.writeWithoutTransaction { db in
                // Self-contained: no WAL beside the copy.
                try db.execute(sql: "PRAGMA journal_mode = DELETE")
            }
            try copy.close()
            chmod(partial, 0o600)
            try fileManager.moveItem(atPath: partial, toPath: target)
        } catch {
            try? fileManager.removeItem(atPath: partial)
            throw error
        }
        var counts: [String: Int] = [:]
        for extra in extras where fileManager.fileExists(atPath: extra) {
            let folder = URL(fileURLWithPath: extra).lastPathComponent
            counts[folder] = try Self.copyTree(extra, to: directory + "/" + folder)
        }
        let bytes = (try? fileManager.attributesOfItem(atPath: target)[.size] as? NSNumber)?.int64Value ?? 0
        let elapsed = clock.now - start
        return BackupResult(
            service: service, directory: directory, database: file, bytes: bytes, pages: pages, extras: counts,
            durationMs: elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000)
    }

    /// Copies every regular file under `source` into `target` (hard links when possible);
    /// returns how many.
    public static func copyTree(_ source: String, to target: String) throws -> Int {
        let fileManager = FileManager.default
        try fileManager.createDirectory(atPath: target, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        var count = 0
        guard let walker = fileManager.enumerator(atPath: source) else { return 0 }
        while let relative = walker.nextObject() as? String {
            let from = source + "/" + relative
            let to = target + "/" + relative
            var isDirectory: ObjCBool = false
            guard fileManager.fileExists(atPath: from, isDirectory: &isDirectory) else { continue }  // swept meanwhile
            if isDirectory.boolValue {
                try fileManager.createDirectory(atPath: to, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
                continue
            }
            if link(from, to) != 0 {
                guard errno != ENOENT else { continue }
                try fileManager.copyItem(atPath: from, toPath: to)
            }
            count += 1
        }
        return count
    }
}
