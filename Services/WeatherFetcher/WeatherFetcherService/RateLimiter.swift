// Keeps every outbound call of this process under the provider's limit (Open-Meteo: 600
// calls a minute) with a token bucket, and pauses everyone when the provider answers 429
// or "too many requests": one slow-down for the whole service, not per job.
import Foundation
import Synchronization

public final class RateLimiter: Sendable {
    private struct State {
        var tokens: Double
        var refilled: ContinuousClock.Instant
        var pausedUntil: ContinuousClock.Instant?
    }

    let perSecond: Double
    let burst: Double
    private let clock = ContinuousClock()
    private let state: Mutex<State>

    /// - Parameters:
    ///   - perMinute: sustained calls per minute.
    ///   - burst: calls allowed back to back after a quiet spell.
    /// Each user's share, asked before the shared rate (nil: none).
    let perUser: UserCallBudget?

    public init(perMinute: Int, burst: Int = 10, perUser: UserCallBudget? = nil) {
        self.perUser = perUser
        perSecond = Double(max(1, perMinute)) / 60
        self.burst = Double(max(1, burst))
        state = Mutex(State(tokens: Double(max(1, burst)), refilled: ContinuousClock().now))
    }

    /// The longest a caller waits for a pause to end, when it is waiting for the answer
    /// (`weather.get`): a longer pause (a daily quota, until midnight UTC) is answered at once
    /// with `FetchFailure.rateLimited` and the time left, before the caller's budget is
    /// spent. nil (the job runner): the pause is waited out.
    @TaskLocal public static var pauseLimit: Duration?

    /// Waits for a call slot (and for a pause to end). Each caller reserves its slot before
    /// waiting, so callers are served in order and the rate holds under concurrency.
    public func acquire() async throws {
        if let limit = Self.pauseLimit, let remaining = pauseRemaining, remaining > limit {
            throw FetchFailure.rateLimited(retryAfter: remaining)
        }
        try perUser?.take()
        let wait = state.withLock { state -> Duration in
            let now = clock.now
            let elapsed = now - state.refilled
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            state.tokens = min(burst, state.tokens + seconds * perSecond)
            state.refilled = now
            state.tokens -= 1
            var wait: Duration = state.tokens < 0 ? .milliseconds(Int64((-state.tokens / perSecond) * 1000)) : .zero
            if let until = state.pausedUntil, until > now { wait = max(wait, until - now) }
            return wait
        }
        if wait > .zero { try await Task.sleep(for: wait) }
    }

    /// Stops every caller for `duration` (extends, never shortens, a pause in force).
    public func pause(for duration: Duration) {
        state.withLock { state in
            let until = clock.now + duration
            if state.pausedUntil.map({ $0 < until }) ?? true { state.pausedUntil = until }
        }
    }

    /// How long the current pause still lasts, nil when none.
    public var pauseRemaining: Duration? {
        state.withLock { state in
            guard let until = state.pausedUntil else { return nil }
            let left = until - clock.now
            return left > .zero ? left : nil
        }
    }
}
