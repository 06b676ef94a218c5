// The `logbook` command tree names every command itself. A command without a
// `commandName` is named by ArgumentParser from its type (`String(describing:)`), and with
// the Swift runtime linked statically that costs a scan of every protocol conformance in the
// executable, paid by every invocation that walks the tree (docs/operations.md, "Performance").
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
}
