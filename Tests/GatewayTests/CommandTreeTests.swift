// The `logbook` command tree names every command itself. A command without a
// `commandName` is named by ArgumentParser from its type (`String(describing:)`), and with
// the Swift runtime linked statically that costs a scan of every protocol conformance in the
// executable, paid by every invocation that walks the tree (docs/performance.md, "Static Swift runtime").
import ArgumentParser
import Gateway
import Testing

@Suite struct CommandTreeTests {
    @Test("every command in the tree has an explicit name, and no two siblings share one")
    func everyCommandIsNamed() {
        var unnamed: [String] = []
        var seen = 0
        func walk(_ command: any ParsableCommand.Type, path: String) {
            seen += 1
            let configuration = command.configuration
            guard let name = configuration.commandName else {
                unnamed.append("\(path) → \(command)")
                return
            }
            let children = configuration.subcommands
            let names = children.compactMap { $0.configuration.commandName }
            #expect(Set(names).count == names.count, "\(path) \(name): two subcommands share a name: \(names.sorted())")
            for child in children { walk(child, path: path + " " + name) }
        }
        walk(Logbook.self, path: "")
        #expect(unnamed.isEmpty, "commands named only by their type: \(unnamed)")
        #expect(seen > 60, "the tree has \(seen) commands")
    }

    /// ArgumentParser wraps a discussion to the terminal's width and starts each wrapped
    /// part at the left edge, so an example line longer than a terminal of 80 columns
    /// breaks in the middle of a command (`--lat 59.33 --lon 18.07 \` on a line of its own).
    /// Every indented line of every discussion fits in 78.
    @Test("every example in the help fits a terminal of 80 columns")
    func examplesFitEightyColumns() {
        var long: [String] = []
        func walk(_ command: any ParsableCommand.Type, path: [String]) {
            let help = Logbook.helpMessage(for: command, columns: 1000)
            let discussion = help.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
                .prefix { !$0.hasPrefix("USAGE:") }
            for line in discussion where line.hasPrefix("  ") && line.count > 78 {
                long.append("logbook \(path.joined(separator: " ")): \(line)")
            }
            for child in command.configuration.subcommands {
                walk(child, path: path + [child.configuration.commandName ?? "?"])
            }
        }
        walk(Logbook.self, path: [])
        #expect(long.isEmpty, "example lines over 78 columns:\n\(long.joined(separator: "\n"))")
    }

    /// The command at `path` ("expense list") in the tree.
    private func command(_ path: String) -> (any ParsableCommand.Type)? {
        var current: any ParsableCommand.Type = Logbook.self
        for name in path.split(separator: " ").map(String.init) {
            guard let next = current.configuration.subcommands.first(where: { $0.configuration.commandName == name })
            else { return nil }
            current = next
        }
        return current
    }

    @Test("an enum option's help lists its values and its default (EnumArgument)")
    func enumOptionsListTheirValues() throws {
        let cases: [(String, String)] = [
            ("expense list", "--sort <sort>"),
            ("catch add", "--unit <unit>"),
            ("catch add", "--water <water>"),
            ("car add", "--distance-unit <distance-unit>"),
            ("expense summary", "--by <by>"),
        ]
        let expected = [
            "--sort <sort>": "(values: date, amount; default: date)",
            "--unit <unit>": "(values: kg, lb; default: kg)",
            "--water <water>": "(values: fresh, salt)",
            "--distance-unit <distance-unit>": "(values: mi, km",
            "--by <by>": "(values: day, week, month, year, category",
        ]
        for (path, option) in cases {
            let type = try #require(command(path), "no command \(path)")
            let help = Logbook.helpMessage(for: type, columns: 1000)
            // (an option's help starts on its line, or on the next when the option is long)
            let lines = help.split(separator: "\n").map(String.init)
            let at = try #require(
                lines.firstIndex { $0.drop(while: { $0 == " " }).hasPrefix(option) }, "\(path): no \(option) in its help")
            let text = lines[at...].prefix(2).joined(separator: " ")
            #expect(text.contains(expected[option]!), "\(path) \(option): \(text)")
        }
    }
}
