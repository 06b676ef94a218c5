// auth.login: a password for a session token. A wrong password and an unknown username get
// the same answer after the same amount of work (an unknown user is checked against a dummy
// hash); repeated failures for one username are throttled (LoginFailures).
import Foundation
import GRDB
import Runtime
import Wire

struct LoginBody: Codable, Sendable {
    var username: String
    var password: String
}

struct LoginResult: Codable, Sendable {
    /// Shown once; only its SHA-256 is stored.
    var token: String
    var userId: String
    var username: String
    var sessionId: String
    var expiresAt: Date
}

extension Handlers {
    static let wrongCredentials = ServiceError(.unauthenticated, "wrong username or password")

    func login(_ body: LoginBody, _ context: RequestContext) async throws -> LoginResult {
        let username = body.username.lowercased()
        // A name no account can have is neither looked up nor counted, but costs the same hash.
        guard AccountRules.isValidUsername(username) else {
            _ = await passwords.verify(body.password, against: nil)
            throw Self.wrongCredentials
        }
        let user = try await database.read { db in try User.find(db, username: username) }
        guard try await checkPassword(body.password, for: user, username: username, context: context), let user else {
            context.logger.notice("sign-in refused", metadata: ["auth.username": "\(username)"])
            throw Self.wrongCredentials
        }
        let now = self.now
        let lifetime = configuration.sessionLifetime
        let session = try await commits.write { db in
            // Deleted while its password was being checked.
            guard try User.find(db, id: user.id) != nil else { throw Self.wrongCredentials }
            try LoginFailures.clear(db, username: username)
            return try Session.create(db, userId: user.id, now: now, lifetime: lifetime)
        }
        context.logger.info("signed in", metadata: ["user.id": "\(user.id)", "session.id": "\(session.id)"])
        return LoginResult(
            token: session.token, userId: user.id, username: user.username, sessionId: session.id,
            expiresAt: session.expiresAt)
    }
}
