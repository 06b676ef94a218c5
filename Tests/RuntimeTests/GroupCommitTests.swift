// The group commit's own transactions (Shared/Storage/GroupCommitter.swift): BEGIN, COMMIT and
// each write's savepoint are statements it compiles once, not GRDB's blocks. What GRDB's
// blocks gave is held here on a real WAL database: a write whose transaction SQLite rolled
// back under it fails instead of reporting success, alone or in a batch, and commits
// nothing; the committer goes on working after it; and GRDB's transaction observers (auth's
// session cache listens this way) still see every commit and rollback.
import Foundation
import GRDB
import Storage
import Synchronization
import Testing

@Suite struct GroupCommitTests {
    static func open(_ scratch: ScratchDirectory) throws -> any DatabaseWriter {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("t") { db in try db.execute(sql: "CREATE TABLE t (n INTEGER NOT NULL)") }
        return try ServiceDatabase.open(DatabaseSettings(path: scratch.path + "/t.sqlite"), migrator: migrator)
    }

    static func rows(_ writer: any DatabaseWriter) throws -> [Int] {
        try writer.read { try Int.fetchAll($0, sql: "SELECT n FROM t ORDER BY n") }
    }

    /// A write that goes on after its transaction is gone: the ROLLBACK stands for SQLite's
    /// own (after a full disk or an I/O error), and the write returns as if all went well.
    static func lostTransaction(_ n: Int) -> @Sendable (Database) throws -> Void {
        { db in
            try db.execute(sql: "INSERT INTO t (n) VALUES (?)", arguments: [n])
            try db.execute(sql: "ROLLBACK")
        }
    }

    @Test func aLoneWriteWhoseTransactionWasRolledBackFailsAndCommitsNothing() async throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let writer = try Self.open(scratch)
        let commits = GroupCommitter(writer: writer)
        // SQLITE_ABORT, what GRDB's blocks answered: not the "no transaction is active" that
        // a COMMIT outside a transaction would get from SQLite.
        let error = await #expect(throws: DatabaseError.self) { try await commits.write(Self.lostTransaction(1)) }
        #expect(error?.resultCode == .SQLITE_ABORT, "\(String(describing: error))")
        #expect(try Self.rows(writer) == [])
        // The committer is not left inside a transaction: the next write commits.
        try await commits.write { db in try db.execute(sql: "INSERT INTO t (n) VALUES (2)") }
        #expect(try Self.rows(writer) == [2])
    }

    /// Runs `writes` as one batch: a first write (inserting 0) holds the commit queue until
    /// they all wait behind it. Returns whether each succeeded, in order.
    static func inOneBatch(
        _ commits: GroupCommitter, _ writes: [@Sendable (Database) throws -> Void]
    ) async throws -> [Bool] {
        let release = DispatchSemaphore(value: 0)
        let first = Task { try await commits.write { db in release.wait(); try db.execute(sql: "INSERT INTO t (n) VALUES (0)") } }
        try await Task.sleep(for: .milliseconds(100))
        let batch = writes.map { write in Task { try await commits.write(write) } }
        try await Task.sleep(for: .milliseconds(300))
        release.signal()
        try await first.value
        var outcomes: [Bool] = []
        for task in batch { outcomes.append((try? await task.value) != nil) }
        return outcomes
    }

    static func insert(_ n: Int) -> @Sendable (Database) throws -> Void {
        { db in try db.execute(sql: "INSERT INTO t (n) VALUES (?)", arguments: [n]) }
    }

    @Test func aBatchWithALostTransactionFailsWholeAndTheNextBatchCommits() async throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let writer = try Self.open(scratch)
        let commits = GroupCommitter(writer: writer)
        let outcomes = try await Self.inOneBatch(commits, [Self.insert(1), Self.insert(2), Self.lostTransaction(3), Self.insert(4)])
        // Writes 1 and 2 had succeeded in their savepoints, and 4 never ran: all four fail.
        #expect(outcomes == [false, false, false, false], "the batch whose transaction was lost failed whole")
        #expect(try Self.rows(writer) == [0])
        try await commits.write(Self.insert(5))
        #expect(try Self.rows(writer) == [0, 5])
    }

    @Test func aFailedWriteInABatchIsRolledBackToItsSavepointAlone() async throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let writer = try Self.open(scratch)
        let commits = GroupCommitter(writer: writer)
        struct Refused: Error {}
        let refused: @Sendable (Database) throws -> Void = { db in
            try Self.insert(2)(db)
            throw Refused()
        }
        let outcomes = try await Self.inOneBatch(commits, [Self.insert(1), refused, Self.insert(3), Self.insert(4)])
        #expect(commits.statistics.largestBatch == 4)
        #expect(outcomes == [true, false, true, true])
        #expect(try Self.rows(writer) == [0, 1, 3, 4])
    }

    @Test func transactionObserversSeeEachCommitAndRollback() async throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let writer = try Self.open(scratch)
        let observer = Counting()
        writer.add(transactionObserver: observer)
        let commits = GroupCommitter(writer: writer)
        try await commits.write { db in try db.execute(sql: "INSERT INTO t (n) VALUES (1)") }
        struct Refused: Error {}
        _ = try? await commits.write { db in
            try db.execute(sql: "INSERT INTO t (n) VALUES (2)")
            throw Refused()
        }
        try await commits.write { db in try db.execute(sql: "INSERT INTO t (n) VALUES (3)") }
        #expect(observer.counts.withLock { $0 } == Counting.Counts(changes: 3, commits: 2, rollbacks: 1))
        #expect(try Self.rows(writer) == [1, 3])
    }
}

private final class Counting: TransactionObserver, Sendable {
    struct Counts: Equatable { var changes = 0, commits = 0, rollbacks = 0 }
    let counts = Mutex(Counts())
    func observes(eventsOfKind eventKind: DatabaseEventKind) -> Bool { true }
    func databaseDidChange(with event: DatabaseEvent) { counts.withLock { $0.changes += 1 } }
    func databaseDidCommit(_ db: Database) { counts.withLock { $0.commits += 1 } }
    func databaseDidRollback(_ db: Database) { counts.withLock { $0.rollbacks += 1 } }
}
