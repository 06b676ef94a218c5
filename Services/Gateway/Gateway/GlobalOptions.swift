// Options every command accepts, shared through `@OptionGroup var global: GlobalOptions`.
import ArgumentParser

public struct GlobalOptions: ParsableArguments, Sendable {
    @Flag(name: .long, help: "Print JSON instead of tables; errors become JSON on stderr.")
    public var json = false

    @Option(name: .long, help: ArgumentHelp("Seconds to wait for a service to answer.", valueName: "seconds"))
    public var timeout: Double = 5

    @Option(
        name: .long,
        help: ArgumentHelp(
            "The stack's directory (default: $LOGBOOK_HOME, else ~/.local/share/logbook).", valueName: "dir"))
    public var home: String?

    public init() {}

    public mutating func validate() throws {
        guard timeout > 0, timeout <= 3600 else {
            throw ValidationError("--timeout must be between 0 and 3600 seconds (got \(timeout))")
        }
    }

    /// The timeout as a Duration.
    public var duration: Duration { .milliseconds(Int64((timeout * 1000).rounded())) }
}
