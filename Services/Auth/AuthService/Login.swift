// auth.login: a password for a session token. A wrong password and an unknown username get
// the same answer after the same amount of work (an unknown user is checked against a dummy
// hash); repeated failures are throttled per username, or per device for a client that
// presents a device token from an earlier login, and globally for unknown clients
// (LoginFailures). Every successful login answers with a device token.
import Contracts
import Foundation
import GRDB
import Runtime
import Wire

extension Handlers {
    static let wrongCredentials = ServiceError(.unauthenticated, "wrong username or password")

    func login(_ body: LoginRequest, _ context: RequestContext) async throws -> LoginResult {
        let username = body.username.lowercased()
        // A name no account can have is neither looked up nor counted, but costs the same hash.
        guard AccountRules.isValidUsername(username) else {
            try budget.take(now: now)  // a hash spent like any unknown client's failure
            _ = await passwords.verify(body.password, against: nil)
            throw Self.wrongCredentials
        }
        let (user, device) = try await database.read { db in
            let user = try User.find(db, username: username)
            return (user, try user.flatMap { try Devices.known(db, token: body.deviceToken, userId: $0.id) })
        }
        let client = device.map(LoginClient.device) ?? .unknown
        guard try await checkPassword(body.password, for: user, username: username, client: client, context: context),
            let user
        else {
            context.logger.notice("sign-in refused", metadata: ["auth.username": "\(username)"])
            throw Self.wrongCredentials
        }
        let lane = client.trusted ? username : nil
        // A hash made at an older cost is made again at the current one: the dummy hash an
        // unknown name is checked against has the current cost, so until then an old
        // account's login takes another time than an unknown name's, which tells them apart.
        let rehashed = passwords.needsRehash(user.passwordHash) ? try? await passwords.hash(body.password, priorityFor: lane) : nil
        let now = self.now
        let lifetime = configuration.sessionLifetime
        // The hash the password was checked against. When it changed meanwhile (a password
        // change, or another login's rehash at a new cost) the password is checked once more,
        // against the new one: right after a rehash, wrong after a change.
        enum Commit: Sendable {
            case signedIn(Session.Created, deviceToken: String)
            case hashChanged(String)
            /// The caller's deadline passed while the password was checked: the attempt is
            /// cleared (the password was right), but no session or device is made for nobody.
            case late
        }
        var checked = user.passwordHash
        for attempt in 0..<2 {
            let against = checked
            let outcome = try await commits.write { db -> Commit in
                guard let current = try User.find(db, id: user.id) else { throw Self.wrongCredentials }
                guard current.passwordHash == against else { return .hashChanged(current.passwordHash) }
                if let rehashed, current.passwordHash == user.passwordHash {
                    try db.execute(sql: "UPDATE users SET passwordHash = ? WHERE id = ?", arguments: [rehashed, user.id])
                    context.logger.info("password hash made again at the current cost", metadata: ["user.id": "\(user.id)"])
                }
                try LoginFailures.clear(db, key: client.key(username: username))
                if (try? context.checkDeadline()) == nil { return .late }
                let deviceToken: String
                if let device, let presented = body.deviceToken {
                    try Devices.touch(db, hash: device, now: now)
                    deviceToken = presented
                } else {
                    deviceToken = try Devices.create(db, userId: user.id, now: now)
                }
                return .signedIn(try Session.create(db, userId: user.id, now: now, lifetime: lifetime), deviceToken: deviceToken)
            }
            switch outcome {
            case .signedIn(let session, let deviceToken):
                context.logger.info("signed in", metadata: ["user.id": "\(user.id)", "session.id": "\(session.id)"])
                return LoginResult(
                    token: session.token, userId: user.id, username: user.username, sessionId: session.id,
                    expiresAt: session.expiresAt, deviceToken: deviceToken, shard: user.shard)
            case .late:
                try context.checkDeadline()
                throw ServiceError(.deadlineExceeded, "the caller's deadline passed before the request could run")
            case .hashChanged(let current):
                guard attempt == 0, await passwords.verify(body.password, against: current, priorityFor: lane) else {
                    throw Self.wrongCredentials
                }
                checked = current  // the same password under a new hash: commit against that one
            }
        }
        throw Self.wrongCredentials
    }
}
