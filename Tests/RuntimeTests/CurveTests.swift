// CURVE with a ZAP allow-list (Curve.swift): an allowed client is served, anyone else gets
// no answer and the service carries on; subscribers need the right keys too; bad keys in
// configuration fail at start-up, naming the setting.
import Foundation
import Logging
import Runtime
import Storage
import Synchronization
import Testing
import Wire
import ZMQ

/// The three parties: the service's host, a host on its allow-list, a host that is not.
struct CurveParties {
    let server: CurveKeyPair
    let client: CurveKeyPair
    let stranger: CurveKeyPair

    init() throws {
        server = try CurveKeyPair.generate()
        client = try CurveKeyPair.generate()
        stranger = try CurveKeyPair.generate()
    }

    var serverSettings: CurveSettings { CurveSettings(keyPair: server, allowed: [client.publicKey]) }

    func clientSettings(_ pair: CurveKeyPair) -> ClientSettings {
        ClientSettings(curve: CurveSettings(keyPair: pair, serverKeys: ["test": server.publicKey]))
    }
}

@Suite struct CurveTests {
    @Test func anAllowedClientIsServed() async throws {
        let keys = try CurveParties()
        try await withRunningService(curve: keys.serverSettings) { endpoint, _, _ in
            let client = try ServiceClient(service: "test", endpoint: endpoint, settings: keys.clientSettings(keys.client))
            defer { client.close() }
            let ping = try await client.call("$srv.ping", Empty(), as: Ping.self, options: CallOptions(timeout: .seconds(2)))
            #expect(ping.service == "test")
            let echoed = try await client.call(
                "test.echo", EchoBody(text: "sealed"), as: EchoBody.self, options: CallOptions(timeout: .seconds(2)))
            #expect(echoed.text == "sealed")
        }
    }

    @Test func aClientOffTheAllowListGetsNoAnswerAndTheServiceCarriesOn() async throws {
        let keys = try CurveParties()
        try await withRunningService(curve: keys.serverSettings) { endpoint, _, _ in
            let stranger = try ServiceClient(service: "test", endpoint: endpoint, settings: keys.clientSettings(keys.stranger))
            defer { stranger.close() }
            let clock = ContinuousClock()
            let start = clock.now
            let error = await #expect(throws: ServiceError.self) {
                _ = try await stranger.call("$srv.ping", Empty(), as: Ping.self, options: CallOptions(timeout: .seconds(1)))
            }
            #expect(error?.code == .unavailable || error?.code == .deadlineExceeded)
            #expect(clock.now - start < .seconds(5), "gave up at its deadline")

            let client = try ServiceClient(service: "test", endpoint: endpoint, settings: keys.clientSettings(keys.client))
            defer { client.close() }
            let ping = try await client.call("$srv.ping", Empty(), as: Ping.self, options: CallOptions(timeout: .seconds(2)))
            #expect(ping.service == "test")
        }
    }

    @Test func aClientExpectingAnotherServerKeyGetsNoAnswer() async throws {
        let keys = try CurveParties()
        try await withRunningService(curve: keys.serverSettings) { endpoint, _, _ in
            // Allowed client key, but it expects the stranger to be the server.
            let settings = ClientSettings(curve: CurveSettings(keyPair: keys.client, serverKeys: ["test": keys.stranger.publicKey]))
            let client = try ServiceClient(service: "test", endpoint: endpoint, settings: settings)
            defer { client.close() }
            let error = await #expect(throws: ServiceError.self) {
                _ = try await client.call("$srv.ping", Empty(), as: Ping.self, options: CallOptions(timeout: .seconds(1)))
            }
            #expect(error?.code == .unavailable || error?.code == .deadlineExceeded)
        }
    }

    @Test func aPlainClientGetsNoAnswerAndNothingBreaks() async throws {
        let keys = try CurveParties()
        try await withRunningService(curve: keys.serverSettings) { endpoint, _, _ in
            let plain = try ServiceClient(service: "test", endpoint: endpoint)
            defer { plain.close() }
            let error = await #expect(throws: ServiceError.self) {
                _ = try await plain.call("$srv.ping", Empty(), as: Ping.self, options: CallOptions(timeout: .seconds(1)))
            }
            #expect(error?.code == .unavailable || error?.code == .deadlineExceeded)
            // A raw REQ speaking the protocol in the clear: nothing comes back.
            let raw = try await rawExchange(
                .dealer, endpoint: endpoint, messages: [[Data(), json(#"{"v":1,"id":"r1","method":"$srv.ping","body":{}}"#)]],
                expect: 1, timeoutMs: 500)
            #expect(raw.isEmpty)

            let client = try ServiceClient(service: "test", endpoint: endpoint, settings: keys.clientSettings(keys.client))
            defer { client.close() }
            let ping = try await client.call("$srv.ping", Empty(), as: Ping.self, options: CallOptions(timeout: .seconds(2)))
            #expect(ping.service == "test")
        }
    }

    @Test func anAllowedSubscriberReceivesEventsAndAStrangerDoesNot() async throws {
        let keys = try CurveParties()
        try await withRunningService(curve: keys.serverSettings) { endpoint, _, scratch in
            let events = "ipc://\(scratch.path)/test.events.sock"
            // The publisher sends a heartbeat every 200 ms, and the note's event after its commit.
            let client = try ServiceClient(service: "test", endpoint: endpoint, settings: keys.clientSettings(keys.client))
            defer { client.close() }
            async let allowed = Self.subscribe(events, pair: keys.client, serverKey: keys.server.publicKey, until: "note.created")
            async let refused = Self.subscribe(events, pair: keys.stranger, serverKey: keys.server.publicKey, until: "note.created")
            try await Task.sleep(for: .milliseconds(300))
            _ = try await client.call(
                "test.note.add", NoteBody(text: "over curve"), as: NoteResult.self, options: CallOptions(timeout: .seconds(2)))
            let (received, strangerReceived) = try await (allowed, refused)
            #expect(received.contains(EventHeartbeat.topic))
            #expect(received.contains("note.created"))
            #expect(strangerReceived.isEmpty)
        }
    }

    @Test func aConsumerWithTheStackKeysAppliesEvents() async throws {
        let keys = try CurveParties()
        try await withRunningService(curve: keys.serverSettings) { endpoint, _, scratch in
            let curve = CurveSettings(keyPair: keys.client, serverKeys: ["test": keys.server.publicKey])
            let client = try ServiceClient(service: "test", endpoint: endpoint, settings: ClientSettings(curve: curve))
            defer { client.close() }
            let sink = CollectingSink()
            var logger = Logger(label: "consumer")
            logger.logLevel = .critical
            let consumer = EventConsumer(
                settings: .init(
                    producer: "test", eventsEndpoint: "ipc://\(scratch.path)/test.events.sock", pollInterval: .seconds(60),
                    rpcTimeout: .seconds(2), curve: curve),
                producerRPC: client, sink: sink, logger: logger)
            let task = Task { try await consumer.run() }
            defer { task.cancel() }
            for _ in 0..<100 where consumer.position < 0 { try await Task.sleep(for: .milliseconds(20)) }
            _ = try await client.call(
                "test.note.add", NoteBody(text: "applied"), as: NoteResult.self, options: CallOptions(timeout: .seconds(2)))
            for _ in 0..<100 where consumer.position < 1 { try await Task.sleep(for: .milliseconds(20)) }
            #expect(consumer.position == 1)
            #expect(sink.types == ["note.created"])
        }
    }

    @Test func aServerWithCurveOnAndNoAllowListDoesNotStart() throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let keys = try CurveParties()
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        let error = #expect(throws: ConfigurationError.self) {
            _ = try ServiceHost(
                descriptor: ServiceDescriptor(name: "test"), database: DatabaseSettings(path: scratch.path + "/test.sqlite"),
                migrator: TestService.migrator, eventsEndpoint: "ipc://\(scratch.path)/test.events.sock",
                curve: CurveSettings(keyPair: keys.server), logger: logger)
        }
        #expect(error?.description.contains("LOGBOOK_CURVE_ALLOW") == true)
    }

    // MARK: Keys and configuration

    @Test func generatedKeysRoundTripThroughZ85() throws {
        let pair = try CurveKeyPair.generate()
        #expect(pair.publicKey.z85.count == 40)
        #expect(try CurveKey(z85: pair.publicKey.z85) == pair.publicKey)
        #expect(try CurveKeyPair.publicKey(for: pair.secretKey) == pair.publicKey)
        #expect(pair.publicKey != pair.secretKey)
    }

    @Test func noCurveSettingsMeansPlain() throws {
        #expect(try StackConfiguration.scratch("/tmp/lb-none").curve == nil)
    }

    @Test func theStackConfigurationReadsEveryKey() throws {
        let host = try CurveKeyPair.generate()
        let records = try CurveKeyPair.generate()
        let other = try CurveKeyPair.generate()
        let configuration = try StackConfiguration.scratch(
            "/tmp/lb-curve",
            extra: [
                "LOGBOOK_CURVE_SECRET_KEY": host.secretKey.z85,
                "LOGBOOK_CURVE_PUBLIC_KEY": host.publicKey.z85,
                "LOGBOOK_RECORDS_CURVE_PUBLIC_KEY": records.publicKey.z85,
                "LOGBOOK_CURVE_ALLOW": " \(host.publicKey.z85), \(other.publicKey.z85) ,",
            ])
        let curve = try #require(configuration.curve)
        #expect(curve.keyPair == host)
        #expect(curve.serverKey(for: "records") == records.publicKey)
        #expect(curve.serverKey(for: "auth") == host.publicKey)
        #expect(curve.allowed == [host.publicKey, other.publicKey])
        // Without the public key, it is derived from the secret one.
        let derived = try StackConfiguration.scratch("/tmp/lb-curve", extra: ["LOGBOOK_CURVE_SECRET_KEY": host.secretKey.z85])
        #expect(derived.curve?.keyPair == host)
    }

    @Test func keysAsPrintedByKeysGenerateReadBackFromAConfigFile() throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let host = try CurveKeyPair.generate()
        let other = try CurveKeyPair.generate()
        // Z85 has '#', '=' and '$': quoted, as `logbook keys generate` prints them.
        let file = """
            # keys
            LOGBOOK_CURVE_PUBLIC_KEY='\(host.publicKey.z85)'
            LOGBOOK_CURVE_SECRET_KEY='\(host.secretKey.z85)'
            LOGBOOK_CURVE_ALLOW='\(host.publicKey.z85),\(other.publicKey.z85)'
            LOGBOOK_STORE_CURVE_PUBLIC_KEY=\(other.publicKey.z85)
            """
        try file.write(toFile: scratch.path + "/logbook.conf", atomically: true, encoding: .utf8)
        let configuration = try StackConfiguration.load(environment: ["LOGBOOK_HOME": scratch.path])
        let curve = try #require(configuration.curve)
        #expect(curve.keyPair == host)
        #expect(curve.allowed == [host.publicKey, other.publicKey])
        #expect(curve.serverKey(for: "store") == other.publicKey)
    }

    @Test(arguments: [
        (["LOGBOOK_CURVE_SECRET_KEY": "too-short"], "LOGBOOK_CURVE_SECRET_KEY must be a 40-character Z85 key"),
        (["LOGBOOK_CURVE_SECRET_KEY": String(repeating: "\"", count: 40)], "LOGBOOK_CURVE_SECRET_KEY is not valid Z85"),
        (["LOGBOOK_CURVE_ALLOW": "x"], "LOGBOOK_CURVE_ALLOW is set but LOGBOOK_CURVE_SECRET_KEY is not"),
        (["LOGBOOK_STORE_CURVE_PUBLIC_KEY": "x"], "LOGBOOK_STORE_CURVE_PUBLIC_KEY is set but LOGBOOK_CURVE_SECRET_KEY is not"),
    ])
    func aBadKeyNamesItsSetting(values: [String: String], message: String) throws {
        let error = #expect(throws: ConfigurationError.self) {
            _ = try StackConfiguration.scratch("/tmp/lb-curve", extra: values)
        }
        #expect(error?.description.contains(message) == true, "\(error?.description ?? "no error")")
    }

    @Test func aBadAllowListEntryOrAMismatchedPublicKeyNamesItsSetting() throws {
        let host = try CurveKeyPair.generate()
        let other = try CurveKeyPair.generate()
        let badEntry = #expect(throws: ConfigurationError.self) {
            _ = try StackConfiguration.scratch(
                "/tmp/lb-curve",
                extra: ["LOGBOOK_CURVE_SECRET_KEY": host.secretKey.z85, "LOGBOOK_CURVE_ALLOW": "\(other.publicKey.z85),nope"])
        }
        #expect(badEntry?.description.contains("LOGBOOK_CURVE_ALLOW entry 2") == true, "\(badEntry?.description ?? "")")
        let badServerKey = #expect(throws: ConfigurationError.self) {
            _ = try StackConfiguration.scratch(
                "/tmp/lb-curve",
                extra: ["LOGBOOK_CURVE_SECRET_KEY": host.secretKey.z85, "LOGBOOK_AUTH_CURVE_PUBLIC_KEY": "short"])
        }
        #expect(badServerKey?.description.contains("LOGBOOK_AUTH_CURVE_PUBLIC_KEY") == true)
        let mismatch = #expect(throws: ConfigurationError.self) {
            _ = try StackConfiguration.scratch(
                "/tmp/lb-curve",
                extra: ["LOGBOOK_CURVE_SECRET_KEY": host.secretKey.z85, "LOGBOOK_CURVE_PUBLIC_KEY": other.publicKey.z85])
        }
        #expect(mismatch?.description.contains("LOGBOOK_CURVE_PUBLIC_KEY is not the public key of LOGBOOK_CURVE_SECRET_KEY") == true)
    }

    // MARK: Helpers

    /// Topics a CURVE subscriber receives within ~1.5 s, stopping early at `until`.
    static func subscribe(_ endpoint: String, pair: CurveKeyPair, serverKey: CurveKey, until: String) async throws -> [String] {
        try await blocking {
            let socket = try Socket(.sub)
            defer { socket.close() }
            try socket.set(.curveServerKey(serverKey.bytes))
            try socket.set(.curvePublicKey(pair.publicKey.bytes))
            try socket.set(.curveSecretKey(pair.secretKey.bytes))
            try socket.set(.subscribe(Data()))
            try socket.set(.receiveTimeout(milliseconds: 100))
            try socket.connect(endpoint)
            var topics: [String] = []
            let deadline = ContinuousClock.now + .milliseconds(1500)
            while ContinuousClock.now < deadline {
                guard let frames = try socket.receive(dontWait: false), let topic = frames.first else { continue }
                topics.append(String(decoding: topic, as: UTF8.self))
                if topics.last == until { break }
            }
            return topics
        }
    }
}

/// A sink that keeps the event types it applied, in memory.
final class CollectingSink: EventSink, Sendable {
    private let state = Mutex<(position: Int64, types: [String])>((0, []))
    var types: [String] { state.withLock { $0.types } }

    func position() async throws -> Int64? { state.withLock { $0.position } }

    func apply(_ events: [Event]) async throws {
        state.withLock { state in
            for event in events.sorted(by: { $0.seq < $1.seq }) where event.seq > state.position {
                state.types.append(event.type)
                state.position = event.seq
            }
        }
    }
}
