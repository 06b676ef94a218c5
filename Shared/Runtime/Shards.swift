// Records sharded by user (docs/operations.md, "Records shards"; docs/protocol.md,
// "Shards"). LOGBOOK_RECORDS_SHARDS=N runs N records processes. Shard 1 is `records`, with
// exactly the names a one-shard stack always had (records.sqlite, run/records.sock,
// LOGBOOK_RECORDS_*); shard k ≥ 2 is the instance `records-k`, whose settings are
// LOGBOOK_RECORDS_<k>_ENDPOINT, _EVENTS, _DATABASE, _PHOTO_DIR and _CURVE_PUBLIC_KEY, with
// defaults beside shard 1's (records-2.sqlite, run/records-2.sock). Each records process
// learns its own shard from LOGBOOK_RECORDS_SHARD (the supervisor, the systemd unit or the
// pod sets it). Auth fixes each user's shard at registration and names it in every session
// it validates (`Principal.shard`); callers route a user's records calls to
// `recordsInstance(shard)`, and every consumer of records' events runs one consumer per
// instance, each with its own checkpoint (a shard's events are a producer of their own).
import Foundation
import Wire

extension StackConfiguration {
    /// How many records shards the stack runs.
    public static let recordsShardsSetting = "LOGBOOK_RECORDS_SHARDS"
    /// Which shard a records process is (set per process; default 1).
    public static let recordsShardSetting = "LOGBOOK_RECORDS_SHARD"
    public static let maxRecordsShards = 64

    static func readRecordsShards(_ values: [String: String]) throws -> Int {
        guard let text = values[recordsShardsSetting]?.trimmingSpaces, !text.isEmpty else { return 1 }
        guard let count = Int(text), (1...maxRecordsShards).contains(count) else {
            throw ConfigurationError(
                "\(recordsShardsSetting) must be a whole number from 1 to \(maxRecordsShards) (got \"\(text)\")")
        }
        return count
    }

    /// The instance name of a records shard: `records` for shard 1, `records-k` after it.
    public static func recordsInstance(_ shard: Int) -> String { shard <= 1 ? "records" : "records-\(shard)" }

    /// The records shard an instance name stands for (nil: not a records instance).
    public static func shard(of instance: String) -> Int? {
        if instance == "records" { return 1 }
        guard instance.hasPrefix("records-"), let shard = Int(instance.dropFirst("records-".count)), shard >= 2,
            "records-\(shard)" == instance
        else { return nil }
        return shard
    }

    /// The executable an instance runs (every records shard runs `records`).
    public static func executable(of instance: String) -> String { shard(of: instance) != nil ? "records" : instance }

    /// Every service process of a stack with this many records shards, in start order.
    static func instances(recordsShards: Int) -> [String] {
        services.flatMap { $0 == "records" ? (1...max(1, recordsShards)).map(recordsInstance) : [$0] }
    }

    /// Every records instance of this stack, shard 1 first.
    public var recordsInstances: [String] { (1...recordsShards).map(Self.recordsInstance) }

    /// Every service process of this stack, records expanded into its shards, in start order.
    public var instances: [String] { Self.instances(recordsShards: recordsShards) }

    /// Whether `name` is one of this stack's service processes.
    public func isInstance(_ name: String) -> Bool { instances.contains(name) }

    /// Refuses a name that is not one of this stack's service processes, naming them (`field`
    /// is the argument it came from).
    public func requireInstance(_ name: String, field: String = "service") throws {
        guard isInstance(name) else {
            throw ServiceError(
                .invalidArgument, "no service named \"\(name)\": the services are \(instances.joined(separator: ", "))",
                field: field)
        }
    }

    /// The environment for one service process: the stack's, plus which shard a records
    /// instance is.
    public func environment(for instance: String) -> [String: String] {
        var env = environment
        if let shard = Self.shard(of: instance) { env[Self.recordsShardSetting] = String(shard) }
        return env
    }

    public static let localRecordsShardsSetting = "LOGBOOK_RECORDS_LOCAL_SHARDS"

    /// The shards `logbook stack up` runs on this host: LOGBOOK_RECORDS_LOCAL_SHARDS
    /// (comma-separated shard numbers, e.g. `2`, or `none`), default every shard.
    public func localRecordsShards() throws -> Set<Int> {
        guard let text = values[Self.localRecordsShardsSetting]?.trimmingSpaces, !text.isEmpty else {
            return Set(1...recordsShards)
        }
        if text == "none" { return [] }
        var shards = Set<Int>()
        for part in text.split(separator: ",") {
            guard let shard = Int(part.trimmingSpaces), (1...recordsShards).contains(shard) else {
                throw ConfigurationError(
                    "\(Self.localRecordsShardsSetting) must list shards from 1 to \(recordsShards) (or be `none`); got \"\(text)\"")
            }
            shards.insert(shard)
        }
        return shards
    }

    /// This records process's shard (LOGBOOK_RECORDS_SHARD, default 1), checked against
    /// LOGBOOK_RECORDS_SHARDS.
    public func ownRecordsShard() throws -> Int {
        guard let text = values[Self.recordsShardSetting]?.trimmingSpaces, !text.isEmpty else {
            return 1
        }
        guard let shard = Int(text), (1...recordsShards).contains(shard) else {
            throw ConfigurationError(
                "\(Self.recordsShardSetting) must be a shard from 1 to \(recordsShards) (\(Self.recordsShardsSetting)); got \"\(text)\"")
        }
        return shard
    }
}

/// The shard a request for `principal` belongs to (nil from an older auth: shard 1).
extension Principal {
    public var recordsShard: Int { shard ?? 1 }
}

/// The refusal a records shard answers for a user who lives on another shard; callers send
/// the request again to `details.shard` (docs/protocol.md, "Shards").
public enum ShardRedirect {
    public static func error(userShard: Int, here: Int) -> ServiceError {
        ServiceError(
            .failedPrecondition,
            "this user's records are on shard \(userShard), not shard \(here); send the request to \(StackConfiguration.recordsInstance(userShard))",
            details: ["shard": .number(.init(userShard)), "reason": "wrong_shard"])
    }

    /// Sends a user's request to the shard they were last seen on (`known`) and, when that
    /// shard redirects (it refused before doing anything), once more to the shard it names;
    /// `learnt` hears of the move first, so the caller asks there next time. `error` reads a
    /// reply's refusal. The CLI (ServiceRouter.swift) and the HTTP edge (ServiceCalls.swift)
    /// both route this way.
    public static func follow<Reply>(
        from known: Int, shards: Int, error: (Reply) -> ServiceError?, learnt: (Int) -> Void,
        _ send: (Int) async throws -> Reply
    ) async throws -> Reply {
        let first = try await send(known)
        guard let refusal = error(first), let shard = target(refusal), shard != known, shard <= shards else { return first }
        learnt(shard)
        return try await send(shard)
    }

    /// The shard a reply's error points at, when it is a redirect.
    public static func target(_ error: ServiceError) -> Int? {
        guard error.code == .failedPrecondition, error.details?["reason"]?.stringValue == "wrong_shard",
            let shard = error.details?["shard"]?.intValue, shard >= 1
        else { return nil }
        return shard
    }
}

/// Operator methods (moving a user between shards) are open only to members of the stack:
/// the caller puts the stack key in the body's `stackKey`, compared in constant time with
/// this process's (StackKeys.swift). A process without a key (in-process tests) admits all.
public enum StackMember {
    public static func require(_ presented: String?) throws {
        guard let expected = StackKeys.processKey else { return }
        guard StackKeys.matches(presented, expected) else {
            throw ServiceError(.permissionDenied, "only a member of the stack (its stack key) may do this")
        }
    }
}

extension Router {
    /// This router with `around` run around every route's handler (after the session is
    /// resolved), given the request's frame: a records shard refuses users who live elsewhere
    /// and holds writes of a user being moved (RecordsService, Shards.swift).
    public func wrapped(
        _ around: @escaping @Sendable (
            _ route: Route, _ frame: Data, _ context: RequestContext, _ handle: @Sendable () async throws -> Data
        ) async throws -> Data
    ) -> Router {
        var wrapped = Router(commits: commits)
        for route in routes.values {
            let inner = route.handle
            wrapped.add(
                Route(method: route.method, access: route.access, kind: route.kind, maxBytes: route.maxBytes, decode: route.decode) {
                    frame, body, context in
                    try await around(route, frame, context) { try await inner(frame, body, context) }
                })
        }
        return wrapped
    }
}
