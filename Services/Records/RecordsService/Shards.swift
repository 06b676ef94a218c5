// A records process is one shard (Shared/Runtime/Shards.swift). Its guard runs around every
// route: a user who lives on another shard is refused with the redirect (`failed_precondition`,
// details `{reason: wrong_shard, shard}`), and while a user is being moved their writes are
// refused with `unavailable` and `retryAfterMs` (reads still answer from the source).
//
// Moving one user (`logbook shard move`, docs/operations.md "Moving a user"), driven by the
// CLI with the stack key:
//   source `records.shard.freeze`  — the user's writes are held from now on; waits for the
//                                    writes already running; answers the outbox head
//   source `records.shard.export`  — the user's rows, table by table, page by page (photos
//                                    with their files)
//   target `records.shard.import`  — the same rows, as they were (no events)
//   target `records.shard.commit`  — the target now answers for the user
//   auth   `auth.shard.set`        — sessions name the new shard
//   source `records.shard.finish`  — the user's rows go from the source, which redirects
//                                    from now on
// `records.shard.abort` undoes an unfinished move on either side. The state of a user on a
// shard (moving, moved, arriving, arrived) is a row of `shardUser`, so a restart keeps it.
//
// Events: a move publishes none. The consumers (analytics, store, weather-fetcher) already
// applied every event the source published for the user (the CLI waits for them to pass
// the head `freeze` answered before the user's writes go to the target), their projections
// are keyed by the records' ids, which do not change, and the user's later events come from
// the target, a producer of its own with its own checkpoint. The source keeps the events it
// published (they are not redacted by a move), so a rebuild from every shard's events comes
// out the same.
import Contracts
import Foundation
import GRDB
import Runtime
import Storage
import Synchronization
import Wire

public final class ShardGuard: Sendable {
    public let shard: Int
    let database: any DatabaseWriter

    enum State: Sendable, Equatable {
        /// Leaving for `shard`: writes held.
        case moving(Int)
        /// Gone to `shard`: redirect.
        case moved(Int)
        /// Coming from `shard`: refused until committed.
        case arriving(Int)
        /// Came from `shard`: answered here whatever an old session says.
        case arrived(Int)

        init?(_ text: String, _ shard: Int) {
            switch text {
            case "moving": self = .moving(shard)
            case "moved": self = .moved(shard)
            case "arriving": self = .arriving(shard)
            case "arrived": self = .arrived(shard)
            default: return nil
            }
        }

        var text: String {
            switch self {
            case .moving: "moving"
            case .moved: "moved"
            case .arriving: "arriving"
            case .arrived: "arrived"
            }
        }

        var otherShard: Int {
            switch self {
            case .moving(let s), .moved(let s), .arriving(let s), .arrived(let s): s
            }
        }
    }

    private struct Inner {
        var states: [String: State] = [:]
        var inflight: [String: Int] = [:]
    }

    private let inner = Mutex(Inner())
    /// How long a held write is told to wait before trying again.
    static let retryAfterMs = 1000

    public init(shard: Int, database: any DatabaseWriter) throws {
        self.shard = shard
        self.database = database
        let rows = try database.read { db in try Row.fetchAll(db, sql: "SELECT userId, state, shard FROM shardUser") }
        var states: [String: State] = [:]
        for row in rows {
            if let state = State(row["state"], row["shard"]) { states[row["userId"]] = state }
        }
        inner.withLock { $0.states = states }
    }

    func state(_ userId: String) -> State? { inner.withLock { $0.states[userId] } }

    /// Runs around every route (Router.wrapped).
    @Sendable public func around(
        _ route: Route, _ frame: Data, _ context: RequestContext, _ handle: @Sendable () async throws -> Data
    ) async throws -> Data {
        guard let principal = context.principal else { return try await handle() }
        let userId = principal.userId
        let write = route.kind == .write
        let held = try inner.withLock { inner -> Bool in
            switch inner.states[userId] {
            case .moved(let to)?:
                throw ShardRedirect.error(userShard: to, here: shard)
            case .arriving?:
                throw Self.held
            case .moving?:
                if write { return true }
            case .arrived?:
                break
            case nil:
                if principal.recordsShard != shard {
                    throw ShardRedirect.error(userShard: principal.recordsShard, here: shard)
                }
            }
            if write { inner.inflight[userId, default: 0] += 1 }
            return false
        }
        if held {
            // A retry of a write that committed before the hold (its answer lost on the way) is
            // answered from the log, not refused: refused, it would read as "not done", and the
            // user would run the command again under a new key and write it twice.
            let logged = try await database.read { db in
                try Router.loggedAnswer(db, method: route.method, frame: frame, context: context)
            }
            if let logged { return logged }
            throw Self.held
        }
        guard write else { return try await handle() }
        defer {
            inner.withLock {
                let left = ($0.inflight[userId] ?? 1) - 1
                $0.inflight[userId] = left > 0 ? left : nil
            }
        }
        return try await handle()
    }

    static var held: ServiceError {
        ServiceError(
            .unavailable, "your records are being moved to another shard; try again in a few seconds",
            details: ["retryAfterMs": .number(.init(retryAfterMs)), "reason": "shard_move"])
    }

    /// Sets (or clears) the user's state, in the database and in memory.
    func set(_ userId: String, _ state: State?, _ db: Database) throws {
        if let state {
            try db.execute(
                sql: """
                    INSERT INTO shardUser (userId, state, shard, since) VALUES (?, ?, ?, ?)
                    ON CONFLICT (userId) DO UPDATE SET state = excluded.state, shard = excluded.shard, since = excluded.since
                    """,
                arguments: [userId, state.text, state.otherShard, Date().ms])
        } else {
            try db.execute(sql: "DELETE FROM shardUser WHERE userId = ?", arguments: [userId])
        }
    }

    func remember(_ userId: String, _ state: State?) {
        inner.withLock { $0.states[userId] = state }
    }

    /// Holds the user's writes and waits (up to `timeout`) until those already admitted are done.
    func freeze(_ userId: String, to target: Int, timeout: Duration = .seconds(10)) async throws {
        let previous = state(userId)
        switch previous {
        case .moving(let to)? where to == target: break
        case .moved?, .arriving?, .moving?:
            throw ServiceError(
                .failedPrecondition, "this user is \(previous!.text) (shard \(previous!.otherShard)); finish or abort that first")
        case .arrived?, nil: break
        }
        remember(userId, .moving(target))
        do {
            try await database.write { db in try self.set(userId, .moving(target), db) }
        } catch {
            remember(userId, previous)
            throw error
        }
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        while inner.withLock({ ($0.inflight[userId] ?? 0) > 0 }) {
            guard clock.now < deadline else {
                throw ServiceError(.unavailable, "writes of this user are still running; try the move again")
            }
            try await Task.sleep(for: .milliseconds(5))
        }
    }
}

// MARK: The move's methods

struct ShardUserBody: Codable, Sendable {
    var stackKey: String?
    var userId: String
    /// freeze, finish: the target; import, commit: the source.
    var shard: Int
}

struct ShardFreezeResult: Codable, Sendable {
    /// The source's outbox head once the user's writes stopped: consumers past it have seen
    /// every event of the user's data here.
    var head: Int64
    /// The user's rows here (they cannot change while held): the target must end with as many.
    var rows: Int
}

struct ShardExportBody: Codable, Sendable {
    var stackKey: String?
    var userId: String
    var table: String
    /// The last rowid of the previous page (0 first).
    var after: Int64?
    /// `idempotency` only: the last key of the previous page (the `nextKey` it answered).
    var afterKey: String?
    var limit: Int?
}

struct ShardExportResult: Codable, Sendable {
    var table: String
    var rows: [JSONValue]
    /// Files of the page's photos (`photo` table): hash → base64.
    var files: [String: String]?
    /// Pass as `after` for the next page; absent when this was the last.
    var next: Int64?
    /// `idempotency` only: pass as `afterKey` for the next page (absent with `next`).
    var nextKey: String?
}

struct ShardImportBody: Codable, Sendable {
    var stackKey: String?
    var userId: String
    /// The source shard.
    var shard: Int
    var table: String
    var rows: [JSONValue]
    var files: [String: String]?
}

struct ShardCountResult: Codable, Sendable {
    var userId: String
    var rows: Int
}

extension RecordsService {
    /// The user's tables in the order a move copies them (parents before children).
    /// `idempotency` (the runtime's log of the user's write keys) goes too, so that a retry
    /// of a write the source applied is answered by the target, not applied again.
    static let moveTables = [
        "vehicle", "fillup", "photo", "fishCatch", "expense", "attendance", "activity", "timeEntry", "timer", "idempotency",
    ]

    /// The column naming the user in a moved table (photos are shared by content: none).
    static func ownerColumn(_ table: String) -> String? {
        switch table {
        case "photo": nil
        case "idempotency": "principal"
        default: "userId"
        }
    }

    /// The move's methods (operator only: the stack key in the body), on `router`.
    static func registerShardMoves(_ router: inout Router, guard shardGuard: ShardGuard, photos: PhotoStore) {
        let database = shardGuard.database
        let here = shardGuard.shard
        router.ownWrite("records.shard.freeze", access: .public) { (body: ShardUserBody, _) -> ShardFreezeResult in
            try StackMember.require(body.stackKey)
            guard body.shard != here else { throw ServiceError.invalid("shard", "is this shard") }
            try await shardGuard.freeze(body.userId, to: body.shard)
            return try await database.read { db in
                ShardFreezeResult(
                    head: try Int64.fetchOne(db, sql: "SELECT COALESCE(MAX(seq), 0) FROM outbox") ?? 0,
                    rows: try userRowCount(db, userId: body.userId))
            }
        }
        router.read("records.shard.export", access: .public, maxBytes: Router.defaultMaxBytes) {
            (body: ShardExportBody, _) -> ShardExportResult in
            try StackMember.require(body.stackKey)
            guard case .moving? = shardGuard.state(body.userId) else {
                throw ServiceError(.failedPrecondition, "freeze the user first (records.shard.freeze)")
            }
            guard moveTables.contains(body.table) else {
                throw ServiceError.invalid("table", "must be one of \(moveTables.joined(separator: ", "))")
            }
            let limit = min(max(body.limit ?? 500, 1), 2000)
            return try await exportPage(
                database: database, photos: photos, userId: body.userId, table: body.table, after: body.after ?? 0,
                afterKey: body.afterKey, limit: limit)
        }
        router.ownWrite("records.shard.import", access: .public, maxBytes: 64 * 1024 * 1024) {
            (body: ShardImportBody, _) -> ShardCountResult in
            try StackMember.require(body.stackKey)
            guard body.shard != here else { throw ServiceError.invalid("shard", "is this shard") }
            guard moveTables.contains(body.table) else {
                throw ServiceError.invalid("table", "must be one of \(moveTables.joined(separator: ", "))")
            }
            switch shardGuard.state(body.userId) {
            case .arriving?: break
            case .moving?:
                throw ServiceError(.failedPrecondition, "this user is being moved already; finish or abort that first")
            case .moved?, .arrived?, nil:
                // A user who has rows here already is not arriving from anywhere.
                let rows = try await database.read { db in try userRowCount(db, userId: body.userId) }
                guard rows == 0 else {
                    throw ServiceError(.alreadyExists, "this shard already holds \(rows) rows of this user")
                }
                try await database.write { db in try shardGuard.set(body.userId, .arriving(body.shard), db) }
                shardGuard.remember(body.userId, .arriving(body.shard))
            }
            for (hash, text) in body.files ?? [:] {
                guard let data = Data(base64Encoded: text) else { throw ServiceError.invalid("files", "must be base64") }
                try await photos.importFile(hash, data)
            }
            let count = try await database.write { db in
                try importRows(db, userId: body.userId, table: body.table, rows: body.rows)
            }
            return ShardCountResult(userId: body.userId, rows: count)
        }
        router.ownWrite("records.shard.commit", access: .public) { (body: ShardUserBody, _) -> ShardCountResult in
            try StackMember.require(body.stackKey)
            switch shardGuard.state(body.userId) {
            case .arriving?, .arrived?: break
            case .moving?: throw ServiceError(.failedPrecondition, "this user is moving away from this shard")
            case .moved?, nil:
                // A user without a row anywhere (registered, nothing written yet) has nothing
                // to import: only the answering moves.
                let rows = try await database.read { db in try userRowCount(db, userId: body.userId) }
                guard rows == 0 else { throw ServiceError(.failedPrecondition, "nothing of this user was imported here") }
            }
            let rows = try await database.write { db in
                try shardGuard.set(body.userId, .arrived(body.shard), db)
                return try userRowCount(db, userId: body.userId)
            }
            shardGuard.remember(body.userId, .arrived(body.shard))
            return ShardCountResult(userId: body.userId, rows: rows)
        }
        router.ownWrite("records.shard.finish", access: .public) { (body: ShardUserBody, _) -> ShardCountResult in
            try StackMember.require(body.stackKey)
            switch shardGuard.state(body.userId) {
            case .moving(let to)? where to == body.shard: break
            case .moved(let to)? where to == body.shard: return ShardCountResult(userId: body.userId, rows: 0)
            default: throw ServiceError(.failedPrecondition, "this user is not moving to shard \(body.shard)")
            }
            try await database.write { db in
                try removeUserRows(db, userId: body.userId)
                try shardGuard.set(body.userId, .moved(body.shard), db)
            }
            shardGuard.remember(body.userId, .moved(body.shard))
            return ShardCountResult(userId: body.userId, rows: 0)
        }
        router.ownWrite("records.shard.abort", access: .public) { (body: ShardUserBody, _) -> ShardCountResult in
            try StackMember.require(body.stackKey)
            switch shardGuard.state(body.userId) {
            case .moving?:
                try await database.write { db in try shardGuard.set(body.userId, nil, db) }
                shardGuard.remember(body.userId, nil)
            case .arriving?, .arrived?:
                // Committed too: the CLI aborts only while auth still names the source, and a
                // target left answering for the user would serve a stale copy beside the source.
                try await database.write { db in
                    try removeUserRows(db, userId: body.userId)
                    try shardGuard.set(body.userId, nil, db)
                }
                shardGuard.remember(body.userId, nil)
            case .moved?, nil:
                break
            }
            let rows = try await database.read { db in try userRowCount(db, userId: body.userId) }
            return ShardCountResult(userId: body.userId, rows: rows)
        }
    }

    /// Rows of the user in every table (photos are not theirs alone and are not counted).
    static func userRowCount(_ db: Database, userId: String) throws -> Int {
        var total = 0
        for table in moveTables where ownerColumn(table) == "userId" {
            // `table` is one of `moveTables` (identifiers cannot be bound); the value is bound.
            total += try Int.fetchOne(
                db, sql: "SELECT COUNT(*) FROM \(table.quotedDatabaseIdentifier) WHERE userId = ?", arguments: [userId]) ?? 0
        }
        return total
    }

    /// The user's rows leave this shard (moved elsewhere): no events, nothing redacted (the
    /// events published here stay history; docs/operations.md, "Moving a user").
    static func removeUserRows(_ db: Database, userId: String) throws {
        for sql in Schema.userTables {
            try db.execute(sql: sql, arguments: [userId])
        }
        try PhotoStore.deleteUnreferenced(db)
        try Idempotency.purge(db, principal: userId)
    }

    /// The columns a table really has (names come only from here, never from a request).
    static func columns(_ db: Database, _ table: String) throws -> [String] {
        try db.columns(in: table).map(\.name)
    }

    static func exportPage(
        database: any DatabaseWriter, photos: PhotoStore, userId: String, table: String, after: Int64,
        afterKey: String? = nil, limit: Int
    ) async throws -> ShardExportResult {
        if table == "idempotency" {
            // No rowid here: pages by key, after the previous page's last. The hourly prune
            // (IdempotencyJanitor) may forget old keys of a held user between two pages; by
            // position, the keys after them would then slide back past the page boundary and
            // never be copied, and a retry of one of those writes would be applied again on
            // the target. A caller without `afterKey` (an older CLI) still pages by position.
            let rows = try database.read { db in
                if let afterKey {
                    return try Row.fetchAll(
                        db, sql: "SELECT * FROM idempotency WHERE principal = ? AND key > ? ORDER BY key LIMIT ?",
                        arguments: [userId, afterKey, limit])
                }
                return try Row.fetchAll(
                    db, sql: "SELECT * FROM idempotency WHERE principal = ? ORDER BY key LIMIT ? OFFSET ?",
                    arguments: [userId, limit, after])
            }
            let more = rows.count == limit
            return ShardExportResult(
                table: table, rows: try rows.map(json), files: nil, next: more ? after + Int64(limit) : nil,
                nextKey: more ? rows.last.map { $0["key"] as String } : nil)
        }
        if table == "photo" {
            // The photos the user's catches show, with their files: one photo a page (a file
            // may be 16 MiB).
            let rows = try database.read { db in
                try Row.fetchAll(
                    db,
                    sql: """
                        SELECT * FROM photo WHERE hash IN (SELECT photoHash FROM fishCatch WHERE userId = ? AND photoHash IS NOT NULL)
                        ORDER BY hash LIMIT 1 OFFSET ?
                        """,
                    arguments: [userId, after])
            }
            var files: [String: String] = [:]
            for row in rows {
                for hash in [row["hash"] as String, row["thumbHash"] as String] {
                    if let data = try await photos.read(hash) { files[hash] = data.base64EncodedString() }
                }
            }
            return ShardExportResult(table: table, rows: try rows.map(json), files: files, next: rows.isEmpty ? nil : after + 1)
        }
        // `table` is one of `moveTables` (checked above); identifiers cannot be bound, values are.
        let rows = try database.read { db in
            try Row.fetchAll(
                db, sql: "SELECT rowid AS moveRowid, * FROM \(table.quotedDatabaseIdentifier) WHERE userId = ? AND rowid > ? ORDER BY rowid LIMIT ?",
                arguments: [userId, after, limit])
        }
        let last: Int64? = rows.last.map { $0["moveRowid"] }
        let objects = try rows.map { row -> JSONValue in
            guard case .object(var object) = try json(row) else { return .null }
            object["moveRowid"] = nil
            return .object(object)
        }
        return ShardExportResult(table: table, rows: objects, files: nil, next: rows.count == limit ? last : nil)
    }

    static func json(_ row: Row) throws -> JSONValue {
        var object: [String: JSONValue] = [:]
        for (column, value) in row {
            switch value.storage {
            case .null: object[column] = .null
            case .int64(let n):
                // (a JSON number keeps its digits end to end: any Int64 moves exactly)
                object[column] = .number(.init(n))
            case .double(let d): object[column] = .object(["real": .number(.init(d))])
            case .string(let s): object[column] = .string(s)
            case .blob(let data): object[column] = .object(["blob": .string(data.base64EncodedString())])
            }
        }
        return .object(object)
    }

    static func importRows(_ db: Database, userId: String, table: String, rows: [JSONValue]) throws -> Int {
        let known = Set(try columns(db, table))
        var count = 0
        for row in rows {
            guard case .object(let object) = row else { throw ServiceError.invalid("rows", "each row must be an object") }
            if let owner = ownerColumn(table) {
                guard object[owner]?.stringValue == userId else {
                    throw ServiceError.invalid("rows", "a row of another user")
                }
            }
            let names = object.keys.sorted()
            guard !names.isEmpty, names.allSatisfy(known.contains) else {
                throw ServiceError.invalid("rows", "a column \(table) does not have")
            }
            var arguments = StatementArguments()
            for name in names {
                switch object[name]! {
                case .null: arguments += [DatabaseValue.null]
                case .number(let n):
                    guard let integer = n.int64 else { throw ServiceError.invalid("rows", "\(name): integers only") }
                    arguments += [integer]
                case .object(let tagged):
                    if let d = tagged["real"]?.doubleValue {
                        arguments += [d]
                    } else if let text = tagged["blob"]?.stringValue, let data = Data(base64Encoded: text) {
                        arguments += [data]
                    } else {
                        throw ServiceError.invalid("rows", "\(name): not a column value")
                    }
                case .string(let s): arguments += [s]
                default: throw ServiceError.invalid("rows", "\(name): not a column value")
                }
            }
            let columns = names.map(\.quotedDatabaseIdentifier).joined(separator: ", ")
            let marks = Array(repeating: "?", count: names.count).joined(separator: ", ")
            // Table and column names were checked against the schema above; values are bound.
            try db.execute(
                sql: "INSERT INTO \(table.quotedDatabaseIdentifier) (\(columns)) VALUES (\(marks)) ON CONFLICT DO NOTHING", arguments: arguments)
            count += db.changesCount
        }
        return count
    }
}
