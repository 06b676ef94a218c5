// `logbook car add|list|edit|delete|use`: vehicles on the records service (seed 000's
// car picker). `use` remembers the selected car per user; fill-up commands default to it.
import ArgumentParser
import Contracts
import Foundation
import Wire

struct CarGroup: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "car",
        abstract: "Your cars: add, list, edit, delete, and choose the one fill-ups go to.",
        discussion: """
            Examples:
              logbook car add Civic --make Honda --model Civic --year 2019
              logbook car add "Van" --distance-unit km --volume-unit l
              logbook car use Civic          # fill-up commands now default to it
              logbook car list               # * marks the selected car
              logbook car edit Civic --year 2020 --model ""   # "" clears a field
              logbook car delete Van --yes   # deletes its fill-ups too
            A car is named by its id or, when no other car shares it, its nickname.
            """,
        subcommands: [CarAdd.self, CarList.self, CarEdit.self, CarDelete.self, CarUse.self])
}

extension DistanceUnit: EnumArgument {}
extension VolumeUnit: EnumArgument {}

enum Cars {
    /// `Civic 2019 Honda Civic`: the nickname, then whichever of year, make and model it has.
    static func describe(_ car: Vehicle) -> String {
        [car.nickname, car.year.map(String.init), car.make, car.model].compactMap { $0 }.joined(separator: " ")
    }

    static func summary(_ car: Vehicle) -> String {
        "\(car.nickname) (id \(car.id), \(units(car)))"
    }

    /// `mi/gal`.
    static func units(_ car: Vehicle) -> String { "\(car.distanceUnit.rawValue)/\(car.volumeUnit.rawValue)" }
}

struct CarFields: ParsableArguments {
    @Option(help: "Maker, e.g. Honda (\"\" clears it on edit).") var make: String?
    @Option(help: "Model, e.g. Civic (\"\" clears it on edit).") var model: String?
    @Option(help: ArgumentHelp("Model year (\"\" clears it on edit).", valueName: "year")) var year: String?
    @Option(name: .customLong("distance-unit"), help: "mi or km (default mi).") var distanceUnit: DistanceUnit?
    @Option(name: .customLong("volume-unit"), help: "gal, l or ukgal (default gal).") var volumeUnit: VolumeUnit?

    var yearPatch: Patch<Int> {
        get throws {
            guard let year else { return .unchanged }
            let trimmed = year.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty { return .clear }
            guard let value = Int(trimmed) else {
                throw ServiceError.invalid("year", "must be a whole number like 2019 (got \(year))")
            }
            return .set(value)
        }
    }

    /// The fields as an update of car `id`.
    func update(id: String, nickname: String?) throws -> VehicleUpdate {
        VehicleUpdate(
            id: id, nickname: nickname, make: Patch.option(make), model: Patch.option(model), year: try yearPatch,
            distanceUnit: distanceUnit, volumeUnit: volumeUnit)
    }

    /// The fields as a new car's.
    func add(nickname: String) throws -> VehicleAdd {
        VehicleAdd(
            nickname: nickname, make: Patch.option(make).applied(to: nil), model: Patch.option(model).applied(to: nil),
            year: try yearPatch.applied(to: nil), distanceUnit: distanceUnit, volumeUnit: volumeUnit)
    }
}

struct CarAdd: GatewayCommand {
    static let configuration = CommandConfiguration(
        commandName: "add", abstract: "Add a car.",
        discussion: "Example: logbook car add Civic --make Honda --model Civic --year 2019 --distance-unit mi --volume-unit gal")

    @OptionGroup var global: GlobalOptions
    @Argument(help: "Its nickname (required; need not be unique).") var nickname: String
    @OptionGroup var fields: CarFields

    func execute(_ context: Context) async throws {
        try await FuelMethods.vehicleAdd.perform(context, try fields.add(nickname: nickname)) {
            "added car \(Cars.summary($0))"
        }
    }
}

struct CarList: GatewayCommand {
    static let configuration = CommandConfiguration(
        commandName: "list", abstract: "List your cars; * marks the selected one.",
        discussion: "Examples:\n  logbook car list\n  logbook car list --csv > cars.csv")

    @OptionGroup var global: GlobalOptions
    @OptionGroup var options: ListOptions

    func execute(_ context: Context) async throws {
        let listed = try await context.list(FuelMethods.vehicleList, ListBody(), options)
        let session = try context.requireSession()
        let selected = SelectionStore(directory: context.sessions.directory).vehicle(for: session.userId)
        let only = listed.items.count == 1 && listed.fetched.nextCursor == nil && options.cursor == nil
        let current = { (car: Vehicle) in car.id == selected || (selected == nil && only) }
        let rows = Rows(
            headers: ["", "ID", "NICKNAME", "MAKE", "MODEL", "YEAR", "UNITS"],
            table: listed.items.map { car in
                [
                    current(car) ? "*" : "", car.id, car.nickname, car.make ?? "-", car.model ?? "-",
                    car.year.map(String.init) ?? "-", Cars.units(car),
                ]
            },
            csvHeaders: ["selected", "id", "nickname", "make", "model", "year", "distanceUnit", "volumeUnit", "createdAt"],
            csv: listed.items.map { car in
                [
                    current(car) ? "yes" : "no", car.id, car.nickname, car.make ?? "", car.model ?? "",
                    car.year.map(String.init) ?? "", car.distanceUnit.rawValue, car.volumeUnit.rawValue,
                    WireTime.format(car.createdAt),
                ]
            })
        context.show(listed.fetched, rows, options, empty: "no cars yet: add one with `logbook car add NICKNAME`")
    }
}

struct CarEdit: GatewayCommand {
    static let configuration = CommandConfiguration(
        commandName: "edit", abstract: "Change a car's nickname, make, model, year or units.",
        discussion: """
            Examples:
              logbook car edit Civic --nickname "Blue Civic"
              logbook car edit 0196… --make "" --year 2020
            Changing a unit does not convert the fill-ups: it corrects a wrong unit.
            """)

    @OptionGroup var global: GlobalOptions
    @Argument(help: "The car's id or nickname.") var car: String
    @Option(help: "A new nickname.") var nickname: String?
    @OptionGroup var fields: CarFields

    func execute(_ context: Context) async throws {
        let vehicle = try await Resolve.car(context, car)
        let request = try fields.update(id: vehicle.id, nickname: nickname)
        guard try request.body().count > 1 else {
            throw ValidationError("nothing to change: give --nickname, --make, --model, --year or a unit")
        }
        try await FuelMethods.vehicleUpdate.perform(context, request) { "updated car \(Cars.summary($0))" }
    }
}

struct CarDelete: GatewayCommand {
    static let configuration = CommandConfiguration(
        commandName: "delete", abstract: "Delete a car and all its fill-ups.",
        discussion: "Asks first; --yes skips the question (needed without a terminal).\nExample: logbook car delete Civic --yes")

    @OptionGroup var global: GlobalOptions
    @Argument(help: "The car's id or nickname.") var car: String
    @Flag(help: "Do not ask for confirmation.") var yes = false

    func execute(_ context: Context) async throws {
        let vehicle = try await Resolve.car(context, car)
        let fillups = try await context.everything(FuelMethods.fillupList, Contracts.FillupList(vehicleId: vehicle.id)).count
        let what = "car \"\(vehicle.nickname)\" and its \(fillups) fill-up\(fillups == 1 ? "" : "s")"
        try Confirm.delete("Delete \(what)?", yes: yes)
        let result = try await FuelMethods.vehicleDelete.call(context, IdBody(id: vehicle.id))
        let session = try context.requireSession()
        let store = SelectionStore(directory: context.sessions.directory)
        if store.vehicle(for: session.userId) == vehicle.id { try store.setVehicle(nil, for: session.userId) }
        if context.json { Output.json(result) } else { Output.line("deleted \(what)") }
    }
}

struct CarUse: GatewayCommand {
    static let configuration = CommandConfiguration(
        commandName: "use", abstract: "Select the car fill-up commands use by default.",
        discussion: """
            Remembered per user in the config directory (selection.json beside session.json).
            With a single car, fill-up commands use it without a selection.
            Example: logbook car use Civic
            """)

    @OptionGroup var global: GlobalOptions
    @Argument(help: "The car's id or nickname.") var car: String

    func execute(_ context: Context) async throws {
        let vehicle = try await Resolve.car(context, car)
        try SelectionStore(directory: context.sessions.directory).setVehicle(vehicle.id, for: try context.owner())
        if context.json { Output.json(vehicle) } else { Output.line("using \(Cars.summary(vehicle)) for fill-ups") }
    }
}
