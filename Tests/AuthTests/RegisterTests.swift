import AuthService
import Foundation
import Testing
import Wire

@Suite struct RegisterTests {
    @Test func registersAndLowercasesTheUsername() async throws {
        let h = try Harness()
        let result = try await h.register("Alice_1.x-y", email: "alice@example.com")
        #expect(result["username"] == "alice_1.x-y")
        #expect(result["email"] == "alice@example.com")
        let userId = try #require(result["userId"]?.stringValue)
        #expect(ID.isValid(userId))
        #expect(result["createdAt"] == .string(WireTime.format(h.clock.now)))
    }

    @Test func emailIsOptional() async throws {
        let h = try Harness()
        let result = try await h.register("bob")
        #expect(result["email"] == nil)
        #expect(result["username"] == "bob")
    }

    @Test(arguments: [
        ("a", #"username: must be 3–32 characters of a-z, 0-9, _ . - (got "a")"#),
        ("ab", #"username: must be 3–32 characters of a-z, 0-9, _ . - (got "ab")"#),
        (String(repeating: "x", count: 33), nil),
        ("bad name", #"username: must be 3–32 characters of a-z, 0-9, _ . - (got "bad name")"#),
        ("ünïcode", nil),
        ("semi;colon", nil),
        ("", nil),
    ])
    func refusesBadUsernames(username: String, message: String?) async throws {
        let h = try Harness()
        let error = try await h.failure("auth.register", ["username": .string(username), "password": "correct horse"])
        #expect(error.code == .invalidArgument)
        #expect(error.field == "username")
        #expect(error.message.hasPrefix("username: must be 3–32 characters of a-z, 0-9, _ . - (got "))
        if let message { #expect(error.message == message) }
    }

    @Test func acceptsUsernamesAtTheLengthLimits() async throws {
        let h = try Harness()
        try await h.register("abc")
        try await h.register(String(repeating: "z", count: 32))
    }

    @Test func refusesShortAndLongPasswords() async throws {
        let h = try Harness()
        let short = try await h.failure("auth.register", ["username": "carol", "password": "1234567"])
        #expect(short.code == .invalidArgument)
        #expect(short.field == "password")
        #expect(short.message == "password: must be 8–1024 characters (got 7)")
        let long = try await h.failure(
            "auth.register", ["username": "carol", "password": .string(String(repeating: "p", count: 1025))])
        #expect(long.message == "password: must be 8–1024 characters (got 1025)")
        // Lengths are code points: 8 two-byte characters are enough, 1024 of them not too many.
        try await h.register("carol", password: String(repeating: "é", count: 8))
        try await h.register("dave", password: String(repeating: "é", count: 1024))
        // The password never appears in the error.
        #expect(!short.message.contains("1234567"))
    }

    @Test(arguments: [
        "no-at-sign", "two@@example.com", "a@b@example.com", "@example.com", "alice@", "alice@localhost",
        "alice@.example.com", "alice@example.", "alice@example..com", "al ice@example.com", "",
        String(repeating: "a", count: 243) + "@example.com",
    ])
    func refusesBadEmails(email: String) async throws {
        let h = try Harness()
        let error = try await h.failure(
            "auth.register", ["username": "erin", "password": "correct horse", "email": .string(email)])
        #expect(error.code == .invalidArgument)
        #expect(error.field == "email")
        #expect(error.message.hasPrefix("email: must be an address like name@example.com"))
    }

    @Test func acceptsAnEmailOfExactly254Characters() async throws {
        let h = try Harness()
        let email = String(repeating: "a", count: 242) + "@example.com"
        #expect(email.count == 254)
        try await h.register("frank", email: email)
    }

    @Test func usernamesAreUniqueWhateverTheirCase() async throws {
        let h = try Harness()
        try await h.register("alice")
        let error = try await h.failure("auth.register", ["username": "ALICE", "password": "another password"])
        #expect(error.code == .alreadyExists)
        #expect(error.field == "username")
        #expect(error.description == #"already_exists: username "alice" is already registered"#)
    }

    @Test func malformedBodiesNameTheField() async throws {
        let h = try Harness()
        let wrongType = try await h.failure("auth.register", ["username": 5, "password": "correct horse"])
        #expect(wrongType.code == .invalidArgument)
        #expect(wrongType.field == "username")
        #expect(wrongType.message.contains("username"))
        let missing = try await h.failure("auth.register", ["username": "gina"])
        #expect(missing.code == .invalidArgument)
        #expect(missing.field == "password")
        #expect(missing.message == "password: is required")
        let badEmail = try await h.failure("auth.register", ["username": "gina", "password": "correct horse", "email": 3])
        #expect(badEmail.field == "email")
        let login = try await h.failure("auth.login", ["username": "gina", "password": true])
        #expect(login.code == .invalidArgument)
        #expect(login.field == "password")
        let change = try await h.failure("auth.password.change", ["currentPassword": [1]], token: nil)
        #expect(change.code == .unauthenticated)  // sessions are checked before the body
    }

    @Test func idempotentRegistration() async throws {
        let h = try Harness()
        let body: JSONValue = ["username": "hank", "password": "correct horse"]
        let first = try await h.call("auth.register", body, key: "k-1")
        let again = try await h.call("auth.register", body, key: "k-1")
        #expect(first["userId"] != nil)
        #expect(again["userId"] == first["userId"])
        let other = try await h.failure("auth.register", ["username": "ivan", "password": "correct horse"], key: "k-1")
        #expect(other.code == .alreadyExists)
        #expect(other.field == "idempotencyKey")
        // Only one account and one event came of it.
        #expect(try await h.events().filter { $0.type == "user.registered" }.count == 1)
    }

    @Test func passwordsAreStoredAsArgon2idHashes() async throws {
        let h = try Harness()
        try await h.register("judy", password: "my secret password")
        let hash = try await h.auth.host.database.read { db in
            try String.fetchOne(db, sql: "SELECT passwordHash FROM users WHERE username = 'judy'")
        }
        #expect(hash?.hasPrefix("$argon2id$") == true)
        #expect(hash?.contains("my secret password") == false)
    }
}
