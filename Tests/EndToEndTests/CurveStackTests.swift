// The whole stack with CURVE switched on by configuration: every service serves CURVE, the
// CLI and the services' own clients (session checks, event consumers) connect with the
// host's keys, and a key off the allow-list, or no key at all, gets no answer.
import Foundation
import Runtime
import Testing
import Wire

@Suite("CURVE stack", .serialized, .timeLimit(.minutes(3)))
struct CurveStackTests {
    @Test("keys from `logbook keys generate`, stack up, register, a record, strangers refused")
    func curveStack() async throws {
        // The keys, as an operator would make them.
        let keysHome = try TestStack()
        let generate = try await keysHome.logbook("keys", "generate", "--json")
        await keysHome.shutdown()
        #expect(generate.status == 0, "\(generate.stderr)")
        let publicKey = try #require(generate.object["publicKey"] as? String)
        let secretKey = try #require(generate.object["secretKey"] as? String)
        let environment = [
            "LOGBOOK_CURVE_PUBLIC_KEY": publicKey, "LOGBOOK_CURVE_SECRET_KEY": secretKey, "LOGBOOK_CURVE_ALLOW": publicKey,
        ]
        try await withStack(environment: environment) { stack in
            try await stack.upAndRegister("curly")
            let car = try await stack.object("car", "add", "Beetle", "--make", "VW", "--year", "1970")
            #expect(car["id"] as? String != nil)
            for service in StackConfiguration.services
            where FileManager.default.isExecutableFile(atPath: stack.binDirectory + "/" + service) {
                #expect(stack.log(service).contains("service.curve=on"), "\(service): \(stack.log(service))")
            }

            // Another host's key, not on the allow-list; then a plain client.
            let stranger = try CurveSettings.generateKeyPair()
            let strangerConfiguration = try StackConfiguration(values: [
                "LOGBOOK_HOME": stack.home, "LOGBOOK_CURVE_SECRET_KEY": stranger.secretKey,
                "LOGBOOK_AUTH_CURVE_PUBLIC_KEY": publicKey,
            ])
            for curve in [strangerConfiguration.curve, nil] {
                let client = try ServiceClient(
                    service: "auth", endpoint: "ipc://\(stack.runDirectory)/auth.sock", settings: ClientSettings(curve: curve))
                defer { client.close() }
                let error = await #expect(throws: ServiceError.self) {
                    _ = try await client.call("$srv.ping", Empty(), as: Ping.self, options: CallOptions(timeout: .seconds(1)))
                }
                #expect(error?.code == .unavailable || error?.code == .deadlineExceeded)
            }
            #expect(stack.log("auth").contains("client key not on the allow-list"), "\(stack.log("auth"))")
            let ping = try await stack.logbook("call", "auth", "$srv.ping")
            #expect(ping.status == 0, "\(ping.stderr)")
        }
    }
}
