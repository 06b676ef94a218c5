// What a service knows of its own health, gathered once for `$srv.info`, `$srv.stats` and
// the replies built from projections (docs/protocol.md, "Health and freshness").
//
// Each event consumer reports, per producer, how far it has applied, how far the producer
// says it has got (heartbeats, `events.since`), when it last heard from it and when it was
// last caught up. A reply computed from a projection that is behind carries that fact
// (`freshness`), so a figure is never shown as current when it is not. A producer whose
// outbox cannot be read marks the service degraded.
import Foundation
import Synchronization
import Wire

/// One consumer's progress, as `$srv.info` and `$srv.stats` show it.
public struct ConsumerStatus: Codable, Sendable, Equatable {
    public enum State: String, Codable, Sendable {
        /// Replaying what it missed since its checkpoint (a rebuild from 0 included).
        case catchingUp = "catching-up"
        /// Caught up and hearing from the producer.
        case live
        /// Failing to apply, or not hearing from the producer, for longer than the stall limit.
        case stalled
    }

    public var producer: String
    public var state: State
    /// The last sequence applied (the checkpoint).
    public var position: Int64
    /// The producer's latest sequence this consumer has heard of.
    public var producerLast: Int64?
    /// `producerLast - position`; nil until the producer has been heard.
    public var behindEvents: Int64?
    /// When the consumer was last caught up with everything it had heard of: what a
    /// projection-based answer is "as of".
    public var caughtUpAt: Date?
    /// When the producer last answered or sent a heartbeat.
    public var lastContact: Date?
    /// Why it is failing, by code and place only (never user data), while it fails.
    public var problem: String?
    /// True once the first catch-up after start finished (the service's readiness).
    public var ready: Bool
}

/// The service's overall health as `$srv.info` reports it.
public struct HealthReport: Codable, Sendable, Equatable {
    public enum State: String, Codable, Sendable {
        case ok
        case degraded
    }

    public var state: State
    /// Every projection consumer has finished its first catch-up.
    public var ready: Bool
    /// Why it is degraded or not ready, one short line each.
    public var problems: [String]
    public var consumers: [ConsumerStatus]
}

/// Progress of one consumer, updated by `EventConsumer` as it works.
public final class ConsumerProgress: Sendable {
    public let producer: String
    /// Its answers feed user-facing replies (analytics' figures, the store's cash).
    public let feedsReplies: Bool
    let stallAfter: Duration
    private let state: Mutex<Inner>

    struct Inner {
        var position: Int64 = 0
        var producerLast: Int64?
        var caughtUpAt: Date?
        var lastContact: Date?
        var lastContactInstant: ContinuousClock.Instant?
        var failingSince: ContinuousClock.Instant?
        var problem: String?
        var ready = false
        let created = ContinuousClock.now
        /// Sink work under way (`working`), and when the last one ended.
        var working = 0
        var workingSince: ContinuousClock.Instant?
        var workEnded: ContinuousClock.Instant?
    }

    public init(producer: String, feedsReplies: Bool, stallAfter: Duration = .seconds(10)) {
        self.producer = producer
        self.feedsReplies = feedsReplies
        self.stallAfter = stallAfter
        state = Mutex(Inner())
    }

    /// The producer answered or sent a heartbeat saying it has reached `last`.
    func heard(last: Int64) {
        state.withLock {
            $0.producerLast = max($0.producerLast ?? last, last)
            $0.lastContact = Date()
            $0.lastContactInstant = .now
            if $0.position >= ($0.producerLast ?? 0) { $0.caughtUpAt = Date() }
        }
    }

    /// Events up to `position` are applied (the checkpoint).
    func applied(_ position: Int64) {
        state.withLock {
            $0.position = position
            $0.failingSince = nil
            $0.problem = nil
            if position >= ($0.producerLast ?? position) {
                $0.caughtUpAt = Date()
                $0.producerLast = max($0.producerLast ?? position, position)
            }
        }
    }

    /// The producer's history was rolled back (a restore): it is now at `last`.
    func reset(to last: Int64) {
        state.withLock {
            $0.producerLast = last
            $0.position = last
            $0.caughtUpAt = Date()
        }
    }

    /// The first catch-up after start is over.
    func markReady() { state.withLock { $0.ready = true } }

    /// Runs the consumer's own work on its sink (applying a batch or a page, settling a
    /// catch-up). Nothing is asked of the producer meanwhile, so its silence is not a stall
    /// then, nor until `stallAfter` after the work ends: the settle at the end of a
    /// rebuild recounts every user's totals, and on a large history that takes longer than
    /// `stallAfter` (docs/performance.md, "Rebuild at a million"). A sink that fails still
    /// counts as failing (`failed`).
    func working<T>(_ work: () async throws -> T) async rethrows -> T {
        state.withLock {
            if $0.working == 0 { $0.workingSince = .now }
            $0.working += 1
        }
        defer {
            state.withLock {
                $0.working -= 1
                if $0.working == 0 { ($0.workingSince, $0.workEnded) = (nil, .now) }
            }
        }
        return try await work()
    }

    /// Applying or reaching the producer failed; `problem` names what, never user data.
    /// Returns true when this starts a new failure episode (so it is logged once).
    @discardableResult
    func failed(_ problem: String) -> Bool {
        state.withLock {
            let first = $0.failingSince == nil
            if first { $0.failingSince = .now }
            $0.problem = problem
            return first
        }
    }

    /// How long it has been failing (nil: it is not).
    var failingFor: Duration? { state.withLock { s in s.failingSince.map { .now - $0 } } }

    public var status: ConsumerStatus {
        state.withLock { s in
            let now = ContinuousClock.now
            let behind = s.producerLast.map { max(0, $0 - s.position) }
            // Silence counts from the later of the producer's last word and the end of the
            // consumer's last work on its sink; during that work it does not count.
            // (`created` is earlier than either; no array: every read reply asks, for freshness)
            let quietSince = max(s.lastContactInstant ?? s.created, s.workEnded ?? s.created)
            let silent = s.working == 0 && now - quietSince > stallAfter
            let failing = s.failingSince.map { now - $0 > stallAfter } ?? false
            var problem = s.problem
            // Work past the limit is not live: a sink that hangs shows here, for as long as it does.
            let busyLong = s.workingSince.map { now - $0 > stallAfter } ?? false
            if problem == nil, busyLong, let since = s.workingSince {
                problem = "applying and settling events for \(Int((now - since).components.seconds)) s"
            }
            if problem == nil && silent {
                problem = s.lastContact == nil
                    ? "\(producer) has not been heard from since start"
                    : "no word from \(producer) for \(Int((now - s.lastContactInstant!).components.seconds)) s"
            }
            let state: ConsumerStatus.State =
                failing || silent ? .stalled : (behind ?? 0) > 0 || !s.ready || busyLong ? .catchingUp : .live
            return ConsumerStatus(
                producer: producer, state: state, position: s.position, producerLast: s.producerLast,
                behindEvents: behind, caughtUpAt: s.caughtUpAt, lastContact: s.lastContact,
                problem: state == .live ? nil : problem, ready: s.ready)
        }
    }
}

/// What the writer connection of a service's database runs, read back from that
/// connection when asked (so `$srv.info` shows what commits actually do).
public struct StorageReport: Codable, Sendable, Equatable {
    /// `PRAGMA synchronous` on the writer: off, normal, full or extra.
    public var synchronous: String
    /// `PRAGMA journal_mode` on the writer: wal for a service's file, memory in tests.
    public var journalMode: String
    /// Whether SQLite counts its memory in this process (`SQLiteProcess.memoryStatus`):
    /// "off" in a service, whose first connection is its database's. Nil from a service
    /// that predates it.
    public var memoryStatus: String?
}

/// A service's health: its consumers' progress and the problems its own parts report.
public final class ServiceHealth: Sendable {
    private let state = Mutex(Inner())
    private let storageProbe = Mutex<(@Sendable () throws -> StorageReport)?>(nil)

    /// How `$srv.info` reads the writer connection's settings.
    public func probeStorage(_ probe: @escaping @Sendable () throws -> StorageReport) {
        storageProbe.withLock { $0 = probe }
    }

    public var storage: StorageReport? { try? storageProbe.withLock { $0 }?() }

    struct Inner {
        var consumers: [ConsumerProgress] = []
        /// Problems reported by parts of the service (the publisher, `events.since`), by key.
        var problems: [String: String] = [:]
    }

    public init() {}

    public func register(_ progress: ConsumerProgress) {
        state.withLock { $0.consumers.append(progress) }
    }

    /// Sets (or, with nil, clears) a problem under `key`.
    public func report(_ key: String, _ problem: String?) {
        state.withLock { $0.problems[key] = problem }
    }

    public var report: HealthReport {
        let (consumers, own) = state.withLock { ($0.consumers, $0.problems) }
        let statuses = consumers.map(\.status)
        var problems = own.keys.sorted().compactMap { own[$0] }
        for status in statuses {
            switch status.state {
            case .live: continue
            case .stalled:
                problems.append("consumer of \(status.producer) stalled: \(status.problem ?? "no progress")")
            case .catchingUp:
                // the first catch-up after start, or one that has a problem to say
                if !status.ready || status.problem != nil {
                    let behind = status.behindEvents.map { "\($0) event\($0 == 1 ? "" : "s") behind" }
                    let details = [behind, status.problem].compactMap { $0 }
                    problems.append(
                        "catching up with \(status.producer)" + (details.isEmpty ? "" : ": " + details.joined(separator: "; ")))
                }
            }
        }
        let stalled = statuses.contains { $0.state == .stalled }
        return HealthReport(
            state: stalled || !own.isEmpty ? .degraded : .ok, ready: statuses.allSatisfy(\.ready),
            problems: problems, consumers: statuses)
    }

    /// What a reply built from projections must say about itself: nil when every consumer
    /// that feeds replies is live and caught up.
    public var freshness: Freshness? {
        let statuses = state.withLock { $0.consumers }.filter(\.feedsReplies).map(\.status)
        let lagging = statuses.filter { $0.state != .live }
        guard !lagging.isEmpty else { return nil }
        let known = lagging.compactMap(\.behindEvents)
        return Freshness(
            asOf: lagging.compactMap(\.caughtUpAt).min(),
            behindEvents: known.count == lagging.count ? known.reduce(0, +) : nil,
            producers: lagging.map(\.producer))
    }
}
