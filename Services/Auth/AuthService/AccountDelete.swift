// auth.account.delete: needs the password (throttled like a login); removes the user and
// every session (ON DELETE CASCADE) and announces it: `session.revoked` so caches drop the
// tokens, then `user.deleted` so every service purges the user's data.
import Contracts
import Foundation
import GRDB
import Runtime
import Storage
import Wire

extension Handlers {
    func prepareAccountDelete(_ body: AccountDelete, _ context: RequestContext) async throws -> User {
        let user = try await currentUser(context)
        guard try await checkPassword(
            body.password, for: user, username: user.username, client: .session(context.principal?.sessionId ?? ""),
            context: context) else {
            throw ServiceError(.permissionDenied, "password: is not this account's password", field: "password")
        }
        return user
    }

    func commitAccountDelete(_ user: User, _ context: RequestContext, _ db: Database) throws -> Deleted {
        // While the password was checked, the session may have been ended (a logout, another
        // session's password change) or the password changed: only what was checked deletes.
        try Session.requireLive(db, context, userId: user.id, now: now)
        let sessions = try Session.revokeAll(db, userId: user.id, now: now)
        try db.execute(sql: "DELETE FROM users WHERE id = ? AND passwordHash = ?", arguments: [user.id, user.passwordHash])
        guard db.changesCount == 1 else {
            throw ServiceError(
                .failedPrecondition,
                "the password was changed (or its hash made again at a new cost) meanwhile: nothing was deleted; try again")
        }
        try LoginFailures.clear(db, username: user.username)
        try Idempotency.purge(db, principal: user.id)
        // The registration that made the account was kept under no principal (nobody was
        // signed in); its answer names the account.
        try Idempotency.purgeAnonymous(db, method: AuthMethods.register.name, resultUserId: user.id)
        try Outbox.redact(db, userId: user.id)  // before the two events below, which must stay
        let now = self.now
        try Outbox.append(
            db, type: AuthEvents.sessionRevoked, userId: user.id,
            data: AuthEvents.SessionRevoked(userId: user.id, sessionIds: sessions, reason: "account_deleted"), at: now)
        try Outbox.append(db, type: AuthEvents.userDeleted, userId: user.id, data: AuthEvents.UserDeleted(userId: user.id), at: now)
        context.logger.info("account deleted")
        return Deleted()
    }
}
