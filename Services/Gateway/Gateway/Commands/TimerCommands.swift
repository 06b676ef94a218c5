// `logbook timer start|pause|resume|stop|save|clear|show`: an activity's timer, kept by the
// server, so it keeps running when the CLI exits. The seven subcommands are one command,
// `TimerCommand`, told by its `Action` which transition it makes and how it is described.
import ArgumentParser
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
              logbook timer show Guitar       # 0:12:34 running
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
/// it calls (`get` reads; every other one is a write).
protocol TimerAction {
    static var name: String { get }
    static var abstract: String { get }
    static var method: String { get }
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
        let name = Output.cell(found["name"])
        let body: JSONValue = ["activityId": found["id"] ?? .null]
        let result = try await context.send(
            "records", "records.timer.\(Action.method)", body: body, write: Action.method != "get")
        if context.json { return Output.json(result) }
        if Action.method == "save" {
            let ms = result["entry"]?["durationMs"]?.int64Value ?? 0
            Output.line("saved \(TimeText.clock(milliseconds: ms)) (\(await Activities.earned(context, ms))) to \(name)")
            return
        }
        Output.line(Activities.describeTimer(name, result))
    }
}

enum TimerStart: TimerAction {
    static let name = "start", method = "start", abstract = "Start the timer."
}

enum TimerPause: TimerAction {
    static let name = "pause", method = "pause", abstract = "Pause a running timer."
}

enum TimerResume: TimerAction {
    static let name = "resume", method = "resume", abstract = "Resume a paused timer."
}

enum TimerStop: TimerAction {
    static let name = "stop", method = "stop", abstract = "Stop the timer (its time is frozen until you save or clear it)."
}

enum TimerSave: TimerAction {
    static let name = "save", method = "save", abstract = "Add a stopped or paused timer's time to the activity's log."
}

enum TimerClear: TimerAction {
    static let name = "clear", method = "clear", abstract = "Discard the timer's time."
}

enum TimerShow: TimerAction {
    static let name = "show", method = "get", abstract = "Show the timer's state and elapsed time (H:MM:SS)."
}
