// Group commit: writes that arrive while a transaction is being committed wait, and the
// next transaction takes all of them at once. Each write runs in its own savepoint, so a
// write that fails (a validation error) is rolled back alone while the others commit.
// Callers are resumed only after the COMMIT returned: an acknowledged write is durable.
//
// Blocking SQLite work runs on one serial dispatch queue, never on Swift's cooperative pool.
import Dispatch
import Foundation
import GRDB
import Synchronization

public final class GroupCommitter: Sendable {
    private final class Job: @unchecked Sendable {
        // Touched only on the commit queue, then handed to `finish` once.
        let run: (Database) throws -> Void
        let finish: (Result<Void, any Error>) -> Void
        var outcome: Result<Void, any Error> = .success(())
        init(run: @escaping (Database) throws -> Void, finish: @escaping (Result<Void, any Error>) -> Void) {
            self.run = run
            self.finish = finish
        }
    }

    private struct State {
        var jobs: [Job] = []
        var draining = false
    }

    public let writer: any DatabaseWriter
    private let state = Mutex(State())
    private let queue = DispatchQueue(label: "logbook.group-commit")
    private let maxBatch: Int
    private let afterCommit: @Sendable (_ db: Database, _ batchSize: Int) -> Void
    private let stats = Mutex(Stats())
    private let lastRelief = Mutex<ContinuousClock.Instant?>(nil)

    public struct Stats: Sendable {
        /// Transactions committed.
        public var transactions = 0
        /// Writes handled, committed or refused.
        public var writes = 0
        public var largestBatch = 0
    }

    /// - Parameter afterCommit: called on the commit queue after each successful commit,
    ///   once the callers are resumed, with the writer connection outside any transaction
    ///   (the event publisher hooks in here to send what the outbox just received: read on
    ///   this connection, whose cache holds the pages just written, rather than on a reader
    ///   checked out of the pool with a read transaction of its own).
    public init(
        writer: any DatabaseWriter, maxBatch: Int = 512,
        afterCommit: @escaping @Sendable (_ db: Database, _ batchSize: Int) -> Void = { _, _ in }
    ) {
        self.writer = writer
        self.maxBatch = maxBatch
        self.afterCommit = afterCommit
    }

    public var statistics: Stats { stats.withLock { $0 } }

    /// Runs `work` inside the next group transaction and returns its result after COMMIT.
    public func write<T: Sendable>(_ work: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            let box = ResultBox<T>()
            let job = Job(
                run: { db in box.value = try work(db) },
                finish: { outcome in
                    switch outcome {
                    case .success:
                        if let value = box.value {
                            continuation.resume(returning: value)
                        } else {
                            continuation.resume(throwing: CancellationError())
                        }
                    case .failure(let error):
                        continuation.resume(throwing: error)
                    }
                })
            let startDrain = state.withLock { state -> Bool in
                state.jobs.append(job)
                if state.draining { return false }
                state.draining = true
                return true
            }
            if startDrain { queue.async { self.drain() } }
        }
    }

    private func drain() {
        while true {
            let batch = state.withLock { state -> [Job] in
                let count = min(state.jobs.count, maxBatch)
                let batch = Array(state.jobs.prefix(count))
                state.jobs.removeFirst(count)
                if batch.isEmpty { state.draining = false }
                return batch
            }
            if batch.isEmpty { return }
            commit(batch)
        }
    }

    private func commit(_ batch: [Job]) {
        do {
            try writer.writeWithoutTransaction { db in
                if batch.count == 1 {
                    // One write: the transaction is its savepoint. A write that fails is
                    // rolled back with it (and its error is the batch's), so nothing is
                    // committed, and nothing synced, for it.
                    try Self.transaction(db) {
                        try batch[0].run(db)
                    }
                } else {
                    try commitEach(batch, db)
                }
                stats.withLock {
                    $0.transactions += 1
                    $0.writes += batch.count
                    $0.largestBatch = max($0.largestBatch, batch.count)
                }
                for job in batch { job.finish(job.outcome) }
                // The callers just resumed were woken onto this CPU (the scheduler puts a woken
                // thread beside its waker), where they would wait for `afterCommit` (the event
                // publisher reading the outbox) before sending their replies: give them the
                // CPU first (docs/performance.md, "The write path, a later round").
                sched_yield()
                afterCommit(db, batch.count)
            }
        } catch {
            if let error = error as? DatabaseError, error.resultCode == .SQLITE_FULL { relieveFullDisk() }
            stats.withLock { $0.writes += batch.count }
            for job in batch { job.finish(.failure(error)) }
        }
    }

    /// Several writes in one transaction, each in its own savepoint.
    private func commitEach(_ batch: [Job], _ db: Database) throws {
        try Self.transaction(db) {
            for job in batch {
                do {
                    try Self.savepoint(db) { try job.run(db) }
                    job.outcome = .success(())
                } catch {
                    job.outcome = .failure(error)
                    // A savepoint failure that broke the transaction itself aborts the batch.
                    if !db.isInsideTransaction { throw error }
                }
            }
        }
    }

    // The transaction and the savepoints, as statements compiled once on the writer
    // connection. GRDB's `inTransaction` and `inSavepoint` compile BEGIN, COMMIT, SAVEPOINT
    // and RELEASE again for every transaction and every write: 10 µs before a write's first
    // statement and more around its COMMIT (docs/performance.md, "The write path, a third
    // round"). GRDB follows transactions and savepoints begun by SQL, so its transaction
    // observers still see each commit and rollback.
    //
    // What GRDB's blocks add is kept in part. When SQLite rolls a transaction back by itself
    // (a full disk, an I/O error), GRDB refuses every statement the block runs after it;
    // here the write fails when it returns (SQLITE_ABORT), alone or with its batch, and
    // nothing of the transaction is committed. A statement it ran after the rollback and
    // before returning would have been committed on its own: no write does that, as every
    // write lets a database error propagate (Router.write and the handlers inside it).

    /// Runs `body` in an IMMEDIATE transaction; commits if it returns, rolls back if it throws.
    static func transaction(_ db: Database, _ body: () throws -> Void) throws {
        try db.cachedStatement(sql: "BEGIN IMMEDIATE TRANSACTION").execute()
        do {
            try body()
            try requireTransaction(db)
            try db.cachedStatement(sql: "COMMIT TRANSACTION").execute()
        } catch {
            // GRDB's rollback: only when a transaction is still open (SQLite may have
            // rolled it back already), and not stopped by an interrupt.
            try? db.rollback()
            throw error
        }
    }

    /// Runs `body` in a savepoint of the open transaction; releases it if `body` returns,
    /// rolls back to it and releases it if `body` throws.
    static func savepoint(_ db: Database, _ body: () throws -> Void) throws {
        try db.cachedStatement(sql: "SAVEPOINT job").execute()
        do {
            try body()
            try requireTransaction(db)
            try db.cachedStatement(sql: "RELEASE SAVEPOINT job").execute()
        } catch {
            if db.isInsideTransaction {
                try? db.cachedStatement(sql: "ROLLBACK TRANSACTION TO SAVEPOINT job").execute()
                try? db.cachedStatement(sql: "RELEASE SAVEPOINT job").execute()
            }
            throw error
        }
    }

    /// A write that returned after SQLite rolled its transaction back (see above).
    private static func requireTransaction(_ db: Database) throws {
        guard db.isInsideTransaction else {
            throw DatabaseError(resultCode: .SQLITE_ABORT, message: "the transaction was rolled back during the write")
        }
    }
}

extension GroupCommitter {
    /// After SQLITE_FULL, at most every 5 s: fold the WAL back and truncate it, so a disk
    /// that has a little room again is not kept full by the log (runs on the commit queue).
    fileprivate func relieveFullDisk() {
        let now = ContinuousClock.now
        let due = lastRelief.withLock { last in
            if let previous = last, now - previous < .seconds(5) { return false }
            last = now
            return true
        }
        if due { ServiceDatabase.relieve(writer) }
    }
}

private final class ResultBox<T>: @unchecked Sendable {
    var value: T?
}
