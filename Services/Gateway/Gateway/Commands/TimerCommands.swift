// `logbook timer start|pause|resume|stop|save|clear|show`: an activity's timer, kept by the
// server, so it keeps running when the CLI exits. The seven subcommands are one command,
// `TimerCommand`, told by its `Action` which transition it makes and how it is described.
import ArgumentParser
import Contracts
import Wire

struct TimerGroup: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "timer",
        abstract: "An activity's timer, kept by the server: start, pause, resume, stop, save, clear, show.",
        discussion: """
            idle → start → running ⇄ pause/resume; stop freezes it; save adds the time to the \
            activity's log; clear discards it. The timer keeps running when this command exits.
            Examples:
              logbook timer start Guitar
              logbook timer show Guitar       # Guitar: running 0:12:34
              logbook timer stop Guitar
              logbook timer save Guitar
            """,
        subcommands: [
            TimerCommand<TimerStart>.self, TimerCommand<TimerPause>.self, TimerCommand<TimerResume>.self,
            TimerCommand<TimerStop>.self, TimerCommand<TimerSave>.self, TimerCommand<TimerClear>.self,
            TimerCommand<TimerShow>.self,
        ])
}

/// One timer subcommand: its name, what its --help says, and the `records.timer.*` method
/// it calls (`get` reads; every other one is a write; `save` answers the entry it saved).
protocol TimerAction {
    associatedtype Result: Codable & Sendable
    static var name: String { get }
    static var abstract: String { get }
    static var method: Contracts.Method<TimerRequest, Result> { get }
    /// What people read after it: by default the timer's state.
    static func describe(_ result: Result, activity name: String, context: Context) async -> String
}

extension TimerAction where Result == TimerState {
    static func describe(_ timer: TimerState, activity name: String, context: Context) async -> String {
        Activities.describeTimer(name, timer)
    }
}

/// `logbook timer <action> ACTIVITY`: one transition on the activity named by id or name.
struct TimerCommand<Action: TimerAction>: GatewayCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            commandName: Action.name, abstract: Action.abstract, discussion: "Example: logbook timer \(Action.name) Guitar")
    }

    @OptionGroup var global: GlobalOptions
    @Argument(help: "The activity's id or name.") var activity: String

    func execute(_ context: Context) async throws {
        let found = try await Resolve.activity(context, activity)
        let result = try await Action.method.call(context, TimerRequest(activityId: found.id))
        if context.json { return Output.json(result) }
        Output.line(await Action.describe(result, activity: found.name, context: context))
    }
}

enum TimerStart: TimerAction {
    static let name = "start", abstract = "Start the timer.", method = TimeMethods.timerStart
}

enum TimerPause: TimerAction {
    static let name = "pause", abstract = "Pause a running timer.", method = TimeMethods.timerPause
}

enum TimerResume: TimerAction {
    static let name = "resume", abstract = "Resume a paused timer.", method = TimeMethods.timerResume
}

enum TimerStop: TimerAction {
    static let name = "stop", abstract = "Stop the timer (its time is frozen until you save or clear it)."
    static let method = TimeMethods.timerStop
}

enum TimerSave: TimerAction {
    static let name = "save", abstract = "Add a stopped or paused timer's time to the activity's log."
    static let method = TimeMethods.timerSave

    static func describe(_ saved: TimeSaved, activity name: String, context: Context) async -> String {
        let ms = saved.entry.durationMs
        return "saved \(TimeText.clock(milliseconds: ms)) (\(await Activities.earned(context, ms))) to \(name)"
    }
}

enum TimerClear: TimerAction {
    static let name = "clear", abstract = "Discard the timer's time.", method = TimeMethods.timerClear
}

enum TimerShow: TimerAction {
    static let name = "show", abstract = "Show the timer's state and elapsed time (H:MM:SS).", method = TimeMethods.timerGet
}
