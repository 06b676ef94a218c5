// A token bucket per caller: `perSecond` requests a second on average, `burst` at once. In
// memory, per edge process.
//
// Who the caller is: a bearer token counts as a caller of its own only once the edge knows
// it is real (KnownTokens: a login through this edge answered it, or a service accepted
// it). Every other request, with no token or with a token the edge has not seen accepted,
// is charged to its client address: forged tokens all share one bucket, so spraying them
// gets an address no more requests than a single anonymous client.
import Synchronization

final class RateLimiter: Sendable {
    let perSecond: Double
    let burst: Double
    private struct Bucket {
        var tokens: Double
        var at: ContinuousClock.Instant
    }
    private let buckets = Mutex<[String: Bucket]>([:])

    init(perSecond: Double, burst: Double) {
        self.perSecond = perSecond
        self.burst = max(1, burst)
    }

    /// Takes one request from `key`'s bucket: nil when allowed, else the milliseconds until
    /// the next one is.
    func take(_ key: String) -> Int? {
        guard perSecond > 0 else { return nil }
        let now = ContinuousClock.now
        return buckets.withLock { buckets in
            if buckets.count > 50_000 { Self.prune(&buckets, now: now, perSecond: perSecond, burst: burst) }
            var bucket = buckets[key] ?? Bucket(tokens: burst, at: now)
            let elapsed = Double((now - bucket.at).components.attoseconds) / 1e18 + Double((now - bucket.at).components.seconds)
            bucket.tokens = min(burst, bucket.tokens + elapsed * perSecond)
            bucket.at = now
            guard bucket.tokens >= 1 else {
                buckets[key] = bucket
                return Int(((1 - bucket.tokens) / perSecond * 1000).rounded(.up))
            }
            bucket.tokens -= 1
            buckets[key] = bucket
            return nil
        }
    }

    /// Forgets buckets that have refilled (they hold nothing a fresh one would not).
    private static func prune(_ buckets: inout [String: Bucket], now: ContinuousClock.Instant, perSecond: Double, burst: Double) {
        buckets = buckets.filter { _, bucket in
            let elapsed = Double((now - bucket.at).components.seconds)
            return bucket.tokens + elapsed * perSecond < burst
        }
    }
}

/// Bearer tokens the edge has seen to be real: answered by a login through it, or accepted
/// by a service (any answer but `unauthenticated`). A token a service refuses is
/// forgotten. Bounded: past `capacity` tokens the set starts over, and a real token earns
/// its place again on its next accepted request.
final class KnownTokens: Sendable {
    let capacity: Int
    private let tokens = Mutex<Set<String>>([])

    init(capacity: Int = 100_000) { self.capacity = capacity }

    func contains(_ token: String) -> Bool { tokens.withLock { $0.contains(token) } }

    func insert(_ token: String) {
        tokens.withLock { tokens in
            if tokens.count >= capacity { tokens.removeAll(keepingCapacity: true) }
            tokens.insert(token)
        }
    }

    func remove(_ token: String) { _ = tokens.withLock { $0.remove(token) } }
}
