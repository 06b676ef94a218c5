// `logbook import fuelly|acar|lubelogger|expenses|archive FILE`: bring another app's history
// in (docs/imports.md). Each import reads the whole file first (ImportParsers.swift), shows
// what it detected (units, date order, decimal mark, currency) and asks before writing
// anything (`--yes` for scripts; no terminal and no --yes: refused, like deletes); `--dry-run`
// shows every record it would create and writes nothing. Every write carries an idempotency
// key derived from the file's format and the row's own cells, so importing the same file
// again creates nothing new: records' exactly-once log answers the first result.
import ArgumentParser
import Foundation
import Runtime
import Wire

struct ImportGroup: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Import fill-ups from Fuelly, aCar or LubeLogger, expenses from a bank CSV, or a Logbook archive.",
        discussion: """
            Every import shows what it detected (units, date format, decimal mark, currency) and \
            asks before writing; --yes skips the question, --dry-run lists what would be created \
            and writes nothing. Importing the same file twice creates nothing new. Rows that \
            cannot be taken are listed with the reason (exit 9 when there are any). The formats \
            are described in docs/imports.md.
            Examples:
              logbook import fuelly fuelly-export.csv --dry-run
              logbook import acar aCar-export.csv --yes
              logbook import lubelogger civic-fuel.csv --car Civic
              logbook import expenses bank.csv --map date=Date,amount=Amount,name=Payee
              logbook import archive alice.logbook
            """,
        subcommands: [ImportFuelly.self, ImportACar.self, ImportLubeLogger.self, ImportExpenses.self, ImportArchive.self])
}

/// What every CSV import accepts.
struct ImportOptions: ParsableArguments {
    @Argument(help: "The exported file.") var file: String
    @Flag(help: "Do not ask for confirmation.") var yes = false
    @Flag(name: .customLong("dry-run"), help: "Show what would be created; write nothing.") var dryRun = false
    @Option(
        name: .customLong("date-format"),
        help: ArgumentHelp("The file's date order when detection is unsure: ymd, mdy, dmy, or a pattern like dd.MM.yyyy.", valueName: "format"))
    var dateFormat: String?
    @Flag(name: .customLong("decimal-comma"), help: "Numbers are written 10,5 (default: detected).") var decimalComma = false
    @Flag(name: .customLong("decimal-point"), help: "Numbers are written 10.5 (default: detected).") var decimalPoint = false
    @Option(help: "ISO 4217 currency of the amounts (default: detected, else USD).") var currency: String?
    @Option(
        name: .customLong("time-zone"),
        help: ArgumentHelp("The zone the file's dates are local to (default: this machine's, TZ).", valueName: "zone"))
    var timeZone: String?

    func validate() throws {
        if decimalComma && decimalPoint { throw ValidationError("--decimal-comma and --decimal-point cannot be used together") }
        if let dateFormat, DateOrder(option: dateFormat) == nil {
            throw ValidationError("--date-format must be ymd, mdy, dmy or a pattern like dd.MM.yyyy (got \(dateFormat))")
        }
        if let timeZone, TimeZone(identifier: timeZone) == nil {
            throw ValidationError("--time-zone must be a zone name like Europe/Paris (got \(timeZone))")
        }
        if let currency, currency.count != 3 || !currency.allSatisfy({ $0.isASCII && $0.isLetter }) {
            throw ValidationError("--currency must be a 3-letter code like EUR (got \(currency))")
        }
    }

    func settings() -> ImportSettings {
        var s = ImportSettings()
        s.dateOrder = dateFormat.flatMap(DateOrder.init(option:))
        s.decimalComma = decimalComma ? true : decimalPoint ? false : nil
        s.currency = currency?.uppercased()
        if let timeZone, let zone = TimeZone(identifier: timeZone) { s.timeZone = zone }
        s.fileName = file
        return s
    }

    func read() throws -> Data {
        guard let data = FileManager.default.contents(atPath: file) else {
            throw ServiceError(.notFound, "cannot read \(file): no such file, or not readable", field: "file")
        }
        return data
    }
}

/// Units a fuel import may force.
struct UnitOptions: ParsableArguments {
    @Option(name: .customLong("distance-unit"), help: "mi or km (default: detected).") var distanceUnit: String?
    @Option(name: .customLong("volume-unit"), help: "gal, l or ukgal (default: detected).") var volumeUnit: String?
    @Option(help: ArgumentHelp("Import every row into this car (by nickname; created when missing).", valueName: "nickname"))
    var car: String?

    func validate() throws {
        if let distanceUnit, DistanceUnit(rawValue: distanceUnit) == nil {
            throw ValidationError("--distance-unit must be mi or km")
        }
        if let volumeUnit, VolumeUnit(rawValue: volumeUnit) == nil {
            throw ValidationError("--volume-unit must be gal, l or ukgal")
        }
    }

    func apply(_ s: inout ImportSettings) {
        s.distanceUnit = distanceUnit
        s.volumeUnit = volumeUnit
        s.car = car?.trimmingCharacters(in: .whitespaces)
    }
}

struct ImportFuelly: GatewayCommand {
    static let configuration = CommandConfiguration(
        commandName: "fuelly", abstract: "Import a Fuelly CSV export (every car in it).",
        discussion: """
            Fuelly's export has car_name, model, mpg, odometer, miles, gallons, price (per unit), \
            fuelup_date, notes, missed_fuelup, partial_fuelup… (a metric account: km, litres, \
            l/100km). Each car_name becomes a car (an existing car of that nickname is used).
            Example: logbook import fuelly fuelups.csv --dry-run
            """)
    @OptionGroup var global: GlobalOptions
    @OptionGroup var options: ImportOptions
    @OptionGroup var units: UnitOptions

    func execute(_ context: Context) async throws {
        var settings = options.settings()
        units.apply(&settings)
        let plan = try FuellyParser.plan(try options.read(), settings: settings)
        try await Importer.run(context, plan: plan, title: "Fuelly export", options: options)
    }
}

struct ImportACar: GatewayCommand {
    static let configuration = CommandConfiguration(
        commandName: "acar", abstract: "Import an aCar CSV export (its Fill-Up Records).",
        discussion: """
            aCar's export is in sections (Metadata, Vehicles, Fill-Up Records, Event Records…; \
            older ones mark them ## Vehicle). Vehicles become cars with their units; the \
            fill-ups are imported; rows of other sections are listed as not taken.
            Example: logbook import acar aCar-export.csv --yes
            """)
    @OptionGroup var global: GlobalOptions
    @OptionGroup var options: ImportOptions
    @OptionGroup var units: UnitOptions

    func execute(_ context: Context) async throws {
        var settings = options.settings()
        units.apply(&settings)
        let plan = try ACarParser.plan(try options.read(), settings: settings)
        try await Importer.run(context, plan: plan, title: "aCar export", options: options)
    }
}

struct ImportLubeLogger: GatewayCommand {
    static let configuration = CommandConfiguration(
        commandName: "lubelogger", abstract: "Import a LubeLogger fuel export (one vehicle per file).",
        discussion: """
            LubeLogger's fuel export has Date, Odometer, FuelConsumed, Cost (the total), \
            FuelEconomy, IsFillToFull, MissedFuelUp, Notes. It names no units: they are \
            detected from FuelEconomy against the odometer and fuel columns, or given with \
            --distance-unit and --volume-unit. The car is --car (default: the file's name).
            Example: logbook import lubelogger civic-fuel.csv --car Civic
            """)
    @OptionGroup var global: GlobalOptions
    @OptionGroup var options: ImportOptions
    @OptionGroup var units: UnitOptions

    func execute(_ context: Context) async throws {
        var settings = options.settings()
        units.apply(&settings)
        let plan = try LubeLoggerParser.plan(try options.read(), settings: settings)
        try await Importer.run(context, plan: plan, title: "LubeLogger fuel export", options: options)
    }
}

struct ImportExpenses: GatewayCommand {
    static let configuration = CommandConfiguration(
        commandName: "expenses", abstract: "Import expenses from a bank's CSV with a column mapping.",
        discussion: """
            --map names the file's columns: date, amount and name are required; category, \
            currency and description are optional. A column is its header or #N (1-based).
            With signed amounts the negative ones are money out and imported; the positive \
            ones are listed as not taken (--debits positive for banks that write money out \
            positive, --debits all to take every row).
            Examples:
              logbook import expenses bank.csv --map date=Date,amount=Amount,name=Payee
              logbook import expenses export.csv --currency EUR \\
                --map "date=Booking date,amount=#4,name=Text,category=Category"
            """)
    @OptionGroup var global: GlobalOptions
    @OptionGroup var options: ImportOptions
    @Option(help: ArgumentHelp("target=COLUMN pairs, comma-separated (targets: \(BankParser.targets.joined(separator: ", "))).", valueName: "mapping"))
    var map: String
    @Option(help: "A category for rows without one.") var category: String?
    @Option(help: "Which amounts are money out: negative, positive or all (default: negative when any is negative, else all).")
    var debits: String?

    func validate() throws {
        if let debits, !["negative", "positive", "all"].contains(debits) {
            throw ValidationError("--debits must be negative, positive or all (got \(debits))")
        }
        _ = try parsedMap()
    }

    func parsedMap() throws -> [String: String] {
        var result: [String: String] = [:]
        for pair in map.split(separator: ",") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            guard parts.count == 2, !parts[1].trimmingCharacters(in: .whitespaces).isEmpty else {
                throw ValidationError("--map takes target=COLUMN pairs separated by commas (got \"\(pair)\")")
            }
            result[parts[0].trimmingCharacters(in: .whitespaces).lowercased()] = parts[1].trimmingCharacters(in: .whitespaces)
        }
        return result
    }

    func execute(_ context: Context) async throws {
        var settings = options.settings()
        settings.map = try parsedMap()
        settings.category = category
        settings.debits = debits
        let plan = try BankParser.plan(try options.read(), settings: settings)
        try await Importer.run(context, plan: plan, title: "bank CSV", options: options)
    }
}

// MARK: - Running a plan

enum Importer {
    /// The economy unit a file states, as analytics names it.
    static func analyticsUnits(_ fileUnit: String?) -> String? {
        switch fileUnit?.lowercased().replacingOccurrences(of: " ", with: "") {
        case "mpg", "mpg(us)", "mpg_us": "mpg_us"
        case "mpg(uk)", "mpg_uk", "ukmpg", "mpg(imp)": "mpg_uk"
        case "l/100km", "l/100", "l_per_100km": "l_per_100km"
        case "km/l", "km_per_l": "km_per_l"
        default: nil
        }
    }

    /// A file's own figure as it wrote it (at most 3 decimals): 31.268, 6.5.
    static func figure(_ value: Double) -> String {
        Quantity.text(.number(.init((value * 1000).rounded() / 1000)))
    }

    static func run(_ context: Context, plan: ImportPlan, title: String, options: ImportOptions) async throws {
        var plan = plan
        let what = plan.format == "expenses" ? "expense" : "fill-up"
        let count = { (n: Int, noun: String) in "\(n) \(noun)\(n == 1 ? "" : "s")" }
        if !context.json {
            var head = "\(title) \(options.file): "
            if plan.format != "expenses" { head += count(plan.cars.count, "car") + ", " }
            head += count(plan.writes.count, what) + " to import"
            if !plan.rejected.isEmpty { head += ", " + count(plan.rejected.count, "row") + " not taken" }
            Output.line(head)
            Output.line(
                Output.table(
                    ["DETECTED", "VALUE", "FROM"], plan.detected.map { ["  " + $0.0, $0.1, $0.2] }
                ).split(separator: "\n").dropFirst().joined(separator: "\n"))
        }
        if options.dryRun {
            show(plan, title: title, options: options, json: context.json)
            if !plan.rejected.isEmpty { throw ExitCode(ExitStatus.partial) }
            return
        }
        let session = try context.requireSession()
        let caller = Context.Caller.token(session.token)
        if plan.writes.isEmpty {
            report(plan, created: 0, existing: 0, carsCreated: [], economy: [], options: options, json: context.json)
            if !plan.rejected.isEmpty { throw ExitCode(ExitStatus.partial) }
            return
        }
        if !options.yes {
            var question = "Import \(count(plan.writes.count, what))"
            if plan.format != "expenses" { question += " into \(count(plan.cars.count, "car"))" }
            if !plan.ambiguous.isEmpty { question += " (check the \(plan.ambiguous.joined(separator: " and ")) above)" }
            question += "?"
            guard Prompt.isInteractive else {
                throw ServiceError(
                    .invalidArgument, "no terminal to ask \"\(question)\": check it with --dry-run, then pass --yes to confirm")
            }
            guard try Prompt.confirm(question) else {
                throw ServiceError(.failedPrecondition, "not confirmed; nothing was imported")
            }
        }
        // Rows whose record was created before this moment were imported earlier.
        let started = Date()
        // Cars: an existing car of that nickname is used, else one is created (once: its key).
        var vehicleIds: [String: String] = [:]
        var carsCreated: [String] = []
        if plan.format != "expenses" {
            let existing = try await context.list("records.vehicle.list", [:], all: true, service: "records").items
            for car in plan.cars {
                let matches = existing.filter { $0["nickname"]?.stringValue?.lowercased() == car.name.lowercased() }
                if let match = matches.first {
                    let units = (match["distanceUnit"]?.stringValue ?? "", match["volumeUnit"]?.stringValue ?? "")
                    if units != (car.distanceUnit, car.volumeUnit) {
                        for write in plan.writes where write.car == car.name {
                            plan.rejected.append(
                                .init(
                                    line: write.line,
                                    reason: "your car \"\(car.name)\" counts in \(units.0) and \(units.1), the file in "
                                        + "\(car.distanceUnit) and \(car.volumeUnit): import with --car NEWNAME or the unit options"))
                        }
                        plan.writes.removeAll { $0.car == car.name }
                        continue
                    }
                    vehicleIds[car.name] = match["id"]?.stringValue
                    continue
                }
                var body: [String: JSONValue] = [
                    "nickname": .string(String(String.UnicodeScalarView(car.name.unicodeScalars.prefix(60)))),
                    "distanceUnit": .string(car.distanceUnit), "volumeUnit": .string(car.volumeUnit),
                ]
                if let make = car.make { body["make"] = .string(make) }
                if let model = car.model { body["model"] = .string(String(String.UnicodeScalarView(model.unicodeScalars.prefix(60)))) }
                if let year = car.year { body["year"] = .number(.init(year)) }
                let key = ImportKey.make(format: plan.format, scope: "car", cells: [car.name.lowercased()], occurrence: 1)
                var vehicle = try await context.send(
                    "records", "records.vehicle.add", body: .object(body), caller: caller, write: true, idempotencyKey: key)
                if !isNew(vehicle, since: started) {
                    // The key's answer is a car an earlier import made, and it is not among the
                    // cars listed above: deleted since. A new one, under a key of its own.
                    vehicle = try await context.send(
                        "records", "records.vehicle.add", body: .object(body), caller: caller, write: true,
                        idempotencyKey: ID.make())
                }
                vehicleIds[car.name] = vehicle["id"]?.stringValue
                if isNew(vehicle, since: started) { carsCreated.append(car.name) }
            }
        }
        // Oldest first, so each fill-up's neighbours are already there when it is checked.
        let writes = plan.writes.enumerated().sorted { a, b in
            let da = a.element.body["date"]?.stringValue ?? "", db = b.element.body["date"]?.stringValue ?? ""
            return (a.element.car ?? "", da, a.offset) < (b.element.car ?? "", db, b.offset)
        }.map(\.element)
        let progress = Progress(total: writes.count, enabled: !context.json && isatty(STDERR_FILENO) == 1)
        var created = 0
        var existing = 0
        var taken: [(write: ImportPlan.Write, id: String)] = []
        // Records already there with the same content (an import older than the services'
        // 30 days of idempotency keys, or the same fill-up typed by hand) are not made again.
        var present = try await existingRecords(context, plan: plan, vehicleIds: vehicleIds)
        for (index, write) in writes.enumerated() {
            var body = write.body
            if let car = write.car {
                guard let id = vehicleIds[car] else { continue }
                body["vehicleId"] = .string(id)
            }
            let signature = Self.signature(body)
            if let ids = present[signature], let id = ids.first {
                present[signature] = Array(ids.dropFirst())
                existing += 1
                taken.append((write, id))
                progress.update(index + 1)
                continue
            }
            // A fill-up's key names its car too: after the car was deleted and made again, the
            // same row is a new write, not the replay of the deleted car's fill-up.
            let key =
                (body["vehicleId"]?.stringValue).map {
                    ImportKey.make(format: plan.format, scope: "fill-up of " + $0, cells: [write.idempotencyKey], occurrence: 1)
                } ?? write.idempotencyKey
            do {
                let result = try await context.send(
                    "records", write.method, body: .object(body), caller: caller, write: true, idempotencyKey: key)
                if isNew(result, since: started) { created += 1 } else { existing += 1 }
                if let id = result["id"]?.stringValue { taken.append((write, id)) }
            } catch let error as ServiceError where Context.isUnreachable(error.code) {
                progress.finish()
                throw ServiceError(
                    error.code,
                    "\(error.message); \(created + existing) of \(writes.count) rows were taken: run the same import again "
                        + "(rows already taken are not doubled)")
            } catch let error as ServiceError {
                plan.rejected.append(.init(line: write.line, reason: error.message))
            }
            progress.update(index + 1)
        }
        progress.finish()
        plan.rejected.sort { $0.line < $1.line }
        let economy = await compareEconomy(context, plan: plan, taken: taken, vehicleIds: vehicleIds)
        report(plan, created: created, existing: existing, carsCreated: carsCreated, economy: economy, options: options, json: context.json)
        if !plan.rejected.isEmpty { throw ExitCode(ExitStatus.partial) }
    }

    /// What makes two records the same for an import: a fill-up's car, date, odometer, trip
    /// and volume; an expense's date, amount, currency and name.
    static func signature(_ record: [String: JSONValue]) -> String {
        let keys =
            record["vehicleId"] != nil
            ? ["vehicleId", "date", "odometer", "trip", "volume"] : ["date", "amountMinor", "currency", "name"]
        return keys.map { key -> String in
            guard let value = record[key], value != .null else { return "" }
            if case .number = value, ["odometer", "trip", "volume"].contains(key) { return Quantity.text(value) }
            if case .string(let text) = value, key == "date", let date = WireTime.parse(text) { return WireTime.format(date) }
            return Output.cell(value)
        }.joined(separator: "\u{1F}")
    }

    /// The ids of the records an import could duplicate, by signature: the fill-ups of the
    /// cars it uses, the expenses in the file's date range.
    static func existingRecords(_ context: Context, plan: ImportPlan, vehicleIds: [String: String]) async throws
        -> [String: [String]]
    {
        var records: [JSONValue] = []
        if plan.format == "expenses" {
            let dates = plan.writes.compactMap { $0.body["date"]?.stringValue.flatMap(WireTime.parse) }
            guard let first = dates.min(), let last = dates.max() else { return [:] }
            records = try await context.list(
                "records.expense.list",
                ["from": .string(WireTime.format(first)), "to": .string(WireTime.format(last.addingTimeInterval(0.001)))],
                all: true
            ).items
        } else {
            for id in Set(vehicleIds.values) {
                records += try await context.list("records.fillup.list", ["vehicleId": .string(id)], all: true).items
            }
        }
        var byId: [String: [String]] = [:]
        for record in records {
            guard case .object(let object) = record, let id = object["id"]?.stringValue else { continue }
            byId[signature(object), default: []].append(id)
        }
        return byId
    }

    /// Made by this import (its createdAt — a time entry's savedAt, a purchase's purchasedAt —
    /// is after the import began), not answered from the exactly-once log of an earlier one.
    static func isNew(_ record: JSONValue, since: Date) -> Bool {
        guard let text = (record["createdAt"] ?? record["savedAt"] ?? record["purchasedAt"])?.stringValue,
            let date = WireTime.parse(text)
        else { return true }
        return date >= since
    }

    struct EconomyRow {
        var car: String
        var line: Int
        var date: String
        var file: Double
        var logbook: Double?
        var outcome: String
    }

    /// For rows whose file states an economy: analytics' figure for the same fill-up, in the
    /// file's unit. Waits up to 5 s for analytics to have seen the new fill-ups.
    static func compareEconomy(
        _ context: Context, plan: ImportPlan, taken: [(write: ImportPlan.Write, id: String)], vehicleIds: [String: String]
    ) async -> [EconomyRow] {
        guard let units = analyticsUnits(plan.economyUnit), taken.contains(where: { $0.write.fileEconomy != nil }),
            Executables(configuration: context.configuration).isInstalled("analytics")
        else { return [] }
        var rows: [EconomyRow] = []
        for (car, vehicleId) in vehicleIds.sorted(by: { $0.key < $1.key }) {
            let mine = taken.filter { $0.write.car == car }
            guard !mine.isEmpty else { continue }
            var fills: [String: JSONValue] = [:]
            let clock = ContinuousClock()
            let deadline = clock.now + .seconds(5)
            repeat {
                if let answer = try? await context.send(
                    "analytics", "analytics.fuel.economy", body: ["vehicleId": .string(vehicleId), "units": .string(units)],
                    caller: .token(try? context.session()?.token), timeout: .seconds(2))
                {
                    fills = [:]
                    for fill in answer["fills"]?.arrayValue ?? [] { if let id = fill["fillId"]?.stringValue { fills[id] = fill } }
                }
                if mine.allSatisfy({ fills[$0.id] != nil }) { break }
                try? await Task.sleep(for: .milliseconds(200))
            } while clock.now < deadline
            for (write, id) in mine {
                guard let stated = write.fileEconomy else { continue }
                let fill = fills[id]
                rows.append(
                    .init(
                        car: car, line: write.line, date: TimeText.local(write.body["date"]).prefix(10).description, file: stated,
                        logbook: fill?["economy"]?.doubleValue, outcome: fill?["outcome"]?.stringValue ?? "not seen by analytics yet"))
            }
        }
        return rows.sorted { ($0.car, $0.line) < ($1.car, $1.line) }
    }

    static func show(_ plan: ImportPlan, title: String, options: ImportOptions, json: Bool) {
        if json {
            Output.json(planJSON(plan, options: options, dryRun: true))
            return
        }
        if plan.format != "expenses" {
            for car in plan.cars {
                var line = "car \(car.name): \(car.distanceUnit), \(car.volumeUnit)"
                for (label, value) in [("make", car.make), ("model", car.model), ("year", car.year.map(String.init))] {
                    if let value { line += ", \(label) \(value)" }
                }
                Output.line(line + " (used if you have a car of that nickname, else created)")
            }
        }
        if plan.format == "expenses" {
            Output.line(
                Output.table(
                    ["LINE", "DATE", "NAME", "AMOUNT", "CATEGORY"],
                    plan.writes.map { w in
                        let currency = w.body["currency"]?.stringValue ?? "USD"
                        return [
                            String(w.line), TimeText.local(w.body["date"]), Output.cell(w.body["name"]),
                            w.body["amountMinor"]?.int64Value.map { Money.format($0, currency: currency) } ?? "-", Output.cell(w.body["category"]),
                        ]
                    }))
        } else {
            let economyHeader = "FILE " + (plan.economyUnit ?? "ECONOMY").uppercased()
            Output.line(
                Output.table(
                    ["LINE", "CAR", "DATE", "ODOMETER", "TRIP", "VOLUME", "PRICE/UNIT", "TOTAL", "FILL", economyHeader],
                    plan.writes.map { w in
                        let currency = w.body["currency"]?.stringValue ?? "USD"
                        let kind = (w.body["full"]?.boolValue == false ? "partial" : "full") + (w.body["missed"]?.boolValue == true ? ", missed" : "")
                        return [
                            String(w.line), w.car ?? "-", TimeText.local(w.body["date"]),
                            w.body["odometer"].map { Quantity.text($0, grouped: true) } ?? "-",
                            w.body["trip"].map { Quantity.text($0) } ?? "-", Quantity.text(w.body["volume"]),
                            Money.unitPrice(w.body["pricePerUnitMinor"], currency: currency, plain: false) ?? "(derived)",
                            w.body["totalMinor"]?.int64Value.map { Money.format($0, currency: currency) } ?? "(derived)", kind,
                            w.fileEconomy.map(Importer.figure) ?? "-",
                        ]
                    }))
        }
        showRejected(plan)
        Output.line("dry run: nothing was written")
    }

    static func showRejected(_ plan: ImportPlan) {
        guard !plan.rejected.isEmpty else { return }
        Output.line("not taken (\(plan.rejected.count)):")
        for r in plan.rejected { Output.line("  line \(r.line): \(r.reason)") }
    }

    static func planJSON(_ plan: ImportPlan, options: ImportOptions, dryRun: Bool) -> JSONValue {
        [
            "format": .string(plan.format), "file": .string(options.file), "dryRun": .bool(dryRun),
            "detected": .array(plan.detected.map { ["what": .string($0.0), "value": .string($0.1), "from": .string($0.2)] }),
            "cars": .array(
                plan.cars.map {
                    ["name": .string($0.name), "distanceUnit": .string($0.distanceUnit), "volumeUnit": .string($0.volumeUnit)]
                }),
            "writes": .array(
                plan.writes.map { w in
                    var o: [String: JSONValue] = ["line": .number(.init(w.line)), "method": .string(w.method), "body": .object(w.body)]
                    if let car = w.car { o["car"] = .string(car) }
                    if let e = w.fileEconomy { o["fileEconomy"] = .number(.init(e)) }
                    return .object(o)
                }),
            "rejected": .array(plan.rejected.map { ["line": .number(.init($0.line)), "reason": .string($0.reason)] }),
        ]
    }

    static func report(
        _ plan: ImportPlan, created: Int, existing: Int, carsCreated: [String], economy: [EconomyRow], options: ImportOptions, json: Bool
    ) {
        let what = plan.format == "expenses" ? "expense" : "fill-up"
        if json {
            guard case .object(var o) = planJSON(plan, options: options, dryRun: false) else { return }
            o["writes"] = nil
            o["created"] = .number(.init(created))
            o["alreadyImported"] = .number(.init(existing))
            o["carsCreated"] = .array(carsCreated.map { .string($0) })
            o["economy"] = .array(
                economy.map { e in
                    var row: [String: JSONValue] = [
                        "car": .string(e.car), "line": .number(.init(e.line)), "date": .string(e.date), "file": .number(.init(e.file)),
                        "outcome": .string(e.outcome),
                    ]
                    if let l = e.logbook { row["logbook"] = .number(.init(l)) }
                    return .object(row)
                })
            Output.json(.object(o))
            return
        }
        if !economy.isEmpty {
            let unit = plan.economyUnit ?? "economy"
            Output.line("economy (\(unit)): the file's figure beside Logbook's for the same fill-up")
            Output.line(
                Output.table(
                    ["LINE", "CAR", "DATE", "FILE", "LOGBOOK", "OUTCOME"],
                    economy.map { e in
                        [
                            String(e.line), e.car, e.date, Importer.figure(e.file),
                            e.logbook.map { String(format: "%.2f", $0) } ?? "-", e.outcome,
                        ]
                    }))
        }
        var line = "imported \(options.file): \(created) \(what)\(created == 1 ? "" : "s") created"
        if existing > 0 { line += ", \(existing) already imported before (not doubled)" }
        if !carsCreated.isEmpty { line += "; new car\(carsCreated.count == 1 ? "" : "s"): \(carsCreated.joined(separator: ", "))" }
        Output.line(line)
        showRejected(plan)
    }
}

/// `[#####...............] 12/40` on stderr, rewritten in place; only on a terminal.
final class Progress: @unchecked Sendable {
    let total: Int
    let enabled: Bool
    private var shown = -1

    init(total: Int, enabled: Bool) {
        self.total = total
        self.enabled = enabled
    }

    func update(_ done: Int) {
        guard enabled, total > 0 else { return }
        let percent = done * 100 / total
        guard percent != shown || done == total else { return }
        shown = percent
        let bar = TimeText.progress(Double(done) / Double(total), width: 30).prefix(32)
        FileHandle.standardError.write(Data("\r\(bar) \(done)/\(total)".utf8))
    }

    func finish() {
        guard enabled, shown >= 0 else { return }
        FileHandle.standardError.write(Data("\n".utf8))
        shown = -1
    }
}
