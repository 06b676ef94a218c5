// Known devices: after a successful login the client gets a device token (`lbd_…`, shown
// once; only its SHA-256 is stored) and presents it on its next logins. A login from a
// known device is throttled on that device's own failures, not the username's, skips the
// global failed-attempt budget and hashes on a lane of its own: strangers guessing the
// owner's password can neither lock the owner out nor starve the owner's login of hashing.
import Foundation
import GRDB
import Wire

enum Devices {
    static let prefix = "lbd_"
    /// "lbd_" + 43 base64url characters (32 bytes, unpadded).
    static let length = 4 + 43
    /// Devices kept per user; the least recently used beyond it are forgotten.
    static let perUser = 50

    static func isWellFormed(_ token: String) -> Bool {
        token.utf8.count == length && token.hasPrefix(prefix)
    }

    /// The hash of `token` when it is a known device of `userId`, else nil.
    static func known(_ db: Database, token: String?, userId: String) throws -> String? {
        guard let token, isWellFormed(token) else { return nil }
        let hash = Crypto.sha256Hex(token)
        let found = try Bool.fetchOne(
            db, sql: "SELECT 1 FROM devices WHERE tokenHash = ? AND userId = ?", arguments: [hash, userId]) ?? false
        return found ? hash : nil
    }

    /// Registers a new device for `userId`; returns its token.
    static func create(_ db: Database, userId: String, now: Date) throws -> String {
        let token = prefix + Crypto.base64URL(Crypto.random(count: 32))
        try db.execute(
            sql: "INSERT INTO devices (tokenHash, userId, createdAt, lastUsedAt) VALUES (?, ?, ?, ?)",
            arguments: [Crypto.sha256Hex(token), userId, now.timeIntervalSince1970, now.timeIntervalSince1970])
        try db.execute(
            sql: """
                DELETE FROM devices WHERE userId = ? AND tokenHash NOT IN
                    (SELECT tokenHash FROM devices WHERE userId = ? ORDER BY lastUsedAt DESC LIMIT ?)
                """,
            arguments: [userId, userId, perUser])
        return token
    }

    static func touch(_ db: Database, hash: String, now: Date) throws {
        try db.execute(
            sql: "UPDATE devices SET lastUsedAt = ? WHERE tokenHash = ?", arguments: [now.timeIntervalSince1970, hash])
    }
}
