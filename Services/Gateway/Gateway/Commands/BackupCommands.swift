// `logbook backup DIR`, `logbook restore DIR` and `logbook stack rebuild SERVICE`
// (docs/operations.md, "Backups"). A backup asks every running service for `$srv.backup`:
// each copies its own database from one read snapshot while writes go on (only the owner
// ever opens it) and records adds its photos; the copies are then moved into DIR with a
// manifest. Consumers are copied before the producers they read, so no restored consumer is
// ahead of its producer. Restore checks every copy (`integrity_check`) before it touches the
// stack, needs the stack stopped, and moves the databases it replaces aside.
import ArgumentParser
import Foundation
import GRDB
import Runtime
import StackSupervisor
import Storage
import Wire

/// The manifest written beside the copies.
struct BackupManifest: Codable {
    static let file = "logbook-backup.json"
    var format = 1
    var version: String
    var createdAt: Date
    var services: [BackupResult]
}

/// Backups copy consumers before the producers whose events they apply: a restored
/// consumer is then never ahead of its producer (records and weather-fetcher read each
/// other; a consumer that finds its producer behind continues from the producer's position).
let backupOrder = ["analytics", "store", "weather-fetcher", "records", "auth"]

struct BackupCommand: GatewayCommand {
    static let configuration = CommandConfiguration(
        commandName: "backup",
        abstract: "Copy every service's database (and the catch photos) into DIR while the stack runs.",
        discussion: """
            Each running service copies its own database with SQLite's online backup API, from \
            one consistent snapshot, while writes go on; records adds its photo folder. The \
            copies are moved into DIR (created if missing, which must be empty) with a \
            manifest, logbook-backup.json. Every installed service must be running. Put a \
            stack back from DIR with `logbook restore DIR`.
            """)

    @OptionGroup var global: GlobalOptions
    @Argument(help: ArgumentHelp("The folder to write the backup to.", valueName: "dir")) var directory: String
    @Option(help: ArgumentHelp("Seconds one service may take to copy its database.", valueName: "seconds"))
    var serviceTimeout: Double = 600

    func validate() throws { try GlobalOptions.checkSeconds(serviceTimeout, "--service-timeout", within: 1...86_400) }

    func execute(_ context: Context) async throws {
        let fileManager = FileManager.default
        let target = URL(fileURLWithPath: directory).standardizedFileURL.path
        if let existing = try? fileManager.contentsOfDirectory(atPath: target), !existing.isEmpty {
            throw ServiceError(.failedPrecondition, "\(target) is not empty; name a new or empty folder")
        }
        try fileManager.createDirectory(atPath: target, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let executables = Executables(configuration: context.configuration)
        // Every records shard is backed up on its own (its database and photos).
        let services = backupOrder.flatMap { $0 == "records" ? context.configuration.recordsInstances : [$0] }
            .filter { executables.isInstalled($0) || context.configuration.isConfigured($0) }
        guard !services.isEmpty else {
            throw ServiceError(.failedPrecondition, "no service is installed or configured here; nothing to back up")
        }
        let name = "backup-" + WireTime.format(Date()).filter { $0.isNumber } + "-" + String(ID.make().suffix(6))
        let clock = ContinuousClock()
        let start = clock.now
        var results: [BackupResult] = []
        for service in services {
            if !context.json { FileHandle.standardError.write(Data("backing up \(service)…".utf8)) }
            let answer: JSONValue
            do {
                answer = try await context.send(
                    service, "$srv.backup", body: ["name": .string(name)], caller: .anonymous,
                    timeout: .milliseconds(Int64(serviceTimeout * 1000)))
            } catch let error as ServiceError {
                if !context.json { FileHandle.standardError.write(Data(" failed\n".utf8)) }
                throw ServiceError(
                    error.code, "backup stopped at \(service): \(error.message); \(target) holds an incomplete backup")
            }
            var result = try answer.decode(BackupResult.self)
            // The service wrote into its own data directory; the copy moves into DIR.
            guard fileManager.fileExists(atPath: result.directory) else {
                throw ServiceError(
                    .failedPrecondition,
                    "\(service) wrote its copy to \(result.directory) on its own host; run `logbook backup` there")
            }
            for item in try fileManager.contentsOfDirectory(atPath: result.directory) {
                try Self.move(result.directory + "/" + item, to: target + "/" + item)
            }
            try? fileManager.removeItem(atPath: result.directory)
            result.directory = target
            results.append(result)
            if !context.json {
                let extras = result.extras.map { " + \($0.value) files in \($0.key)/" }.joined()
                FileHandle.standardError.write(
                    Data(" \(Self.size(result.bytes))\(extras) in \(Output.duration(milliseconds: result.durationMs))\n".utf8))
            }
        }
        // Everything on the disk before the manifest that says the backup is whole: the
        // copies (renamed in, or copied from another file system), their folders, then the
        // manifest, written in one step.
        try FileSync.syncTree(target)
        let manifest = BackupManifest(version: LogbookVersion.current, createdAt: Date(), services: results)
        try FileSync.write(WireCoding.encode(manifest), to: target + "/" + BackupManifest.file)
        let elapsed = clock.now - start
        let total = results.reduce(0) { $0 + $1.bytes }
        if context.json {
            Output.json(manifest)
        } else {
            Output.line(
                "backup of \(results.count) service\(results.count == 1 ? "" : "s") (\(Self.size(total)) of databases) "
                    + "written to \(target) in \(Output.duration(milliseconds: Int64(elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000)))")
        }
    }

    /// Renames when it can, else copies, flushes the copy to the disk and only then removes
    /// the original (across file systems: a backup folder on another disk).
    static func move(_ from: String, to: String) throws {
        if rename(from, to) == 0 { return }
        try FileManager.default.copyItem(atPath: from, toPath: to)
        try syncCopy(to)
        try FileManager.default.removeItem(atPath: from)
    }

    /// A file or a folder just copied, flushed with every file in it.
    static func syncCopy(_ path: String) throws {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue {
            try FileSync.syncTree(path)
        } else {
            try FileSync.sync(path)
            try FileSync.syncParent(path)
        }
    }

    static func size(_ bytes: Int64) -> String {
        let units = ["B", "KB", "MB", "GB", "TB"]
        var value = Double(bytes)
        var unit = 0
        while value >= 1000 && unit < units.count - 1 {
            value /= 1000
            unit += 1
        }
        return unit == 0 ? "\(bytes) B" : String(format: "%.1f %@", value, units[unit])
    }
}

struct RestoreCommand: GatewayCommand {
    static let configuration = CommandConfiguration(
        commandName: "restore",
        abstract: "Put a stopped stack back from a backup made by `logbook backup`.",
        discussion: """
            Checks every database copy in DIR (PRAGMA integrity_check) before changing \
            anything, then puts each one in place of the stack's database and the photos in \
            place of the photo folder. What it replaces is moved aside into a \
            before-restore-<time>/ folder beside each database (data/ by default), not \
            deleted. The stack must be stopped \
            (`logbook stack down`); start it again with `logbook stack up`.
            """)

    @OptionGroup var global: GlobalOptions
    @Argument(help: ArgumentHelp("A folder written by `logbook backup`.", valueName: "dir")) var directory: String

    func execute(_ context: Context) async throws {
        let configuration = context.configuration
        let files = StackFiles(configuration)
        let source = URL(fileURLWithPath: directory).standardizedFileURL.path
        guard let data = FileManager.default.contents(atPath: source + "/" + BackupManifest.file) else {
            throw ServiceError(.notFound, "\(source) has no \(BackupManifest.file): not a backup made by `logbook backup`")
        }
        let manifest = try WireCoding.decoder.decode(BackupManifest.self, from: data)
        if let pid = files.liveSupervisor() {
            throw ServiceError(.failedPrecondition, "the stack is running (supervisor pid \(pid)); stop it first: `logbook stack down`")
        }
        // The stack's lock, held until the restore is done: a supervisor (`stack up`) started
        // meanwhile cannot take it, so no service opens a database while it is checked and
        // replaced (a service opening the old file would go on writing to it, aside).
        try FileManager.default.createDirectory(
            atPath: configuration.dataDirectory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        guard let stackLock = try files.lockStack(patience: .milliseconds(200)) else {
            throw ServiceError(
                .failedPrecondition,
                "the stack is starting or running (\(files.lockFile) is held); stop it first: `logbook stack down`")
        }
        defer { close(stackLock) }
        for result in manifest.services {
            if let holder = Self.holder(of: configuration.databasePath(result.service)) {
                throw ServiceError(
                    .failedPrecondition,
                    "\(result.service) is running (pid \(holder) holds \(configuration.databasePath(result.service))); stop it first")
            }
        }
        // 1. Check every copy before touching anything.
        for result in manifest.services {
            let path = source + "/" + result.database
            progress("checking \(result.service)…")
            var readOnly = GRDB.Configuration()
            readOnly.readonly = true
            let copy = try DatabaseQueue(path: path, configuration: readOnly)
            let check = try await copy.read { try String.fetchAll($0, sql: "PRAGMA integrity_check") }
            try copy.close()
            guard check == ["ok"] else {
                throw ServiceError(
                    .failedPrecondition, "\(path) fails integrity_check (\(check.prefix(3).joined(separator: "; "))); nothing was restored")
            }
            // (an empty file passes integrity_check: a copy cut short is caught by its size)
            let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.int64Value ?? -1
            guard size == result.bytes, size > 0 else {
                throw ServiceError(
                    .failedPrecondition,
                    "\(path) holds \(size) bytes where the backup wrote \(result.bytes); nothing was restored")
            }
            progress(" ok\n")
        }
        // 2. Move the current files aside, then put the copies in place. The files kept aside
        // go into a folder beside each database (one folder when they share the data
        // directory, as by default): on the database's own file system, where a hard link
        // keeps them without a copy, and on its volume where each service has its own
        // (Kubernetes), not in a directory of the pod that runs the restore.
        let asideName = "before-restore-" + WireTime.format(Date()).filter { $0.isNumber }
        var asides: [String] = []
        var restored: [String] = []
        for result in manifest.services {
            let live = configuration.databasePath(result.service)
            let directory = URL(fileURLWithPath: live).deletingLastPathComponent().path
            try FileManager.default.createDirectory(
                atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            let aside = directory + "/" + asideName
            if !asides.contains(aside) {
                try FileManager.default.createDirectory(
                    atPath: aside, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
                try FileSync.syncParent(aside)
                asides.append(aside)
            }
            // The copy on the disk beside the live file first; then the old files kept aside
            // (a hard link, or a flushed copy on another file system) while the live name stays;
            // the old WAL removed, since SQLite would replay it into the new file; and the copy
            // renamed over the live name. A crash at any point leaves a whole database there,
            // the old one or the new one, and the old one aside.
            let staging = live + ".restoring"
            try? FileManager.default.removeItem(atPath: staging)
            try FileManager.default.copyItem(atPath: source + "/" + result.database, toPath: staging)
            chmod(staging, 0o600)
            // The restored outbox starts a history of its own (Shared/Storage/Outbox.swift,
            // `OutboxHistory`): its next events take numbers that consumers may have applied
            // already from the history it replaces, and must not be skipped as duplicates.
            let copy = try DatabaseQueue(path: staging)
            try await copy.write { db in if try db.tableExists("outboxHistory") { try Outbox.startHistory(db) } }
            // (folded back into the file before the flush below: the copy is the file alone)
            try await copy.writeWithoutTransaction { try $0.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
            try copy.close()
            for suffix in ["-wal", "-shm"] { unlink(staging + suffix) }
            try FileSync.sync(staging)
            for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: live + suffix) {
                let kept = aside + "/" + URL(fileURLWithPath: live + suffix).lastPathComponent
                if link(live + suffix, kept) != 0 {
                    try FileManager.default.copyItem(atPath: live + suffix, toPath: kept)
                    try FileSync.sync(kept)
                }
            }
            try FileSync.sync(aside)
            for suffix in ["-wal", "-shm"] { unlink(live + suffix) }
            guard rename(staging, live) == 0 else {
                throw ServiceError(.unavailable, "cannot put \(staging) in place: \(String(cString: strerror(errno)))")
            }
            try FileSync.syncParent(live)
            var line = "\(result.service): \(BackupCommand.size(result.bytes))"
            for folder in result.extras.keys.sorted() {
                let destination = Self.extraDestination(folder, service: result.service, configuration: configuration)
                // Copied whole and flushed beside its place first, then the old folder aside
                // and the copy renamed in: a crash leaves the old folder or the whole copy,
                // not a folder the copy got only part way through.
                let staging = destination + ".restoring"
                try? FileManager.default.removeItem(atPath: staging)
                try FileManager.default.createDirectory(
                    atPath: URL(fileURLWithPath: destination).deletingLastPathComponent().path,
                    withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
                let count = try ServiceBackup.copyTree(source + "/" + folder, to: staging)
                try FileSync.syncTree(staging)
                // The two folders swap names in one step (RENAME_EXCHANGE), so the live name
                // never stands empty; then the old one, now under the staging name, goes aside.
                // (Where the file system cannot exchange, the old folder goes aside first.)
                if FileManager.default.fileExists(atPath: destination),
                    FileSync.exchange(staging, destination)
                {
                    try FileSync.syncParent(destination)
                    try BackupCommand.move(staging, to: aside + "/" + folder)
                } else {
                    if FileManager.default.fileExists(atPath: destination) {
                        try BackupCommand.move(destination, to: aside + "/" + folder)
                    }
                    guard rename(staging, destination) == 0 else {
                        throw ServiceError(.unavailable, "cannot put \(staging) in place: \(String(cString: strerror(errno)))")
                    }
                }
                try FileSync.syncParent(destination)
                line += " + \(count) files in \(folder)/"
            }
            restored.append(line)
            progress("restored \(line)\n")
        }
        if context.json {
            Output.json([
                "restored": .array(manifest.services.map { .string($0.service) }),
                "movedAside": .string(asides.first ?? ""), "movedAsideAll": .array(asides.map(JSONValue.string)),
            ])
        } else {
            Output.line(
                "restored \(restored.count) service\(restored.count == 1 ? "" : "s") from the backup of "
                    + "\(TimeText.local(.string(WireTime.format(manifest.createdAt)))); the files it replaced are in "
                    + "\(asides.joined(separator: ", ")). Start the stack: `logbook stack up`")
        }

        func progress(_ text: String) {
            if !context.json { FileHandle.standardError.write(Data(text.utf8)) }
        }
    }

    /// Where a backed-up folder goes back: records' photos to its photo folder
    /// (`LOGBOOK_RECORDS_PHOTO_DIR`), anything else beside the service's database.
    static func extraDestination(_ folder: String, service: String, configuration: StackConfiguration) -> String {
        let beside = URL(fileURLWithPath: configuration.databasePath(service)).deletingLastPathComponent()
        if StackConfiguration.shard(of: service) != nil, let photos = configuration.setting(service, "PHOTO_DIR") {
            return photos
        }
        return beside.appendingPathComponent(folder).path
    }

    /// The pid of a process that holds the database's lock (a running service), if any.
    static func holder(of path: String) -> pid_t? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        if flock(fd, LOCK_SH | LOCK_NB) == 0 {
            flock(fd, LOCK_UN)
            return nil
        }
        var info = stat()
        guard fstat(fd, &info) == 0 else { return -1 }
        return FileLocks.holder(inode: info.st_ino) ?? -1
    }
}

struct StackRebuild: GatewayCommand {
    static let configuration = CommandConfiguration(
        commandName: "rebuild",
        abstract: "Rebuild a consumer's database from the other services' events.",
        discussion: """
            For \(StackConfiguration.rebuildable.joined(separator: " and ")), whose databases are \
            projections of other services' events: stops the service, moves its database aside \
            (data/<service>.sqlite.replaced-<time>), and lets it start on an empty one, which \
            replays every event from the start (`logbook status` shows it catching up). The \
            store (its purchases exist nowhere else), auth and records are restored from a \
            backup instead.
            """)

    @OptionGroup var global: GlobalOptions
    @Argument(help: ArgumentHelp("The service to rebuild.", valueName: "service")) var service: String

    func validate() throws {
        guard StackConfiguration.rebuildable.contains(service) else {
            let why =
                StackConfiguration.services.contains(service)
                ? "\(service) cannot be rebuilt from events (its data exists nowhere else); restore it from a backup: `logbook restore DIR`"
                : "unknown service \"\(service)\""
            throw ValidationError("\(why); rebuildable: \(StackConfiguration.rebuildable.joined(separator: ", "))")
        }
    }

    func execute(_ context: Context) async throws {
        let files = StackFiles(context.configuration)
        let path = context.configuration.databasePath(service)
        // Holding the database's own lock is what makes this safe: once it is ours, the old
        // process is gone and no new one can open the file until it has been moved aside.
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw ServiceError(.internal, "cannot open \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        if flock(fd, LOCK_EX | LOCK_NB) != 0 {
            guard let pid = files.liveService(service) else {
                throw ServiceError(.failedPrecondition, "another process holds \(path); is \(service) running outside this stack?")
            }
            Output.errorLine("stopping \(service) (pid \(pid))")
            kill(pid, SIGTERM)
            let clock = ContinuousClock()
            let deadline = clock.now + .seconds(20)
            while flock(fd, LOCK_EX | LOCK_NB) != 0 {
                if clock.now >= deadline {
                    throw ServiceError(.deadlineExceeded, "\(service) (pid \(pid)) did not stop within 20 s; nothing was changed")
                }
                try await Task.sleep(for: .milliseconds(50))
            }
        }
        let stamp = WireTime.format(Date()).filter { $0.isNumber }
        for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: path + suffix) {
            try BackupCommand.move(path + suffix, to: "\(path).replaced-\(stamp)\(suffix)")
        }
        let restart =
            files.liveSupervisor() != nil
            ? "the supervisor starts it again on an empty database, which replays every event; `logbook status` shows it catching up"
            : "start the stack (`logbook stack up`) and it replays every event"
        Output.line("\(service): database moved aside to \(path).replaced-\(stamp); \(restart)")
    }
}
