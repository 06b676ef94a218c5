// The `logbook` command tree. Each group lives in its own file; add a new one to
// `subcommands` and it gets --help, --json and the exit status mapping for free.
import ArgumentParser
import Foundation
import Runtime

public struct Logbook: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "logbook",
        abstract: "Logbook: your fuel, catches, expenses, attendance and practice hours, kept by your own server.",
        discussion: """
            Start the services on this machine with `logbook stack up`, create an account with \
            `logbook register`, and check on everything with `logbook status`. Every command \
            takes --json for scripts and prints errors as one line on stderr:
              error: username "alice" is already registered (already_exists)

            \(ExitStatus.table)
            """,
        version: LogbookVersion.current,
        subcommands: [
            Register.self, Login.self, Logout.self, Whoami.self, SettingsGroup.self, Passwd.self, DeleteAccount.self,
            Dashboard.self, Sync.self,
            CarGroup.self, FillupGroup.self, CatchGroup.self, ExpenseGroup.self, AttendGroup.self,
            ActivityGroup.self, TimerGroup.self, NetWorthCommand.self,
            StoreGroup.self, WalletCommand.self, QuoteCommand.self, FuelGroup.self, Suggest.self,
            ImportGroup.self, ExportCommand.self,
            Status.self, Call.self, ProbeCommand.self, Stack.self, Keys.self, BackupCommand.self, RestoreCommand.self,
            ShardCommand.self,
        ])

    public init() {}
}

/// A negative number typed as a value (`--volume -3`, `expense add Lunch -5`) would read as
/// an option to the argument parser, which then answers "Missing value"; arranged so it
/// reaches the command, which says what is wrong with it ("must be greater than 0").
public enum NegativeNumbers {
    static func isNegativeNumber(_ token: String) -> Bool {
        guard token.count > 1, token.hasPrefix("-") else { return false }
        let rest = token.dropFirst()
        return rest.first?.isNumber == true && Double(rest) != nil
    }

    /// `--opt -3` becomes `--opt=-3`; a negative number standing alone (a positional value)
    /// moves after a `--`, so it is read as the next positional argument. Arguments that
    /// already use `--` are left as they are.
    public static func arrange(_ arguments: [String]) -> [String] {
        guard !arguments.contains("--"), arguments.contains(where: isNegativeNumber) else { return arguments }
        var arranged: [String] = []
        var positional: [String] = []
        for token in arguments {
            if isNegativeNumber(token) {
                if let last = arranged.last, last.hasPrefix("--"), !last.contains("="), last.count > 2 {
                    arranged[arranged.count - 1] = last + "=" + token
                } else {
                    positional.append(token)
                }
            } else {
                arranged.append(token)
            }
        }
        return positional.isEmpty ? arranged : arranged + ["--"] + positional
    }
}

extension Logbook {
    /// Parses the command line, runs the command and exits. Usage errors exit 2 (not
    /// ArgumentParser's 64) so the exit status table stays one table.
    public static func runMain(_ arguments: [String]? = nil) async -> Never {
        do {
            var command = try parseAsRoot(NegativeNumbers.arrange(arguments ?? Array(CommandLine.arguments.dropFirst())))
            if var command = command as? any AsyncParsableCommand {
                try await command.run()
            } else {
                try command.run()
            }
            Foundation.exit(ExitStatus.ok)
        } catch {
            if exitCode(for: error) == .validationFailure {
                FileHandle.standardError.write(Data((fullMessage(for: error) + "\n").utf8))
                Foundation.exit(ExitStatus.usage)
            }
            exit(withError: error)
        }
    }
}
