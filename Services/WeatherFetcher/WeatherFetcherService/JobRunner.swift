// The fetch loop, a swift-service-lifecycle Service: takes due jobs (a few at a time, in a
// task group), fetches their conditions and stores the outcome with its event in one
// transaction. Failures are retried with exponential back-off and jitter until the job
// gives up (attempts or age) with `conditions.unavailable`; a provider's "slow down" pauses
// the whole loop. On graceful shutdown it stops taking jobs and lets the ones in flight
// finish; a job interrupted by cancellation stays pending, untouched, for the next start.
import Foundation
import GRDB
import Logging
import Runtime
import ServiceLifecycle
import Storage

public final class JobRunner: Service, Sendable {
    let settings: WeatherFetcherSettings
    let fetcher: Fetcher
    let reader: any DatabaseReader
    let commits: GroupCommitter
    let wakeup: Wakeup
    let logger: Logger

    init(
        settings: WeatherFetcherSettings, fetcher: Fetcher, reader: any DatabaseReader, commits: GroupCommitter,
        wakeup: Wakeup, logger: Logger
    ) {
        self.settings = settings
        self.fetcher = fetcher
        self.reader = reader
        self.commits = commits
        self.wakeup = wakeup
        self.logger = logger
    }

    public func run() async throws {
        try await withGracefulShutdownHandler {
            while !Task.isCancelled && !Task.isShuttingDownGracefully {
                if let pause = fetcher.limiter.pauseRemaining {
                    await wakeup.wait(timeout: pause)
                    continue
                }
                let now = settings.now()
                let jobs: [Job]
                do {
                    jobs = try await reader.read { [settings] db in
                        try Jobs.due(db, now: now, limit: max(1, settings.concurrency))
                    }
                } catch {
                    logger.error("reading due jobs failed", metadata: ["error.detail": "\(error)"])
                    await wakeup.wait(timeout: settings.idlePoll)
                    continue
                }
                if jobs.isEmpty {
                    await wakeup.wait(timeout: try await idleTime(now: now))
                    continue
                }
                // Jobs for the same rounded place and hour run one after the other, so the
                // second is answered from the cache the first filled.
                let lanes = Dictionary(grouping: jobs, by: \.cacheKey).values
                await withDiscardingTaskGroup { group in
                    for lane in lanes {
                        group.addTask {
                            for job in lane { await self.process(job) }
                        }
                    }
                }
            }
        } onGracefulShutdown: {
            self.wakeup.signal()
        }
    }

    /// Until the next job is due, at most `idlePoll`.
    private func idleTime(now: Date) async throws -> Duration {
        let next = try await reader.read { try Jobs.nextDue($0) }
        guard let next else { return settings.idlePoll }
        let seconds = max(0, next.timeIntervalSince(now))
        return min(settings.idlePoll, .milliseconds(Int64((seconds * 1000).rounded(.up))))
    }

    /// One attempt at one job. Never throws: every outcome is stored.
    func process(_ job: Job) async {
        var jobLogger = logger
        jobLogger[metadataKey: "catch.id"] = "\(job.catchId)"
        jobLogger[metadataKey: "job.attempt"] = "\(job.attempts + 1)"
        let logger = jobLogger
        do {
            let conditions = try await UserCallBudget.$user.withValue(job.userId) {
                try await fetcher.conditions(latitude: job.latitude, longitude: job.longitude, at: job.at, water: job.water)
            }
            await store(job, logger: logger) { db, now in
                if try Jobs.complete(db, job: job, conditions: conditions, now: now) {
                    logger.info("conditions ready", metadata: ["conditions.summary": "\(conditions.summary)"])
                }
            }
        } catch let failure as FetchFailure {
            if Task.isCancelled { return }  // shutting down mid-fetch: the job stays as it was
            await failed(job, failure, logger: logger)
        } catch {
            if Task.isCancelled || error is CancellationError { return }
            await failed(job, .transient("\(error)"), logger: logger)
        }
    }

    private func failed(_ job: Job, _ failure: FetchFailure, logger: Logger) async {
        let now = settings.now()
        switch failure {
        case .rejected(let reason):
            logger.warning("conditions unavailable", metadata: ["error.reason": "\(reason)"])
            await giveUp(job, reason: reason, logger: logger)
        case .rateLimited(let retryAfter):
            // Not the job's fault: no attempt is counted; everyone waits.
            let pause = retryAfter ?? settings.rateLimitPause
            logger.warning("provider asks to slow down; pausing", metadata: ["rate.pauseMs": "\(pause.milliseconds)"])
            let next = now.addingTimeInterval(pause.seconds)
            await store(job, logger: logger) { db, now in
                try Jobs.retry(db, job: job, attempts: job.attempts, at: next, error: failure.description, now: now)
            }
        case .userBudget(let retryAfter):
            // This user's share is spent: the job waits for it, no attempt is counted, and
            // everyone else's jobs go on.
            logger.info("user's provider calls spent; job waits", metadata: ["job.retryInMs": "\(retryAfter.milliseconds)"])
            let (perHour, draw) = (settings.userCallsPerHour, settings.jitter())
            await store(job, logger: logger) { db, now in
                try Jobs.deferForBudget(
                    db, job: job, wait: retryAfter, perHour: perHour, draw: draw, error: failure.description, now: now)
            }
        case .transient(let detail):
            let attempts = job.attempts + 1
            let age = now.timeIntervalSince(job.queuedAt)
            if attempts >= settings.maxAttempts || age >= settings.maxAge.seconds {
                logger.warning(
                    "giving up after repeated failures",
                    metadata: ["job.attempts": "\(attempts)", "error.detail": "\(detail)"])
                await giveUp(job, reason: "weather provider unreachable after \(attempts) attempts: \(detail)", logger: logger)
                return
            }
            let delay = settings.backoff(afterFailures: attempts)
            logger.info(
                "fetch failed; will retry",
                metadata: ["error.detail": "\(detail)", "job.retryInMs": "\(delay.milliseconds)"])
            let next = now.addingTimeInterval(delay.seconds)
            await store(job, logger: logger) { db, now in
                try Jobs.retry(db, job: job, attempts: attempts, at: next, error: detail, now: now)
            }
        }
    }

    /// Publishes what can be published: the weather alone when it was fetched and only the
    /// tide kept failing, otherwise `conditions.unavailable` with the reason.
    private func giveUp(_ job: Job, reason: String, logger: Logger) async {
        if let partial = try? await fetcher.conditions(
            latitude: job.latitude, longitude: job.longitude, at: job.at, water: job.water, tide: .giveUp(reason: reason))
        {
            await store(job, logger: logger) { db, now in
                _ = try Jobs.complete(db, job: job, conditions: partial, now: now)
            }
            return
        }
        await store(job, logger: logger) { db, now in
            _ = try Jobs.giveUp(db, job: job, reason: reason, now: now)
        }
    }

    /// Commits through the group committer so the outbox is published right after.
    private func store(
        _ job: Job, logger: Logger, _ work: @escaping @Sendable (Database, Date) throws -> Void
    ) async {
        let now = settings.now()
        do {
            try await commits.write { db in try work(db, now) }
        } catch {
            // The job stays pending with its old schedule and is tried again.
            logger.error("storing a job's outcome failed", metadata: ["error.detail": "\(error)"])
        }
    }
}

extension Job {
    /// The provider cache's key for this job: rounded place and nearest hour.
    var cacheKey: String {
        let place = Place(latitude: latitude, longitude: longitude)
        let hour = Fetcher.nearestHour(at)
        return "\(place.latitudeKey),\(place.longitudeKey),\(hour)"
    }
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
    var milliseconds: Int64 { components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000 }
}
