// TLS inside the edge (optional): LOGBOOK_HTTP_TLS_CERT and LOGBOOK_HTTP_TLS_KEY name a PEM
// certificate chain (the server's certificate first, then any intermediates) and its PEM
// private key. Both set: the edge speaks only HTTPS on LOGBOOK_HTTP_LISTEN (through
// HummingbirdTLS, with swift-nio-ssl's BoringSSL); neither: plain HTTP, for a reverse proxy
// that terminates TLS in front of it (docs/operations.md, "HTTPS"). Everything is checked
// when the edge starts, so a missing, unreadable or mismatched file stops it at once with
// a message naming the setting and the file, never at the first client's handshake.
import Foundation
import HummingbirdTLS
import NIOSSL
import Runtime

public struct EdgeTLS: Sendable {
    public let certificatePath: String
    public let keyPath: String
    public let configuration: TLSConfiguration
    /// When the server's certificate stops being valid.
    public let notValidAfter: Date

    /// Reads and checks the two files: each exists and is readable, the first holds PEM
    /// certificates, the second a PEM private key (not encrypted), and the key belongs to
    /// the first certificate.
    public static func load(certificate: String, key: String) throws -> EdgeTLS {
        try readable(certificate, "LOGBOOK_HTTP_TLS_CERT")
        try readable(key, "LOGBOOK_HTTP_TLS_KEY")
        let chain: [NIOSSLCertificate]
        do {
            chain = try NIOSSLCertificate.fromPEMFile(certificate)
        } catch {
            throw ConfigurationError("LOGBOOK_HTTP_TLS_CERT: \(certificate) is not a PEM certificate chain (\(error))")
        }
        guard let leaf = chain.first else {
            throw ConfigurationError("LOGBOOK_HTTP_TLS_CERT: \(certificate) holds no PEM certificate")
        }
        let privateKey: NIOSSLPrivateKey
        do {
            // A passphrase callback that gives none: an encrypted key fails here instead of
            // BoringSSL asking on a terminal the edge does not have.
            privateKey = try NIOSSLPrivateKey(file: key, format: .pem) { (_: ([UInt8]) -> Void) in }
        } catch {
            throw ConfigurationError(
                "LOGBOOK_HTTP_TLS_KEY: \(key) is not an unencrypted PEM private key (\(error))")
        }
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(privateKey))
        configuration.minimumTLSVersion = .tlsv12
        configuration.applicationProtocols = ["http/1.1"]
        do {
            // BoringSSL checks here that the key is the certificate's.
            _ = try NIOSSLContext(configuration: configuration)
        } catch {
            throw ConfigurationError(
                "LOGBOOK_HTTP_TLS_KEY: \(key) is not the private key of the certificate in LOGBOOK_HTTP_TLS_CERT (\(certificate)): \(error)")
        }
        return EdgeTLS(
            certificatePath: certificate, keyPath: key, configuration: configuration,
            notValidAfter: Date(timeIntervalSince1970: TimeInterval(leaf.notValidAfter)))
    }

    private static func readable(_ path: String, _ setting: String) throws {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw ConfigurationError("\(setting): \(path) does not exist")
        }
        guard !isDirectory.boolValue else { throw ConfigurationError("\(setting): \(path) is a directory, not a PEM file") }
        guard FileManager.default.isReadableFile(atPath: path) else {
            throw ConfigurationError("\(setting): \(path) cannot be read by this user (uid \(getuid()))")
        }
    }
}
