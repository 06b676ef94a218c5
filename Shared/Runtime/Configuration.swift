// Stack configuration: where data, sockets and logs live and how each service is reached.
// Defaults put everything under one directory (LOGBOOK_HOME, default
// ~/.local/share/logbook) with `ipc://` endpoints under its run/ directory. A config file
// of KEY=VALUE lines (deploy/logbook.conf documents every key) and then the environment
// override the defaults. Read once, at the edge (main), and passed down.
import Foundation
import Storage

public struct StackConfiguration: Sendable, Equatable {
    /// The services the stack runs, in start order.
    public static let services = ["auth", "records", "weather-fetcher", "analytics", "store"]
    /// Services whose whole database can be rebuilt from the other services' events
    /// (`logbook stack rebuild`). The store keeps purchases nobody else has; auth and
    /// records are the sources of truth.
    public static let rebuildable = ["analytics", "weather-fetcher"]

    public var home: String
    public var dataDirectory: String
    public var runDirectory: String
    public var logDirectory: String
    public var durability: Durability
    public var logLevel: String
    /// CURVE encryption and authentication between machines; nil (off) unless
    /// LOGBOOK_CURVE_SECRET_KEY is set (Curve.swift).
    public var curve: CurveSettings?
    /// The stack key members present (StackKeys.swift): LOGBOOK_STACK_KEY, else the
    /// contents of `<data dir>/stack.key` once `load` found it; nil in scratch stacks.
    public var stackKey: String?
    /// Every value read from the file and the environment (LOGBOOK_*), for service settings.
    public var values: [String: String]
    /// How many records shards the stack runs (LOGBOOK_RECORDS_SHARDS, default 1; Shards.swift).
    public var recordsShards: Int

    public init(values: [String: String]) throws {
        self.values = values
        let home = Self.expand(values["LOGBOOK_HOME"] ?? Self.defaultHome(values))
        self.home = home
        dataDirectory = Self.expand(values["LOGBOOK_DATA_DIR"] ?? home + "/data")
        runDirectory = Self.expand(values["LOGBOOK_RUN_DIR"] ?? home + "/run")
        logDirectory = Self.expand(values["LOGBOOK_LOG_DIR"] ?? home + "/logs")
        logLevel = values["LOGBOOK_LOG_LEVEL"] ?? "info"
        let durabilityText = values["LOGBOOK_DURABILITY"] ?? Durability.full.rawValue
        guard let durability = Durability(rawValue: durabilityText) else {
            throw ConfigurationError(
                "LOGBOOK_DURABILITY must be one of \(Durability.allCases.map(\.rawValue).joined(separator: ", ")) (got \"\(durabilityText)\")")
        }
        self.durability = durability
        recordsShards = try Self.readRecordsShards(values)
        curve = try CurveSettings.read(values, services: Self.instances(recordsShards: recordsShards))
        stackKey = values[StackKeys.setting].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// Whether this stack needs the CURVE keypair made on first use: an endpoint is TCP and
    /// the configuration names no CURVE key of its own.
    public var needsGeneratedCurve: Bool {
        // With CURVE off, no CURVE setting is set (CurveSettings.read refuses strays).
        guard curve == nil || ["1", "2"].contains(values[Self.generatedMarker]) else { return false }
        return instances.contains { endpoint($0).hasPrefix("tcp://") || eventsEndpoint($0).hasPrefix("tcp://") }
    }

    /// Set on values merged from the key files, so `environment` does not hand them on.
    static let generatedMarker = "LOGBOOK_KEYS_FROM_FILES"

    /// Adds what `StackKeys.ensure` wrote under the data directory: the stack key (unless a
    /// setting gives it) and the generated CURVE keypair (when `needsGeneratedCurve`).
    /// Settings always win over the files.
    func withKeyFiles() throws -> StackConfiguration {
        var values = self.values
        if stackKey == nil,
            let text = try? String(contentsOfFile: dataDirectory + "/" + StackKeys.keyFileName, encoding: .utf8)
        {
            let key = text.trimmingSpaces
            if !key.isEmpty {
                values[StackKeys.setting] = key
                values[Self.generatedMarker] = "0"
            }
        }
        let curvePath = dataDirectory + "/" + StackKeys.curveFileName
        if needsGeneratedCurve, FileManager.default.fileExists(atPath: curvePath) {
            values.merge(try Self.parseFile(curvePath)) { setting, _ in setting }
            values[Self.generatedMarker] = values[Self.generatedMarker] == "0" ? "2" : "1"
        }
        return try StackConfiguration(values: values)
    }

    /// Defaults, then the config file (LOGBOOK_CONFIG, or $LOGBOOK_HOME/logbook.conf), then
    /// the environment; then the key files under the data directory (StackKeys.swift), which
    /// `createKeys` (services, `logbook stack up`) makes when they are missing.
    public static func load(
        environment: [String: String] = ProcessEnvironment.current(), createKeys: Bool = false
    ) throws -> StackConfiguration {
        let env = environment.filter { $0.key.hasPrefix("LOGBOOK_") || $0.key == "HOME" || $0.key == "XDG_DATA_HOME" }
        let home = expand(env["LOGBOOK_HOME"] ?? defaultHome(env))
        let path = env["LOGBOOK_CONFIG"] ?? home + "/logbook.conf"
        var values: [String: String] = [:]
        if FileManager.default.fileExists(atPath: path) {
            values = try parseFile(path)
        } else if env["LOGBOOK_CONFIG"] != nil {
            throw ConfigurationError("LOGBOOK_CONFIG names \(path), which does not exist")
        }
        values.merge(env) { _, environment in environment }
        values[generatedMarker] = nil
        let configuration = try StackConfiguration(values: values)
        if createKeys { try StackKeys.ensure(configuration) }
        return try configuration.withKeyFiles()
    }

    /// A throwaway stack under `directory` (tests, benchmarks).
    public static func scratch(_ directory: String, extra: [String: String] = [:]) throws -> StackConfiguration {
        try StackConfiguration(values: ["LOGBOOK_HOME": directory, "LOGBOOK_LOG_LEVEL": "warning"].merging(extra) { $1 })
    }

    /// The name of a service's setting: LOGBOOK_<SERVICE>_<SUFFIX>.
    public static func key(_ service: String, _ suffix: String) -> String {
        // (not Foundation's replacingOccurrences: every command builds a dozen of these)
        "LOGBOOK_" + String(service.uppercased().map { $0 == "-" ? "_" : $0 }) + "_" + suffix
    }

    /// True when the service's endpoint is set explicitly (it may run on another host).
    public func isConfigured(_ service: String) -> Bool { values[Self.key(service, "ENDPOINT")] != nil }

    /// The service's request endpoint (ROUTER).
    public func endpoint(_ service: String) -> String {
        values[Self.key(service, "ENDPOINT")] ?? "ipc://\(runDirectory)/\(service).sock"
    }

    /// The service's event endpoint (PUB).
    public func eventsEndpoint(_ service: String) -> String {
        values[Self.key(service, "EVENTS")] ?? "ipc://\(runDirectory)/\(service).events.sock"
    }

    /// The service's SQLite file.
    public func databasePath(_ service: String) -> String {
        values[Self.key(service, "DATABASE")] ?? "\(dataDirectory)/\(service).sqlite"
    }

    public func databaseSettings(_ service: String) -> DatabaseSettings {
        DatabaseSettings(path: databasePath(service), durability: durability)
    }

    /// LOGBOOK_EVENTS_STALL_AFTER (seconds, default 10): how long an event consumer may fail,
    /// or hear nothing from its producer, before it counts as stalled (the service degraded,
    /// its projection's answers marked).
    public func stallAfter() throws -> Duration {
        guard let text = values["LOGBOOK_EVENTS_STALL_AFTER"] else { return .seconds(10) }
        guard let seconds = Double(text), seconds > 0, seconds <= 86_400 else {
            throw ConfigurationError("LOGBOOK_EVENTS_STALL_AFTER must be a number of seconds from 0 to 86400 (got \"\(text)\")")
        }
        return .milliseconds(Int64(seconds * 1000))
    }

    /// A service-specific setting: LOGBOOK_<SERVICE>_<NAME>.
    public func setting(_ service: String, _ name: String) -> String? {
        values[Self.key(service, name)]
    }

    /// The environment to hand a child process so it sees this same configuration.
    public var environment: [String: String] {
        var env = values
        // Keys read from files stay in files: each child reads them itself.
        if let marker = env.removeValue(forKey: Self.generatedMarker) {
            if marker != "1" { env[StackKeys.setting] = nil }
            if marker != "0" {
                for key in [CurveSettings.publicKeySetting, CurveSettings.secretKeySetting, CurveSettings.allowSetting] {
                    env[key] = nil
                }
            }
        }
        env["LOGBOOK_HOME"] = home
        env["LOGBOOK_DATA_DIR"] = dataDirectory
        env["LOGBOOK_RUN_DIR"] = runDirectory
        env["LOGBOOK_LOG_DIR"] = logDirectory
        env["LOGBOOK_LOG_LEVEL"] = logLevel
        env["LOGBOOK_DURABILITY"] = durability.rawValue
        return env
    }

    static func defaultHome(_ env: [String: String]) -> String {
        if let xdg = env["XDG_DATA_HOME"], !xdg.isEmpty { return xdg + "/logbook" }
        return (env["HOME"] ?? NSHomeDirectory()) + "/.local/share/logbook"
    }

    static func expand(_ path: String) -> String {
        if path == "~" || path.hasPrefix("~/") {
            return NSHomeDirectory() + path.dropFirst()
        }
        return path
    }

    /// KEY=VALUE per line; `#` starts a comment; surrounding quotes are removed.
    static func parseFile(_ path: String) throws -> [String: String] {
        guard let data = FileManager.default.contents(atPath: path) else {
            let reason = access(path, R_OK) == 0 ? "cannot read it" : String(cString: strerror(errno))
            throw ConfigurationError(
                "\(path): \(reason); the user this runs as (\(NSUserName())) must be able to read it "
                    + "(under systemd, /etc/logbook/logbook.conf is root:logbook, mode 0640)")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw ConfigurationError("\(path): not UTF-8 text")
        }
        var values: [String: String] = [:]
        // (lines end in \n or \r\n: Swift reads "\r\n" as one character, which is not "\n")
        for (number, rawLine) in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated() {
            let line = rawLine.trimmingSpaces
            if line.isEmpty || line.hasPrefix("#") { continue }
            guard let equals = line.firstIndex(of: "=") else {
                throw ConfigurationError("\(path):\(number + 1): expected KEY=VALUE, got \"\(line)\"")
            }
            let key = line[..<equals].trimmingSpaces
            var value = line[line.index(after: equals)...].trimmingSpaces
            if value.count >= 2, let first = value.first, first == "\"" || first == "'", value.last == first {
                value = String(value.dropFirst().dropLast())
            }
            values[key] = value
        }
        return values
    }
}

public struct ConfigurationError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
