// CURVE between machines (docs/operations.md, "More than one machine"): encryption and
// authentication on every socket, switched on by configuration, off by default.
//
// With `LOGBOOK_CURVE_SECRET_KEY` set, every ROUTER and PUB a process binds is a CURVE
// server with this host's keypair, and every DEALER and SUB it connects is a CURVE client
// with the same pair, expecting the service's public key (`LOGBOOK_<SERVICE>_CURVE_PUBLIC_KEY`,
// or this host's own key when the service runs here). A server accepts only the client keys
// in `LOGBOOK_CURVE_ALLOW`: a ZAP handler (RFC 27) answers libzmq's question for each new
// connection. A server with CURVE on and an empty allow-list refuses to start.
import Foundation
import Logging
import Synchronization
import ZMQ

/// This host's CURVE settings, read once from the stack configuration.
public struct CurveSettings: Sendable, Equatable {
    /// This host's pair: the server key of its services and the client key of its clients.
    public var keyPair: CurveKeyPair
    /// The public key each service answers with; a service not listed is expected to run on
    /// this host, with `keyPair.publicKey`.
    public var serverKeys: [String: CurveKey]
    /// Client public keys a server accepts.
    public var allowed: Set<CurveKey>

    public static let secretKeySetting = "LOGBOOK_CURVE_SECRET_KEY"
    public static let publicKeySetting = "LOGBOOK_CURVE_PUBLIC_KEY"
    public static let allowSetting = "LOGBOOK_CURVE_ALLOW"

    public init(keyPair: CurveKeyPair, serverKeys: [String: CurveKey] = [:], allowed: Set<CurveKey> = []) {
        self.keyPair = keyPair
        self.serverKeys = serverKeys
        self.allowed = allowed
    }

    /// The public key a client of `service` expects the server to prove it holds.
    public func serverKey(for service: String) -> CurveKey {
        serverKeys[service] ?? keyPair.publicKey
    }

    /// A new keypair as Z85 text (`logbook keys generate`).
    public static func generateKeyPair() throws -> (publicKey: String, secretKey: String) {
        do {
            let pair = try CurveKeyPair.generate()
            return (pair.publicKey.z85, pair.secretKey.z85)
        } catch let error as CurveKeyError {
            throw ConfigurationError(error.description)
        }
    }

    static func serverKeySetting(_ service: String) -> String { StackConfiguration.key(service, "CURVE_PUBLIC_KEY") }

    /// Reads the CURVE settings from configuration values: nil when CURVE is off (no secret
    /// key). Every key is checked here, so a bad one stops a process at start-up, naming
    /// the setting.
    static func read(_ values: [String: String], services: [String]) throws -> CurveSettings? {
        func value(_ key: String) -> String? {
            guard let text = values[key]?.trimmingSpaces, !text.isEmpty else { return nil }
            return text
        }
        func key(_ setting: String) throws -> CurveKey? {
            guard let text = value(setting) else { return nil }
            do {
                return try CurveKey(z85: text, name: setting)
            } catch let error as CurveKeyError {
                throw ConfigurationError(error.description)
            }
        }
        let serverKeySettings = services.map { ($0, serverKeySetting($0)) }
        guard let secret = try key(secretKeySetting) else {
            let stray = [publicKeySetting, allowSetting] + serverKeySettings.map(\.1)
            if let set = stray.first(where: { value($0) != nil }) {
                throw ConfigurationError(
                    "\(set) is set but \(secretKeySetting) is not: CURVE needs this host's keypair (`logbook keys generate`)")
            }
            return nil
        }
        let pair: CurveKeyPair
        do {
            pair = try CurveKeyPair(
                secretKey: secret, publicKey: try key(publicKeySetting), names: (secretKeySetting, publicKeySetting))
        } catch let error as CurveKeyError {
            throw ConfigurationError(error.description)
        }
        var serverKeys: [String: CurveKey] = [:]
        for (service, setting) in serverKeySettings {
            serverKeys[service] = try key(setting)
        }
        var allowed: Set<CurveKey> = []
        for (index, text) in (value(allowSetting) ?? "").split(separator: ",").enumerated() {
            let text = text.trimmingSpaces
            if text.isEmpty { continue }
            do {
                allowed.insert(try CurveKey(z85: text, name: "\(allowSetting) entry \(index + 1)"))
            } catch let error as CurveKeyError {
                throw ConfigurationError(error.description)
            }
        }
        return CurveSettings(keyPair: pair, serverKeys: serverKeys, allowed: allowed)
    }

    // MARK: Sockets

    /// Makes a socket (before bind) a CURVE server whose connections the ZAP handler checks
    /// under `domain`.
    func configureServer(_ socket: Socket, domain: String) throws {
        try socket.set(.zapDomain(domain))
        try socket.set(.curveServer(true))
        try socket.set(.curveSecretKey(keyPair.secretKey.bytes))
    }

    /// Makes a socket (before connect) a CURVE client of `service`.
    func configureClient(_ socket: Socket, service: String) throws {
        try socket.set(.curveServerKey(serverKey(for: service).bytes))
        try socket.set(.curvePublicKey(keyPair.publicKey.bytes))
        try socket.set(.curveSecretKey(keyPair.secretKey.bytes))
    }

    /// Registers a server's allow-list with the process's ZAP handler (starting it if need
    /// be) and returns the ZAP domain its socket must carry. Throws when the allow-list is
    /// empty: CURVE on means only listed clients, and an empty list would let none in.
    func registerServer(name: String, logger: Logger) throws -> ZAPHandler.Registration {
        try requireAllowList(name)
        return try ZAPHandler.shared.register(name: name, allowed: allowed, logger: logger)
    }

    /// Throws unless a server named `name` has someone to let in.
    func requireAllowList(_ name: String) throws {
        guard allowed.isEmpty else { return }
        throw ConfigurationError(
            "\(name): CURVE is on (\(Self.secretKeySetting) is set) but \(Self.allowSetting) is empty; "
                + "list the public keys of every host allowed to connect, this one's included")
    }
}

/// The process's ZAP handler (RFC 27): libzmq asks it, on `inproc://zeromq.zap.01` in the
/// shared context, whether each new CURVE connection may proceed. Each CURVE server
/// registers its allow-list under a ZAP domain of its own; a request for an unknown domain is
/// refused. The handler starts with the first registration and then runs for the life of
/// the process: libzmq lets every CURVE client in when no handler is bound, so it must not
/// disappear while a CURVE socket might still be closing.
public final class ZAPHandler: Sendable {
    public static let endpoint = "inproc://zeromq.zap.01"
    public static let shared = ZAPHandler()

    /// A server's place in the handler; `cancel` when its socket is closed.
    public struct Registration: Sendable {
        public let domain: String
        let handler: ZAPHandler
        public func cancel() { handler.unregister(domain) }
    }

    private struct Entry: Sendable {
        var name: String
        var allowed: Set<CurveKey>
        var logger: Logger
    }

    private struct State: Sendable {
        var entries: [String: Entry] = [:]
        var next = 0
        var pump: SocketPump?
        /// When each refused (domain, key) was last logged: a refused client reconnects
        /// every few tens of milliseconds, and one line a minute says enough.
        var refusalsLogged: [String: ContinuousClock.Instant] = [:]
    }

    private let state = Mutex(State())
    /// Serialises starting the handler (which binds the inproc endpoint).
    private let starting = Mutex(())

    init() {}

    func register(name: String, allowed: Set<CurveKey>, logger: Logger) throws -> Registration {
        try start(logger: logger)
        let domain = state.withLock { state in
            state.next += 1
            let domain = "logbook.\(name).\(state.next)"
            state.entries[domain] = Entry(name: name, allowed: allowed, logger: logger)
            return domain
        }
        return Registration(domain: domain, handler: self)
    }

    func unregister(_ domain: String) {
        _ = state.withLock { $0.entries.removeValue(forKey: domain) }
    }

    private func start(logger: Logger) throws {
        try starting.withLock { _ in
            if state.withLock({ $0.pump }) != nil { return }
            let pump = try SocketPump(
                name: "zap",
                setup: {
                    // A ROUTER keeps libzmq's REQ-style envelope ([routing id, "", request…])
                    // and, unlike REP, can take a burst of requests before answering.
                    let socket = try Socket(.router)
                    try socket.bind(Self.endpoint)
                    return socket
                },
                onEvent: { [self] event in
                    switch event {
                    case .message(let frames):
                        if let reply = answer(frames) { state.withLock { $0.pump }?.send(reply) }
                    case .failed(let reason):
                        logger.critical("ZAP handler failed: CURVE connections are no longer checked", metadata: ["zmq.reason": "\(reason)"])
                    case .dropped(_, let reason):
                        logger.warning("ZAP reply dropped", metadata: ["zmq.reason": "\(reason)"])
                    case .delivered: break
                    }
                })
            state.withLock { $0.pump = pump }
        }
    }

    /// The reply to one ZAP request, envelope included; nil for a message that is not one.
    func answer(_ frames: [Data]) -> [Data]? {
        // [routing id, "", version, request id, domain, address, identity, mechanism, credentials…]
        guard let delimiter = frames.firstIndex(where: \.isEmpty), frames.count >= delimiter + 7 else { return nil }
        let envelope = Array(frames[...delimiter])
        let request = Array(frames[(delimiter + 1)...])
        let version = String(decoding: request[0], as: UTF8.self)
        let requestId = request[1]
        let domain = String(decoding: request[2], as: UTF8.self)
        let address = String(decoding: request[3], as: UTF8.self)
        let mechanism = String(decoding: request[5], as: UTF8.self)
        func reply(_ status: String, _ text: String, user: String = "") -> [Data] {
            envelope + [Data("1.0".utf8), requestId, Data(status.utf8), Data(text.utf8), Data(user.utf8), Data()]
        }
        guard version == "1.0" else { return reply("400", "unsupported ZAP version") }
        guard let entry = state.withLock({ $0.entries[domain] }) else {
            // Plain sockets carry no domain and are not ours to judge.
            if mechanism == "NULL" && domain.isEmpty { return reply("200", "OK") }
            return reply("400", "unknown ZAP domain")
        }
        guard mechanism == "CURVE", request.count >= 7, let key = try? CurveKey(bytes: request[6]) else {
            entry.logger.warning(
                "connection refused: not CURVE",
                metadata: ["zap.server": "\(entry.name)", "zap.mechanism": "\(mechanism)", "zap.address": "\(address)"])
            return reply("400", "CURVE required")
        }
        guard entry.allowed.contains(key) else {
            if shouldLogRefusal(domain: domain, key: key) {
                entry.logger.warning(
                    "connection refused: client key not on the allow-list",
                    metadata: ["zap.server": "\(entry.name)", "zap.clientKey": "\(key.z85)", "zap.address": "\(address)"])
            }
            return reply("400", "client key not allowed")
        }
        entry.logger.debug(
            "connection allowed", metadata: ["zap.server": "\(entry.name)", "zap.clientKey": "\(key.z85)", "zap.address": "\(address)"])
        return reply("200", "OK", user: key.z85)
    }

    private func shouldLogRefusal(domain: String, key: CurveKey) -> Bool {
        let now = ContinuousClock.now
        let id = domain + " " + key.z85
        return state.withLock { state in
            if let last = state.refusalsLogged[id], now - last < .seconds(60) { return false }
            if state.refusalsLogged.count > 10_000 { state.refusalsLogged.removeAll() }
            state.refusalsLogged[id] = now
            return true
        }
    }
}
