// Time logbook, the timer of an activity, held by the server so it survives the client
// and a restart: `records.timer.start|pause|resume|stop|save|clear|get {activityId}`.
// Stored: the state, the milliseconds accumulated before the current run, and the instant
// the current run began; elapsed = accumulated + (now − runningSince) while running.
//
//   idle ──start──▶ running ──pause──▶ paused ──resume──▶ running
//   running|paused ──stop──▶ stopped (frozen)
//   paused|stopped ──save──▶ idle, elapsed added to the log as a time entry
//   running|paused|stopped ──clear──▶ idle, elapsed discarded
//
// `save` refuses a running timer (pause or stop it first, so what is saved is what the
// user saw) and a timer with nothing on it. Every other move is `failed_precondition`
// with the state the timer is in. Timers of different activities run independently.
import Contracts
import Foundation
import GRDB
import Runtime
import Storage
import Wire

extension TimerState {
    static func load(_ db: Database, userId: String, activityId: String, now: Date) throws -> TimerState {
        guard let row = try TimerRow.find(db, userId: userId, activityId: activityId) else {
            return .idle(activityId, now: now)
        }
        var timer = TimerState(
            activityId: activityId, state: TimerPhase(rawValue: row.state) ?? .stopped, accumulatedMs: row.accumulatedMs,
            runningSince: row.runningSince.map(Date.init(ms:)), startedAt: Date(ms: row.startedAt), elapsedMs: 0, at: now)
        timer.elapsedMs = timer.elapsed(at: now)
        return timer
    }

    func elapsed(at now: Date) -> Int64 {
        guard let runningSince else { return accumulatedMs }
        return accumulatedMs + max(0, now.ms - runningSince.ms)
    }

    /// Writes this state (or removes the row when idle).
    func store(_ db: Database, userId: String) throws {
        if state == .idle {
            try db.execute(sql: "DELETE FROM timer WHERE userId = ? AND activityId = ?", arguments: [userId, activityId])
            return
        }
        try db.execute(
            sql: """
                INSERT INTO timer (activityId, userId, state, accumulatedMs, runningSince, startedAt, updatedAt)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (activityId) DO UPDATE SET state = excluded.state, accumulatedMs = excluded.accumulatedMs,
                    runningSince = excluded.runningSince, updatedAt = excluded.updatedAt
                """,
            arguments: [
                activityId, userId, state.rawValue, accumulatedMs, runningSince?.ms, (startedAt ?? at).ms, at.ms,
            ])
    }
}


extension Records {
    func registerTimer(_ router: inout Router) {
        router.read(TimeMethods.timerGet) { body, context in
            let at = now()
            return try await database.read { db in
                _ = try activeActivityName(db, userId: context.userId, id: body.activityId, field: "activityId")
                return try TimerState.load(db, userId: context.userId, activityId: body.activityId, now: at)
            }
        }

        router.write(TimeMethods.timerStart) { body, context, db in
            try move(db, context, body) { timer, name, at in
                switch timer.state {
                case .idle:
                    timer = TimerState(
                        activityId: timer.activityId, state: .running, accumulatedMs: 0, runningSince: at, startedAt: at,
                        elapsedMs: 0, at: at)
                case .running: throw refused("the timer of \(name) is already running")
                case .paused: throw refused("the timer of \(name) is paused: resume it, or save or clear it first")
                case .stopped: throw refused("the timer of \(name) is stopped: save or clear it before starting again")
                }
            }
        }

        router.write(TimeMethods.timerPause) { body, context, db in
            try move(db, context, body) { timer, name, at in
                switch timer.state {
                case .running:
                    timer.accumulatedMs = timer.elapsed(at: at)
                    timer.runningSince = nil
                    timer.state = .paused
                case .idle: throw refused("the timer of \(name) is not running: start it first")
                case .paused: throw refused("the timer of \(name) is already paused")
                case .stopped: throw refused("the timer of \(name) is stopped: save or clear it")
                }
            }
        }

        router.write(TimeMethods.timerResume) { body, context, db in
            try move(db, context, body) { timer, name, at in
                switch timer.state {
                case .paused:
                    timer.runningSince = at
                    timer.state = .running
                case .idle: throw refused("the timer of \(name) has not been started: use start")
                case .running: throw refused("the timer of \(name) is already running")
                case .stopped: throw refused("the timer of \(name) is stopped: save or clear it")
                }
            }
        }

        router.write(TimeMethods.timerStop) { body, context, db in
            try move(db, context, body) { timer, name, at in
                switch timer.state {
                case .running, .paused:
                    timer.accumulatedMs = timer.elapsed(at: at)
                    timer.runningSince = nil
                    timer.state = .stopped
                case .idle: throw refused("the timer of \(name) has not been started")
                case .stopped: throw refused("the timer of \(name) is already stopped")
                }
            }
        }

        router.write(TimeMethods.timerClear) { body, context, db in
            try move(db, context, body) { timer, name, at in
                guard timer.state != .idle else { throw refused("nothing to clear: the timer of \(name) is idle") }
                timer = .idle(timer.activityId, now: at)
            }
        }

        router.write(TimeMethods.timerSave) { body, context, db in
            let at = now()
            let name = "\"\(try activeActivityName(db, userId: context.userId, id: body.activityId, field: "activityId"))\""
            let timer = try TimerState.load(db, userId: context.userId, activityId: body.activityId, now: at)
            switch timer.state {
            case .paused, .stopped: break
            case .idle: throw refused("nothing to save: the timer of \(name) is idle")
            case .running: throw refused("the timer of \(name) is running: pause or stop it before saving")
            }
            guard timer.elapsedMs > 0 else { throw refused("nothing to save: the timer of \(name) shows 0 ms") }
            let entry = TimeEntry(
                id: ID.make(at: at), activityId: body.activityId, durationMs: timer.elapsedMs,
                startedAt: timer.startedAt ?? at, savedAt: at)
            let idle = TimerState.idle(body.activityId, now: at)
            try idle.store(db, userId: context.userId)
            try entry.save(db, userId: context.userId, at: at, fromTimer: true)
            return TimeSaved(entry: entry, timer: idle)
        }
    }

    /// Loads the timer of the caller's active activity, applies `change`, stores it and
    /// emits one `timer.changed`.
    private func move(
        _ db: Database, _ context: RequestContext, _ body: TimerRequest,
        _ change: (inout TimerState, _ activityName: String, _ at: Date) throws -> Void
    ) throws -> TimerState {
        let at = now()
        let name = try activeActivityName(db, userId: context.userId, id: body.activityId, field: "activityId")
        var timer = try TimerState.load(db, userId: context.userId, activityId: body.activityId, now: at)
        try change(&timer, "\"\(name)\"", at)
        timer.at = at
        timer.elapsedMs = timer.elapsed(at: at)
        try timer.store(db, userId: context.userId)
        try Outbox.append(db, type: TimeEvents.timerChanged, userId: context.userId, data: timer, at: at)
        return timer
    }
}

private func refused(_ message: String) -> ServiceError {
    ServiceError(.failedPrecondition, message)
}
