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
            Register.self, Login.self, Logout.self, Whoami.self, Passwd.self, DeleteAccount.self,
            Dashboard.self, Sync.self,
            CarGroup.self, FillupGroup.self, CatchGroup.self, ExpenseGroup.self, AttendGroup.self,
            ActivityGroup.self, TimerGroup.self, NetWorth.self,
            StoreGroup.self, WalletCommand.self, QuoteCommand.self, FuelGroup.self, Suggest.self,
            ImportGroup.self, ExportCommand.self,
            Status.self, Call.self, Stack.self, Keys.self, BackupCommand.self, RestoreCommand.self,
        ])

    public init() {}

    /// Parses the command line, runs the command and exits. Usage errors exit 2 (not
    /// ArgumentParser's 64) so the exit status table stays one table.
    public static func runMain(_ arguments: [String]? = nil) async -> Never {
        do {
            var command = try parseAsRoot(arguments)
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
