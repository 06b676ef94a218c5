// A per-user budget of provider calls, so one user cannot spend the service's shared quota
// (Open-Meteo allows 10,000 calls a day for everyone). Each user has a token bucket of
// `perHour` calls refilled continuously, holding at most `burst`. The user a call is made
// for is a task-local value set around the work done for them (`weather.get`, a catch's
// job); the rate limiter asks the budget before every outbound call. A call answered from
// the cache costs nothing.
import Foundation
import Synchronization

public final class UserCallBudget: Sendable {
    /// Whose work the current task is doing (nil: nobody's, e.g. the tide-station list).
    @TaskLocal public static var user: String?

    public let perHour: Int
    public let burst: Int
    private let state = Mutex<[String: (tokens: Double, at: Date)]>([:])
    private let now: @Sendable () -> Date

    /// `perHour` 0 switches the budget off.
    public init(perHour: Int, burst: Int = 20, now: @escaping @Sendable () -> Date = { Date() }) {
        self.perHour = perHour
        self.burst = max(1, min(burst, max(perHour, 1)))
        self.now = now
    }

    /// Takes one call for the current task's user; throws `FetchFailure.userBudget` with how
    /// long until one is available when the user's bucket is empty.
    func take() throws(FetchFailure) {
        guard perHour > 0, let user = Self.user else { return }
        let rate = Double(perHour) / 3600
        let now = self.now()
        let wait: Double? = state.withLock { buckets in
            var bucket = buckets[user] ?? (Double(burst), now)
            bucket.tokens = min(Double(burst), bucket.tokens + max(0, now.timeIntervalSince(bucket.at)) * rate)
            bucket.at = now
            defer {
                // Full buckets hold nothing worth keeping: the map stays as small as the
                // set of users spending right now.
                if bucket.tokens >= Double(burst) { buckets[user] = nil } else { buckets[user] = bucket }
                if buckets.count > 100_000 { buckets.removeAll() }
            }
            if bucket.tokens >= 1 {
                bucket.tokens -= 1
                return nil
            }
            return (1 - bucket.tokens) / rate
        }
        if let wait { throw .userBudget(retryAfter: .milliseconds(Int64((wait * 1000).rounded(.up)))) }
    }
}
