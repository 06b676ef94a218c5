// The contract for a `logbook` subcommand: declare `@OptionGroup var global: GlobalOptions`
// and implement `execute(_:)`. `run()` builds the context and turns any error into one line
// on stderr (or JSON) and the mapped exit status, so commands only throw. A write that went
// to the offline queue (`Offline.Queued`) is reported as queued and exits 0.
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
            // ZeroMQ starts (its context, its I/O thread) beside the reading of the settings
            // and the session, not after them.
            ServiceClient.warmUp()
            let context = try Context(options: global)
            try await execute(context)
            // Done: exit with the sockets and files still open instead of closing them one by
            // one (joining each socket's thread, closing each database) only to exit after.
            // Nothing is pending: every call waited for its reply, every write committed.
            withExtendedLifetime(context) { Foundation.exit(ExitStatus.ok) }
        } catch let queued as Offline.Queued {
            // Kept locally with its idempotency key: a success for the user, sent later.
            Offline.report(queued, json: json)
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
            Output.error(json ? error : UserWords.rewrite(error), json: json)
            return ExitStatus.exitCode(for: error.code)
        case is ExitCode, is CleanExit, is ValidationError:
            return error
        default:
            Output.error(ServiceError(.internal, "\(error)"), json: json)
            return ExitCode(ExitStatus.failure)
        }
    }
}

/// The services name their wire fields (`amountMinor`, `durationMs`, `caughtAt`); a person
/// typed `amount`, `1h30m`, `--at`. Messages for people say it their way; `--json` keeps the
/// service's error as it is, for scripts.
enum UserWords {
    /// wire field → the word the CLI's options and arguments use
    static let fields: [String: String] = [
        "amountMinor": "amount", "durationMs": "duration", "caughtAt": "at", "startedAt": "started",
        "totalMinor": "total", "pricePerUnitMinor": "price-per-unit", "weightMg": "weight", "activityId": "activity",
        "vehicleId": "car", "itemId": "item",
    ]

    static func rewrite(_ error: ServiceError) -> ServiceError {
        var error = error
        for (wire, word) in fields where error.message.contains(wire) {
            if wire == "durationMs" { error.message = durations(error.message) }
            error.message = error.message.replacingOccurrences(of: wire + ":", with: word + ":")
                .replacingOccurrences(of: "(" + wire + ")", with: "(" + word + ")")
                .replacingOccurrences(of: " " + wire + " ", with: " " + word + " ")
        }
        return error
    }

    /// `… 24 hours (86400000) (got 90000000)` → `… 24 hours (got 25:00:00)`: milliseconds
    /// read as a clock.
    static func durations(_ message: String) -> String {
        var text = message.replacingOccurrences(of: " (86400000)", with: "")
        if let range = text.range(of: #"\(got -?[0-9]+\)"#, options: .regularExpression) {
            let digits = text[range].dropFirst(5).dropLast()
            if let ms = Int64(digits) { text.replaceSubrange(range, with: "(got \(TimeText.clock(milliseconds: ms)))") }
        }
        return text
    }
}
