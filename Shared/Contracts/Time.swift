// The 10,000-hours logbook's events (records), docs/protocol.md "Events summary": what
// analytics and the store count.
import Foundation
import Wire

/// `activity.created`.
public struct ActivityCreated: Documented, Equatable {
    public var id: String
    public var name: String
    public var createdAt: Date

    public init(id: String, name: String, createdAt: Date) {
        self.id = id
        self.name = name
        self.createdAt = createdAt
    }

    public static let sample = ActivityCreated(id: "a", name: "Guitar", createdAt: Date(timeIntervalSince1970: 0))
}

/// `activity.deleted`: its saved time stays counted.
public struct ActivityDeleted: Documented, Equatable {
    public var id: String
    public var userId: String
    public var name: String
    public var totalMs: Int64

    public init(id: String, userId: String, name: String, totalMs: Int64) {
        self.id = id
        self.userId = userId
        self.name = name
        self.totalMs = totalMs
    }

    public static let sample = ActivityDeleted(id: "a", userId: "u", name: "Guitar", totalMs: 1)
}

/// `time.saved`: one saved entry, flat, with its owner.
public struct TimeSavedEvent: Documented, Equatable {
    public var id: String
    public var userId: String
    public var activityId: String
    public var durationMs: Int64
    public var startedAt: Date
    public var savedAt: Date

    public init(id: String, userId: String, activityId: String, durationMs: Int64, startedAt: Date, savedAt: Date) {
        self.id = id
        self.userId = userId
        self.activityId = activityId
        self.durationMs = durationMs
        self.startedAt = startedAt
        self.savedAt = savedAt
    }

    public static let sample = TimeSavedEvent(
        id: "t", userId: "u", activityId: "a", durationMs: 1, startedAt: Date(timeIntervalSince1970: 0),
        savedAt: Date(timeIntervalSince1970: 0))
}

public enum TimerPhase: String, WireEnum { case idle, running, paused, stopped }

/// An activity's timer as records answers it and publishes it (`timer.changed`).
public struct TimerState: Documented, Equatable {
    public var activityId: String
    public var state: TimerPhase
    /// Time counted before the current run.
    public var accumulatedMs: Int64
    /// When the current run began (running only).
    public var runningSince: Date?
    /// When the timer was first started (nil when idle).
    public var startedAt: Date?
    /// accumulated + (now − runningSince) while running; accumulated otherwise.
    public var elapsedMs: Int64
    /// The server time `elapsedMs` was computed at.
    public var at: Date

    public init(
        activityId: String, state: TimerPhase, accumulatedMs: Int64, runningSince: Date?, startedAt: Date?,
        elapsedMs: Int64, at: Date
    ) {
        self.activityId = activityId
        self.state = state
        self.accumulatedMs = accumulatedMs
        self.runningSince = runningSince
        self.startedAt = startedAt
        self.elapsedMs = elapsedMs
        self.at = at
    }

    public static let sample = TimerState(
        activityId: "a", state: .running, accumulatedMs: 1, runningSince: Date(timeIntervalSince1970: 0),
        startedAt: Date(timeIntervalSince1970: 0), elapsedMs: 1, at: Date(timeIntervalSince1970: 0))
}

public enum TimeEvents {
    public static let activityCreated = "activity.created"
    public static let activityDeleted = "activity.deleted"
    public static let timeSaved = "time.saved"
    public static let timerChanged = "timer.changed"
}
