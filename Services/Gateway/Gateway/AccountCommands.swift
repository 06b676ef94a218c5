// Account commands over the auth service: register, login, logout, whoami, passwd,
// delete-account. Passwords come from a no-echo prompt or `--password-stdin`; the session
// token is saved by `SessionStore` and never printed.
import ArgumentParser
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
        let result = try await context.send(
            "auth", "auth.login", body: ["username": .string(username), "password": .string(password)],
            caller: .anonymous, write: true)
        let session: Session
        do {
            session = try result.decode(Session.self)
        } catch {
            throw ServiceError(.internal, "auth.login answered without a session: \(result.jsonText)")
        }
        try context.sessions.save(session)
        return session
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
        abstract: "Create an account, then log in.",
        discussion: "Usernames are 3–32 characters of a-z 0-9 _ . - ; passwords 8–1024 characters.")

    @OptionGroup var global: GlobalOptions
    @OptionGroup var password: PasswordInput
    @Argument(help: "The new username (asked for when omitted at a terminal).") var username: String?
    @Option(help: "An email address for the account.") var email: String?

    func execute(_ context: Context) async throws {
        let username = try Account.username(username)
        let secret = password.fromStdin ? try Prompt.stdinLine("the password") : try Prompt.newSecret()
        var body: [String: JSONValue] = ["username": .string(username), "password": .string(secret)]
        if let email { body["email"] = .string(email) }
        let user = try await context.send("auth", "auth.register", body: .object(body), caller: .anonymous, write: true)
        let session = try await Account.login(context, username: username, password: secret)
        if context.json {
            Output.json(["user": user, "session": Account.describe(session)])
        } else {
            Output.line("registered \(Output.cell(user["username"])) (user id \(Output.cell(user["userId"]))) and logged in")
        }
    }
}

struct Login: GatewayCommand {
    static let configuration = CommandConfiguration(
        abstract: "Log in and save the session.",
        discussion: "The session is saved in $LOGBOOK_CONFIG_DIR, else $XDG_CONFIG_HOME/logbook, else ~/.config/logbook (mode 0600).")

    @OptionGroup var global: GlobalOptions
    @OptionGroup var password: PasswordInput
    @Argument(help: "Your username (asked for when omitted at a terminal).") var username: String?

    func execute(_ context: Context) async throws {
        let username = try Account.username(username)
        let secret = password.fromStdin ? try Prompt.stdinLine("the password") : try Prompt.secret("Password: ")
        let session = try await Account.login(context, username: username, password: secret)
        if context.json {
            Output.json(Account.describe(session))
        } else {
            Output.line("logged in as \(session.username)" + (session.expiresAt.map { " until \($0)" } ?? ""))
        }
    }
}

struct Logout: GatewayCommand {
    static let configuration = CommandConfiguration(
        abstract: "Revoke the session on every service and forget it here.")

    @OptionGroup var global: GlobalOptions

    func execute(_ context: Context) async throws {
        guard let session = try context.session() else {
            if context.json { Output.json(["revoked": false]) } else { Output.line("not logged in") }
            return
        }
        var note = ""
        do {
            _ = try await context.send("auth", "auth.logout", caller: .token(session.token), write: true)
        } catch let error as ServiceError where error.code == .unauthenticated {
            note = " (the session had already ended)"
        }
        try context.sessions.delete()
        if context.json { Output.json(["revoked": true]) } else { Output.line("logged out \(session.username)\(note)") }
    }
}

struct Whoami: GatewayCommand {
    static let configuration = CommandConfiguration(abstract: "Show the logged-in account.")

    @OptionGroup var global: GlobalOptions

    func execute(_ context: Context) async throws {
        try await context.perform("auth", "auth.whoami") { user in
            Output.fields(
                [
                    ("username", Output.cell(user["username"])), ("user id", Output.cell(user["userId"])),
                    ("email", Output.cell(user["email"])), ("created", Output.cell(user["createdAt"])),
                    ("session", Output.cell(user["sessionId"])),
                ])
        }
    }
}

struct Passwd: GatewayCommand {
    static let configuration = CommandConfiguration(
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
        try await context.perform(
            "auth", "auth.password.change",
            body: ["currentPassword": .string(current), "newPassword": .string(new)], write: true
        ) { result in
            "password changed; \(Output.cell(result["revokedSessions"])) other session(s) logged out"
        }
    }
}

struct DeleteAccount: GatewayCommand {
    static let configuration = CommandConfiguration(
        commandName: "delete-account",
        abstract: "Delete your account and every record of it on every service.")

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
        _ = try await context.send("auth", "auth.account.delete", body: ["password": .string(secret)], write: true)
        try context.sessions.delete()
        if context.json { Output.json(["deleted": true]) } else { Output.line("deleted account \(session.username)") }
    }
}
