// The event outbox: an event is written in the same SQLite transaction as the change it
// describes, numbered by a per-service sequence, then published. Consumers replay what
// they missed with `events.since`. The outbox keeps every event, so a consumer whose
// database was wiped can rebuild from sequence 0.
import Foundation
import GRDB
import Wire

/// One event as it travels: published on PUB and returned by `events.since`.
public struct Event: Codable, Sendable, Equatable {
    /// The producing service's sequence number (1, 2, 3, … with no gaps).
    public var seq: Int64
    /// Dotted type: `session.revoked`, `user.deleted`, `fillup.created`, …
    public var type: String
    /// The user the event is about, when it is about one.
    public var userId: String?
    public var at: Date
    public var data: JSONValue

    public init(seq: Int64, type: String, userId: String?, at: Date, data: JSONValue) {
        self.seq = seq
        self.type = type
        self.userId = userId
        self.at = at
        self.data = data
    }

    /// Decodes the payload as a typed value.
    public func decode<T: Decodable>(_ type: T.Type = T.self) throws -> T { try data.decode(T.self) }
}

public enum Outbox {
    /// Appends an event inside the caller's transaction; returns its sequence number.
    @discardableResult
    public static func append(
        _ db: Database, type: String, userId: String?, data: some Encodable, at: Date = Date()
    ) throws -> Int64 {
        let payload = try WireCoding.encode(data)
        // Cached statements (compiled once per connection): these run on every write.
        try db.cachedStatement(sql: "INSERT INTO outbox (type, userId, at, data) VALUES (?, ?, ?, ?)")
            .execute(arguments: [type, userId, at.timeIntervalSince1970, payload])
        return db.lastInsertedRowID
    }

    /// Events with a sequence number above `after`, oldest first, at most `limit`.
    public static func since(_ db: Database, after: Int64, limit: Int) throws -> [Event] {
        let rows = try Row.fetchAll(
            db, sql: "SELECT seq, type, userId, at, data FROM outbox WHERE seq > ? ORDER BY seq LIMIT ?",
            arguments: [after, limit])
        return try rows.map { row in
            let data: Data = row["data"]
            return Event(
                seq: row["seq"], type: row["type"], userId: row["userId"],
                at: Date(timeIntervalSince1970: row["at"]),
                data: try WireCoding.decode(JSONValue.self, from: data))
        }
    }

    /// The type a redacted event takes: consumers skip types they do not know.
    public static let redactedType = "redacted"

    /// Blanks the payload of every event about `userId` (account deletion), keeping their
    /// sequence numbers so the stream has no gaps: a consumer replaying from 0 sees
    /// `{"type":"redacted","userId":null,"data":{}}` where the user's data was, not even
    /// whose it was.
    public static func redact(_ db: Database, userId: String) throws {
        try db.execute(
            sql: "UPDATE outbox SET type = ?, data = ?, userId = NULL WHERE userId = ?",
            arguments: [redactedType, Data("{}".utf8), userId])
    }

    /// Events after `after` as their wire JSON, built around the stored payload bytes
    /// without decoding them (the publisher's hot path).
    public static func encodedSince(_ db: Database, after: Int64, limit: Int) throws -> [(seq: Int64, type: String, json: Data)] {
        let rows = try Row.fetchAll(
            db.cachedStatement(sql: "SELECT seq, type, userId, at, data FROM outbox WHERE seq > ? ORDER BY seq LIMIT ?"),
            arguments: [after, limit])
        return rows.map { row in
            // By position (the SELECT's order): a column found by name is looked up
            // case-insensitively, a lowercased copy of the name each time.
            let seq: Int64 = row[0]
            let type: String = row[1]
            let userId: String? = row[2]
            let at = WireTime.format(Date(timeIntervalSince1970: row[3]))
            let data: Data = row[4]
            // The same fields, in the same (sorted) order, as encoding an `Event`; the texts
            // quoted as the shared encoder quotes them (CanonicalJSON.quoted), written as bytes
            // and made Data once (Shared/Wire/DataText.swift).
            var json: [UInt8] = []
            json.reserveCapacity(data.count + 160)
            json.appendUTF8("{\"at\":")
            json.appendQuoted(at)
            json.appendUTF8(",\"data\":")
            json.append(data)
            json.appendUTF8(",\"seq\":")
            json.appendUTF8(String(seq))
            json.appendUTF8(",\"type\":")
            json.appendQuoted(type)
            if let userId {
                json.appendUTF8(",\"userId\":")
                json.appendQuoted(userId)
            }
            json.appendUTF8("}")
            return (seq, type, Data(json))
        }
    }

    /// The highest sequence number written so far (0 when none).
    public static func lastSequence(_ db: Database) throws -> Int64 {
        try Int64.fetchOne(db, sql: "SELECT MAX(seq) FROM outbox") ?? 0
    }

    /// This outbox's history (nil before the shared migration that makes it ran).
    public static func history(_ db: Database) throws -> OutboxHistory? {
        guard let row = try Row.fetchOne(db, sql: "SELECT id, forkedAt FROM outboxHistory WHERE one = 1") else {
            return nil
        }
        return OutboxHistory(id: row["id"], forkedAt: row["forkedAt"])
    }

    /// Starts a new history, parting from the one before at the last event there is: done
    /// when the database is made, and by `logbook restore` on each copy it puts in place
    /// (the events after the backup's last will be new ones under numbers that consumers
    /// already applied from the history the restore replaced).
    public static func startHistory(_ db: Database) throws {
        let id = Hex.encode(Crypto.random(count: 16))
        try db.execute(
            sql: """
                INSERT INTO outboxHistory (one, id, forkedAt) VALUES (1, ?, (SELECT coalesce(max(seq), 0) FROM outbox))
                ON CONFLICT(one) DO UPDATE SET id = excluded.id, forkedAt = excluded.forkedAt
                """, arguments: [id])
    }
}

/// Which history an outbox's sequence numbers belong to: `id` is new whenever the database
/// is made again (a rebuild) or put back from a backup (a restore), and `forkedAt` is the
/// last sequence number the new history shares with the one before (0 for a new
/// database). A consumer that finds its producer's history changed goes back to
/// `forkedAt` (or stays where it is, when behind it) and replays from there: without it,
/// the numbers a rebuilt or restored producer uses again would be skipped as duplicates.
public struct OutboxHistory: Codable, Sendable, Equatable {
    public var id: String
    public var forkedAt: Int64

    public init(id: String, forkedAt: Int64) {
        self.id = id
        self.forkedAt = forkedAt
    }
}

/// A consumer's position in a producer's event stream, stored in the consumer's database in
/// the same transaction as the projection it updates.
public enum Checkpoint {
    public static func get(_ db: Database, producer: String) throws -> Int64 {
        try Int64.fetchOne(
            db.cachedStatement(sql: "SELECT seq FROM eventCheckpoint WHERE producer = ?"), arguments: [producer]) ?? 0
    }

    public static func set(_ db: Database, producer: String, seq: Int64) throws {
        try db.cachedStatement(
            sql: """
                INSERT INTO eventCheckpoint (producer, seq) VALUES (?, ?)
                ON CONFLICT(producer) DO UPDATE SET seq = excluded.seq
                """
        ).execute(arguments: [producer, seq])
    }

    /// The producer's outbox history the checkpoint counts in (nil: not known yet).
    public static func history(_ db: Database, producer: String) throws -> String? {
        try String.fetchOne(db, sql: "SELECT history FROM eventCheckpoint WHERE producer = ?", arguments: [producer])
    }

    /// Moves the checkpoint to `seq` of the producer's history `history`, in one write.
    public static func set(_ db: Database, producer: String, seq: Int64, history: String) throws {
        try db.execute(
            sql: """
                INSERT INTO eventCheckpoint (producer, seq, history) VALUES (?, ?, ?)
                ON CONFLICT(producer) DO UPDATE SET seq = excluded.seq, history = excluded.history
                """, arguments: [producer, seq, history])
    }
}

/// Idempotent writes: the first result for (principal, key) is kept with a hash of the
/// request; the same key and request returns that result again, the same key with a
/// different request is refused with `already_exists`.
public enum Idempotency {
    public enum Lookup: Sendable {
        case new
        case replay(Data)
    }

    public static func lookup(
        _ db: Database, principal: String, key: String, requestHash: String
    ) throws -> Lookup {
        guard
            let row = try Row.fetchOne(
                db.cachedStatement(sql: "SELECT requestHash, method, result FROM idempotency WHERE principal = ? AND key = ?"),
                arguments: [principal, key])
        else { return .new }
        let storedHash: String = row["requestHash"]
        guard storedHash == requestHash else {
            let method: String = row["method"]
            throw ServiceError(
                .alreadyExists,
                "idempotency key \"\(key)\" was already used for a different request (\(method))",
                field: "idempotencyKey")
        }
        return .replay(row["result"])
    }

    public static func record(
        _ db: Database, principal: String, key: String, requestHash: String, method: String, result: Data,
        at: Date = Date()
    ) throws {
        try db.cachedStatement(
            sql: """
                INSERT INTO idempotency (principal, key, requestHash, method, result, createdAt)
                VALUES (?, ?, ?, ?, ?, ?)
                """
        ).execute(arguments: [principal, key, requestHash, method, result, at.timeIntervalSince1970])
    }

    /// Forgets keys recorded before `cutoff`; returns how many.
    @discardableResult
    public static func prune(_ db: Database, before cutoff: Date) throws -> Int {
        try db.execute(sql: "DELETE FROM idempotency WHERE createdAt < ?", arguments: [cutoff.timeIntervalSince1970])
        return db.changesCount
    }

    /// Forgets everything a user's keys recorded (account deletion).
    public static func purge(_ db: Database, principal: String) throws {
        try db.execute(sql: "DELETE FROM idempotency WHERE principal = ?", arguments: [principal])
    }

    /// Forgets what `method`, called with no one signed in (principal ""), answered about
    /// `resultUserId` (its result's `userId`): account deletion, for the registration.
    public static func purgeAnonymous(_ db: Database, method: String, resultUserId: String) throws {
        try db.execute(
            sql: """
                DELETE FROM idempotency WHERE principal = '' AND method = ?
                    AND json_extract(CAST(result AS TEXT), '$.userId') = ?
                """, arguments: [method, resultUserId])
    }
}

/// The users whose `user.deleted` a service has applied (`deletedUser`, made by each
/// service's own migration with `DeletedUsers.table`). Auth's stream is read apart from
/// the others, so an event, a job or a write of a deleted user can come after the purge;
/// a service that keeps this refuses or skips it rather than write that user's data again.
public enum DeletedUsers {
    /// The table, as every service that keeps it makes it.
    public static let table = """
        CREATE TABLE deletedUser (
            userId TEXT PRIMARY KEY NOT NULL,
            deletedAt DOUBLE NOT NULL
        ) WITHOUT ROWID;
        """

    /// Keeps `userId` as deleted (once; the first time stays).
    public static func remember(_ db: Database, userId: String, at: Date) throws {
        try db.execute(
            sql: "INSERT INTO deletedUser (userId, deletedAt) VALUES (?, ?) ON CONFLICT(userId) DO NOTHING",
            arguments: [userId, at.timeIntervalSince1970])
    }

    public static func contains(_ db: Database, userId: String) throws -> Bool {
        try Bool.fetchOne(
            db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM deletedUser WHERE userId = ?)"), arguments: [userId])
            ?? false
    }
}
