// Reading settings without Foundation's first-use costs (SettingsText.swift): the environment
// read from `environ` is Foundation's, value for value; the ASCII trim cuts what a settings
// file wraps a value in and nothing else; and a point read runs on the caller's thread.
import Foundation
import GRDB
import Runtime
import Storage
import Testing

@Suite struct SettingsTextTests {
    @Test func theEnvironmentIsFoundationsValueForValue() {
        let environment = ProcessEnvironment.current()
        #expect(!environment.isEmpty)
        #expect(environment == ProcessInfo.processInfo.environment)
    }

    @Test func trimmingSpacesCutsASCIISpacesTabsAndLineEndsOnly() {
        #expect("  lbk_abc \t\r\n".trimmingSpaces == "lbk_abc")
        #expect("value with  inner spaces".trimmingSpaces == "value with  inner spaces")
        #expect(" \t\r\n ".trimmingSpaces == "")
        #expect("".trimmingSpaces == "")
        #expect(" café ".trimmingSpaces == "café")
        // a no-break space is part of the value, not what wraps it
        #expect("\u{00A0}x\u{00A0}".trimmingSpaces == "\u{00A0}x\u{00A0}")
        let line = "KEY = value\r"
        let equals = line.firstIndex(of: "=")!
        #expect(line[..<equals].trimmingSpaces == "KEY")
        #expect(line[line.index(after: equals)...].trimmingSpaces == "value")
    }

    @Test func aConfigFileWithWindowsLineEndsAndTabsReadsItsValues() throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        try "# settings\r\n\tLOGBOOK_LOG_LEVEL =\tdebug \r\nLOGBOOK_RECORDS_SHARDS = 2\r\n".write(
            toFile: scratch.path + "/logbook.conf", atomically: true, encoding: .utf8)
        let configuration = try StackConfiguration.load(environment: ["LOGBOOK_HOME": scratch.path])
        #expect(configuration.logLevel == "debug")
        #expect(configuration.recordsShards == 2)
    }

    @Test func aConfigFileThatCannotBeReadIsNamedWithWhoMustReadIt() throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        // (the tests run as root, who reads any mode: a directory where the file goes cannot be read)
        try FileManager.default.createDirectory(atPath: scratch.path + "/logbook.conf", withIntermediateDirectories: false)
        let error = #expect(throws: ConfigurationError.self) {
            try StackConfiguration.load(environment: ["LOGBOOK_HOME": scratch.path])
        }
        let text = "\(error.map { "\($0)" } ?? "")"
        #expect(text.contains(scratch.path + "/logbook.conf") && text.contains("must be able to read it"), "\(text)")
    }

    /// More than a pipe holds at once: the writes are partial, and all of it arrives.
    @Test func writeAllWritesEverythingThroughAPipe() async throws {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        let bytes = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let reader = fds[0]
        let received = Task.detached { () -> [UInt8] in
            var all: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                let n = buffer.withUnsafeMutableBytes { read(reader, $0.baseAddress, $0.count) }
                if n <= 0 { break }
                all += buffer[..<n]
            }
            return all
        }
        #expect(bytes.withUnsafeBytes { FileDescriptor.writeAll(fds[1], $0) })
        close(fds[1])
        #expect(await received.value == bytes)
        close(fds[0])
    }

    @Test func aPointReadRunsOnTheCallersThread() async throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(sql: "CREATE TABLE item (id TEXT PRIMARY KEY, name TEXT NOT NULL)")
            try db.execute(sql: "INSERT INTO item VALUES ('a', 'first')")
        }
        let database = try ServiceDatabase.open(DatabaseSettings(path: scratch.path + "/items.sqlite"), migrator: migrator)
        #expect(database is DatabasePool)
        let caller = pthread_self()
        let (name, sameThread) = try database.pointRead { db in
            (try String.fetchOne(db, sql: "SELECT name FROM item WHERE id = 'a'"), pthread_equal(pthread_self(), caller) != 0)
        }
        #expect(name == "first")
        #expect(sameThread)
        // and it sees what was committed before it, as `await read` does
        try await database.write { db in try db.execute(sql: "UPDATE item SET name = 'second' WHERE id = 'a'") }
        #expect(try database.pointRead { db in try String.fetchOne(db, sql: "SELECT name FROM item") } == "second")
    }
}
