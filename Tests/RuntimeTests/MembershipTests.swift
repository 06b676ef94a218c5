// Stack membership in the dispatcher: event replay and the operator's statistics only for
// callers presenting the stack key; everyone else gets permission_denied, or counts only.
import Foundation
import Logging
import Runtime
import Storage
import Testing
import Wire

@Suite struct MembershipTests {
    static let key = "k" + String(repeating: "0", count: 63)

    /// A keyed dispatcher with one event in its outbox and one error that quotes user input.
    func withKeyedService(_ body: (Dispatcher) async throws -> Void) async throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let host = try ServiceHost(
            descriptor: ServiceDescriptor(name: "test"), database: DatabaseSettings(path: scratch.path + "/t.sqlite"),
            migrator: TestService.migrator, eventsEndpoint: nil, logger: Logger(label: "t"))
        let dispatcher = Dispatcher(
            descriptor: host.descriptor, router: TestService.router(host: host), sessions: FakeSessions(),
            events: host.database, stackKey: Self.key, logger: Logger(label: "t"))
        try await body(dispatcher)
    }

    func call(_ dispatcher: Dispatcher, _ method: String, stackKey: String?, body: String = "{}") async throws -> Reply {
        var request = #"{"v":1,"id":"r1","method":"\#(method)","body":\#(body)"#
        if let stackKey { request += #","stackKey":"\#(stackKey)""# }
        request += "}"
        return try WireCoding.decode(Reply.self, from: await dispatcher.handle(Data(request.utf8)))
    }

    @Test func eventsSinceOnlyForMembers() async throws {
        try await withKeyedService { dispatcher in
            let added = try await call(dispatcher, "test.note.add", stackKey: nil, body: #"{"text":"alice's secret"}"#)
            #expect(added.ok)
            for stranger in [nil, "", "wrong", String(Self.key.dropLast()), Self.key + "0", Self.key.uppercased()] {
                let reply = try await call(dispatcher, "events.since", stackKey: stranger, body: #"{"after":0}"#)
                #expect(reply.error?.code == .permissionDenied, "\(String(describing: stranger))")
                #expect(reply.error?.field == "stackKey")
                #expect(reply.result == nil)
            }
            let member = try await call(dispatcher, "events.since", stackKey: Self.key, body: #"{"after":0}"#)
            #expect(member.ok)
            guard case .array(let events)? = member.result?["events"] else { Issue.record("no events"); return }
            #expect(events.first?["data"]?["text"] == "alice's secret")
        }
    }

    @Test func statsToStrangersShowCountsOnly() async throws {
        try await withKeyedService { dispatcher in
            // lastError is there and null before any error.
            let fresh = await dispatcher.handle(Data(#"{"v":1,"id":"a","method":"$srv.stats"}"#.utf8))
            let freshObject = try JSONSerialization.jsonObject(with: fresh) as? [String: Any]
            let freshResult = try #require(freshObject?["result"] as? [String: Any])
            #expect(freshResult.keys.contains("lastError"))
            #expect(freshResult["lastError"] is NSNull)

            // An error that quotes user input: an empty note, then an unknown method name.
            _ = try await call(dispatcher, "test.note.add", stackKey: nil, body: #"{"text":""}"#)
            let stranger = try await call(dispatcher, "$srv.stats", stackKey: "nope")
            let lastError = try #require(stranger.result?["lastError"])
            #expect(stranger.result?["member"] == false)
            #expect(lastError["code"] == "invalid_argument")
            #expect(lastError["method"] == "test.note.add")
            #expect(lastError["at"]?.stringValue != nil)
            #expect(lastError["message"] == nil && lastError["field"] == nil)
            #expect(stranger.result?["methods"]?["test.note.add"]?["errors"] == 1)

            let member = try await call(dispatcher, "$srv.stats", stackKey: Self.key)
            #expect(member.result?["member"] == true)
            #expect(member.result?["lastError"]?["field"] == "text")
            #expect(member.result?["lastError"]?["message"]?.stringValue?.isEmpty == false)
        }
    }

    @Test func keysCompareWholly() {
        #expect(StackKeys.matches("abc", "abc"))
        #expect(!StackKeys.matches("abd", "abc"))
        #expect(!StackKeys.matches("ab", "abc"))
        #expect(!StackKeys.matches("abcd", "abc"))
        #expect(!StackKeys.matches(nil, "abc"))
    }

    @Test func nonLoopbackTCPNeedsCurve() throws {
        for endpoint in ["tcp://127.0.0.1:7101", "tcp://localhost:7101", "tcp://[::1]:7101", "tcp://127.0.0.1:*", "ipc:///tmp/x.sock"] {
            #expect(throws: Never.self) { try StackKeys.requireCurve(toBind: endpoint, curve: nil, name: "t") }
        }
        for endpoint in ["tcp://0.0.0.0:7101", "tcp://*:7101", "tcp://10.0.0.12:7101", "tcp://eth0:7101", "tcp://[::]:7101"] {
            #expect(throws: ConfigurationError.self, "\(endpoint)") {
                try StackKeys.requireCurve(toBind: endpoint, curve: nil, name: "t")
            }
        }
        let pair = try CurveSettings.generateKeyPair()
        let curve = try #require(
            try StackConfiguration(values: [
                "LOGBOOK_HOME": "/tmp/x", "LOGBOOK_CURVE_SECRET_KEY": pair.secretKey, "LOGBOOK_CURVE_ALLOW": pair.publicKey,
            ]).curve)
        #expect(throws: Never.self) { try StackKeys.requireCurve(toBind: "tcp://0.0.0.0:7101", curve: curve, name: "t") }
    }

    @Test func aServiceRefusesToBindAnOpenTCPEndpoint() async throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        var logger = Logger(label: "t")
        logger.logLevel = .critical
        let host = try ServiceHost(
            descriptor: ServiceDescriptor(name: "test"), database: DatabaseSettings(path: scratch.path + "/t.sqlite"),
            migrator: TestService.migrator, eventsEndpoint: nil, logger: logger)
        let dispatcher = host.dispatcher(router: TestService.router(host: host), sessions: nil)
        let server = ServiceServer(dispatcher: dispatcher, settings: ServerSettings(endpoint: "tcp://0.0.0.0:*"), logger: logger)
        await #expect(throws: ConfigurationError.self) { try await server.run() }
        #expect(throws: ConfigurationError.self) {
            _ = try EventPublisher(service: "test", endpoint: "tcp://0.0.0.0:*", reader: host.database, logger: logger)
        }
    }

    /// The key files: made once, owner-only, read back by every later load; TCP endpoints
    /// switch CURVE on with the generated pair, ipc ones do not.
    @Test func keyFilesAreMadeOnceAndOwnerOnly() throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let environment = ["LOGBOOK_HOME": scratch.path, "LOGBOOK_RECORDS_EVENTS": "tcp://127.0.0.1:7999"]
        #expect(try StackConfiguration.load(environment: environment).stackKey == nil)
        let first = try StackConfiguration.load(environment: environment, createKeys: true)
        let second = try StackConfiguration.load(environment: environment, createKeys: true)
        let key = try #require(first.stackKey)
        #expect(key.count == 64 && second.stackKey == key)
        let curve = try #require(first.curve)
        #expect(second.curve == curve)
        #expect(curve.allowed == [curve.keyPair.publicKey])
        for file in [StackKeys.keyFileName, StackKeys.curveFileName] {
            let mode = try FileManager.default.attributesOfItem(atPath: "\(scratch.path)/data/\(file)")[.posixPermissions] as? Int
            #expect(mode == 0o600, "\(file)")
        }
        // Handed to children, the keys stay in their files.
        #expect(first.environment[StackKeys.setting] == nil)
        #expect(first.environment[CurveSettings.secretKeySetting] == nil)
        // ipc only: same stack key, CURVE off.
        let ipc = try StackConfiguration.load(environment: ["LOGBOOK_HOME": scratch.path])
        #expect(ipc.stackKey == key && ipc.curve == nil)
        // A setting wins over the file.
        let set = try StackConfiguration.load(environment: ["LOGBOOK_HOME": scratch.path, "LOGBOOK_STACK_KEY": "shared"])
        #expect(set.stackKey == "shared" && set.environment[StackKeys.setting] == "shared")
    }
}
