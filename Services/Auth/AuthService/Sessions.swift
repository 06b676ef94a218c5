// Sessions: a token is 256 random bits shown to the client once as `lbk_<base64url>`; the
// database keeps only its SHA-256, so a copy of auth.sqlite signs nobody in. Auth resolves
// tokens for its own `.user` methods straight from its database (other services ask
// `auth.whoami` through their SessionCache).
import Foundation
import GRDB
import Runtime
import Storage
import Wire

enum Token {
    static let prefix = "lbk_"
    /// "lbk_" + 43 base64url characters (32 bytes, unpadded).
    static let length = 4 + 43

    static func make() -> (token: String, hash: String) {
        let token = prefix + Crypto.base64URL(Crypto.random(count: 32))
        return (token, Crypto.sha256Hex(token))
    }

    static func isWellFormed(_ token: String) -> Bool {
        token.utf8.count == length && token.hasPrefix(prefix)
    }
}

enum Session {
    struct Created: Sendable {
        var id: String
        var token: String
        var expiresAt: Date
    }

    /// Opens a session for `userId`; forgets that user's expired sessions while at it.
    static func create(_ db: Database, userId: String, now: Date, lifetime: TimeInterval) throws -> Created {
        let (token, hash) = Token.make()
        let id = ID.make(at: now)
        let expiresAt = now.addingTimeInterval(lifetime).roundedToMilliseconds
        try db.execute(
            sql: "DELETE FROM sessions WHERE userId = ? AND expiresAt <= ?",
            arguments: [userId, now.timeIntervalSince1970])
        try db.execute(
            sql: "INSERT INTO sessions (id, userId, tokenHash, createdAt, expiresAt) VALUES (?, ?, ?, ?, ?)",
            arguments: [id, userId, hash, now.timeIntervalSince1970, expiresAt.timeIntervalSince1970])
        return Created(id: id, token: token, expiresAt: expiresAt)
    }

    /// Deletes the user's sessions other than `keep`; returns the ids of those that had not
    /// expired yet (an expired one ended already: it is neither counted nor announced).
    static func revokeAll(_ db: Database, userId: String, except keep: String? = nil, now: Date) throws -> [String] {
        let ids = try String.fetchAll(
            db, sql: "SELECT id FROM sessions WHERE userId = ? AND id IS NOT ? AND expiresAt > ? ORDER BY id",
            arguments: [userId, keep, now.timeIntervalSince1970])
        try db.execute(sql: "DELETE FROM sessions WHERE userId = ? AND id IS NOT ?", arguments: [userId, keep])
        return ids
    }

    /// Refuses (as an ended session is refused) unless the caller's session still stands:
    /// a write whose slow part ran outside the transaction checks it again when it commits.
    static func requireLive(_ db: Database, _ context: RequestContext, userId: String, now: Date) throws {
        let live = try Bool.fetchOne(
            db, sql: "SELECT EXISTS (SELECT 1 FROM sessions WHERE id = ? AND userId = ? AND expiresAt > ?)",
            arguments: [context.principal?.sessionId ?? "", userId, now.timeIntervalSince1970])
        guard live == true else { throw DatabaseSessions.refused }
    }
}

/// Resolves tokens from the auth database: hash the token, find an unexpired session (in
/// memory when it was read since the last commit to sessions or users, Remembered.swift).
struct DatabaseSessions: SessionResolver {
    let reader: any DatabaseReader
    let now: @Sendable () -> Date
    let remembered: Remembered

    func resolve(token: String) async throws -> Principal {
        guard Token.isWellFormed(token) else { throw Self.refused }
        let hash = Crypto.sha256Hex(token)
        let now = self.now().timeIntervalSince1970
        if let principal = remembered.session(hash, now: now) { return principal }
        let generation = remembered.generation
        let session = try reader.pointRead { db in
            try Row.fetchOne(db.cachedStatement(sql: Self.query), arguments: [hash, now]).map {
                Remembered.Session(
                    principal: Principal(
                        userId: $0["userId"], username: $0["username"], sessionId: $0["sessionId"],
                        timeZone: $0["timeZone"], shard: $0["shard"]),
                    expiresAt: $0["expiresAt"])
            }
        }
        guard let session else { throw Self.refused }
        remembered.keep(session: session, tokenHash: hash, readAt: generation)
        return session.principal
    }

    static let query = """
        SELECT sessions.id AS sessionId, sessions.expiresAt AS expiresAt, users.id AS userId,
            users.username AS username, users.timeZone AS timeZone, users.shard AS shard
        FROM sessions JOIN users ON users.id = sessions.userId
        WHERE sessions.tokenHash = ? AND sessions.expiresAt > ?
        """

    static let refused = ServiceError.unauthenticated("session expired or revoked: sign in again")
}
