// Where the service executables are: next to the running `logbook` binary (resolved through
// /proc/self/exe), or in $LOGBOOK_BIN_DIR. A service whose executable is not there is "not
// installed": `stack up` does not start it and `status` does not count it as down.
import Foundation
import Runtime

public struct Executables: Sendable {
    public let directory: String

    public init(configuration: StackConfiguration) {
        directory = configuration.values["LOGBOOK_BIN_DIR"] ?? URL(fileURLWithPath: Self.current).deletingLastPathComponent().path
    }

    /// The running executable's path.
    public static var current: String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    }

    public func path(_ service: String) -> String { directory + "/" + service }

    public func isInstalled(_ service: String) -> Bool {
        FileManager.default.isExecutableFile(atPath: path(service))
    }

    /// The stack's services that are installed, in start order.
    public var installed: [String] { StackConfiguration.services.filter(isInstalled) }

    /// Programs the stack runs beside the services that are not ZeroMQ services (no
    /// ROUTER, no database): the HTTP edge. The supervisor starts and restarts them like
    /// the services but does not ping them; `logbook status` asks their /healthz.
    public static let edges = ["logbook-http"]

    /// The edges that are installed.
    public var installedEdges: [String] { Self.edges.filter(isInstalled) }

    /// Where the HTTP edge answers on this machine: the address it wrote to
    /// run/logbook-http.url once listening (so port 0, any free port, works), else
    /// LOGBOOK_HTTP_LISTEN (default 127.0.0.1:8080; a wildcard host is asked on loopback).
    public static func httpURL(_ configuration: StackConfiguration) -> String {
        if let written = try? String(contentsOfFile: configuration.runDirectory + "/logbook-http.url", encoding: .utf8),
            written.hasPrefix("http")
        {
            return written.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        let listen = configuration.values["LOGBOOK_HTTP_LISTEN"] ?? "127.0.0.1:8080"
        let local = listen.replacingOccurrences(of: "0.0.0.0:", with: "127.0.0.1:").replacingOccurrences(of: "[::]:", with: "[::1]:")
        return "http://" + local
    }
}
