// A method of the protocol as a value: its name, the kind of route that serves it, and
// the request and result types on either side of the wire. The services register their
// routes with these values and the clients call with them, so a name, a request field or a
// result field cannot differ between the two (docs/protocol.md lists every method; a test,
// Tests/EndToEndTests/ProtocolDocumentTests.swift, checks the two agree).
import Wire

/// What a route does with the service's database.
public enum RouteKind: String, Sendable, Codable, CaseIterable {
    /// Changes nothing; runs concurrently with other reads.
    case read
    /// A write group-committed with the idempotency rules (a retry is answered, not applied).
    case write
    /// Writes rows of its own in a transaction of its own, outside the group commit and the
    /// idempotency log: `auth.login` (attempt tallies, the new session), `store.quote` (the
    /// quote pinned for the day), the shard-move steps.
    case ownWrite = "own-write"
}

/// One method: `Request` is the body a client sends, `Result` what a success answers.
public struct Method<Request: Codable & Sendable, Result: Codable & Sendable>: Sendable, CustomStringConvertible {
    public let name: String
    public let kind: RouteKind
    /// The service that answers it: by default the name's first component
    /// (`records.fillup.add` → records); `weather.*` is the weather-fetcher's.
    public let service: String

    public init(_ name: String, _ kind: RouteKind, service: String? = nil) {
        self.name = name
        self.kind = kind
        self.service = service ?? String(name.prefix { $0 != "." })
    }

    public var description: String { name }
}

/// A request or result whose fields docs/protocol.md lists: `sample` is a value with every
/// optional field set, so its fields can be read back (Mirror) and compared to the table.
public protocol Documented: Codable, Sendable {
    static var sample: Self { get }
}
