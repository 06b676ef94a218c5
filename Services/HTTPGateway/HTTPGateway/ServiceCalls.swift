// Calling the services: one ServiceClient per service for the edge's life (the same client
// the CLI uses: deadline, bounded retries with the same request id and idempotency key).
// The edge runs as a member of the stack (CURVE settings and stack key from the stack's
// configuration): the key goes only with `$srv.*` calls, user calls carry the caller's
// bearer token and nothing else.
// Bodies and results are JSON values, whose numbers keep their digits (Shared/Wire/JSONNumber.swift),
// so neither a quantity nor a 64-bit amount is ever rounded through a Double.
import Foundation
import Runtime
import Synchronization
import Wire

public final class ServiceCalls: Sendable {
    public let configuration: StackConfiguration
    private let clients: ServiceClients

    public init(configuration: StackConfiguration) {
        self.configuration = configuration
        clients = ServiceClients(configuration: configuration)
    }

    public func client(_ service: String) throws -> ServiceClient { try clients.client(service) }

    /// A reply: the result, or the service's error.
    /// Records shards (Shared/Runtime/Shards.swift): the shard each token's user was last
    /// found on (by the token's SHA-256), learnt from a shard's redirect.
    private let shards = Mutex<[String: Int]>([:])

    public struct Outcome: Sendable {
        public var result: JSONValue?
        public var error: ServiceError?
        public var freshness: Freshness?
    }

    /// Sends `method` with `body` and returns the reply.
    /// Transport failures come back as the client's `ServiceError` (`unavailable`,
    /// `deadline_exceeded`).
    public func call(
        _ service: String, _ method: String, body: [String: JSONValue], token: String?, idempotencyKey: String?, timeout: Duration
    ) async throws -> Outcome {
        guard service == "records", configuration.recordsShards > 1, let token else {
            return try await send(service, method, body: body, token: token, idempotencyKey: idempotencyKey, timeout: timeout)
        }
        // A user's records calls go to their shard; a shard that is not theirs refuses before
        // doing anything and names the right one.
        let key = Crypto.sha256Hex(token)
        return try await ShardRedirect.follow(
            from: shards.withLock { $0[key] } ?? 1, shards: configuration.recordsShards, error: { $0.error },
            learnt: { shard in
                shards.withLock {
                    if $0.count >= 100_000 { $0.removeAll() }
                    $0[key] = shard
                }
            }
        ) { shard in
            try await send(
                StackConfiguration.recordsInstance(shard), method, body: body, token: token, idempotencyKey: idempotencyKey,
                timeout: timeout)
        }
    }

    private func send(
        _ service: String, _ method: String, body: [String: JSONValue], token: String?, idempotencyKey: String?, timeout: Duration
    ) async throws -> Outcome {
        let id = ID.make()
        let ms = Int(timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000)
        var envelope: [String: JSONValue] = [
            "v": .number(.init(Protocol.version)), "id": .string(id), "method": .string(method), "deadlineMs": .number(.init(ms)),
            "body": .object(body), "idempotencyKey": .string(idempotencyKey ?? id),
        ]
        if let token { envelope["token"] = .string(token) }
        let frame = try WireCoding.encode(JSONValue.object(envelope))
        let data = try await client(service).exchange(frame, id: id, timeout: timeout)
        struct Status: Decodable {
            var ok: Bool
            var error: ServiceError?
            var freshness: Freshness?
        }
        let status: Status
        let reply: JSONValue
        do {
            reply = try JSONValue.parse(data)
            status = try reply.decode(Status.self)
        } catch {
            // (the edge logs this detail; its caller gets only the code: Edge.handle)
            throw ServiceError(.internal, "\(service) sent a reply that is not protocol v1")
        }
        if let error = status.error, !status.ok { return Outcome(result: nil, error: error, freshness: nil) }
        return Outcome(result: reply["result"] ?? .null, error: nil, freshness: status.freshness)
    }

    /// Calls a reserved method (`$srv.ping`, `$srv.stats`) and returns its result.
    func reserved(_ service: String, _ method: String, timeout: Duration) async throws -> JSONValue {
        let reply = try await client(service).reply(method, options: CallOptions(timeout: timeout))
        if let error = reply.error { throw error }
        return reply.result ?? .null
    }
}
