// `logbook activity add|list|delete|log|add-time` and `logbook networth`: time toward 10,000
// hours, shown as money (1 hour = $1.00; seed 004). The timer's commands: TimerCommands.swift.
import ArgumentParser
import Contracts
import Foundation
import Wire

enum Activities {
    /// The list's timer column: ● for a running timer, the state of a paused or stopped one.
    static func timer(_ timer: TimerState) -> String {
        let elapsed = TimeText.clock(milliseconds: timer.elapsedMs)
        switch timer.state {
        case .running: return "● running \(elapsed)"
        case .paused, .stopped: return "\(timer.state.rawValue) \(elapsed)"
        case .idle: return ""
        }
    }

    /// The cash a just-saved entry of `ms` earned, by the store's one rule (the floor of the
    /// new total less the floor of the old: TimeValue.earned), from the net worth records
    /// now holds; the entry's own floor when that cannot be read.
    static func earned(_ context: Context, _ ms: Int64) async -> String {
        guard let total = try? await TimeMethods.networth.call(context).totalMs, total >= ms
        else { return Money.format(TimeValue.cents(ms)) }
        return Money.format(TimeValue.earned(ms, totalAfterMs: total))
    }

    static func describeTimer(_ name: String, _ timer: TimerState) -> String {
        "\(name): \(timer.state.rawValue) \(TimeText.clock(milliseconds: timer.elapsedMs))"
    }
}

struct ActivityGroup: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "activity",
        abstract: "Activities you practise toward 10,000 hours: add, add-time, list, delete, log.",
        discussion: """
            Time is shown as money: 1 hour = $1.00, the goal 10,000 hours = $10,000.00. An \
            activity is named by its id or its name.
            Examples:
              logbook activity add Guitar
              logbook activity list           # amount, progress, ● for a running timer
              logbook activity log Guitar     # the times saved with `logbook timer save`
              logbook activity add-time Guitar 1h30m   # practice the timer did not see
              logbook activity delete Guitar --yes
            """,
        subcommands: [ActivityAdd.self, ActivityList.self, ActivityDelete.self, ActivityLog.self, ActivityAddTime.self])
}

struct ActivityAdd: GatewayCommand {
    static let configuration = CommandConfiguration(
        commandName: "add", abstract: "Add an activity.", discussion: "Example: logbook activity add Guitar")

    @OptionGroup var global: GlobalOptions
    @Argument(help: "Its name (unique among your activities).") var name: String

    func execute(_ context: Context) async throws {
        try await TimeMethods.activityAdd.perform(context, Contracts.ActivityAdd(name: name)) { activity in
            "added activity \(activity.name) (id \(activity.id)); start its timer with `logbook timer start \(activity.name)`"
        }
    }
}

struct ActivityList: GatewayCommand {
    static let configuration = CommandConfiguration(
        commandName: "list", abstract: "List activities: amount, progress toward $10,000.00, running timers.",
        discussion: "Examples:\n  logbook activity list\n  logbook activity list --csv")

    @OptionGroup var global: GlobalOptions
    @OptionGroup var options: ListOptions

    func execute(_ context: Context) async throws {
        let listed = try await context.list(TimeMethods.activityList, ListBody(), options)
        let rows = Rows(
            headers: ["ID", "NAME", "AMOUNT", "PROGRESS", "TIMER"],
            table: listed.items.map { activity in
                [
                    activity.id, activity.name, activity.amount, TimeText.progress(share: activity.progress),
                    Activities.timer(activity.timer),
                ]
            },
            csvHeaders: ["id", "name", "totalMs", "amount", "progress", "timerState", "timerElapsedMs", "createdAt"],
            csv: listed.items.map { activity in
                [
                    activity.id, activity.name, "\(activity.totalMs)", Money.plain(activity.cents), "\(activity.progress)",
                    activity.timer.state.rawValue, "\(activity.timer.elapsedMs)", WireTime.format(activity.createdAt),
                ]
            })
        context.show(listed.fetched, rows, options, empty: "no activities yet: `logbook activity add NAME`")
    }
}

struct ActivityDelete: GatewayCommand {
    static let configuration = CommandConfiguration(
        commandName: "delete", abstract: "Delete an activity (its saved time stays in your net worth).",
        discussion: "Asks first; --yes skips the question.\nExample: logbook activity delete Guitar --yes")

    @OptionGroup var global: GlobalOptions
    @Argument(help: "The activity's id or name.") var activity: String
    @Flag(help: "Do not ask for confirmation.") var yes = false

    func execute(_ context: Context) async throws {
        let found = try await Resolve.activity(context, activity)
        let what = "activity \"\(found.name)\" (\(found.amount) logged)"
        // time on a timer that was never saved is lost with the activity: say so, and how much
        let state = found.timer.state.rawValue
        let unsaved = found.timer.elapsedMs
        let loss =
            found.timer.state == .idle || unsaved <= 0
            ? ""
            : " Its \(state) timer's \(TimeText.clock(milliseconds: unsaved)) (not saved) will be discarded."
        try Confirm.delete("Delete \(what)? Its time stays in your net worth.\(loss)", yes: yes)
        let result = try await TimeMethods.activityDelete.call(context, IdBody(id: found.id))
        if context.json {
            Output.json(result)
        } else {
            Output.line(
                "deleted \(what)"
                    + (loss.isEmpty ? "" : "; discarded its \(state) timer's \(TimeText.clock(milliseconds: unsaved)) (not saved)"))
        }
    }
}

struct ActivityLog: GatewayCommand {
    static let configuration = CommandConfiguration(
        commandName: "log", abstract: "The times saved to an activity, newest first.",
        discussion: "Examples:\n  logbook activity log Guitar\n  logbook activity log Guitar --all --csv")

    @OptionGroup var global: GlobalOptions
    @Argument(help: "The activity's id or name.") var activity: String
    @OptionGroup var options: ListOptions

    func execute(_ context: Context) async throws {
        let found = try await Resolve.activity(context, activity)
        let listed = try await context.list(TimeMethods.timeList, TimeList(activityId: found.id), options)
        let rows = Rows(
            headers: ["SAVED", "STARTED", "DURATION", "AMOUNT"],
            table: listed.items.map { entry in
                [
                    TimeText.local(entry.savedAt, seconds: true), TimeText.local(entry.startedAt, seconds: true),
                    TimeText.clock(milliseconds: entry.durationMs), Money.format(TimeValue.cents(entry.durationMs)),
                ]
            },
            csvHeaders: ["id", "activityId", "startedAt", "savedAt", "durationMs"],
            csv: listed.items.map { entry in
                [
                    entry.id, entry.activityId, WireTime.format(entry.startedAt), WireTime.format(entry.savedAt),
                    "\(entry.durationMs)",
                ]
            })
        if !context.json && !options.csv {
            Output.line("\(found.name): \(found.amount), \(TimeText.clock(milliseconds: found.totalMs)) in all")
        }
        context.show(listed.fetched, rows, options, empty: "nothing saved yet: `logbook timer start \(found.name)`")
    }
}

struct ActivityAddTime: GatewayCommand {
    static let configuration = CommandConfiguration(
        commandName: "add-time", abstract: "Add time practised without the timer (at most 24 hours at once).",
        discussion: """
            The time counts like time saved from the timer: in the log, in net worth, and as \
            cash in the store. It ends now unless --started says when it began.
            Examples:
              logbook activity add-time Guitar 1h30m
              logbook activity add-time Guitar 45m --started "2026-05-01 18:00"
              logbook activity add-time Guitar 1:15
            """)

    @OptionGroup var global: GlobalOptions
    @Argument(help: "The activity's id or name.") var activity: String
    @Argument(help: ArgumentHelp("How long: 1h30m, 90m, 45s, 2h or H:MM.", valueName: "duration")) var duration: String
    @Option(help: ArgumentHelp("When the practice began (local time or ISO-8601).", valueName: "time")) var started: String?

    func execute(_ context: Context) async throws {
        let milliseconds = try TimeText.duration(duration, field: "duration")
        guard milliseconds <= 24 * TimeValue.msPerHour else {
            throw ServiceError.invalid(
                "duration", "must be at most 24 hours at once (got \(TimeText.clock(milliseconds: milliseconds)))")
        }
        let found = try await Resolve.activity(context, activity)
        let request = TimeAdd(
            activityId: found.id, durationMs: milliseconds,
            startedAt: try started.map { try TimeText.parse($0, field: "started") })
        let entry = try await TimeMethods.timeAdd.call(context, request)
        if context.json { return Output.json(entry) }
        let ms = entry.durationMs
        Output.line(
            "added \(TimeText.clock(milliseconds: ms)) (\(await Activities.earned(context, ms))) to \(found.name)")
    }
}

// MARK: Net worth

struct NetWorthCommand: GatewayCommand {
    static let configuration = CommandConfiguration(
        commandName: "networth", abstract: "All the time you ever saved, as money (1 hour = $1.00).",
        discussion: "It includes activities deleted since, and never drops.\nExample: logbook networth")

    @OptionGroup var global: GlobalOptions

    func execute(_ context: Context) async throws {
        try await TimeMethods.networth.perform(context) { worth in
            "net worth \(worth.amount): \(TimeText.clock(milliseconds: worth.totalMs)) of 10,000 hours "
                + TimeText.progress(share: worth.progress)
        }
    }
}
