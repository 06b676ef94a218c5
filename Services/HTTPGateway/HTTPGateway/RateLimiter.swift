// A token bucket per caller (bearer token, or client address without one): `perSecond`
// requests a second on average, `burst` at once. In memory, per edge process.
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
