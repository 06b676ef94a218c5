// The contract for a `logbook` subcommand: declare `@OptionGroup var global: GlobalOptions`
// and implement `execute(_:)`. `run()` builds the context and turns any error into one line
// on stderr (or JSON) and the mapped exit status, so commands only throw.
//
//     struct Whoami: GatewayCommand {
//         static let configuration = CommandConfiguration(abstract: "Show who is logged in.")
//         @OptionGroup var global: GlobalOptions
//         func execute(_ context: Context) async throws {
//             try await context.perform("auth", "auth.whoami") { Output.cell($0["username"]) }
//         }
//     }
import ArgumentParser
import Foundation
import Runtime
import Wire

public protocol GatewayCommand: AsyncParsableCommand {
    var global: GlobalOptions { get }
    func execute(_ context: Context) async throws
}

extension GatewayCommand {
    public mutating func run() async throws {
        let json = global.json
        do {
            try await execute(try Context(options: global))
        } catch {
            throw Failure.report(error, json: json)
        }
    }
}

enum Failure {
    /// Prints `error` and returns what `run()` should throw: an `ExitCode` with the mapped
    /// status, or the error itself when ArgumentParser should handle it (usage, help).
    static func report(_ error: any Error, json: Bool) -> any Error {
        switch error {
        case let error as ServiceError:
            Output.error(error, json: json)
            return ExitStatus.exitCode(for: error.code)
        case is ExitCode, is CleanExit, is ValidationError:
            return error
        default:
            Output.error(ServiceError(.internal, "\(error)"), json: json)
            return ExitCode(ExitStatus.failure)
        }
    }
}
