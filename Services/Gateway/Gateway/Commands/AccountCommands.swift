// Account commands over the auth service: register, login, logout, whoami, passwd,
// delete-account. Passwords come from a no-echo prompt or `--password-stdin`; the session
// token is saved by `SessionStore` and never printed.
import ArgumentParser
import Contracts
import Foundation
import Wire

struct PasswordInput: ParsableArguments {
    @Flag(name: .customLong("password-stdin"), help: "Read the password(s) from stdin, one per line, instead of prompting.")
    var fromStdin = false
}

enum Account {
    static func username(_ given: String?) throws -> String {
        if let given, !given.isEmpty { return given }
        return try Prompt.line("Username: ", missing: "give a USERNAME argument (no terminal to ask for it)")
    }

    /// Logs in, saves the session and returns it.
    static func login(_ context: Context, username: String, password: String) async throws -> Session {
        let devices = DeviceStore(context.sessions)
        let result = try await AuthMethods.login.call(
            context, LoginRequest(username: username, password: password, deviceToken: devices.token(for: username)),
            caller: .anonymous)
        let session = Session(
            token: result.token, userId: result.userId, username: result.username, sessionId: result.sessionId,
            expiresAt: WireTime.format(result.expiresAt), shard: result.shard)
        try context.sessions.save(session)
        try devices.save(result.deviceToken, for: username)
        return session
    }

    /// After a login: replay what this user queued earlier (the first call does) and keep a
    /// copy of their cars, so fill-ups can name a car while the stack is unreachable. Returns
    /// how many cars; never fails the login.
    @discardableResult
    static func restore(_ context: Context) async -> Int? {
        guard Executables(configuration: context.configuration).isInstalled("records") else { return nil }
        return try? await context.everything(FuelMethods.vehicleList, ListBody()).count
    }

    /// The process's zone as an IANA name auth accepts (TZ, else the system's), else nil
    /// (auth's default, UTC).
    static func localZone(_ environment: [String: String]) -> String? {
        if let tz = environment["TZ"], !tz.isEmpty {
            let name = tz.hasPrefix(":") ? String(tz.dropFirst()) : tz
            if LocalDays.zone(named: name) != nil { return name }
        }
        let identifier = TimeZone.current.identifier
        return LocalDays.zone(named: identifier) != nil ? identifier : nil
    }

    /// What is safe to print about a session (no token).
    static func describe(_ session: Session) -> JSONValue {
        var object: [String: JSONValue] = [
            "userId": .string(session.userId), "username": .string(session.username),
            "sessionId": .string(session.sessionId),
        ]
        if let expiresAt = session.expiresAt { object["expiresAt"] = .string(expiresAt) }
        return .object(object)
    }
}

struct Register: GatewayCommand {
    static let configuration = CommandConfiguration(
        commandName: "register",
        abstract: "Create an account, then log in.",
        discussion: """
            Usernames are 3–32 characters of a-z 0-9 _ . - ; passwords 8–1024 characters. The \
            account's time zone (its days, weeks and months in every summary) is this machine's \
            (TZ) unless --time-zone says otherwise.
            """)

    @OptionGroup var global: GlobalOptions
    @OptionGroup var password: PasswordInput
    @Argument(help: "The new username (asked for when omitted at a terminal).") var username: String?
    @Option(help: "An email address for the account.") var email: String?
    @Option(
        name: .customLong("time-zone"),
        help: ArgumentHelp("The IANA time zone your days are counted in (default: this machine's).", valueName: "zone"))
    var timeZone: String?
    @Flag(
        inversion: .prefixedNo,
        help: """
            Move the records made here before any account existed into the new account \
            (default: ask at a terminal; without one, keep them local and say so).
            """)
    var claimLocal: Bool?

    func execute(_ context: Context) async throws {
        let username = try Account.username(username)
        let secret = password.fromStdin ? try Prompt.stdinLine("the password") : try Prompt.newSecret()
        // the account's days are this machine's (`logbook settings time-zone` changes them)
        let request = RegisterRequest(
            username: username, password: secret, email: email,
            timeZone: timeZone ?? Account.localZone(context.environment))
        let user = try await AuthMethods.register.call(context, request, caller: .anonymous)
        let session = try await Account.login(context, username: username, password: secret)
        if !context.json { Output.line("registered \(user.username) (user id \(user.userId)) and logged in") }
        // Seed 002: "do you want to sync all your data into this new account?"
        let local = context.waiting(owner: LocalStore.anonymous).total
        var claim = claimLocal ?? false
        if local > 0 && claimLocal == nil && Prompt.isInteractive && !password.fromStdin {
            claim = try Prompt.confirm(
                "\(local) record\(local == 1 ? " was" : "s were") made on this machine before you had an account. Move \(local == 1 ? "it" : "them") into \(username)?")
        }
        var claimed: JSONValue = .null
        if local > 0 && claim {
            try Offline.claim(context, session: session)
            let store = try context.localStore(create: false)
            if let store {
                let outcome = try await Offline.replay(
                    context, store: store, owner: session.userId, token: session.token, includeFailed: true
                ) { item, result in
                    if !context.json { Output.line(Offline.describe(item, result)) }
                }
                claimed = Sync.json(outcome)
                if !context.json {
                    var line = "moved \(outcome.synced.count) of \(local) local record\(local == 1 ? "" : "s") into your account"
                    if !outcome.failed.isEmpty { line += "; \(outcome.failed.count) refused and kept (`logbook sync --list`)" }
                    if let stopped = outcome.stopped { line += "; \(outcome.remaining) still queued (\(stopped.message)): `logbook sync` later" }
                    Output.line(line)
                }
            }
        } else if local > 0 && !context.json {
            Output.line(
                "\(local) local record\(local == 1 ? "" : "s") made before this account stay\(local == 1 ? "s" : "") on this machine, not uploaded; "
                    + "`logbook sync --claim-local` moves them into your account later")
        }
        if context.json {
            Output.json([
                "user": try JSONValue.from(user), "session": Account.describe(session), "localRecords": .number(.init(local)),
                "claimed": claimed,
            ])
        }
    }
}

struct Login: GatewayCommand {
    static let configuration = CommandConfiguration(
        commandName: "login",
        abstract: "Log in and save the session.",
        discussion: "The session is saved in $LOGBOOK_CONFIG_DIR, else $XDG_CONFIG_HOME/logbook, else ~/.config/logbook (mode 0600).")

    @OptionGroup var global: GlobalOptions
    @OptionGroup var password: PasswordInput
    @Argument(help: "Your username (asked for when omitted at a terminal).") var username: String?

    func execute(_ context: Context) async throws {
        let username = try Account.username(username)
        let secret = password.fromStdin ? try Prompt.stdinLine("the password") : try Prompt.secret("Password: ")
        let session = try await Account.login(context, username: username, password: secret)
        await Account.restore(context)
        if context.json {
            Output.json(Account.describe(session))
        } else {
            Output.line("logged in as \(session.username)" + (session.expiresAt.map { " until \($0)" } ?? ""))
            let waiting = context.waiting(owner: session.userId).total
            if waiting > 0 { Output.line("\(waiting) write\(waiting == 1 ? "" : "s") still waiting to sync: `logbook sync --list`") }
            // Writes made here while nobody was logged in are nobody's until claimed.
            let anonymous = context.waiting(owner: LocalStore.anonymous).total
            if anonymous > 0 {
                Output.line(
                    "\(anonymous) local record\(anonymous == 1 ? "" : "s") made on this machine while logged out "
                        + "\(anonymous == 1 ? "is" : "are") not in any account: `logbook sync --claim-local` moves "
                        + "\(anonymous == 1 ? "it" : "them") into \(session.username) (`logbook sync --list` shows them first)")
            }
        }
    }
}

struct Logout: GatewayCommand {
    static let configuration = CommandConfiguration(
        commandName: "logout",
        abstract: "Revoke the session on every service and forget it here, with its local data.",
        discussion: """
            Queued writes are sent first when the stack can be reached; if some still are not \
            synced, logout asks (or, without a terminal, refuses unless --discard-unsynced). \
            The user's queue and saved answers are then removed from this machine.
            """)

    @OptionGroup var global: GlobalOptions
    @Flag(name: .customLong("discard-unsynced"), help: "Log out even if queued writes have not been synced (they are lost).")
    var discardUnsynced = false

    func execute(_ context: Context) async throws {
        guard let session = try context.session() else {
            if context.json { Output.json(["revoked": false]) } else { Output.line("not logged in") }
            return
        }
        // Local data goes with the session: first send what can be sent, then warn.
        context.usesLocalData = false
        let store = try context.localStore(create: false)
        if let store, try store.counts(owner: session.userId).pending > 0, !context.isDown(context.recordsInstance(for: session)) {
            _ = try? await Offline.replay(context, store: store, owner: session.userId, token: session.token, includeFailed: false)
        }
        let unsynced = try store?.counts(owner: session.userId).total ?? 0
        if unsynced > 0 && !discardUnsynced {
            let what = "\(unsynced) queued write\(unsynced == 1 ? " has" : "s have") not been synced and will be lost"
            guard Prompt.isInteractive else {
                throw ServiceError(
                    .failedPrecondition, "\(what): run `logbook sync` first, or pass --discard-unsynced")
            }
            guard try Prompt.confirm("\(what). Log out anyway?") else {
                throw ServiceError(.failedPrecondition, "not confirmed; still logged in as \(session.username)")
            }
        }
        var note = ""
        do {
            _ = try await AuthMethods.logout.call(context, caller: .token(session.token))
        } catch let error as ServiceError where error.code == .unauthenticated {
            note = " (the session had already ended)"
        } catch let error as ServiceError where Context.isUnreachable(error.code) {
            // Forgotten here all the same; the token could not be revoked and lives until it expires.
            note = " here only: the stack is unreachable, so the session was not revoked"
                + (session.expiresAt.map { " (it expires at \($0))" } ?? "")
        }
        try context.sessions.delete()
        try context.local.removeAll(owner: session.userId)
        try? SelectionStore(directory: context.sessions.directory).setVehicle(nil, for: session.userId)
        if unsynced > 0 { note += "; discarded \(unsynced) unsynced write\(unsynced == 1 ? "" : "s")" }
        if context.json {
            Output.json(["revoked": true, "discarded": .number(.init(unsynced))])
        } else {
            Output.line("logged out \(session.username)\(note)")
        }
    }
}

struct Whoami: GatewayCommand {
    static let configuration = CommandConfiguration(commandName: "whoami", abstract: "Show the logged-in account.")

    @OptionGroup var global: GlobalOptions

    func execute(_ context: Context) async throws {
        try await AuthMethods.whoami.perform(context) { user in
            Output.fields(
                [
                    ("username", user.username), ("user id", user.userId), ("email", user.email ?? "-"),
                    ("created", WireTime.format(user.createdAt)), ("time zone", user.timeZone),
                    ("session", user.sessionId), ("records shard", String(user.shard)),
                ])
        }
    }
}

struct SettingsGroup: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "settings",
        abstract: "Your account's settings.",
        discussion: """
            Examples:
              logbook settings time-zone               # show it
              logbook settings time-zone Europe/Oslo   # days counted in Oslo
              logbook settings time-zone --local       # this machine's zone (TZ)
            """,
        subcommands: [SettingsTimeZone.self])
}

struct SettingsTimeZone: GatewayCommand {
    static let configuration = CommandConfiguration(
        commandName: "time-zone",
        abstract: "Show or set the time zone your days are counted in (summaries, worked hours, the daily quote).",
        discussion: """
            An IANA name such as Europe/Oslo, America/New_York or UTC. Expense summaries and \
            worked hours are counted again in the new zone (the analytics service does it within \
            a second); the quote of the day follows it from your next day.
            """)

    @OptionGroup var global: GlobalOptions
    @Argument(help: "The new zone; without it the current one is shown.") var zone: String?
    @Flag(help: "Use this machine's zone (TZ).") var local = false

    func execute(_ context: Context) async throws {
        var name = zone
        if local {
            guard let here = Account.localZone(context.environment) else {
                throw ServiceError.invalid("timeZone", "this machine's zone is not an IANA name; give one, e.g. Europe/Oslo")
            }
            name = here
        }
        guard let name else {
            try await AuthMethods.whoami.perform(context) { user in "time zone \(user.timeZone)" }
            return
        }
        try await AuthMethods.settingsUpdate.perform(context, SettingsUpdate(timeZone: name)) { result in
            result.changed
                ? "time zone set to \(result.timeZone); days, weeks and months are counted there now"
                : "time zone is already \(result.timeZone)"
        }
    }
}

struct Passwd: GatewayCommand {
    static let configuration = CommandConfiguration(
        commandName: "passwd",
        abstract: "Change your password; your other sessions are logged out.",
        discussion: "With --password-stdin, the first line is the current password and the second the new one.")

    @OptionGroup var global: GlobalOptions
    @OptionGroup var password: PasswordInput

    func execute(_ context: Context) async throws {
        _ = try context.requireSession()
        let current: String
        let new: String
        if password.fromStdin {
            current = try Prompt.stdinLine("the current password (line 1)")
            new = try Prompt.stdinLine("the new password (line 2)")
        } else {
            current = try Prompt.secret("Current password: ")
            new = try Prompt.newSecret("New password: ")
        }
        try await AuthMethods.passwordChange.perform(context, PasswordChange(currentPassword: current, newPassword: new)) {
            result in "password changed; \(result.revokedSessions) other session(s) logged out"
        }
    }
}

struct DeleteAccount: GatewayCommand {
    static let configuration = CommandConfiguration(
        commandName: "delete-account",
        abstract: "Delete your account and every record of it on every service.",
        discussion: """
            The account's session, device token, queued writes and saved answers on this \
            machine are removed too.
            """)

    @OptionGroup var global: GlobalOptions
    @OptionGroup var password: PasswordInput
    @Flag(help: "Do not ask for confirmation.") var yes = false

    func execute(_ context: Context) async throws {
        let session = try context.requireSession()
        if !yes {
            guard try Prompt.confirm("Delete account \(session.username) and all its data? This cannot be undone.") else {
                throw ServiceError(.failedPrecondition, "not confirmed; nothing was deleted")
            }
        }
        let secret = password.fromStdin ? try Prompt.stdinLine("the password") : try Prompt.secret("Password: ")
        _ = try await AuthMethods.accountDelete.call(context, AccountDelete(password: secret))
        // Everything of the account on this machine goes too: the session, its device token,
        // its queued writes and saved answers, its selected car.
        try context.sessions.delete()
        try? DeviceStore(context.sessions).forget(session.username)
        try context.local.removeAll(owner: session.userId)
        try? SelectionStore(directory: context.sessions.directory).setVehicle(nil, for: session.userId)
        if context.json { Output.json(["deleted": true]) } else { Output.line("deleted account \(session.username)") }
    }
}
