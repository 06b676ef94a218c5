// CURVE keys (libzmq's CurveZMQ, RFC 26): 32-byte Curve25519 keys, written in configuration
// as Z85 text (40 characters, RFC 32). `CurveKey` is one key, validated on the way in;
// `CurveKeyPair` is a host's public and secret key. libzmq does the arithmetic (it links
// libsodium): `zmq_curve_keypair` makes a pair, `zmq_curve_public` derives a public key,
// `zmq_z85_decode`/`zmq_z85_encode` convert the text.
import CZMQ
import Foundation

/// A key that could not be read, naming where it came from (usually a setting).
public struct CurveKeyError: Error, CustomStringConvertible, Sendable {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// One CURVE key: 32 raw bytes.
public struct CurveKey: Sendable, Hashable, CustomStringConvertible {
    public static let byteCount = 32
    public static let z85Count = 40

    public let bytes: Data

    /// Raw key bytes (a ZAP request's credentials frame); must be 32 bytes.
    public init(bytes: Data) throws {
        guard bytes.count == Self.byteCount else {
            throw CurveKeyError("a CURVE key is \(Self.byteCount) bytes, got \(bytes.count)")
        }
        self.bytes = Data(bytes)
    }

    /// A key in Z85 text. `name` says where it came from (a setting's name), for the error.
    public init(z85 text: String, name: String = "CURVE key") throws {
        let text = text.trimmingCharacters(in: .whitespaces)
        guard text.utf8.count == Self.z85Count else {
            throw CurveKeyError(
                "\(name) must be a \(Self.z85Count)-character Z85 key (as `logbook keys generate` prints), got \(text.utf8.count) characters")
        }
        var raw = [UInt8](repeating: 0, count: Self.byteCount)
        guard zmq_z85_decode(&raw, text) != nil else {
            throw CurveKeyError("\(name) is not valid Z85 text (as `logbook keys generate` prints)")
        }
        bytes = Data(raw)
    }

    /// The key as 40 characters of Z85.
    public var z85: String {
        var buffer = [CChar](repeating: 0, count: Self.z85Count + 1)
        bytes.withUnsafeBytes { raw in
            _ = zmq_z85_encode(&buffer, raw.bindMemory(to: UInt8.self).baseAddress, raw.count)
        }
        return String(decoding: buffer.prefix(Self.z85Count).map(UInt8.init(bitPattern:)), as: UTF8.self)
    }

    /// Only the public half is ever worth printing; a secret key prints as a placeholder.
    public var description: String { "CurveKey(\(bytes.count) bytes)" }
}

/// A host's CURVE identity.
public struct CurveKeyPair: Sendable, Equatable {
    public let publicKey: CurveKey
    public let secretKey: CurveKey

    /// A fresh pair from libzmq.
    public static func generate() throws -> CurveKeyPair {
        try CurveKeyPair.requireCurve()
        var publicText = [CChar](repeating: 0, count: CurveKey.z85Count + 1)
        var secretText = [CChar](repeating: 0, count: CurveKey.z85Count + 1)
        guard zmq_curve_keypair(&publicText, &secretText) == 0 else { throw ZMQError.last("zmq_curve_keypair") }
        defer { for index in secretText.indices { secretText[index] = 0 } }
        return try CurveKeyPair(
            publicKey: CurveKey(z85: text(publicText)), secretKey: CurveKey(z85: text(secretText)))
    }

    public init(publicKey: CurveKey, secretKey: CurveKey) {
        self.publicKey = publicKey
        self.secretKey = secretKey
    }

    /// The pair for a secret key; `publicKey`, when given, must be the one that belongs to it.
    public init(secretKey: CurveKey, publicKey: CurveKey? = nil, names: (secret: String, public: String)) throws {
        try CurveKeyPair.requireCurve()
        let derived = try CurveKeyPair.publicKey(for: secretKey)
        if let publicKey, publicKey != derived {
            throw CurveKeyError("\(names.public) is not the public key of \(names.secret) (it should be \(derived.z85))")
        }
        self.init(publicKey: derived, secretKey: secretKey)
    }

    /// The public key that belongs to `secretKey`.
    public static func publicKey(for secretKey: CurveKey) throws -> CurveKey {
        var publicText = [CChar](repeating: 0, count: CurveKey.z85Count + 1)
        var secretText = Array(secretKey.z85.utf8CString)
        defer { for index in secretText.indices { secretText[index] = 0 } }
        guard zmq_curve_public(&publicText, &secretText) == 0 else { throw ZMQError.last("zmq_curve_public") }
        return try CurveKey(z85: text(publicText))
    }

    /// Whether this libzmq was built with CURVE (Debian's is).
    public static var isAvailable: Bool { zmq_has("curve") != 0 }

    /// A NUL-terminated C buffer as text.
    static func text(_ buffer: [CChar]) -> String {
        String(decoding: buffer.prefix(while: { $0 != 0 }).map(UInt8.init(bitPattern:)), as: UTF8.self)
    }

    static func requireCurve() throws {
        guard isAvailable else {
            throw CurveKeyError("this libzmq (\(Context.libraryVersion)) was built without CURVE support")
        }
    }
}
