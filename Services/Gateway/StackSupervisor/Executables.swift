// Where the service executables are: next to the running `logbook` binary (resolved through
// /proc/self/exe), or in $LOGBOOK_BIN_DIR. A service whose executable is not there is "not
// installed": `stack up` does not start it and `status` does not count it as down.
import Foundation
import Runtime

public struct Executables: Sendable {
    public let directory: String
    /// The stack's service processes, records expanded into its shards (Shards.swift).
    public let instances: [String]

    public init(configuration: StackConfiguration) {
        directory = configuration.values["LOGBOOK_BIN_DIR"] ?? URL(fileURLWithPath: Self.current).deletingLastPathComponent().path
        instances = configuration.instances
        localShards = (try? configuration.localRecordsShards()) ?? Set(1...configuration.recordsShards)
    }

    /// The records shards this host runs (LOGBOOK_RECORDS_LOCAL_SHARDS, default all).
    public let localShards: Set<Int>

    /// The running executable's path.
    public static var current: String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    }

    /// The executable of a service (every records shard runs `records`).
    public func path(_ service: String) -> String { directory + "/" + StackConfiguration.executable(of: service) }

    /// A records shard another host runs (LOGBOOK_RECORDS_LOCAL_SHARDS) is not installed here.
    public func isInstalled(_ service: String) -> Bool {
        if let shard = StackConfiguration.shard(of: service), !localShards.contains(shard) { return false }
        return FileManager.default.isExecutableFile(atPath: path(service))
    }

    /// The stack's services that are installed, in start order (one per records shard).
    public var installed: [String] { instances.filter(isInstalled) }

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
        let listen = configuration.values["LOGBOOK_HTTP_LISTEN"].flatMap { $0.isEmpty ? nil : $0 } ?? "127.0.0.1:8080"
        let local = listen.replacingOccurrences(of: "0.0.0.0:", with: "127.0.0.1:").replacingOccurrences(of: "[::]:", with: "[::1]:")
        return "http://" + local
    }
}
