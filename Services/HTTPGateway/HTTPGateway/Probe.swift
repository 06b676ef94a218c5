// `logbook-http --probe [--path /readyz] [--timeout S] [--wait S]`: the edge's readiness
// check for supervisors other than `logbook stack up` (the systemd unit's ExecStartPost,
// deploy/systemd/logbook-http.service). One GET of the path at the address the edge
// listens on (run/logbook-http.url once it has written it, else LOGBOOK_HTTP_LISTEN, a
// wildcard host asked on loopback); with --wait, again until it answers 200 or the wait is
// over. With TLS settings it speaks TLS without checking the certificate: it asks whether
// this machine's edge is up, not who it is (clients check that). Exit 0 for a 200, 7 for
// anything else, with one line saying what happened.
import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import Runtime

public enum EdgeProbe {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// Where this machine's edge answers: host, port, TLS or not.
    public static func target(configuration: StackConfiguration, settings: EdgeSettings) -> (host: String, port: Int, tls: Bool) {
        if let written = try? String(contentsOfFile: configuration.runDirectory + "/logbook-http.url", encoding: .utf8),
            let url = URLComponents(string: written.trimmingCharacters(in: .whitespacesAndNewlines)), let host = url.host, let port = url.port
        {
            return (host.trimmingCharacters(in: CharacterSet(charactersIn: "[]")), port, url.scheme == "https")
        }
        let host = settings.host == "0.0.0.0" ? "127.0.0.1" : settings.host == "::" ? "::1" : settings.host
        return (host, settings.port, settings.tlsCertificate != nil)
    }

    /// GETs `path` once within `timeout`: the status line's code.
    public static func get(host: String, port: Int, tls: Bool, path: String, timeout: Duration) async throws -> Int {
        let ssl = tls ? try NIOSSLContext(configuration: Self.clientTLS) : nil
        return try await withThrowingTaskGroup(of: Int?.self) { group in
            group.addTask { try await exchange(host: host, port: port, ssl: ssl, path: path, timeout: timeout) }
            group.addTask {
                try await Task.sleep(for: timeout)
                return nil
            }
            defer { group.cancelAll() }
            guard let code = try await group.next() ?? nil else { throw Failure(description: "no answer within \(timeout)") }
            return code
        }
    }

    /// One request on a new connection; the code of the answer's status line.
    static func exchange(host: String, port: Int, ssl: NIOSSLContext?, path: String, timeout: Duration) async throws -> Int {
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connectTimeout(.milliseconds(Int64(timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000)))
            .connect(host: host, port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    if let ssl { try channel.pipeline.syncOperations.addHandler(try NIOSSLClientHandler(context: ssl, serverHostname: nil)) }
                    return try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        return try await channel.executeThenClose { inbound, outbound in
            let shown = host.contains(":") ? "[\(host)]" : host
            try await outbound.write(ByteBuffer(string: "GET \(path) HTTP/1.1\r\nHost: \(shown):\(port)\r\nConnection: close\r\n\r\n"))
            var text = ""
            for try await chunk in inbound {
                text += String(buffer: chunk)
                if let line = text.range(of: "\r\n").map({ text[..<$0.lowerBound] }) {
                    let parts = line.split(separator: " ")
                    guard parts.count >= 2, parts[0].hasPrefix("HTTP/"), let code = Int(parts[1]) else {
                        throw Failure(description: "not an HTTP answer: \(line.prefix(80))")
                    }
                    return code
                }
                if text.utf8.count > 8192 { break }
            }
            throw Failure(description: "the connection closed before an HTTP answer")
        }
    }

    static var clientTLS: TLSConfiguration {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.certificateVerification = .none
        return configuration
    }

    /// The command: exit status 0 (200), 7 (anything else), printing one line.
    public static func run(arguments: [String], configuration: StackConfiguration) async -> Int32 {
        var path = "/readyz"
        var timeout = 2.0
        var wait = 0.0
        var rest = arguments[...]
        while let argument = rest.popFirst() {
            switch argument {
            case "--path": path = rest.popFirst() ?? path
            case "--timeout": timeout = rest.popFirst().flatMap(Double.init) ?? -1
            case "--wait": wait = rest.popFirst().flatMap(Double.init) ?? -1
            default:
                FileHandle.standardError.write(Data("logbook-http --probe: unknown argument \(argument)\n".utf8))
                return 2
            }
        }
        guard timeout > 0, timeout <= 600, wait >= 0, wait <= 3600, path.hasPrefix("/") else {
            FileHandle.standardError.write(Data("logbook-http --probe [--path /readyz] [--timeout 0<S≤600] [--wait 0≤S≤3600]\n".utf8))
            return 2
        }
        let settings: EdgeSettings
        do {
            settings = try EdgeSettings(configuration: configuration)
        } catch {
            FileHandle.standardError.write(Data("logbook-http --probe: \(error)\n".utf8))
            return 1
        }
        let clock = ContinuousClock()
        let giveUp = clock.now + .milliseconds(Int64(wait * 1000))
        var last = ""
        while true {
            let target = target(configuration: configuration, settings: settings)
            let url = "\(target.tls ? "https" : "http")://\(target.host.contains(":") ? "[\(target.host)]" : target.host):\(target.port)\(path)"
            do {
                let code = try await get(host: target.host, port: target.port, tls: target.tls, path: path, timeout: .milliseconds(Int64(timeout * 1000)))
                if code == 200 {
                    print("logbook-http answered 200 at \(url)")
                    return 0
                }
                last = "logbook-http answered \(code) at \(url)"
            } catch {
                last = "logbook-http did not answer at \(url): \(error)"
            }
            if clock.now >= giveUp { break }
            try? await Task.sleep(for: .milliseconds(250))
        }
        FileHandle.standardError.write(Data((last + "\n").utf8))
        return 7
    }
}
