// Reading and writing the users table. Every statement binds its parameters.
import Foundation
import GRDB
import Wire

struct User: Sendable {
    var id: String
    var username: String
    var email: String?
    var passwordHash: String
    var createdAt: Date
    /// IANA name, `UTC` unless the client said otherwise.
    var timeZone: String
    /// The records shard holding this user's records (Shards.swift).
    var shard: Int

    init(
        id: String, username: String, email: String?, passwordHash: String, createdAt: Date, timeZone: String = "UTC",
        shard: Int = 1
    ) {
        self.shard = shard
        self.id = id
        self.username = username
        self.email = email
        self.passwordHash = passwordHash
        self.createdAt = createdAt
        self.timeZone = timeZone
    }

    init(row: Row) {
        id = row["id"]
        username = row["username"]
        email = row["email"]
        passwordHash = row["passwordHash"]
        createdAt = Date(timeIntervalSince1970: row["createdAt"])
        timeZone = row["timeZone"]
        shard = row["shard"]
    }

    static func find(_ db: Database, username: String) throws -> User? {
        try Row.fetchOne(
            db, sql: "SELECT id, username, email, passwordHash, createdAt, timeZone, shard FROM users WHERE username = ?",
            arguments: [username]
        ).map(User.init(row:))
    }

    static func find(_ db: Database, id: String) throws -> User? {
        try Row.fetchOne(
            db, sql: "SELECT id, username, email, passwordHash, createdAt, timeZone, shard FROM users WHERE id = ?", arguments: [id]
        ).map(User.init(row:))
    }

    func insert(_ db: Database) throws {
        try db.execute(
            sql: "INSERT INTO users (id, username, email, passwordHash, createdAt, timeZone, shard) VALUES (?, ?, ?, ?, ?, ?, ?)",
            arguments: [id, username, email, passwordHash, createdAt.timeIntervalSince1970, timeZone, shard])
    }
}

extension Date {
    /// Whole milliseconds, so a time reads back from the database exactly as it went on the wire.
    var roundedToMilliseconds: Date {
        Date(timeIntervalSince1970: (timeIntervalSince1970 * 1000).rounded() / 1000)
    }
}
