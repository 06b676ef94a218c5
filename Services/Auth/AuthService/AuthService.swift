// The auth service: accounts, passwords and sessions (docs/protocol.md, "Auth service
// methods"). `AuthService` is what both the `auth` executable (through the runtime's
// LogbookService) and the tests build: a ServiceHost with the auth schema, the routes below,
// and a dispatcher whose `.user` methods resolve tokens from this database.
import Contracts
import Foundation
import GRDB
import Logging
import Runtime
import ServiceLifecycle
import Storage
import Wire

public struct AuthService: Sendable {
    public static let name = "auth"
    public static var migrator: DatabaseMigrator { Schema.migrator }

    public let host: ServiceHost
    public let dispatcher: Dispatcher

    /// In-process (tests, benchmarks): the same routes and sessions as the executable's.
    /// - Parameters:
    ///   - database: the auth SQLite file, or `.inMemory` in tests.
    ///   - eventsEndpoint: where to publish events; nil in in-process tests (they read
    ///     `events.since`).
    ///   - curve: the stack's CURVE settings; nil serves plain.
    public init(
        configuration: AuthConfiguration, database: DatabaseSettings, eventsEndpoint: String? = nil,
        curve: CurveSettings? = nil, logger: Logger
    ) throws {
        host = try ServiceHost(
            descriptor: ServiceDescriptor(name: Self.name), database: database, migrator: Self.migrator,
            eventsEndpoint: eventsEndpoint, curve: curve, logger: logger)
        dispatcher = host.dispatcher(for: try Self.assemble(on: host, configuration: configuration))
    }

    /// The services to run: the ZeroMQ server on `endpoint` and the event publisher.
    public func services(endpoint: String) -> [any Service] {
        host.services(dispatcher: dispatcher, endpoint: endpoint)
    }

    static func assemble(on host: ServiceHost, configuration: AuthConfiguration) throws -> ServiceAssembly {
        let remembered = Remembered()
        try remembered.forgetOnCommits(to: host.database)
        let handlers = Handlers(
            configuration: configuration,
            passwords: try Passwords(cost: configuration.argon2, concurrency: configuration.hashingConcurrency),
            database: host.database, commits: host.commits,
            budget: FailureBudget(perMinute: configuration.failedLoginsPerMinute), remembered: remembered)
        return ServiceAssembly(
            router: handlers.router(host.makeRouter()),
            sessions: .own(DatabaseSessions(reader: host.database, now: configuration.now, remembered: remembered)))
    }
}

/// Settings: LOGBOOK_AUTH_ARGON2_OPSLIMIT, _ARGON2_MEMLIMIT, _HASHING_CONCURRENCY,
/// _SESSION_DAYS; auth resolves tokens from its own database and consumes no events.
extension AuthService: LogbookService {
    public static func assemble(on host: ServiceHost, configuration: StackConfiguration) throws -> ServiceAssembly {
        var auth = try AuthConfiguration.from { configuration.setting(name, $0) }
        auth.recordsShards = configuration.recordsShards
        return try assemble(on: host, configuration: auth)
    }
}

/// What every handler needs; each method's handler lives in the file named after it.
struct Handlers: Sendable {
    let configuration: AuthConfiguration
    let passwords: Passwords
    let database: any DatabaseWriter
    let commits: GroupCommitter
    /// Failed attempts from unknown clients, across all usernames (LoginFailures.swift).
    let budget: FailureBudget
    /// Sessions and users read since the last commit that changed them (Remembered.swift).
    let remembered: Remembered

    var now: Date { configuration.now().roundedToMilliseconds }

    func router(_ router: Router) -> Router {
        var router = router
        router.write(AuthMethods.register, access: .public, prepare: prepareRegister, commitRegister)
        // Login writes twice (the attempt, then the session) around a slow password check,
        // so it manages its own writes instead of being one group-committed write.
        router.ownWrite(AuthMethods.login, access: .public, login)
        router.write(AuthMethods.logout, access: .user, logout)
        router.read(AuthMethods.whoami, access: .user, whoami)
        router.write(AuthMethods.settingsUpdate, access: .user, updateSettings)
        router.write(AuthMethods.passwordChange, access: .user, prepare: preparePasswordChange, commitPasswordChange)
        router.write(
            AuthMethods.accountDelete, access: .user, prepare: prepareAccountDelete, commitAccountDelete, recordsKey: false)
        router.read(AuthMethods.shardGet, access: .public, shardGet)
        router.write(AuthMethods.shardSet, access: .public, shardSet)
        return router
    }

    /// Checks `password` for `user` with the failed-login throttle (LoginFailures.swift):
    /// refused while the client's key is backing off or, for an unknown client, while the
    /// global budget is spent; counted as a failure until it turns out right, when the key
    /// is cleared and the budget refunded.
    func checkPassword(
        _ password: String, for user: User?, username: String, client: LoginClient, context: RequestContext
    ) async throws -> Bool {
        let now = self.now
        let throttle = configuration.throttle
        let key = client.key(username: username)
        // Refusals first, before anything is counted: an attempt refused (the caller gone,
        // the global budget spent, the key backing off) is not a failure of the key.
        try context.checkDeadline()
        if !client.trusted { try budget.take(now: now) }
        do {
            try await commits.write { db in
                try LoginFailures.admit(db, key: key, username: username, now: now, throttle: throttle)
            }
        } catch {
            if !client.trusted { budget.refund() }
            throw error
        }
        let matches = await passwords.verify(
            password, against: user?.passwordHash, priorityFor: client.trusted ? username.lowercased() : nil)
        if matches && !client.trusted { budget.refund() }
        // A login clears its key in the transaction that makes the session; a signed-in
        // session's check (password change, account deletion) is cleared here.
        if matches, case .session = client { try await commits.write { db in try LoginFailures.clear(db, key: key) } }
        return matches
    }

    /// The signed-in user as of the last commit (a concurrent deletion makes the session
    /// invalid): remembered since then, or read.
    func currentUser(_ context: RequestContext) async throws -> User {
        let userId = context.userId
        if let user = remembered.user(userId) { return user }
        let generation = remembered.generation
        guard let user = try database.pointRead({ db in try User.find(db, id: userId) }) else {
            throw DatabaseSessions.refused
        }
        remembered.keep(user: user, readAt: generation)
        return user
    }
}
