// The 10,000-hours logbook's contract: activities, their timers and saved time (records,
// docs/protocol.md "Time toward 10,000 hours"), their events (what analytics and the store
// count) and analytics' summary. Time is whole milliseconds; its money (1 hour = $1.00),
// the goal and the progress toward it come from one rule, `TimeValue` (Shared/Wire).
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
    /// True when `records.timer.save` saved the timer's time (the timer is idle after it);
    /// false for `records.time.add`, which leaves the timer as it was. Absent from events
    /// written before the field: those are read as a timer's save.
    public var fromTimer: Bool?

    public init(
        id: String, userId: String, activityId: String, durationMs: Int64, startedAt: Date, savedAt: Date,
        fromTimer: Bool? = nil
    ) {
        self.id = id
        self.userId = userId
        self.activityId = activityId
        self.durationMs = durationMs
        self.startedAt = startedAt
        self.savedAt = savedAt
        self.fromTimer = fromTimer
    }

    public static let sample = TimeSavedEvent(
        id: "t", userId: "u", activityId: "a", durationMs: 1, startedAt: Date(timeIntervalSince1970: 0),
        savedAt: Date(timeIntervalSince1970: 0), fromTimer: true)
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

extension TimerState {
    /// The timer of an activity that has none: idle, nothing counted.
    public static func idle(_ activityId: String, now: Date) -> TimerState {
        TimerState(
            activityId: activityId, state: .idle, accumulatedMs: 0, runningSince: nil, startedAt: nil, elapsedMs: 0, at: now)
    }
}

/// `time.deleted` as the store reads it (records does not publish it today).
public struct TimeDeleted: Documented, Equatable {
    public var id: String
    public init(id: String) { self.id = id }
    public static let sample = TimeDeleted(id: "t")
}

public enum TimeEvents {
    public static let activityCreated = "activity.created"
    public static let activityDeleted = "activity.deleted"
    public static let timeSaved = "time.saved"
    public static let timeDeleted = "time.deleted"
    public static let timerChanged = "timer.changed"
}

// MARK: Activities and time (records)

/// An activity as records answers it.
public struct Activity: Documented, Equatable {
    public var id: String
    public var name: String
    public var createdAt: Date
    /// All time saved to this activity.
    public var totalMs: Int64
    /// `totalMs` as money: 1 hour = 100 cents.
    public var cents: Int64
    public var amount: String
    /// Share of the 10,000-hour goal reached (`TimeValue.progress`).
    public var progress: Decimal
    /// The activity's timer (state `idle` when it has none): the list's running marker.
    public var timer: TimerState

    /// `cents`, `amount` and `progress` follow from `totalMs`.
    public init(id: String, name: String, createdAt: Date, totalMs: Int64, timer: TimerState) {
        self.id = id
        self.name = name
        self.createdAt = createdAt
        self.totalMs = totalMs
        let worth = TimeWorth(totalMs)
        cents = worth.cents
        amount = worth.amount
        progress = worth.progress
        self.timer = timer
    }

    public static let sample = Activity(
        id: "a", name: "Guitar", createdAt: Date(timeIntervalSince1970: 0), totalMs: 1, timer: .sample)
}

/// Cents, amount and progress toward the goal of `totalMs` of saved time: what an
/// activity, a net worth and analytics' summaries show, computed in one place.
public struct TimeWorth: Sendable, Equatable {
    public var cents: Int64
    public var amount: String
    public var progress: Decimal

    public init(_ totalMs: Int64) {
        cents = TimeValue.cents(totalMs)
        amount = TimeValue.dollars(cents)
        progress = TimeValue.progress(totalMs)
    }
}

public struct ActivityAdd: Documented, Equatable {
    public var name: String
    public init(name: String) { self.name = name }
    public static let sample = ActivityAdd(name: "Guitar")
}

/// A saved time entry.
public struct TimeEntry: Documented, Equatable {
    public var id: String
    public var activityId: String
    public var durationMs: Int64
    public var startedAt: Date
    public var savedAt: Date

    public init(id: String, activityId: String, durationMs: Int64, startedAt: Date, savedAt: Date) {
        self.id = id
        self.activityId = activityId
        self.durationMs = durationMs
        self.startedAt = startedAt
        self.savedAt = savedAt
    }

    public static let sample = TimeEntry(
        id: "t", activityId: "a", durationMs: 1, startedAt: Date(timeIntervalSince1970: 0),
        savedAt: Date(timeIntervalSince1970: 0))
}

/// `records.time.add`: time practised without the timer.
public struct TimeAdd: Documented, Equatable {
    public var activityId: String
    public var durationMs: Int64
    /// When the practice began; default: `durationMs` before now.
    public var startedAt: Date?

    public init(activityId: String, durationMs: Int64, startedAt: Date? = nil) {
        self.activityId = activityId
        self.durationMs = durationMs
        self.startedAt = startedAt
    }

    public static let sample = TimeAdd(activityId: "a", durationMs: 1, startedAt: Date(timeIntervalSince1970: 0))
}

public struct TimeList: Documented, Equatable {
    public var activityId: String
    public var cursor: String?
    public var limit: Int?

    public init(activityId: String, cursor: String? = nil, limit: Int? = nil) {
        self.activityId = activityId
        self.cursor = cursor
        self.limit = limit
    }

    public static let sample = TimeList(activityId: "a", cursor: "c", limit: 50)
}

/// `{activityId}`: every `records.timer.*` method.
public struct TimerRequest: Documented, Equatable {
    public var activityId: String
    public init(activityId: String) { self.activityId = activityId }
    public static let sample = TimerRequest(activityId: "a")
}

/// `records.timer.save`: the entry saved and the timer, idle again.
public struct TimeSaved: Codable, Sendable, Equatable {
    public var entry: TimeEntry
    public var timer: TimerState

    public init(entry: TimeEntry, timer: TimerState) {
        self.entry = entry
        self.timer = timer
    }
}

/// `records.networth`, and analytics' `netWorth`: every millisecond ever saved, deleted
/// activities included, so it never drops.
public struct NetWorth: Documented, Equatable {
    public var totalMs: Int64
    public var cents: Int64
    public var amount: String
    public var goalMs: Int64
    public var goalCents: Int64
    public var progress: Decimal

    public init(totalMs: Int64) {
        self.totalMs = totalMs
        let worth = TimeWorth(totalMs)
        cents = worth.cents
        amount = worth.amount
        goalMs = TimeValue.goalMs
        goalCents = TimeValue.cents(TimeValue.goalMs)
        progress = worth.progress
    }

    public static let sample = NetWorth(totalMs: 1)
}

// MARK: Summary (analytics)

public struct ActivitySummary: Codable, Sendable, Equatable {
    public var id: String
    public var name: String
    public var createdAt: Date
    public var totalMs: Int64
    public var cents: Int64
    public var amount: String
    public var progress: Decimal
    /// idle | running | paused | stopped
    public var timer: TimerPhase
    public var running: Bool
    /// Time on the timer now (accumulated, plus the current run while running).
    public var timerElapsedMs: Int64

    public init(id: String, name: String, createdAt: Date, totalMs: Int64, timer: TimerPhase, timerElapsedMs: Int64) {
        self.id = id
        self.name = name
        self.createdAt = createdAt
        self.totalMs = totalMs
        let worth = TimeWorth(totalMs)
        cents = worth.cents
        amount = worth.amount
        progress = worth.progress
        self.timer = timer
        running = timer == .running
        self.timerElapsedMs = timerElapsedMs
    }
}

/// `analytics.time.summary`.
public struct TimeSummary: Codable, Sendable, Equatable {
    /// Active activities, oldest first.
    public var activities: [ActivitySummary]
    /// Every millisecond ever saved, deleted activities included.
    public var netWorth: NetWorth
    /// Ids of the activities whose timer is running.
    public var running: [String]
    public var at: Date

    public init(activities: [ActivitySummary], netWorth: NetWorth, at: Date) {
        self.activities = activities
        self.netWorth = netWorth
        running = activities.filter(\.running).map(\.id)
        self.at = at
    }
}

// MARK: Methods

public enum TimeMethods {
    public static let activityAdd = Method<ActivityAdd, Activity>("records.activity.add", .write)
    public static let activityGet = Method<IdBody, Activity>("records.activity.get", .read)
    public static let activityList = Method<ListBody, Page<Activity>>("records.activity.list", .read)
    public static let activityDelete = Method<IdBody, Deleted>("records.activity.delete", .write)
    public static let timeAdd = Method<TimeAdd, TimeEntry>("records.time.add", .write)
    public static let timeList = Method<TimeList, Page<TimeEntry>>("records.time.list", .read)
    public static let networth = Method<Empty, NetWorth>("records.networth", .read)
    public static let timerGet = Method<TimerRequest, TimerState>("records.timer.get", .read)
    public static let timerStart = Method<TimerRequest, TimerState>("records.timer.start", .write)
    public static let timerPause = Method<TimerRequest, TimerState>("records.timer.pause", .write)
    public static let timerResume = Method<TimerRequest, TimerState>("records.timer.resume", .write)
    public static let timerStop = Method<TimerRequest, TimerState>("records.timer.stop", .write)
    public static let timerClear = Method<TimerRequest, TimerState>("records.timer.clear", .write)
    public static let timerSave = Method<TimerRequest, TimeSaved>("records.timer.save", .write)
    public static let summary = Method<Empty, TimeSummary>("analytics.time.summary", .read)
}
