// What every record list shares: --limit / --cursor / --all (following `nextCursor`), --csv,
// and one way to print a page: a table for people, CSV, or the service's JSON.
import ArgumentParser
import Contracts
import Foundation
import Wire

struct ListOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Rows per page (1–500; the service's default is 50).", valueName: "n"))
    var limit: Int?
    @Option(help: ArgumentHelp("Continue from the nextCursor of an earlier page.", valueName: "cursor"))
    var cursor: String?
    @Flag(help: "Fetch every page (follows nextCursor).") var all = false
    @Flag(help: "Print CSV (RFC 4180, header row, times in ISO-8601) instead of a table.") var csv = false

    func validate() throws {
        if let limit, !(1...500).contains(limit) { throw ValidationError("--limit must be between 1 and 500 (got \(limit))") }
        if all && cursor != nil { throw ValidationError("--all and --cursor cannot be used together") }
    }
}

/// A list's rows, ready to print: `table` for people, `csv` (all values plain) for scripts.
struct Rows {
    var headers: [String]
    var table: [[String]]
    var csvHeaders: [String]
    var csv: [[String]]

    init(headers: [String], table: [[String]], csvHeaders: [String]? = nil, csv: [[String]]? = nil) {
        self.headers = headers
        self.table = table
        self.csvHeaders = csvHeaders ?? headers.map { $0.lowercased() }
        self.csv = csv ?? table
    }
}

/// One fetched list: its items and the cursor of the page after them.
struct Fetched {
    var items: [JSONValue]
    var nextCursor: String?
    var raw: JSONValue

    /// The service's JSON: the page itself, or every page's items under `items`.
    var json: JSONValue {
        if case .object(var object) = raw {
            object["items"] = .array(items)
            if let nextCursor { object["nextCursor"] = .string(nextCursor) } else { object["nextCursor"] = nil }
            return .object(object)
        }
        return ["items": .array(items)]
    }
}

/// A fetched list read as the contract's items; `fetched` keeps the service's JSON.
struct Listed<Item> {
    var fetched: Fetched
    var items: [Item]
}

extension Context {
    /// Calls a records list with the paging options: one page, or every page with `--all`.
    func list(_ method: String, _ body: [String: JSONValue], _ options: ListOptions, service: String = "records") async throws -> Fetched {
        try await list(method, body, limit: options.limit, cursor: options.cursor, all: options.all, service: service)
    }

    func list(
        _ method: String, _ body: [String: JSONValue], limit: Int? = nil, cursor: String? = nil, all: Bool,
        service: String = "records"
    ) async throws -> Fetched {
        var items: [JSONValue] = []
        var cursor = cursor
        var raw: JSONValue = [:]
        var seen = Set<String>()
        repeat {
            var page = body
            if let limit = limit ?? (all ? 500 : nil) { page["limit"] = .number(.init(limit)) }
            if let cursor { page["cursor"] = .string(cursor) }
            raw = try await send(service, method, body: .object(page))
            items += raw["items"]?.arrayValue ?? []
            cursor = raw["nextCursor"]?.stringValue
            if let next = cursor, !seen.insert(next).inserted { break }
        } while all && cursor != nil
        return Fetched(items: items, nextCursor: all ? nil : cursor, raw: raw)
    }

    /// A list method of the contract with the paging options: the pages as the service
    /// answered them (for --json) and their items read as the contract's type.
    func list<Request: Documented, Item: Codable & Sendable>(
        _ method: Contracts.Method<Request, Page<Item>>, _ request: Request, _ options: ListOptions
    ) async throws -> Listed<Item> {
        let fetched = try await list(method.name, try request.body(), options, service: method.service)
        return Listed(fetched: fetched, items: try fetched.items.map { try method.item($0) })
    }

    /// Every item of a list (for name lookups, counts and maps), read as the contract's type.
    func everything<Request: Documented, Item: Codable & Sendable>(
        _ method: Contracts.Method<Request, Page<Item>>, _ request: Request
    ) async throws -> [Item] {
        try await list(method.name, try request.body(), all: true, service: method.service).items.map { try method.item($0) }
    }

    /// Prints a list: JSON (the service's result), CSV, or a table with a footnote when more
    /// pages wait. `empty` is what people see for no rows.
    /// - Parameter resume: options the next page must be asked with again, as this page was
    ///   (a relative `--to now` resolved to the time it stood for): printed with the cursor.
    func show(
        _ fetched: Fetched, _ rows: Rows, _ options: ListOptions, empty: String, notes: [String] = [], resume: String = ""
    ) {
        let more = fetched.nextCursor.map { "more rows: \(resume.isEmpty ? "" : resume + " ")--cursor \($0), or --all" }
        if json {
            Output.json(fetched.json)
        } else if options.csv {
            FileHandle.standardOutput.write(Data(CSV.document(rows.csvHeaders, rows.csv).utf8))
            for note in notes { Output.errorLine(note) }
            if let more { Output.errorLine(more) }
        } else {
            Output.line(rows.table.isEmpty ? empty : Output.table(rows.headers, rows.table))
            for note in notes { Output.line(note) }
            if let more { Output.line(more) }
        }
    }
}

/// Asks before a delete unless --yes; without a terminal and without --yes it refuses
/// (invalid_argument, exit 2). A "no" deletes nothing (failed_precondition, exit 5).
enum Confirm {
    static func delete(_ question: String, yes: Bool) throws {
        if yes { return }
        guard Prompt.isInteractive else {
            throw ServiceError(.invalidArgument, "no terminal to ask \"\(question)\": pass --yes to confirm")
        }
        guard try Prompt.confirm(question) else {
            throw ServiceError(.failedPrecondition, "not confirmed; nothing was deleted")
        }
    }
}

extension CSV {
    /// A JSON value as a CSV field's text: absent or null empty, booleans true/false, numbers plain.
    public static func cell(_ value: JSONValue?) -> String {
        switch value {
        case .none, .null?: ""
        case .bool(let b)?: b ? "true" : "false"
        default: Output.cell(value)
        }
    }
}
