// Reading what the user types: a visible line, a secret with echo off (termios), or lines
// from stdin for scripts (`--password-stdin`). Prompts go to stderr so stdout stays clean.
import Foundation
import Wire

/// The terminal settings to put back if the user presses ^C while echo is off.
nonisolated(unsafe) private var savedTerminal = termios()

enum Prompt {
    static var isInteractive: Bool { isatty(STDIN_FILENO) == 1 }

    /// One visible line from the terminal; fails when stdin is not a terminal.
    static func line(_ prompt: String, missing: String) throws -> String {
        guard isInteractive else { throw ServiceError(.invalidArgument, missing) }
        FileHandle.standardError.write(Data(prompt.utf8))
        guard let text = readLine(strippingNewline: true) else { throw ServiceError(.invalidArgument, missing) }
        return text.trimmingCharacters(in: .whitespaces)
    }

    /// One line typed with echo off.
    static func secret(_ prompt: String) throws -> String {
        guard isInteractive else {
            throw ServiceError(.invalidArgument, "no terminal to ask for a password; pass --password-stdin")
        }
        FileHandle.standardError.write(Data(prompt.utf8))
        var saved = termios()
        let canToggle = tcgetattr(STDIN_FILENO, &saved) == 0
        if canToggle {
            savedTerminal = saved
            signal(SIGINT) { _ in
                tcsetattr(STDIN_FILENO, TCSANOW, &savedTerminal)
                _exit(130)
            }
            var quiet = saved
            quiet.c_lflag &= ~tcflag_t(ECHO)
            tcsetattr(STDIN_FILENO, TCSAFLUSH, &quiet)
        }
        defer {
            if canToggle {
                tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved)
                signal(SIGINT, SIG_DFL)
            }
            FileHandle.standardError.write(Data("\n".utf8))
        }
        guard let text = readLine(strippingNewline: true) else {
            throw ServiceError(.invalidArgument, "no password given")
        }
        return text
    }

    /// A new password typed twice.
    static func newSecret(_ prompt: String = "Password: ") throws -> String {
        let first = try secret(prompt)
        let second = try secret("Repeat it: ")
        guard first == second else { throw ServiceError(.invalidArgument, "the two passwords differ") }
        return first
    }

    /// The next line of stdin, for `--password-stdin`.
    static func stdinLine(_ what: String) throws -> String {
        guard let text = readLine(strippingNewline: true) else {
            throw ServiceError(.invalidArgument, "--password-stdin: expected \(what) on stdin, got end of input")
        }
        return text.hasSuffix("\r") ? String(text.dropLast()) : text
    }

    /// yes/no from the terminal; false on anything but y/yes.
    static func confirm(_ question: String) throws -> Bool {
        let answer = try line(question + " [y/N] ", missing: "not at a terminal; pass --yes to confirm")
        return ["y", "yes"].contains(answer.lowercased())
    }
}
