// The owner is never locked out from a device that signed in before: the real CLI keeps a
// device token (0600), a stranger's 50 wrong guesses from another process back the username
// off, and the owner's `logbook login` still gets in; a new device has to wait.
import Foundation
import Runtime
import Testing
import Wire

@Suite("no lock-out", .serialized, .timeLimit(.minutes(3)))
struct LockoutEndToEndTests {
    @Test("50 wrong guesses from another client; the owner's device still logs in")
    func ownerLogsInAfterGuesses() async throws {
        try await withStack { stack in
            try await stack.upAndRegister("alice")
            let devices = stack.configDirectory + "/devices.json"
            let mode = try FileManager.default.attributesOfItem(atPath: devices)[.posixPermissions] as? Int
            #expect(mode == 0o600)
            #expect(try String(contentsOfFile: devices, encoding: .utf8).contains("lbd_"))

            // The stranger: this test process, straight at auth's socket.
            let configuration = try StackConfiguration.load(environment: stack.environment)
            let auth = try ServiceClient(service: "auth", endpoint: configuration.endpoint("auth"))
            defer { auth.close() }
            var codes: [ErrorCode: Int] = [:]
            for i in 0..<50 {
                let reply = try await auth.reply(
                    "auth.login", body: ["username": "alice", "password": .string("guess number \(i)")],
                    options: CallOptions(timeout: .seconds(20)))
                codes[reply.error?.code ?? ErrorCode("ok"), default: 0] += 1
            }
            #expect(codes[.unauthenticated, default: 0] >= 5 && codes[.resourceExhausted, default: 0] >= 40, "\(codes)")

            // A new device (another config directory) waits…
            let elsewhere = try await stack.logbook(
                "login", "alice", "--password-stdin", stdin: TestStack.password + "\n",
                environment: ["LOGBOOK_CONFIG_DIR": stack.home + "/other-device"])
            #expect(elsewhere.status == 8, "\(elsewhere.status): \(elsewhere.stderr)")
            // …the owner's does not.
            #expect(try await stack.logbook("logout").status == 0)
            let owner = try await stack.logbook("login", "alice", "--password-stdin", stdin: TestStack.password + "\n")
            #expect(owner.status == 0, "\(owner.stderr)")
            #expect(try await stack.logbook("whoami").status == 0)
        }
    }
}
