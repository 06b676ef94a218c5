// Durability and health, checked where they take effect, on the real executables: the
// writer's synchronous level read back by each service and fsyncs seen by strace on the
// records process; one writer per database after run/ is removed and when a second process
// tries; a SIGSTOPped service replaced by the supervisor; a lagging projection's answers
// marked and `status` saying so; damaged pages refused at start; and a backup taken under a
// write load that restores to exactly a prefix of the acknowledged writes.
import Foundation
import GRDB
import Runtime
import Testing
import Wire

@Suite("durability and health", .serialized, .timeLimit(.minutes(4)))
struct DurabilityTests {
    struct Expense: Codable, Sendable {
        var name: String
        var amountMinor: Int
    }

    @Test("every writer runs synchronous=full and acknowledged writes reach the disk (strace)")
    func writesAreSynced() async throws {
        try await withStack { stack in
            try await stack.upAndRegister("alice")
            let status = try await stack.logbook("status", "--json")
            let rows = try #require(status.json as? [[String: Any]], "\(status.stdout)\(status.stderr)")
            for service in ["auth", "records", "weather-fetcher", "analytics", "store"] {
                let row = rows.first { $0["service"] as? String == service }
                #expect(row?["synchronous"] as? String == "full", "\(service): \(row ?? [:])")
                // SQLite's memory counting, as each process's SQLite reports it (off: no
                // process-wide lock on every allocation).
                let info = try await stack.logbook("call", service, "$srv.info", "--json")
                let storage = (info.object["result"] as? [String: Any])?["storage"] as? [String: Any]
                #expect(storage?["memoryStatus"] as? String == "off", "\(service): \(info.stdout)\(info.stderr)")
            }

            let strace = try #require(Self.which("strace"), "strace is needed (deploy/test.sh installs it)")
            let records = try #require(stack.pid("records"))
            let trace = stack.home + "/strace.out"
            // Started through python3 with an empty signal mask: a child of this test process
            // inherits its blocked signals, and strace would never see the SIGINT that stops it.
            let tracer = Process()
            tracer.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            tracer.arguments = [
                "python3", "-c",
                "import os, signal, sys; signal.pthread_sigmask(signal.SIG_SETMASK, []); os.execv(sys.argv[1], sys.argv[1:])",
                strace, "-f", "-e", "trace=fsync,fdatasync", "-o", trace, "-p", "\(records)",
            ]
            // strace says "Process N attached" on stderr once per thread it has attached to.
            let attachLog = stack.home + "/strace.err"
            FileManager.default.createFile(atPath: attachLog, contents: nil)
            tracer.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: attachLog))
            let threads = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(records)/task").count) ?? 1
            try tracer.run()
            defer {
                if tracer.isRunning {
                    tracer.interrupt()
                    tracer.waitUntilExit()
                }
            }
            // Count only once strace has attached to every thread records had (a fixed second
            // was not enough on a loaded machine: the first write's fsync went unseen).
            let attachDeadline = ContinuousClock.now + .seconds(20)
            while ContinuousClock.now < attachDeadline {
                let said = (try? String(contentsOfFile: attachLog, encoding: .utf8)) ?? ""
                if said.components(separatedBy: "attached").count - 1 >= threads { break }
                try await Task.sleep(for: .milliseconds(50))
            }
            let writes = 6
            for i in 1...writes {
                let add = try await stack.logbook("expense", "add", "Lunch \(i)", "12.50")
                try #require(add.status == 0, "\(add.stderr)")
            }
            tracer.interrupt()
            tracer.waitUntilExit()
            let text = (try? String(contentsOfFile: trace, encoding: .utf8)) ?? ""
            let syncs = text.split(separator: "\n").filter { $0.contains("fsync(") || $0.contains("fdatasync(") }.count
            #expect(syncs >= writes, "\(writes) acknowledged writes, \(syncs) syncs seen:\n\(text.prefix(2000))")
        }
    }

    @Test("rm -rf run/ then stack up adopts the running stack: one writer per database")
    func oneStackPerDataDirectory() async throws {
        try await withStack { stack in
            try await stack.upAndRegister("alice")
            let supervisor = try #require(stack.pid("supervisor"))
            // the HTTP edge writes run/logbook-http.url once it listens: let it, so the
            // removal below does not race that write (rmdir of a folder just written into)
            _ = try await stack.edge()
            // The supervisor remakes run/ as soon as it sees its pid file gone, which can be
            // while the removal is still walking the folder (then it fails, as `rm -rf`
            // would): remove it again, as a person would.
            for attempt in 1...5 {
                do {
                    try stack.removeWhileInUse(stack.runDirectory)
                    break
                } catch where attempt < 5 {
                    try await Task.sleep(for: .milliseconds(100))
                }
            }

            let up = try await stack.logbook("stack", "up")
            #expect(up.status == 0, "\(up.stdout)\(up.stderr)\n\(stack.log("supervisor"))")
            #expect(up.stdout.contains("already running (supervisor pid \(supervisor))"), "\(up.stdout)")
            #expect(stack.pid("supervisor") == supervisor)
            for service in ["auth", "records", "analytics"] {
                let database = "\(stack.home)/data/\(service).sqlite"
                #expect(Self.lockHolders(database).count == 1, "\(service): \(Self.lockHolders(database))")
                #expect(Self.processes(named: service, home: stack.home).count == 1, "\(service) runs once")
            }
            let whoami = try await stack.logbook("whoami")
            #expect(whoami.status == 0, "the adopted stack answers: \(whoami.stderr)")

            // A second records on the same database, by hand: refused with a one-line reason.
            let second = Process()
            second.executableURL = URL(fileURLWithPath: stack.binDirectory + "/records")
            second.environment = stack.environment.merging([
                "LOGBOOK_RECORDS_ENDPOINT": "ipc://\(stack.home)/second.sock",
                "LOGBOOK_RECORDS_EVENTS": "ipc://\(stack.home)/second-events.sock",
            ]) { $1 }
            let errors = Pipe()
            second.standardError = errors
            second.standardOutput = FileHandle.nullDevice
            try second.run()
            second.waitUntilExit()
            let said = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            #expect(second.terminationStatus == 1)
            #expect(said.contains("records.sqlite is in use by another process (pid "), "\(said)")
        }
    }

    @Test("a SIGSTOPped service is killed and replaced by the supervisor")
    func hungServiceReplaced() async throws {
        let fast = [
            "LOGBOOK_SUPERVISOR_PING_INTERVAL": "0.5", "LOGBOOK_SUPERVISOR_PING_TIMEOUT": "0.5",
            "LOGBOOK_SUPERVISOR_PING_MISSES": "3",
        ]
        try await withStack(environment: fast) { stack in
            let up = try await stack.logbook("stack", "up")
            try #require(up.status == 0, "\(up.stderr)")
            let victim = try #require(stack.pid("records"))
            kill(victim, SIGSTOP)
            defer { kill(victim, SIGKILL) }
            let replaced = try await stack.eventually(timeout: .seconds(20)) {
                guard let now = stack.pid("records"), now != victim else { return false }
                return try await stack.logbook("call", "records", "$srv.ping", timeout: .seconds(5)).status == 0
            }
            #expect(replaced, "records was not replaced:\n\(stack.log("supervisor"))")
            #expect(stack.log("supervisor").contains("missed 3 pings in a row"))
            #expect(!TestStack.isRunning(victim), "the stopped process was killed")
        }
    }

    @Test("a projection behind its producer marks its answers stale and status degraded")
    func staleAnswersAreMarked() async throws {
        let environment = ["LOGBOOK_EVENTS_STALL_AFTER": "1", "LOGBOOK_SUPERVISOR_PING_MISSES": "0"]
        try await withStack(environment: environment) { stack in
            guard FileManager.default.isExecutableFile(atPath: stack.binDirectory + "/analytics") else {
                Issue.record("analytics is not built next to logbook")
                return
            }
            try await stack.upAndRegister("alice")
            let add = try await stack.logbook("expense", "add", "Lunch", "12.50", "--category", "food")
            try #require(add.status == 0, "\(add.stderr)")
            let fresh = try await stack.eventually {
                let summary = try await stack.logbook("expense", "summary", "--by", "category")
                return summary.status == 0 && summary.stdout.contains("12.50") && !summary.stderr.contains("stale")
            }
            #expect(fresh, "the summary caught up and was not marked stale")

            let records = try #require(stack.pid("records"))
            kill(records, SIGSTOP)
            defer { kill(records, SIGCONT) }
            try await Task.sleep(for: .seconds(2.5))
            let stale = try await stack.logbook("expense", "summary", "--by", "category")
            #expect(stale.status == 0, "the figures are still shown: \(stale.stderr)")
            #expect(stale.stderr.contains("stale: analytics"), "stderr: \(stale.stderr)")
            let status = try await stack.logbook("status", "--json")
            #expect(status.status == 7, "records is down: \(status.stdout)")
            let rows = status.json as? [[String: Any]] ?? []
            let analytics = rows.first { $0["service"] as? String == "analytics" }
            #expect(analytics?["state"] as? String == "degraded", "\(analytics ?? [:])")
            #expect((analytics?["problems"] as? [String])?.contains { $0.contains("records") } == true)

            kill(records, SIGCONT)
            let recovered = try await stack.eventually {
                try await stack.logbook("status").status == 0
            }
            #expect(recovered, "status is all up again once records answers")
        }
    }

    @Test("damaged pages stop a service at start with the file and the fix; rebuild recovers analytics")
    func damagedDatabaseRefused() async throws {
        try await withStack { stack in
            try await stack.upAndRegister("alice")
            for i in 1...40 {
                let add = try await stack.logbook("expense", "add", "Item \(i)", "1.00")
                try #require(add.status == 0, "\(add.stderr)")
            }
            let summed = try await stack.eventually {
                try await stack.logbook("expense", "summary").stdout.contains("40.00")
            }
            #expect(summed)
            let down = try await stack.logbook("stack", "down")
            try #require(down.status == 0)

            for service in ["records", "analytics"] {
                let path = "\(stack.home)/data/\(service).sqlite"
                try Self.damage(path)
                let started = try Self.start(service, stack: stack)
                #expect(started.status == 1, "\(service) refused to start")
                #expect(started.stderr.contains("\(path) is damaged"), "\(started.stderr)")
                #expect(started.stderr.contains("logbook restore"), "\(started.stderr)")
                if service == "analytics" {
                    #expect(started.stderr.contains("logbook stack rebuild analytics"), "\(started.stderr)")
                }
            }
            // Put records back (the damage was ours), rebuild analytics from its events.
            try FileManager.default.removeItem(atPath: "\(stack.home)/data/records.sqlite")
            try FileManager.default.moveItem(
                atPath: "\(stack.home)/data/records.sqlite.intact", toPath: "\(stack.home)/data/records.sqlite")
            let rebuild = try await stack.logbook("stack", "rebuild", "analytics")
            #expect(rebuild.status == 0, "\(rebuild.stderr)")
            let refused = try await stack.logbook("stack", "rebuild", "records")
            #expect(refused.status == 2)
            #expect(refused.stderr.contains("restore it from a backup"), "\(refused.stderr)")

            let up = try await stack.logbook("stack", "up")
            #expect(up.status == 0, "\(up.stderr)\n\(stack.log("analytics"))")
            let rebuilt = try await stack.eventually {
                try await stack.logbook("expense", "summary").stdout.contains("40.00")
            }
            #expect(rebuilt, "analytics replayed every expense")
        }
    }

    @Test("a killed supervisor's services: the next stack up stops and restarts them; stack down without it waits for them")
    func killedSupervisor() async throws {
        try await withStack { stack in
            try await stack.upAndRegister("alice")
            let supervisor = try #require(stack.pid("supervisor"))
            let records = try #require(stack.pid("records"))
            kill(supervisor, SIGKILL)
            #expect(try await stack.eventually { !TestStack.isRunning(supervisor) })
            #expect(TestStack.isRunning(records), "its services run on without it")

            let up = try await stack.logbook("stack", "up")
            #expect(up.status == 0, "\(up.stdout)\(up.stderr)")
            let restarted = try #require(stack.pid("records"))
            #expect(restarted != records)
            #expect(!TestStack.isRunning(records), "the orphan was stopped, not left holding the database")
            #expect(stack.log("supervisor").contains("left running by a supervisor that is gone"), "\(stack.log("supervisor"))")
            let write = try await stack.logbook("expense", "add", "Lunch", "12.50")
            #expect(write.status == 0, "\(write.stderr)")

            // Killed again: `stack down` stops what it left, waits for it, removes the sockets.
            let second = try #require(stack.pid("supervisor"))
            kill(second, SIGKILL)
            #expect(try await stack.eventually { !TestStack.isRunning(second) })
            let down = try await stack.logbook("stack", "down")
            #expect(down.status == 0, "\(down.stdout)\(down.stderr)")
            #expect(down.stdout.contains("stack was not supervised; stopped"), "\(down.stdout)")
            #expect(TestStack.processes(home: stack.home).isEmpty, "nothing of the stack runs after `stack down`")
            #expect(!Self.exists(stack.runDirectory + "/records.sock"))
        }
    }

    @Test("a backup taken under a write load restores exactly a prefix of the acknowledged writes")
    func backupUnderLoadRestores() async throws {
        try await withStack { stack in
            try await stack.upAndRegister("alice")
            let token = try stack.token()
            let client = try ServiceClient(service: "records", endpoint: "ipc://\(stack.runDirectory)/records.sock")
            let backupDirectory = stack.home + "/backup"
            let startBackupAfter = 80
            let total = 240
            var acknowledged: [String] = []
            var beforeBackup = -1
            var afterBackup = -1
            var backup: Task<CommandResult, any Error>?
            for i in 0..<total {
                let options = CallOptions(token: token, idempotencyKey: ID.make(), timeout: .seconds(10))
                let result = try await client.call(
                    "records.expense.add", Expense(name: "load \(i)", amountMinor: 100 + i), as: JSONValue.self,
                    options: options)
                acknowledged.append(try #require(result["id"]?.stringValue))
                if i + 1 == startBackupAfter {
                    beforeBackup = acknowledged.count
                    backup = Task { try await stack.logbook("backup", backupDirectory, timeout: .seconds(120)) }
                }
                if backup != nil, afterBackup < 0, Self.exists(backupDirectory + "/logbook-backup.json") {
                    afterBackup = acknowledged.count
                }
            }
            let backed = try await #require(backup).value
            #expect(backed.status == 0, "\(backed.stdout)\(backed.stderr)")
            if afterBackup < 0 { afterBackup = acknowledged.count }

            #expect(try await stack.logbook("stack", "down").status == 0)
            func history() async throws -> (id: String?, forkedAt: Int64?, last: Int64?) {
                let file = try DatabaseQueue(path: "\(stack.home)/data/records.sqlite")
                defer { try? file.close() }
                return try await file.read { db in
                    let row = try Row.fetchOne(db, sql: "SELECT id, forkedAt FROM outboxHistory")
                    return (row?["id"], row?["forkedAt"], try Int64.fetchOne(db, sql: "SELECT max(seq) FROM outbox"))
                }
            }
            let before = try await history()
            let restore = try await stack.logbook("restore", backupDirectory)
            #expect(restore.status == 0, "\(restore.stdout)\(restore.stderr)")
            // The restored file, checked on its own while the stack is down.
            let restored = try DatabaseQueue(path: "\(stack.home)/data/records.sqlite")
            let integrity = try await restored.read { try String.fetchAll($0, sql: "PRAGMA integrity_check") }
            #expect(integrity == ["ok"])
            try restored.close()
            // Its outbox starts a history of its own at its last event: consumers that applied
            // later events of the history it replaced apply its new ones (OutboxHistory).
            let after = try await history()
            #expect(after.id != nil && after.id != before.id)
            #expect(after.forkedAt == after.last && (after.last ?? 0) < (before.last ?? 0))

            #expect(try await stack.logbook("stack", "up").status == 0)
            let list = try await stack.logbook("expense", "list", "--all", "--json")
            try #require(list.status == 0, "\(list.stderr)")
            let items = (list.object["items"] as? [[String: Any]]) ?? []
            let ids = Set(items.compactMap { $0["id"] as? String })
            let count = ids.count
            #expect(count >= beforeBackup && count <= afterBackup, "\(beforeBackup) ≤ \(count) ≤ \(afterBackup)")
            #expect(ids == Set(acknowledged.prefix(count)), "exactly the first \(count) acknowledged writes")
            print("backup under load: \(beforeBackup) acknowledged before it started, \(count) restored")
        }
    }

    @Test("backup and restore flush each file before the name that makes it count (strace)")
    func backupAndRestoreSync() async throws {
        try await withStack { stack in
            try await stack.upAndRegister("alice")
            #expect(try await stack.logbook("expense", "add", "Lunch", "12.50").status == 0)
            let strace = try #require(Self.which("strace"), "strace is needed (deploy/test.sh installs it)")
            let backupDirectory = stack.home + "/backup"
            // -y: each descriptor with its path
            func traced(_ arguments: [String], _ trace: String) async throws -> (CommandResult, [String]) {
                let result = try await Tool.run(
                    strace,
                    ["-f", "-y", "-e", "trace=fsync,fdatasync,rename,renameat,renameat2", "-o", trace,
                     stack.binDirectory + "/logbook"] + arguments,
                    environment: stack.environment, timeout: .seconds(120), scratch: "\(stack.home)/.cmd-")
                let text = (try? String(contentsOfFile: trace, encoding: .utf8)) ?? ""
                return (result, text.split(separator: "\n").map(String.init).filter { $0.contains(" = 0") })
            }
            /// The place of the first call that `matches`, after `from`.
            func first(_ lines: [String], after from: Int = -1, _ matches: (String) -> Bool) -> Int? {
                lines.indices.first { $0 > from && matches(lines[$0]) }
            }
            func syncOf(_ path: String) -> (String) -> Bool { { $0.contains("fsync(") && $0.contains("<\(path)>") } }

            let (backup, backupCalls) = try await traced(["backup", backupDirectory], stack.home + "/backup.trace")
            #expect(backup.status == 0, "\(backup.stdout)\(backup.stderr)")
            let manifest = backupDirectory + "/logbook-backup.json"
            let copySynced = first(backupCalls, syncOf(backupDirectory + "/records.sqlite"))
            let manifestSynced = first(backupCalls) { $0.contains("fsync(") && $0.contains(manifest + ".") }
            let manifestNamed = first(backupCalls) { $0.contains("rename(") && $0.contains("\"\(manifest)\")") }
            let folderSynced = manifestNamed.flatMap { first(backupCalls, after: $0, syncOf(backupDirectory)) }
            #expect(copySynced != nil && manifestSynced != nil && manifestNamed != nil && folderSynced != nil,
                "\(backupCalls.suffix(30).joined(separator: "\n"))")
            if let copySynced, let manifestSynced, let manifestNamed {
                #expect(copySynced < manifestSynced && manifestSynced < manifestNamed)
            }

            #expect(try await stack.logbook("stack", "down").status == 0)
            let data = stack.home + "/data"
            let live = data + "/records.sqlite"
            let (restore, restoreCalls) = try await traced(["restore", backupDirectory], stack.home + "/restore.trace")
            #expect(restore.status == 0, "\(restore.stdout)\(restore.stderr)")
            let stagingSynced = first(restoreCalls, syncOf(live + ".restoring"))
            let putInPlace = first(restoreCalls) { $0.contains("rename(\"\(live).restoring\", \"\(live)\")") }
            let dataSynced = putInPlace.flatMap { first(restoreCalls, after: $0, syncOf(data)) }
            #expect(stagingSynced != nil && putInPlace != nil && dataSynced != nil,
                "\(restoreCalls.suffix(30).joined(separator: "\n"))")
            if let stagingSynced, let putInPlace { #expect(stagingSynced < putInPlace) }
            // the replaced file kept aside whole, the live name never without a database
            let aside = try FileManager.default.contentsOfDirectory(atPath: data).filter { $0.hasPrefix("before-restore-") }
            #expect(aside.count == 1)
            #expect(aside.first.map { Self.exists(data + "/" + $0 + "/records.sqlite") } == true)

            // A copy cut short passes integrity_check when it is empty: its size refuses it.
            let before = try Data(contentsOf: URL(fileURLWithPath: live))
            try Data().write(to: URL(fileURLWithPath: backupDirectory + "/records.sqlite"))
            let refused = try await stack.logbook("restore", backupDirectory)
            #expect(refused.status != 0)
            #expect(refused.stderr.contains("holds 0 bytes where the backup wrote"), "\(refused.stderr)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: live)) == before, "nothing was restored")

            // The stack's lock held by a process that is not (yet) a supervisor (one starting,
            // or another restore): refused, nothing touched.
            let lock = open(data + "/supervisor.lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
            try #require(lock >= 0 && flock(lock, LOCK_EX | LOCK_NB) == 0)
            let blocked = try await stack.logbook("restore", backupDirectory)
            flock(lock, LOCK_UN)
            close(lock)
            #expect(blocked.status == 5 && blocked.stderr.contains("is held"), "\(blocked.stdout)\(blocked.stderr)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: live)) == before, "nothing was restored")
        }
    }

    // MARK: Helpers

    static func which(_ tool: String) -> String? {
        ["/usr/bin/", "/bin/", "/usr/local/bin/"].map { $0 + tool }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    static func exists(_ path: String) -> Bool { FileManager.default.fileExists(atPath: path) }

    /// Pids holding a flock on `path` (/proc/locks).
    static func lockHolders(_ path: String) -> [String] {
        var info = stat()
        guard stat(path, &info) == 0, let text = try? String(contentsOfFile: "/proc/locks", encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ")
            guard fields.count >= 6, fields[1] == "FLOCK", fields[5].hasSuffix(":\(info.st_ino)") else { return nil }
            return String(fields[4])
        }
    }

    /// Live processes of `service` whose environment names this stack's home.
    static func processes(named service: String, home: String) -> [Int32] {
        let pids = (try? FileManager.default.contentsOfDirectory(atPath: "/proc"))?.compactMap(Int32.init) ?? []
        return pids.filter { pid in
            guard TestStack.isRunning(pid),
                let exe = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/exe"),
                exe.hasSuffix("/" + service),
                let environ = FileManager.default.contents(atPath: "/proc/\(pid)/environ")
            else { return false }
            return environ.split(separator: 0).contains { String(decoding: $0, as: UTF8.self) == "LOGBOOK_HOME=\(home)" }
        }
    }

    /// Overwrites the middle of a database (keeping page 1, the header and schema) with
    /// garbage; a copy of the intact file is kept beside it as `.intact`.
    static func damage(_ path: String) throws {
        // Everything into the main file first, so the damage is not hidden behind the WAL.
        let database = try DatabaseQueue(path: path)
        try database.writeWithoutTransaction { try $0.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
        try database.close()
        try? FileManager.default.removeItem(atPath: path + ".intact")
        try FileManager.default.copyItem(atPath: path, toPath: path + ".intact")
        let handle = try #require(FileHandle(forUpdatingAtPath: path))
        defer { try? handle.close() }
        let size = try handle.seekToEnd()
        #expect(size > 4096 * 4, "\(path) has pages to damage (\(size) bytes)")
        try handle.seek(toOffset: 4096 * 2)
        handle.write(Data((0..<Int(size) - 4096 * 3).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ 7) }))
    }

    /// Starts a service executable by hand against the stack's (stopped) data; waits for it.
    static func start(_ service: String, stack: TestStack) throws -> CommandResult {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: stack.binDirectory + "/" + service)
        process.environment = stack.environment
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        // A service that does start runs until stopped: give it 20 s to refuse.
        let deadline = Date().addingTimeInterval(20)
        while process.isRunning && Date() < deadline { usleep(50_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        return CommandResult(status: process.terminationStatus, stdout: "", stderr: stderr)
    }
}
