// docs/protocol.md against the running services: the method index must list exactly the
// methods each service registers (name, access, kind), each listed method must have its
// own row or heading further down, and the reserved methods must be the ones every service
// answers. Read from `$srv.info` of real processes, so it checks what a client would meet.
// The field tables of the methods, records and events that have a Contracts type are
// checked against that type's fields (names and optionality).
import Contracts
import Foundation
import Testing
import Wire

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
                for other in ["read", "write", "own-write"] where other != method.kind {
                    #expect(
                        !heading.contains("(\(other)") && !heading.contains(", \(other))"),
                        "\(heading) disagrees with the registered kind \(method.kind)")
                }
            }
        }
    }
}

// MARK: Field tables against the Contracts types

extension ProtocolDocumentTests {
    /// A field as the document writes it: `name`, or `name?` when it may be left out.
    struct Field: Hashable, CustomStringConvertible, Comparable {
        var name: String
        var optional: Bool
        var description: String { name + (optional ? "?" : "") }
        static func < (a: Field, b: Field) -> Bool { a.description < b.description }
    }

    /// The fields of a Contracts type, from its sample (every optional field set): a field
    /// is optional when its property is an `Optional` or a `Patch`. Its JSON keys must be
    /// the same names (no renaming CodingKeys the table would not show).
    static func fields<T: Documented>(_ type: T.Type) throws -> Set<Field> {
        let fields = Set(
            Mirror(reflecting: T.sample).children.compactMap { child -> Field? in
                guard let label = child.label else { return nil }
                let optional =
                    Mirror(reflecting: child.value).displayStyle == .optional
                    || String(describing: Swift.type(of: child.value)).hasPrefix("Patch<")
                return Field(name: label, optional: optional)
            })
        let keys = Set(try #require(JSONValue.from(T.sample).objectValue, "\(T.self) is not a JSON object").keys)
        #expect(keys == Set(fields.map(\.name)), "\(T.self): JSON keys \(keys.sorted()) are not its properties")
        return fields
    }

    /// The field names a table cell lists: backticked names and `{a, b?}` lists. Text in
    /// parentheses (rules, defaults) and value lists (`mi`\|`km`) are not fields.
    static func documentedFields(_ cell: String) -> Set<Field> {
        var text = cell
        while let range = text.range(of: #"\([^()]*\)"#, options: .regularExpression) { text.removeSubrange(range) }
        while let range = text.range(of: #"`[^`]*`(\s*\\\|\s*`[^`]*`)+"#, options: .regularExpression) {
            text.removeSubrange(range)
        }
        var fields: Set<Field> = []
        var names: [Substring] = []
        var rest = text[...]
        while let open = rest.firstIndex(of: "`"), let close = rest[rest.index(after: open)...].firstIndex(of: "`") {
            let token = rest[rest.index(after: open)..<close]
            if token.hasPrefix("{"), token.hasSuffix("}") {
                names += token.dropFirst().dropLast().split(separator: ",")
            } else {
                names.append(token)
            }
            rest = rest[rest.index(after: close)...]
        }
        for name in names.map({ $0.trimmingCharacters(in: .whitespacesAndNewlines) }) {
            guard name.range(of: #"^[a-z][A-Za-z]*\??$"#, options: .regularExpression) != nil else { continue }
            fields.insert(Field(name: name.hasSuffix("?") ? String(name.dropLast()) : name, optional: name.hasSuffix("?")))
        }
        return fields
    }

    /// The cells of the first table row (outside the method index) whose first cell is
    /// `` `name` ``; `\|` inside a cell is kept.
    static func row(_ name: String, in rest: String) -> [String]? {
        for line in rest.split(separator: "\n") where line.hasPrefix("| `\(name)` |") {
            let cells = line.replacingOccurrences(of: "\\|", with: "\u{1}").split(separator: "|")
                .map { $0.replacingOccurrences(of: "\u{1}", with: "\\|").trimmingCharacters(in: .whitespaces) }
            if cells.count >= 2 { return cells }
        }
        return nil
    }

    /// The `Record: `{…}`` (or `label`) line after a heading.
    static func record(after heading: String, label: String = "Record", in document: String) throws -> String {
        let start = try #require(document.range(of: "\n\(heading)\n"), "no heading \(heading)")
        let open = try #require(document[start.upperBound...].range(of: "\(label): `{"), "no \(label) after \(heading)")
        let close = try #require(document[open.upperBound...].range(of: "}`"))
        return "`{" + document[open.upperBound..<close.lowerBound] + "}`"
    }

    static func expectSame(_ documented: Set<Field>, _ typed: Set<Field>, _ what: String) {
        #expect(documented == typed, """
            \(what): docs/protocol.md lists \(documented.sorted()), the type has \(typed.sorted()); \
            documented only: \(documented.subtracting(typed).sorted()), in the type only: \(typed.subtracting(documented).sorted())
            """)
    }

    /// A method's body cell against its request type, and its index kind against the contract's.
    static func check<Request: Documented, Result>(_ method: Contracts.Method<Request, Result>, document: String) throws {
        let (index, rest) = try split(document)
        let indexed = try #require(indexRows(index).first { $0.name == method.name }, "\(method.name) is not in the index")
        #expect(indexed.kind == method.kind.rawValue, "\(method.name): the index says \(indexed.kind), the contract \(method.kind)")
        #expect(indexed.service == method.service)
        let cells = try #require(row(method.name, in: rest), "\(method.name) has no table row with its body")
        expectSame(documentedFields(cells[1]), try fields(Request.self), "\(method.name) body")
    }

    @Test("the field tables of the typed methods, records and events match the Contracts types")
    func fieldTablesMatchTheContracts() throws {
        let document = try Self.document()
        try Self.check(FuelMethods.vehicleAdd, document: document)
        try Self.check(FuelMethods.vehicleGet, document: document)
        try Self.check(FuelMethods.vehicleUpdate, document: document)
        try Self.check(FuelMethods.vehicleDelete, document: document)
        try Self.check(FuelMethods.vehicleList, document: document)
        try Self.check(FuelMethods.fillupAdd, document: document)
        try Self.check(FuelMethods.fillupGet, document: document)
        try Self.check(FuelMethods.fillupUpdate, document: document)
        try Self.check(FuelMethods.fillupDelete, document: document)
        try Self.check(FuelMethods.fillupList, document: document)
        try Self.check(FuelMethods.stats, document: document)
        try Self.check(FuelMethods.economy, document: document)
        try Self.check(ExpenseMethods.add, document: document)
        try Self.check(ExpenseMethods.get, document: document)
        try Self.check(ExpenseMethods.update, document: document)
        try Self.check(ExpenseMethods.delete, document: document)
        try Self.check(ExpenseMethods.list, document: document)
        try Self.check(ExpenseMethods.summary, document: document)
        // accounts (the operator's shard calls are described step by step, not in a body table)
        try Self.check(AuthMethods.register, document: document)
        try Self.check(AuthMethods.login, document: document)
        try Self.check(AuthMethods.logout, document: document)
        try Self.check(AuthMethods.whoami, document: document)
        try Self.check(AuthMethods.settingsUpdate, document: document)
        try Self.check(AuthMethods.passwordChange, document: document)
        try Self.check(AuthMethods.accountDelete, document: document)
        // time toward 10,000 hours
        try Self.check(TimeMethods.activityAdd, document: document)
        try Self.check(TimeMethods.activityGet, document: document)
        try Self.check(TimeMethods.activityList, document: document)
        try Self.check(TimeMethods.activityDelete, document: document)
        try Self.check(TimeMethods.timeAdd, document: document)
        try Self.check(TimeMethods.timeList, document: document)
        try Self.check(TimeMethods.networth, document: document)
        for timer in [
            TimeMethods.timerGet, TimeMethods.timerStart, TimeMethods.timerPause, TimeMethods.timerResume,
            TimeMethods.timerStop, TimeMethods.timerClear,
        ] {
            try Self.check(timer, document: document)
        }
        try Self.check(TimeMethods.timerSave, document: document)
        try Self.check(TimeMethods.summary, document: document)
        // attendance
        try Self.check(AttendanceMethods.add, document: document)
        try Self.check(AttendanceMethods.list, document: document)
        try Self.check(AttendanceMethods.latest, document: document)
        try Self.check(AttendanceMethods.delete, document: document)
        try Self.check(AttendanceMethods.hours, document: document)
        // the store
        try Self.check(StoreMethods.items, document: document)
        try Self.check(StoreMethods.info, document: document)
        try Self.check(StoreMethods.wallet, document: document)
        try Self.check(StoreMethods.buy, document: document)
        try Self.check(StoreMethods.ledger, document: document)
        try Self.check(StoreMethods.quote, document: document)

        Self.expectSame(
            Self.documentedFields(try Self.record(after: "#### Vehicle", in: document)), try Self.fields(Vehicle.self),
            "the vehicle record")
        Self.expectSame(
            Self.documentedFields(try Self.record(after: "#### Fill-up", in: document)), try Self.fields(Fillup.self),
            "the fill-up record")
        Self.expectSame(
            Self.documentedFields(try Self.record(after: "### Expenses", in: document)), try Self.fields(Expense.self),
            "the expense record")
        Self.expectSame(
            Self.documentedFields(try Self.record(after: "### Attendance", label: "Entry", in: document)),
            try Self.fields(AttendanceEntry.self), "the attendance entry")
        Self.expectSame(
            Self.documentedFields(try Self.record(after: "### Time toward 10,000 hours", label: "Activity", in: document)),
            try Self.fields(Activity.self), "the activity record")
        Self.expectSame(
            Self.documentedFields(try Self.record(after: "### Time toward 10,000 hours", label: "Timer state", in: document)),
            try Self.fields(TimerState.self), "the timer state")
        let networth = try #require(Self.row(TimeMethods.networth.name, in: try Self.split(document).rest))
        Self.expectSame(Self.documentedFields(networth[2]), try Self.fields(NetWorth.self), "the net worth")
        let timeAdd = try #require(Self.row(TimeMethods.timeAdd.name, in: try Self.split(document).rest))
        Self.expectSame(Self.documentedFields(timeAdd[2]), try Self.fields(TimeEntry.self), "the time entry")
        let rest = try Self.split(document).rest
        for (event, type) in [
            (FuelEvents.vehicleDeleted, VehicleDeleted.self), (FuelEvents.fillupDeleted, FillupDeleted.self),
            (ExpenseEvents.deleted, ExpenseDeleted.self), (AttendanceEvents.deleted, AttendanceDeleted.self),
            (TimeEvents.activityCreated, ActivityCreated.self), (TimeEvents.activityDeleted, ActivityDeleted.self),
            (TimeEvents.timeSaved, TimeSavedEvent.self),
        ]
            as [(String, any Documented.Type)]
        {
            let cells = try #require(Self.row(event, in: rest), "\(event) is not in the events summary")
            Self.expectSame(Self.documentedFields(cells[1]), try Self.fields(type), "the \(event) event")
        }
    }

    @Test("the field check sees a field the type lacks, a missing one and a wrong `?`")
    func fieldCheckCanFail() throws {
        let typed = try Self.fields(FuelStatsRequest.self)
        #expect(Self.documentedFields("`{vehicleId, units?}`") == typed)
        #expect(Self.documentedFields("`vehicleId`, `units?` `mpg_us`\\|`km_per_l` (default `mpg_us`)") == typed)
        #expect(Self.documentedFields("`{vehicleId, units?, extra}`") != typed)
        #expect(Self.documentedFields("`{vehicleId}`") != typed)
        #expect(Self.documentedFields("`{vehicleId, units}`") != typed)
    }
}

// MARK: The fishing domain: catches, their conditions, suggestions

extension ProtocolDocumentTests {
    /// `| `name` | type | yes/no | …` rows of the body table after `heading`: a field is
    /// optional when its "required" cell says no.
    static func bodyTable(after heading: String, in document: String) throws -> Set<Field> {
        let start = try #require(document.range(of: "\n\(heading)\n"), "no heading \(heading)")
        var fields: Set<Field> = []
        var inTable = false
        for line in document[start.upperBound...].split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("| body field |") {
                inTable = true
            } else if inTable {
                guard line.hasPrefix("|") else { break }
                // `\|` inside a cell (`fresh` \| `salt`) does not end it
                let cells = line.replacingOccurrences(of: "\\|", with: "\u{1}").split(separator: "|")
                    .map { $0.trimmingCharacters(in: .whitespaces) }
                guard cells.count >= 3, cells[0].hasPrefix("`") else { continue }
                fields.insert(Field(name: String(cells[0].dropFirst().dropLast()), optional: cells[2] == "no"))
            } else if line.hasPrefix("#") {
                break
            }
        }
        return fields
    }

    /// The names the first column of the table after `heading` lists (`` `a`, `b` `` rows).
    static func tableNames(after heading: String, in document: String) throws -> Set<String> {
        let start = try #require(document.range(of: "\n\(heading)\n"), "no heading \(heading)")
        var names: Set<String> = []
        var seen = false
        for line in document[start.upperBound...].split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("| `") {
                seen = true
                let first = line.split(separator: "|").first ?? ""
                for name in first.split(separator: ",") {
                    names.insert(name.trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "`")))
                }
            } else if seen && !line.hasPrefix("|") {
                break
            }
        }
        return names
    }

    @Test("the catch, conditions and suggest methods, records and events match the Contracts types")
    func fishingTablesMatchTheContracts() throws {
        let document = try Self.document()
        // `bait` is required (the table says so) but read as optional, so that a missing bait
        // gets the logbook's own refusal ("Missing bait" in docs/protocol.md).
        let add = try Self.fields(CatchAdd.self)
        let cells = try #require(Self.row(CatchMethods.add.name, in: try Self.split(document).rest))
        Self.expectSame(
            Self.documentedFields(cells[1]),
            add.subtracting([Field(name: "bait", optional: true)]).union([Field(name: "bait", optional: false)]),
            "records.catch.add body")
        try Self.check(CatchMethods.get, document: document)
        try Self.check(CatchMethods.update, document: document)
        try Self.check(CatchMethods.delete, document: document)
        try Self.check(CatchMethods.list, document: document)
        try Self.check(CatchMethods.bests, document: document)
        try Self.check(CatchMethods.photo, document: document)
        try Self.check(SuggestMethods.suggest, document: document)

        // The record: `photo` is written as null, never left out; `photoPlaceholder` is
        // written beside a null photo (Catch.encode).
        let record = try Self.fields(Catch.self)
            .subtracting([Field(name: "photo", optional: true)])
            .union([Field(name: "photo", optional: false), Field(name: "photoPlaceholder", optional: true)])
        Self.expectSame(
            Self.documentedFields(try Self.record(after: "### Catches", in: document)), record, "the catch record")
        Self.expectSame(
            Self.documentedFields(try Self.record(after: "### Catches", label: "Conditions", in: document)),
            try Self.fields(CatchConditions.self), "a catch's conditions")

        let rest = try Self.split(document).rest
        let deleted = try #require(Self.row(CatchEvents.deleted, in: rest), "catch.deleted is not in the events summary")
        Self.expectSame(Self.documentedFields(deleted[1]), try Self.fields(CatchDeleted.self), "the catch.deleted event")
        for (event, type) in [
            (WeatherEvents.conditionsReady, ConditionsReady.self),
            (WeatherEvents.conditionsUnavailable, ConditionsUnavailable.self),
        ] as [(String, any Documented.Type)] {
            let cells = try #require(Self.row(event, in: rest), "\(event) is not in the events published")
            Self.expectSame(Self.documentedFields(cells[2]), try Self.fields(type), "the \(event) event")
        }

        // The weather-fetcher's methods have a body table each under their heading, and the
        // conditions object one listing its fields.
        let index = Self.indexRows(try Self.split(document).index)
        for (name, kind, service) in [
            (WeatherMethods.get.name, WeatherMethods.get.kind, WeatherMethods.get.service),
            (WeatherMethods.conditions.name, WeatherMethods.conditions.kind, WeatherMethods.conditions.service),
        ] {
            let indexed = index.first { $0.name == name }
            #expect(indexed?.kind == kind.rawValue, "\(name): the index and the contract disagree on its kind")
            #expect(indexed?.service == service, "\(name): the index and the contract disagree on its service")
        }
        Self.expectSame(
            try Self.bodyTable(after: "#### `weather.get`", in: document), try Self.fields(WeatherGet.self),
            "weather.get body")
        Self.expectSame(
            try Self.bodyTable(after: "#### `weather.conditions.get`", in: document), try Self.fields(ConditionsGet.self),
            "weather.conditions.get body")
        let names = try Self.tableNames(after: "#### `conditions` object", in: document)
        let typed = Set(try Self.fields(Conditions.self).map(\.name))
        #expect(names == typed, """
            the conditions object: docs/protocol.md lists \(names.sorted()), the type has \(typed.sorted()); \
            documented only: \(names.subtracting(typed).sorted()), in the type only: \(typed.subtracting(names).sorted())
            """)
    }
}
