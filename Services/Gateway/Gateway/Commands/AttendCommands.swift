// `logbook attend in|out|latest|history|map|delete`: arrivals and departures (seed 003).
// Entries made here carry source `cli` unless --source names the app they came from.
import ArgumentParser
import Contracts
import Foundation
import Wire

struct AttendGroup: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "attend",
        abstract: "Arrivals and departures: in, out, latest, history, hours, map, delete.",
        discussion: """
            Arrivals and departures alternate: a second `in` while an arrival is open is \
            refused (exit 5) unless you pass --correction.
            Examples:
              logbook attend in --lat 40.7128 --lon=-74.006 --accuracy 15
              logbook attend out --note "left early"
              logbook attend in --at "2026-05-01 08:55" --correction
              logbook attend out --source company       # entered for the company's system
              logbook attend latest
              logbook attend history --limit 20
              logbook attend map -o office.geojson
            """,
        subcommands: [AttendIn.self, AttendOut.self, AttendLatest.self, AttendHistory.self, AttendMap.self, AttendDelete.self, AttendHours.self])
}

struct EntryOptions: ParsableArguments {
    @OptionGroup var place: Place
    @Option(help: "Accuracy of the location in metres.") var accuracy: Double?
    @Option(help: ArgumentHelp("When: ISO-8601 or \"2026-05-01 08:55\" (local); default the server's now.", valueName: "time"))
    var at: String?
    @Option(help: "A note.") var note: String?
    @Flag(help: "Record it even though the previous entry is of the same kind.") var correction = false
    @Option(help: "Which app it came from: cli (default), ios, android, web or company.") var source: AttendanceSource = .cli
}

extension AttendanceSource: EnumArgument {}

enum Attendance {
    static func kind(_ entry: AttendanceEntry) -> String { entry.kind == .arrival ? "in" : "out" }

    static func record(_ context: Context, kind: AttendanceKind, _ options: EntryOptions) async throws {
        let request = AttendanceAdd(
            kind: kind, at: try options.at.map { try TimeText.parse($0, field: "at") }, latitude: options.place.latitude,
            longitude: options.place.longitude, accuracy: options.accuracy,
            source: options.source, note: options.note,
            correction: options.correction)
        do {
            try await AttendanceMethods.add.perform(context, request) { entry in
                "\(kind.rawValue) recorded at \(TimeText.local(entry.at, seconds: true)) (id \(entry.id))"
                    + (entry.correction ? ", as a correction" : "")
            }
        } catch var error as ServiceError where error.code == .failedPrecondition && !options.correction {
            if error.message.contains("correction: true") {
                error.message = error.message.replacingOccurrences(of: "correction: true", with: "--correction")
            } else {
                error.message += " (to record it anyway, pass --correction)"
            }
            throw error
        }
    }

    static func place(_ entry: AttendanceEntry) -> String {
        guard let latitude = entry.latitude else { return "-" }
        let accuracy = entry.accuracy.map { " ±\(Output.number($0)) m" } ?? ""
        return "\(Output.number(latitude)), \(entry.longitude.map(Output.number) ?? "-")\(accuracy)"
    }
}

struct AttendIn: GatewayCommand {
    static let configuration = CommandConfiguration(
        commandName: "in", abstract: "Record an arrival.",
        discussion: "Examples:\n  logbook attend in\n  logbook attend in --lat 40.7128 --lon=-74.006 --note \"badge forgotten\"")

    @OptionGroup var global: GlobalOptions
    @OptionGroup var options: EntryOptions

    func execute(_ context: Context) async throws { try await Attendance.record(context, kind: .arrival, options) }
}

struct AttendOut: GatewayCommand {
    static let configuration = CommandConfiguration(
        commandName: "out", abstract: "Record a departure.",
        discussion: "Examples:\n  logbook attend out\n  logbook attend out --at \"2026-05-01 17:30\"")

    @OptionGroup var global: GlobalOptions
    @OptionGroup var options: EntryOptions

    func execute(_ context: Context) async throws { try await Attendance.record(context, kind: .departure, options) }
}

struct AttendLatest: GatewayCommand {
    static let configuration = CommandConfiguration(
        commandName: "latest", abstract: "Show your latest arrival and latest departure.",
        discussion: "Example: logbook attend latest")

    @OptionGroup var global: GlobalOptions

    func execute(_ context: Context) async throws {
        try await AttendanceMethods.latest.perform(context) { result in
            let line = { (entry: AttendanceEntry?) -> String in
                guard let entry else { return "none yet" }
                return "\(TimeText.local(entry.at, seconds: true)) via \(entry.source.rawValue)"
                    + (Attendance.place(entry) == "-" ? "" : " at \(Attendance.place(entry))")
            }
            return Output.fields([("last arrival", line(result.arrival)), ("last departure", line(result.departure))])
        }
    }
}

struct AttendHistory: GatewayCommand {
    static let configuration = CommandConfiguration(
        commandName: "history", abstract: "Your arrivals and departures, newest first.",
        discussion: "Examples:\n  logbook attend history\n  logbook attend history --all --csv > attendance.csv")

    @OptionGroup var global: GlobalOptions
    @OptionGroup var options: ListOptions

    func execute(_ context: Context) async throws {
        let listed = try await context.list(AttendanceMethods.list, ListBody(), options)
        let rows = Rows(
            headers: ["ID", "KIND", "TIME", "SOURCE", "LOCATION", "NOTE"],
            table: listed.items.map { entry in
                [
                    entry.id, Attendance.kind(entry) + (entry.correction ? " (correction)" : ""),
                    TimeText.local(entry.at, seconds: true), entry.source.rawValue, Attendance.place(entry), entry.note ?? "-",
                ]
            },
            csvHeaders: ["id", "kind", "at", "source", "latitude", "longitude", "accuracy", "correction", "note"],
            csv: listed.items.map { entry in
                [
                    entry.id, entry.kind.rawValue, WireTime.format(entry.at), entry.source.rawValue,
                    entry.latitude.map(Output.number) ?? "", entry.longitude.map(Output.number) ?? "",
                    entry.accuracy.map(Output.number) ?? "", "\(entry.correction)", entry.note ?? "",
                ]
            })
        context.show(listed.fetched, rows, options, empty: "no entries yet: `logbook attend in` records an arrival")
    }
}

struct AttendMap: GatewayCommand {
    static let configuration = CommandConfiguration(
        commandName: "map", abstract: "Write the entries that have a location as GeoJSON pins.",
        discussion: """
            A FeatureCollection: one Point [longitude, latitude] per entry with a location, with \
            properties id, kind, at, source and accuracy.
            Example: logbook attend map -o attendance.geojson
            """)

    @OptionGroup var global: GlobalOptions
    @Option(name: [.customShort("o"), .long], help: ArgumentHelp("Write to this file instead of stdout.", valueName: "file"))
    var output: String?

    func execute(_ context: Context) async throws {
        let entries = try await context.everything(AttendanceMethods.list, ListBody())
        let features = entries.compactMap { entry -> JSONValue? in
            guard let latitude = entry.latitude, let longitude = entry.longitude else { return nil }
            return GeoJSON.point(
                latitude: latitude, longitude: longitude,
                properties: [
                    "id": .string(entry.id), "kind": .string(entry.kind.rawValue), "at": .string(WireTime.format(entry.at)),
                    "source": .string(entry.source.rawValue), "accuracy": entry.accuracy.map { .number(.init($0)) } ?? .null,
                ])
        }
        try Maps.write(GeoJSON.collection(features), to: output, count: features.count, what: "pin", plural: "pins")
    }
}

struct AttendDelete: GatewayCommand {
    static let configuration = CommandConfiguration(
        commandName: "delete", abstract: "Delete an arrival or departure entered by mistake.",
        discussion: "Asks first; --yes skips the question.\nExample: logbook attend delete 0196… --yes")

    @OptionGroup var global: GlobalOptions
    @Argument(help: "The entry's id (see `logbook attend history`).") var id: String
    @Flag(help: "Do not ask for confirmation.") var yes = false

    func execute(_ context: Context) async throws {
        try Confirm.delete("Delete attendance entry \(id)?", yes: yes)
        try await AttendanceMethods.delete.perform(context, IdBody(id: id)) { _ in "deleted entry \(id)" }
    }
}
