// auth.logout: revokes the calling session. The `session.revoked` event commits with the
// deletion, so every service's session cache drops the token at once.
import Contracts
import GRDB
import Runtime
import Storage
import Wire

extension Handlers {
    func logout(_ body: Empty, _ context: RequestContext, _ db: Database) throws -> Revoked {
        guard let principal = context.principal else { throw DatabaseSessions.refused }
        try db.execute(sql: "DELETE FROM sessions WHERE id = ?", arguments: [principal.sessionId])
        guard db.changesCount > 0 else { throw DatabaseSessions.refused }
        try Outbox.append(
            db, type: AuthEvents.sessionRevoked, userId: principal.userId,
            data: AuthEvents.SessionRevoked(userId: principal.userId, sessionIds: [principal.sessionId], reason: "logout"),
            at: now)
        return Revoked()
    }
}
