// auth.password.change: needs the current password (throttled like a login), then stores
// the new hash and revokes every other session of the user; the calling session stays.
import Contracts
import Foundation
import GRDB
import Runtime
import Storage
import Wire

extension Handlers {
    struct NewPassword: Sendable {
        var user: User
        var hash: String
    }

    func preparePasswordChange(_ body: PasswordChange, _ context: RequestContext) async throws -> NewPassword {
        try AccountRules.password(body.newPassword, field: "newPassword")
        let user = try await currentUser(context)
        guard try await checkPassword(
            body.currentPassword, for: user, username: user.username, client: .session(context.principal?.sessionId ?? ""),
            context: context) else {
            throw ServiceError(
                .permissionDenied, "currentPassword: is not this account's password", field: "currentPassword")
        }
        return NewPassword(user: user, hash: try await passwords.hash(body.newPassword))
    }

    func commitPasswordChange(_ change: NewPassword, _ context: RequestContext, _ db: Database) throws
        -> PasswordChangeResult
    {
        // Only if the session still stands and nobody changed the password since it was checked.
        try Session.requireLive(db, context, userId: change.user.id, now: now)
        try db.execute(
            sql: "UPDATE users SET passwordHash = ? WHERE id = ? AND passwordHash = ?",
            arguments: [change.hash, change.user.id, change.user.passwordHash])
        guard db.changesCount == 1 else {
            throw ServiceError(.failedPrecondition, "the password was changed by another request meanwhile; try again")
        }
        let revoked = try Session.revokeAll(db, userId: change.user.id, except: context.principal?.sessionId, now: now)
        if !revoked.isEmpty {
            try Outbox.append(
                db, type: AuthEvents.sessionRevoked, userId: change.user.id,
                data: AuthEvents.SessionRevoked(userId: change.user.id, sessionIds: revoked, reason: "password_changed"),
                at: now)
        }
        context.logger.info("password changed", metadata: ["auth.revokedSessions": "\(revoked.count)"])
        return PasswordChangeResult(revokedSessions: revoked.count)
    }
}
