// The auth service over real ZeroMQ, and another service's SessionCache validating its
// tokens through `auth.whoami`.
import AuthService
import Foundation
import Runtime
import ServiceLifecycle
import Storage
import Testing
import Wire

@Suite struct ZeroMQTests {
    @Test func servesOverZeroMQ() async throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let auth = try AuthService(
            configuration: AuthConfiguration(argon2: .minimum), database: DatabaseSettings(path: scratch.path + "/auth.sqlite"),
            eventsEndpoint: "ipc://\(scratch.path)/auth.events.sock", logger: quietLogger)
        let endpoint = "ipc://\(scratch.path)/auth.sock"
        let group = ServiceGroup(services: auth.services(endpoint: endpoint), logger: quietLogger)
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            defer { tasks.cancelAll() }
            for _ in 0..<200 where !FileManager.default.fileExists(atPath: scratch.path + "/auth.sock") {
                try await Task.sleep(for: .milliseconds(10))
            }
            do {
                let client = try ServiceClient(service: "auth", endpoint: endpoint)
                defer { client.close() }
                let registered = try await client.call(
                    "auth.register", ["username": "Zed", "password": "correct horse"] as JSONValue, as: JSONValue.self)
                #expect(registered["username"] == "zed")
                let login = try await client.call(
                    "auth.login", ["username": "zed", "password": "correct horse"] as JSONValue, as: JSONValue.self)
                let token = try #require(login["token"]?.stringValue)
                let cache = SessionCache(auth: client)
                let principal = try await cache.resolve(token: token)
                #expect(principal.username == "zed")
                #expect(principal.userId == registered["userId"]?.stringValue)
                do {
                    _ = try await client.call("auth.whoami", Empty(), as: JSONValue.self, options: CallOptions(token: "lbk_x"))
                    Issue.record("a bad token was accepted")
                } catch let error as ServiceError {
                    #expect(error.code == .unauthenticated)
                }
                await group.triggerGracefulShutdown()
            } catch {
                await group.triggerGracefulShutdown()
                throw error
            }
        }
    }
}
