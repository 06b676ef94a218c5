// What a command was asked to run with: the stack's configuration (LOGBOOK_* settings, with
// --home applied), the process environment, --json and --timeout.
import Foundation
import Runtime
import Wire

public struct CommandSettings: Sendable {
    public let configuration: StackConfiguration
    /// The process environment, with `--home` applied.
    public let environment: [String: String]
    public let json: Bool
    /// How long a call waits for its answer unless it says otherwise.
    public let timeout: Duration

    public init(options: GlobalOptions, environment: [String: String]) throws {
        var environment = environment
        if let home = options.home { environment["LOGBOOK_HOME"] = home }
        do {
            configuration = try StackConfiguration.load(environment: environment)
        } catch let error as ConfigurationError {
            throw ServiceError(.failedPrecondition, "configuration: \(error.description)")
        }
        self.environment = environment
        json = options.json
        timeout = options.duration
    }
}
