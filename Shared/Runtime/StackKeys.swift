// Stack membership (docs/protocol.md, "Stack membership"; docs/operations.md).
//
// Every process of a stack proves it belongs by presenting the **stack key**, a random
// secret it reads from `<data dir>/stack.key` (mode 0600, made by `logbook stack up` or the
// first service to start) or from the `LOGBOOK_STACK_KEY` setting (several hosts share one).
// The runtime's client sends it in the request header (`stackKey`); the dispatcher compares
// it in constant time and gives event replay and the operator view of `$srv.stats` only to
// callers that present it.
//
// Whenever a service endpoint is TCP, CURVE is on: unless the configuration names CURVE
// keys itself, a keypair for this host is made on first use in `<data dir>/curve.key` (0600)
// and this host's key is the allow-list. Over `ipc://` the run directory (0700) and the
// socket files (created under umask 077) keep other Unix users out.
import Foundation
import Synchronization
import ZMQ
import Wire

public enum StackKeys {
    public static let setting = "LOGBOOK_STACK_KEY"
    public static let keyFileName = "stack.key"
    public static let curveFileName = "curve.key"

    private static let process = Mutex<String?>(nil)

    /// This process's stack key: set once by `ServiceMain` before the service is built, and
    /// the default of every `Dispatcher`; nil in tests, where every caller is a member.
    public static var processKey: String? { process.withLock { $0 } }

    public static func setProcessKey(_ key: String) { process.withLock { $0 = key } }

    /// A new stack key: 32 random bytes as 64 hexadecimal characters.
    public static func generate() throws -> String {
        var bytes = [UInt8](repeating: 0, count: 32)
        var generator = SystemRandomNumberGenerator()
        for index in bytes.indices { bytes[index] = generator.next() }
        return Hex.encode(bytes)
    }

    /// Creates the stack key file and, when an endpoint is TCP and the configuration names
    /// no CURVE keys, the CURVE key file, each only if missing. Several processes may race
    /// here: each file appears whole, once (written aside, then hard-linked into place), and
    /// the losers read the winner's.
    public static func ensure(_ configuration: StackConfiguration) throws {
        try FileManager.default.createDirectory(
            atPath: configuration.dataDirectory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        if configuration.values[setting]?.isEmpty ?? true {
            try createOnce(configuration.dataDirectory + "/" + keyFileName, contents: try generate() + "\n")
        }
        if configuration.needsGeneratedCurve {
            let pair = try CurveSettings.generateKeyPair()
            let text = """
                # Made by logbook on first use because a service endpoint is TCP (docs/operations.md).
                \(CurveSettings.publicKeySetting)=\(pair.publicKey)
                \(CurveSettings.secretKeySetting)=\(pair.secretKey)
                \(CurveSettings.allowSetting)=\(pair.publicKey)

                """
            try createOnce(configuration.dataDirectory + "/" + curveFileName, contents: text)
        }
    }

    static func createOnce(_ path: String, contents: String) throws {
        if FileManager.default.fileExists(atPath: path) { return }
        let temporary = path + ".\(getpid()).tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        guard fd >= 0 else { throw ConfigurationError("cannot create \(temporary): \(String(cString: strerror(errno)))") }
        let data = Array(contents.utf8)
        let written = data.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        let synced = fsync(fd)
        close(fd)
        defer { unlink(temporary) }
        guard written == data.count, synced == 0 else {
            throw ConfigurationError("cannot write \(temporary): \(String(cString: strerror(errno)))")
        }
        if link(temporary, path) != 0 && errno != EEXIST {
            throw ConfigurationError("cannot create \(path): \(String(cString: strerror(errno)))")
        }
        // The link is an entry in the directory: flushed, so a power cut cannot take the key
        // back after the services (or other hosts, given a copy) started using it.
        unlink(temporary)
        do { try FileSync.syncParent(path) } catch { throw ConfigurationError("\(error)") }
    }

    /// Equal keys, compared in time that does not depend on where they differ.
    public static func matches(_ presented: String?, _ expected: String) -> Bool {
        guard let presented else { return false }
        let a = Array(presented.utf8)
        let b = Array(expected.utf8)
        var difference = UInt8(a.count == b.count ? 0 : 1)
        for index in 0..<b.count {
            difference |= (index < a.count ? a[index] : 0) ^ b[index]
        }
        return difference == 0
    }

    /// Whether a `tcp://` endpoint's host is this machine's loopback interface.
    public static func isLoopback(_ endpoint: String) -> Bool {
        guard endpoint.hasPrefix("tcp://") else { return true }
        var host = String(endpoint.dropFirst("tcp://".count))
        // tcp://interface;address binds a source interface first: judge the address.
        if let semicolon = host.lastIndex(of: ";") { host = String(host[host.index(after: semicolon)...]) }
        if host.hasPrefix("[") {
            host = String(host.dropFirst().prefix { $0 != "]" })
        } else if let colon = host.lastIndex(of: ":") {
            host = String(host[..<colon])
        }
        return host == "localhost" || host == "::1" || host.hasPrefix("127.") || host == "lo"
    }

    /// Refuses to bind a TCP endpoint another machine could reach without CURVE.
    public static func requireCurve(toBind endpoint: String, curve: CurveSettings?, name: String) throws {
        guard endpoint.hasPrefix("tcp://"), curve == nil, !isLoopback(endpoint) else { return }
        throw ConfigurationError(
            "\(name): refusing to bind \(endpoint) without CURVE: another machine could read every user's data; "
                + "set LOGBOOK_CURVE_SECRET_KEY (docs/operations.md, \"More than one machine\") or bind 127.0.0.1")
    }
}
