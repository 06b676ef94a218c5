// `logbook fillup add|list|edit|delete`: fill-ups of the selected car (seed 000's list and
// add/edit view). The list shows each fill's economy when the analytics service answers.
import ArgumentParser
import Contracts
import Foundation
import Runtime
import Wire

struct FillupGroup: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fillup",
        abstract: "Fill-ups of a car: add, list (with economy), edit, delete.",
        discussion: """
            The car is --car ID|NICKNAME, else the one chosen with `logbook car use`, else your \
            only car. Money is typed as a decimal (3.45) and kept exactly in minor units.
            Examples:
              logbook fillup add --odometer 12345.6 --volume 11.2 --price-per-unit 3.45
              logbook fillup add --trip 301.4 --volume 9.8 --total 33.81 --partial \\
                  --date "2026-05-01 14:45"
              logbook fillup list --all --csv > fillups.csv
              logbook fillup edit 0196… --volume 11.25 --full
              logbook fillup delete 0196… --yes
            """,
        subcommands: [FillupAdd.self, FillupList.self, FillupEdit.self, FillupDelete.self])
}

enum Fullness: String, EnumerableFlag {
    case full, partial
    static func help(for value: Fullness) -> ArgumentHelp? {
        value == .full ? "A complete fill (the default on add)." : "The tank was not filled completely."
    }
}

enum Fillups {
    /// The fill-up's car, for its units in a confirmation; nil when it cannot be read.
    static func car(_ context: Context, of fill: Fillup) async -> Vehicle? {
        try? await FuelMethods.vehicleGet.call(context, IdBody(id: fill.vehicleId))
    }

    /// `2026-05-01 14:45: 9.35 gal, $33.00` (the volume unit when the car is known).
    static func describe(_ fill: Fillup, car: Vehicle?) -> String {
        let volume = "\(fill.volume) \(car?.volumeUnit.rawValue ?? "")".trimmingCharacters(in: .whitespaces)
        let total = Money.format(fill.totalMinor, currency: fill.currency)
        return "\(TimeText.local(fill.date)): \(volume), \(total)"
    }

    /// Money options, parsed with `currency`'s exponent: (price per unit, total).
    static func prices(perUnit: String?, total: String?, currency: String) throws -> (Milli?, Int64?) {
        (
            try perUnit.map { try Money.parseUnitPrice($0, currency: currency, field: "price-per-unit") },
            try total.map { try Money.parse($0, currency: currency, field: "total") }
        )
    }

    /// Each fill's economy from analytics, or why there is none. Never fails the list.
    struct Economy {
        var values: [String: String] = [:]
        /// Why a fill-up has no economy, as analytics says it (full text, for the footnotes).
        var reasons: [String: String] = [:]
        var headline: String?
        var note: String?
    }

    /// The economy cell of a fill-up that has none: a word or two for the reason analytics
    /// gives in full (the list repeats the full reason under the table).
    static func shortReason(_ outcome: FuelOutcome) -> String? {
        switch outcome {
        case .first: "- (first)"
        case .partial: "- (partial)"
        case .missed: "- (after a missed fill)"
        case .distanceUnknown: "- (no distance)"
        case .odometerBackwards: "- (odometer backwards)"
        case .noDistance: "- (no distance driven)"
        case .closed: nil
        }
    }

    /// The outcomes whose full reason the list repeats under the table.
    static let explained: [FuelOutcome] = [.missed, .distanceUnknown, .odometerBackwards, .noDistance]

    static func economy(_ context: Context, vehicleId: String) async -> Economy {
        guard Executables(configuration: context.configuration).isInstalled("analytics") else {
            return Economy(note: "economy not shown: the analytics service is not installed")
        }
        let timeout = min(context.timeout, .seconds(2))
        do {
            let request = FuelStatsRequest(vehicleId: vehicleId)
            let list = try await FuelMethods.economy.call(context, request, timeout: timeout)
            var economy = Economy()
            let label = list.unitLabel
            for fill in list.fills {
                if let value = fill.economy {
                    economy.values[fill.fillId] = Analytics.figure(value)
                } else {
                    economy.values[fill.fillId] = Self.shortReason(fill.outcome) ?? "-"
                    economy.reasons[fill.fillId] = fill.reason
                }
            }
            if let stats = try? await FuelMethods.stats.call(context, request, timeout: timeout) {
                if let average = stats.average {
                    economy.headline = "average \(Analytics.figure(average)) \(label)"
                } else if let reason = stats.reason {
                    economy.headline = reason
                }
            }
            if economy.headline == nil { economy.headline = "economy in \(label)" }
            return economy
        } catch let error as ServiceError {
            return Economy(note: "economy not shown: analytics did not answer (\(error.message))")
        } catch {
            return Economy(note: "economy not shown: analytics did not answer (\(error))")
        }
    }
}

struct FillupAdd: GatewayCommand {
    static let configuration = CommandConfiguration(
        commandName: "add", abstract: "Record a fill-up.",
        discussion: """
            Give the odometer (total distance) or the trip distance, the volume, and the price \
            per unit or the total: the other price is derived.
            Examples:
              logbook fillup add --odometer 12345.6 --volume 11.2 --price-per-unit 3.45
              logbook fillup add --car Van --trip 420 --volume 38.5 --total 61.20 \\
                  --currency EUR --partial
            """)

    @OptionGroup var global: GlobalOptions
    @Option(help: ArgumentHelp("The car's id or nickname (default: the selected car).", valueName: "car")) var car: String?
    @Option(help: ArgumentHelp("When: ISO-8601, \"2026-05-01 14:45\" (local), or a date (default now).", valueName: "time"))
    var date: String?
    @Option(help: "The odometer reading.") var odometer: String?
    @Option(help: "Distance since the last fill-up.") var trip: String?
    @Option(help: "Volume bought, in the car's unit.") var volume: String
    @Option(name: .customLong("price-per-unit"), help: "Price per unit, e.g. 3.45.") var pricePerUnit: String?
    @Option(help: "Total price, e.g. 38.64.") var total: String?
    @Flag(help: "Not a complete fill.") var partial = false
    @Flag(help: "A fill-up before this one was not recorded.") var missed = false
    @Option(help: "ISO 4217 currency (default USD).") var currency: String?
    @Option(help: "A note.") var note: String?

    func validate() throws {
        if odometer == nil && trip == nil { throw ValidationError("give --odometer or --trip (or both)") }
        if pricePerUnit == nil && total == nil { throw ValidationError("give --price-per-unit or --total (or both)") }
    }

    func execute(_ context: Context) async throws {
        let vehicle = try await Resolve.currentCar(context, car)
        var request = Contracts.FillupAdd(
            vehicleId: vehicle.id, volume: try Quantity.milli(volume, field: "volume"),
            full: !partial, missed: missed, note: note)
        if let date { request.date = try TimeText.parse(date, field: "date") }
        if let odometer { request.odometer = try Quantity.milli(odometer, field: "odometer") }
        if let trip { request.trip = try Quantity.milli(trip, field: "trip") }
        request.currency = currency?.uppercased()
        (request.pricePerUnitMinor, request.totalMinor) = try Fillups.prices(
            perUnit: pricePerUnit, total: total, currency: currency ?? "USD")
        try await FuelMethods.fillupAdd.perform(context, request) { fill in
            "added fill-up \(fill.id) to \(vehicle.nickname): \(Fillups.describe(fill, car: vehicle))"
        }
    }
}

struct FillupList: GatewayCommand {
    static let configuration = CommandConfiguration(
        commandName: "list", abstract: "List a car's fill-ups, newest first, with their economy.",
        discussion: """
            The economy column comes from the analytics service; when it is not installed or \
            does not answer, the list is shown without it and a footnote says so.
            Examples:
              logbook fillup list
              logbook fillup list --car Van --all --csv
            """)

    @OptionGroup var global: GlobalOptions
    @Option(help: ArgumentHelp("The car's id or nickname (default: the selected car).", valueName: "car")) var car: String?
    @OptionGroup var options: ListOptions

    func execute(_ context: Context) async throws {
        let vehicle = try await Resolve.currentCar(context, car)
        let listed = try await context.list(FuelMethods.fillupList, Contracts.FillupList(vehicleId: vehicle.id), options)
        if context.json {
            Output.json(listed.fetched.json)
            return
        }
        let economy = await Fillups.economy(context, vehicleId: vehicle.id)
        let distance = vehicle.distanceUnit.rawValue
        let kind = { (fill: Fillup) in (fill.full ? "full" : "partial") + (fill.missed ? ", missed" : "") }
        let total = { (fill: Fillup, plain: Bool) -> String in
            plain ? Money.plain(fill.totalMinor, currency: fill.currency) : Money.format(fill.totalMinor, currency: fill.currency)
        }
        // To a tenth of a cent, as pumps show it.
        let unitPrice = { (fill: Fillup, plain: Bool) -> String in
            Money.unitPrice(fill.pricePerUnitMinor, currency: fill.currency, plain: plain)
        }
        let economyOf = { (fill: Fillup) in economy.values[fill.id] ?? "-" }
        let rows = Rows(
            headers: ["ID", "DATE", "ODOMETER", "TRIP", "VOLUME", "PRICE/UNIT", "TOTAL", "FILL", "ECONOMY"],
            table: listed.items.map { fill in
                [
                    fill.id, TimeText.local(fill.date), fill.odometer.map { "\($0.grouped) \(distance)" } ?? "-",
                    fill.trip.map { "\($0.grouped) \(distance)" } ?? "-", "\(fill.volume) \(vehicle.volumeUnit.rawValue)",
                    unitPrice(fill, false), total(fill, false), kind(fill), economyOf(fill),
                ]
            },
            csvHeaders: [
                "id", "date", "odometer", "trip", "volume", "pricePerUnit", "total", "currency", "full", "missed", "note", "economy",
            ],
            csv: listed.items.map { fill in
                [
                    fill.id, WireTime.format(fill.date), fill.odometer?.description ?? "", fill.trip?.description ?? "",
                    fill.volume.description, unitPrice(fill, true), total(fill, true), fill.currency, "\(fill.full)",
                    "\(fill.missed)", fill.note ?? "", Double(economyOf(fill)) == nil ? "" : economyOf(fill),
                ]
            })
        var notes: [String] = []
        if let note = economy.note { notes.append(note) }
        // the full reason once per kind, for the fill-ups on this page that have no economy
        var explained: Set<String> = []
        for fill in listed.items {
            guard let reason = economy.reasons[fill.id],
                Fillups.explained.contains(where: { economy.values[fill.id] == Fillups.shortReason($0) }),
                explained.insert(reason).inserted
            else { continue }
            notes.append("\(economy.values[fill.id] ?? "-"): \(reason)")
        }
        if !options.csv {
            Output.line("\(Cars.describe(vehicle))" + (economy.headline.map { ": \($0)" } ?? ""))
        }
        context.show(listed.fetched, rows, options, empty: "no fill-ups yet: add one with `logbook fillup add`", notes: notes)
    }
}

struct FillupEdit: GatewayCommand {
    static let configuration = CommandConfiguration(
        commandName: "edit", abstract: "Change any field of a fill-up.",
        discussion: """
            Give a new price per unit or total and the other is derived again. --odometer "" \
            or --trip "" clears it (one of them must remain); --note "" clears the note.
            Examples:
              logbook fillup edit 0196… --volume 11.25 --total 38.80
              logbook fillup edit 0196… --partial --date "2026-05-01 08:10"
            """)

    @OptionGroup var global: GlobalOptions
    @Argument(help: "The fill-up's id (see `logbook fillup list`).") var id: String
    @Option(help: ArgumentHelp("When: ISO-8601, \"2026-05-01 14:45\" (local), or a date.", valueName: "time")) var date: String?
    @Option(help: "The odometer reading (\"\" clears it).") var odometer: String?
    @Option(help: "Distance since the last fill-up (\"\" clears it).") var trip: String?
    @Option(help: "Volume bought.") var volume: String?
    @Option(name: .customLong("price-per-unit"), help: "Price per unit.") var pricePerUnit: String?
    @Option(help: "Total price.") var total: String?
    @Flag var fullness: Fullness?
    @Flag(inversion: .prefixedNo, help: "A fill-up before this one was not recorded.") var missed: Bool?
    @Option(help: "ISO 4217 currency.") var currency: String?
    @Option(help: "A note (\"\" clears it).") var note: String?

    func execute(_ context: Context) async throws {
        var request = FillupUpdate(id: id)
        if let date { request.date = try TimeText.parse(date, field: "date") }
        /// "" clears a distance.
        func distance(_ text: String?, _ field: String) throws -> Patch<Milli> {
            guard let text else { return .unchanged }
            return text.trimmingCharacters(in: .whitespaces).isEmpty ? .clear : .set(try Quantity.milli(text, field: field))
        }
        request.odometer = try distance(odometer, "odometer")
        request.trip = try distance(trip, "trip")
        if let volume { request.volume = try Quantity.milli(volume, field: "volume") }
        if let fullness { request.full = fullness == .full }
        request.missed = missed
        request.note = Patch.option(note)
        request.currency = currency?.uppercased()
        if pricePerUnit != nil || total != nil {
            var money = currency
            if money == nil { money = try await FuelMethods.fillupGet.call(context, IdBody(id: id)).currency }
            (request.pricePerUnitMinor, request.totalMinor) = try Fillups.prices(
                perUnit: pricePerUnit, total: total, currency: money ?? "USD")
        }
        guard try request.body().count > 1 else {
            throw ValidationError("nothing to change: give at least one field to edit")
        }
        let fill = try await FuelMethods.fillupUpdate.call(context, request)
        if context.json { return Output.json(fill) }
        let car = await Fillups.car(context, of: fill)
        Output.line("updated fill-up \(fill.id): \(Fillups.describe(fill, car: car))")
    }
}

struct FillupDelete: GatewayCommand {
    static let configuration = CommandConfiguration(
        commandName: "delete", abstract: "Delete a fill-up.",
        discussion: "Asks first; --yes skips the question.\nExample: logbook fillup delete 0196… --yes")

    @OptionGroup var global: GlobalOptions
    @Argument(help: "The fill-up's id.") var id: String
    @Flag(help: "Do not ask for confirmation.") var yes = false

    func execute(_ context: Context) async throws {
        let fill = try await FuelMethods.fillupGet.call(context, IdBody(id: id))
        let what = "fill-up of \(Fillups.describe(fill, car: await Fillups.car(context, of: fill)))"
        try Confirm.delete("Delete the \(what)?", yes: yes)
        let result = try await FuelMethods.fillupDelete.call(context, IdBody(id: id))
        if context.json { Output.json(result) } else { Output.line("deleted the \(what)") }
    }
}
