// Options every command accepts, shared through `@OptionGroup var global: GlobalOptions`.
import ArgumentParser

public struct GlobalOptions: ParsableArguments, Sendable {
    @Flag(name: .long, help: "Print JSON instead of tables; errors become JSON on stderr.")
    public var json = false

    // Optional, with its default in the help: a default value is written out for the help
    // of every command as it is parsed, and a Double's costs a dozen runtime type lookups.
    @Option(name: .long, help: ArgumentHelp("Seconds to wait for a service to answer (default: 5).", valueName: "seconds"))
    public var timeout: Double?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "The stack's directory (default: $LOGBOOK_HOME, else ~/.local/share/logbook).", valueName: "dir"))
    public var home: String?

    public init() {}

    public mutating func validate() throws {
        if let timeout, !(timeout > 0 && timeout <= 3600) {
            throw ValidationError("--timeout must be between 0 and 3600 seconds (got \(timeout))")
        }
    }

    /// Seconds to wait: --timeout, else 5.
    public var seconds: Double { timeout ?? 5 }

    /// The timeout as a Duration.
    public var duration: Duration { .milliseconds(Int64((seconds * 1000).rounded())) }

    /// Refuses a number of seconds outside `range` before the command starts: a value no
    /// Duration of milliseconds holds (`inf`, `nan`, `1e20`) would otherwise stop it where
    /// the wait begins, part way through (`shard move` after its freeze).
    public static func checkSeconds(_ value: Double, _ option: String, within range: ClosedRange<Double>) throws {
        guard range.contains(value) else {
            let bounds = "\(Int(range.lowerBound)) and \(Int(range.upperBound))"
            throw ValidationError("\(option) must be between \(bounds) seconds (got \(value))")
        }
    }
}
