// Accounts end to end: the real auth executable under the supervisor, driven through
// `logbook register/login/whoami/logout`, as a user would. Needs the real auth service.
import Foundation
import Testing

@Suite("logbook accounts", .serialized, .timeLimit(.minutes(3)))
struct AccountTests {
    static let password = TestStack.password

    @Test("register, login, whoami, logout; the session file is private")
    func accountFlow() async throws {
        try await withStack { stack in
            let up = try await stack.logbook("stack", "up")
            try #require(up.status == 0, "stack up failed: \(up.stderr)\n\(stack.log("auth"))")

            let register = try await stack.logbook("register", "alice", "--password-stdin", stdin: Self.password + "\n")
            #expect(register.status == 0, "\(register.stderr)")
            #expect(register.stdout.contains("registered alice"))

            let duplicate = try await stack.logbook("register", "alice", "--password-stdin", stdin: Self.password + "\n")
            #expect(duplicate.status == 4)
            #expect(duplicate.stderr == "error: username \"alice\" is already registered (already_exists)\n")

            let wrong = try await stack.logbook("login", "alice", "--password-stdin", stdin: "not the password\n")
            #expect(wrong.status == 6, "\(wrong.stderr)")

            let login = try await stack.logbook("login", "alice", "--password-stdin", stdin: Self.password + "\n")
            #expect(login.status == 0, "\(login.stderr)")
            #expect(login.stdout.hasPrefix("logged in as alice"))
            #expect(!login.stdout.contains("token"))

            let attributes = try FileManager.default.attributesOfItem(atPath: stack.sessionFile)
            #expect((attributes[.posixPermissions] as? Int) == 0o600)
            let directory = try FileManager.default.attributesOfItem(atPath: stack.configDirectory)
            #expect((directory[.posixPermissions] as? Int) == 0o700)

            let whoami = try await stack.logbook("whoami")
            #expect(whoami.status == 0, "\(whoami.stderr)")
            #expect(whoami.stdout.contains("alice"))
            let whoamiJSON = try await stack.logbook("whoami", "--json")
            #expect(whoamiJSON.object["username"] as? String == "alice")

            let logout = try await stack.logbook("logout")
            #expect(logout.status == 0, "\(logout.stderr)")
            #expect(!FileManager.default.fileExists(atPath: stack.sessionFile))

            let after = try await stack.logbook("whoami")
            #expect(after.status == 6)
            #expect(after.stderr.contains("not logged in"), "\(after.stderr)")

            let down = try await stack.logbook("stack", "down")
            #expect(down.status == 0)
        }
    }

    @Test("passwd logs out other sessions; delete-account removes the account")
    func passwordAndDeletion() async throws {
        try await withStack { stack in
            let up = try await stack.logbook("stack", "up")
            try #require(up.status == 0, "stack up failed: \(up.stderr)\n\(stack.log("auth"))")
            try #require(try await stack.logbook("register", "dave", "--email", "dave@example.com", "--password-stdin", stdin: Self.password + "\n").status == 0)
            let other = try #require(FileManager.default.contents(atPath: stack.sessionFile))
            let otherToken = try #require((try JSONSerialization.jsonObject(with: other) as? [String: Any])?["token"] as? String)
            try #require(try await stack.logbook("login", "dave", "--password-stdin", stdin: Self.password + "\n").status == 0)

            let newPassword = "a much better passphrase"
            let passwd = try await stack.logbook("passwd", "--password-stdin", stdin: "\(Self.password)\n\(newPassword)\n")
            #expect(passwd.status == 0, "\(passwd.stderr)")
            #expect(passwd.stdout.contains("1 other session(s) logged out"), "\(passwd.stdout)")
            #expect(try await stack.logbook("call", "auth", "auth.whoami", "--token", otherToken).status == 6)
            #expect(try await stack.logbook("whoami").status == 0, "this session survives")
            #expect(try await stack.logbook("login", "dave", "--password-stdin", stdin: Self.password + "\n").status == 6)
            #expect(try await stack.logbook("login", "dave", "--password-stdin", stdin: newPassword + "\n").status == 0)

            // a saved answer (the read cache) and a selected car, on this machine
            #expect(try await stack.logbook("expense", "add", "Lunch", "12.50").status == 0)
            #expect(try await stack.logbook("expense", "list").status == 0)
            #expect(try await stack.logbook("car", "add", "Civic").status == 0)
            let cache = stack.configDirectory + "/cache"
            #expect(!((try? FileManager.default.contentsOfDirectory(atPath: cache)) ?? []).isEmpty, "a saved answer")

            let unconfirmed = try await stack.logbook("delete-account", "--password-stdin", stdin: newPassword + "\n")
            #expect(unconfirmed.status == 2, "no terminal and no --yes: refused")
            #expect(unconfirmed.stderr.contains("--yes"))

            let delete = try await stack.logbook("delete-account", "--yes", "--password-stdin", stdin: newPassword + "\n")
            #expect(delete.status == 0, "\(delete.stderr)")
            #expect(!FileManager.default.fileExists(atPath: stack.sessionFile))
            #expect(((try? FileManager.default.contentsOfDirectory(atPath: cache)) ?? []).isEmpty, "no saved answer is left")
            let selection = (try? String(contentsOfFile: stack.configDirectory + "/selection.json", encoding: .utf8)) ?? ""
            #expect(!selection.contains("vehicleId"), "no selected car is left: \(selection)")
            #expect(try await stack.logbook("login", "dave", "--password-stdin", stdin: newPassword + "\n").status == 6)
        }
    }

    @Test("a revoked token is refused by auth")
    func revokedToken() async throws {
        try await withStack { stack in
            let up = try await stack.logbook("stack", "up")
            try #require(up.status == 0, "stack up failed: \(up.stderr)\n\(stack.log("auth"))")
            try #require(try await stack.logbook("register", "carol", "--password-stdin", stdin: Self.password + "\n").status == 0)
            let saved = try #require(FileManager.default.contents(atPath: stack.sessionFile))
            let token = try #require((try JSONSerialization.jsonObject(with: saved) as? [String: Any])?["token"] as? String)
            #expect(try await stack.logbook("logout").status == 0)
            let refused = try await stack.logbook("call", "auth", "auth.whoami", "--token", token)
            #expect(refused.status == 6, "\(refused.stdout)")
            #expect((refused.object["error"] as? [String: Any])?["code"] as? String == "unauthenticated")
            // A body that is not JSON is refused before anything is sent, in one sentence.
            let broken = try await stack.logbook("call", "auth", "auth.whoami", #"{"a":1"#)
            #expect(broken.status == 2, "\(broken.stderr)")
            #expect(broken.stderr.hasPrefix("error: the body is not valid JSON: Unexpected end of file"), "\(broken.stderr)")
            #expect(broken.stderr.components(separatedBy: "not valid JSON").count == 2, "said once: \(broken.stderr)")
        }
    }

    @Test("after auth is killed, the supervisor restarts it and the session still works")
    func sessionSurvivesRestart() async throws {
        try await withStack { stack in
            let up = try await stack.logbook("stack", "up")
            try #require(up.status == 0, "stack up failed: \(up.stderr)\n\(stack.log("auth"))")
            try #require(try await stack.logbook("register", "bob", "--password-stdin", stdin: Self.password + "\n").status == 0)
            let pid = try #require(stack.pid("auth"))
            #expect(kill(pid, SIGKILL) == 0)
            let back = try await stack.eventually {
                try await stack.logbook("whoami", "--timeout", "1").status == 0
            }
            #expect(back, "whoami works again: \(stack.log("supervisor"))")
            #expect(stack.pid("auth") != pid)
        }
    }
}
