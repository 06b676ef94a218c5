// docs/protocol.md against the running services: the method index must list exactly the
// methods each service registers (name, access, kind), each listed method must have its
// own row or heading further down, and the reserved methods must be the ones every service
// answers. Read from `$srv.info` of real processes, so it checks what a client would meet.
import Foundation
import Testing

@Suite("docs/protocol.md is the services' contract", .serialized, .timeLimit(.minutes(2)))
struct ProtocolDocumentTests {
    static let services = ["auth", "records", "weather-fetcher", "analytics", "store"]

    struct Method: Hashable, CustomStringConvertible {
        var name, service, access, kind: String
        var description: String { "\(name) (\(service), \(access), \(kind))" }
    }

    static func document() throws -> String {
        let url = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("docs/protocol.md")
        return try String(contentsOf: url, encoding: .utf8)
    }

    /// The section under `## Method index`, and the document without it.
    static func split(_ document: String) throws -> (index: Substring, rest: String) {
        let start = try #require(document.range(of: "\n## Method index\n"), "docs/protocol.md has no method index")
        let end = document[start.upperBound...].range(of: "\n## ")?.lowerBound ?? document.endIndex
        return (document[start.upperBound..<end], String(document[..<start.lowerBound] + document[end...]))
    }

    /// `| `name` | service | access | kind |` rows of the index.
    static func indexRows(_ index: Substring) -> [Method] {
        index.split(separator: "\n").compactMap { line in
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count == 4, cells[0].hasPrefix("`"), cells[0].hasSuffix("`") else { return nil }
            return Method(name: String(cells[0].dropFirst().dropLast()), service: cells[1], access: cells[2], kind: cells[3])
        }
    }

    @Test("every registered method is in the index with its access and kind, and nothing else is")
    func indexMatchesTheServices() async throws {
        let (index, rest) = try Self.split(Self.document())
        let documented = Self.indexRows(index)
        #expect(documented.count > 50, "the index parsed to \(documented.count) rows")
        #expect(Set(documented).count == documented.count, "a method is listed twice")

        try await withStack { stack in
            let up = try await stack.logbook("stack", "up")
            try #require(up.status == 0, "stack up failed: \(up.stderr)\n\(stack.log("supervisor"))")
            var registered: [Method] = []
            for service in Self.services {
                let info = try await stack.logbook("call", service, "$srv.info", "--json")
                try #require(info.status == 0, "\(service): \(info.stderr)")
                let result = try #require(info.object["result"] as? [String: Any], "\(info.stdout)")
                let methods = try #require(result["methods"] as? [[String: Any]])
                for method in methods {
                    registered.append(
                        Method(
                            name: try #require(method["name"] as? String), service: service,
                            access: try #require(method["access"] as? String), kind: try #require(method["kind"] as? String)))
                }
                // The reserved methods each service says it answers are documented as reserved.
                let reserved = try #require(result["reserved"] as? [String])
                for name in reserved {
                    #expect(rest.contains("- `\(name) "), "\(service) answers \(name), which docs/protocol.md does not list as reserved")
                }
            }
            let missing = Set(registered).subtracting(documented)
            let extra = Set(documented).subtracting(registered)
            #expect(missing.isEmpty, "registered but not in the index (or listed differently): \(missing.sorted { $0.name < $1.name })")
            #expect(extra.isEmpty, "in the index but not registered like that: \(extra.sorted { $0.name < $1.name })")
        }
    }

    @Test("every method in the index has its own table row or heading")
    func everyMethodIsDescribed() throws {
        let (index, rest) = try Self.split(Self.document())
        let lines = rest.split(separator: "\n")
        for method in Self.indexRows(index) {
            let quoted = "`\(method.name)`"
            let described = lines.contains { line in
                (line.hasPrefix("#") && line.contains(quoted))
                    || line.split(separator: "|").first.map { $0.trimmingCharacters(in: .whitespaces) == quoted } == true
            }
            #expect(described, "\(method.name) has no row or heading of its own in docs/protocol.md")
            // A heading that names the kind must name the registered one.
            if let heading = lines.first(where: { $0.hasPrefix("#") && $0.contains(quoted) }) {
                let other = method.kind == "read" ? "write" : "read"
                #expect(!heading.contains("(\(other))") && !heading.contains(", \(other))"),
                        "\(heading) disagrees with the registered kind \(method.kind)")
            }
        }
    }
}
