// `logbook catch add|list|show|edit|delete|map|photo`: fishing catches (seed 001). The list
// has two sections, fresh and salt water, as the app's table had; `map` writes GeoJSON.
import ArgumentParser
import Contracts
import Foundation
import Runtime
import Wire

struct CatchGroup: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "catch",
        abstract: "Your catches: add, list (fresh and salt water), show, edit, delete, map, photo.",
        discussion: """
            Weather and tide are fetched for each catch in the background: the list shows \
            "pending" until they arrive.
            Examples:
              logbook catch add --species Pike --weight 2.5 --bait spoon \\
                  --water fresh --lat 59.33 --lon 18.07
              logbook catch add --species Bass --weight 4.1 --unit lb --bait squid \\
                  --water salt --lat 36.6 --lon=-121.9 --at "2026-05-01 06:30" \\
                  --photo bass.jpg
              logbook catch list --sort weight
              logbook catch bests             # your heaviest catch of each species
              logbook catch show 0196…
              logbook catch map -o catches.geojson
              logbook catch photo 0196… --thumbnail -o bass-small.jpg
            """,
        subcommands: [
            CatchAdd.self, CatchList.self, CatchBestsCommand.self, CatchShow.self, CatchEdit.self, CatchDelete.self,
            CatchMap.self, CatchPhoto.self,
        ])
}

// The options take the contract's own values (Shared/Contracts/Catches.swift).
extension Water: EnumArgument {}
extension WeightUnit: EnumArgument {}
extension LengthUnit: EnumArgument {}
extension CatchSort: EnumArgument {}

enum Catches {
    /// The personal-bests table: species, best weight, when, bait, water, catches.
    static func bests(_ bests: [SpeciesBest]) -> String {
        guard !bests.isEmpty else { return "no catches yet" }
        return Output.table(
            ["SPECIES", "BEST", "DATE", "BAIT", "WATER", "CATCHES", "ID"],
            bests.map { entry in
                let fish = entry.best
                return [
                    entry.species, weight(fish), time(fish.caughtAt), fish.bait, fish.water.rawValue, "\(entry.catches)",
                    fish.id,
                ]
            })
    }

    /// A value with `digits` decimals, never "-0.0": a reading that rounds to zero has no sign.
    static func fixed(_ value: Double, digits: Int) -> String {
        let text = String(format: "%.\(digits)f", value)
        return text.hasPrefix("-") && text.dropFirst().allSatisfy({ $0 == "0" || $0 == "." }) ? String(text.dropFirst()) : text
    }

    /// A time for a table, in local time.
    static func time(_ date: Date, seconds: Bool = false) -> String { TimeText.local(date, seconds: seconds) }

    static func weight(_ fish: Catch) -> String { "\(fish.weight) \(fish.weightUnit.rawValue)" }

    static func describe(_ fish: Catch) -> String { "\(fish.species) \(weight(fish)), \(time(fish.caughtAt))" }

    /// The weather column: the summary once fetched, else the status (pending, unavailable).
    static func weather(_ fish: Catch) -> String { fish.conditions.summary ?? fish.conditions.status.rawValue }

    /// Reads a photo file, refusing it here when it is over the stack's photo limit
    /// (LOGBOOK_RECORDS_PHOTO_MAX_BYTES, default 16 MiB) rather than sending megabytes the
    /// service will refuse.
    static func photo(_ path: String, configuration: StackConfiguration) throws -> String {
        let limit = configuration.setting("records", "PHOTO_MAX_BYTES").flatMap(Int.init) ?? 16 * 1024 * 1024
        let attributes = try? FileManager.default.attributesOfItem(atPath: path)
        if let size = attributes?[.size] as? Int, size > limit {
            throw ServiceError.invalid("photo", "must be at most \(mebibytes(limit)) (got \(mebibytes(size)), \(path))")
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ServiceError.invalid("photo", "cannot read \(path)")
        }
        return data.base64EncodedString()
    }

    static func mebibytes(_ bytes: Int) -> String {
        let value = Double(bytes) / 1_048_576
        return value.rounded() == value ? "\(Int(value)) MiB" : String(format: "%.1f MiB", value)
    }

    /// The photo line of `catch show`: size, dimensions and thumbnail, or the placeholder.
    static func photoText(_ fish: Catch) -> String {
        guard let photo = fish.photo else { return "none (the app shows its \(Catch.photoPlaceholder) placeholder)" }
        return "\(photo.contentType), \(photo.width)×\(photo.height), \(photo.bytes) bytes"
            + "; thumbnail \(photo.thumbnail.width)×\(photo.thumbnail.height); sha256 \(photo.hash.prefix(12))…"
    }
}

/// Latitude and longitude take negative values: `--lon -121.9` works as `--lon=-121.9` does.
struct Place: ParsableArguments {
    @Option(name: .customLong("lat"), parsing: .unconditional, help: "Latitude, −90…90.") var latitude: Double?
    @Option(name: .customLong("lon"), parsing: .unconditional, help: "Longitude, −180…180.") var longitude: Double?
}

struct CatchAdd: GatewayCommand {
    static let configuration = CommandConfiguration(
        commandName: "add", abstract: "Record a catch.",
        discussion: """
            Bait is required (write "unknown" if you do not know it), as the app warned.
            Example:
              logbook catch add --species Pike --weight 2.5 --bait spoon \\
                  --water fresh --lat 59.33 --lon 18.07 \\
                  --length 71 --length-unit cm --released --photo pike.jpg
            """)

    @OptionGroup var global: GlobalOptions
    @Option(help: "Species, e.g. Pike.") var species: String
    @Option(help: "Weight, e.g. 2.5.") var weight: String
    @Option(help: "Weight unit: kg or lb (default kg).") var unit: WeightUnit = .kg
    @Option(help: "The bait or lure.") var bait: String
    @Option(help: "fresh or salt.") var water: Water
    @OptionGroup var place: Place
    @Option(help: "Length, e.g. 71.") var length: String?
    @Option(name: .customLong("length-unit"), help: "cm or in (default cm).") var lengthUnit: LengthUnit?
    @Option(help: ArgumentHelp("When: ISO-8601 or \"2026-05-01 06:30\" (local); default now.", valueName: "time")) var at: String?
    @Flag(help: "The fish was released.") var released = false
    @Option(help: "A note.") var note: String?
    @Option(help: ArgumentHelp("A photo file to attach (JPEG, PNG…).", valueName: "file")) var photo: String?

    func validate() throws {
        if place.latitude == nil || place.longitude == nil { throw ValidationError("give --lat and --lon: where the fish was caught") }
    }

    func execute(_ context: Context) async throws {
        var request = Contracts.CatchAdd(
            species: species, weight: try Quantity.milli(weight, field: "weight"), weightUnit: unit, bait: bait,
            water: water, latitude: place.latitude ?? 0, longitude: place.longitude ?? 0, released: released)
        if let length {
            request.length = try Quantity.milli(length, field: "length")
            request.lengthUnit = lengthUnit ?? .cm
        }
        if let at { request.caughtAt = try TimeText.parse(at, field: "caughtAt") }
        request.note = note
        if let photo { request.photo = try Catches.photo(photo, configuration: context.configuration) }
        try await CatchMethods.add.perform(context, request) { fish in
            "added catch \(fish.id): \(Catches.describe(fish)); weather \(Catches.weather(fish))"
        }
    }
}

struct CatchList: GatewayCommand {
    static let configuration = CommandConfiguration(
        commandName: "list", abstract: "List catches in two sections, fresh water and salt water.",
        discussion: """
            Each row: photo (yes/no), date, weather summary (or pending/unavailable), weight, bait \
            and species. --limit applies to each section; --cursor continues one section, so it \
            goes with --water (the footnote under a section says which). --json prints \
            {"fresh": page, "salt": page} (one page with --water); --csv one table with a water column.
            Examples:
              logbook catch list --sort weight
              logbook catch list --water salt --sort species --all --csv
            """)

    @OptionGroup var global: GlobalOptions
    @Option(help: "date (newest first, default), weight (heaviest first) or species (A→Z).") var sort: CatchSort = .date
    @Option(help: "Only one section: fresh or salt.") var water: Water?
    @OptionGroup var options: ListOptions

    func validate() throws {
        if options.cursor != nil && water == nil {
            throw ValidationError(
                "--cursor continues one section: give --water fresh or --water salt with it (a cursor belongs to one water's list)")
        }
    }

    func execute(_ context: Context) async throws {
        let sections = water.map { [$0] } ?? Water.allCases
        var pages: [(Water, Fetched)] = []
        var catches: [[Catch]] = []
        for section in sections {
            let listed = try await context.list(CatchMethods.list, Contracts.CatchList(water: section, sort: sort), options)
            pages.append((section, listed.fetched))
            catches.append(listed.items)
        }
        if context.json {
            if pages.count == 1 {
                Output.json(pages[0].1.json)
            } else {
                Output.json(.object(Dictionary(uniqueKeysWithValues: pages.map { ($0.0.rawValue, $0.1.json) })))
            }
            return
        }
        let headers = ["ID", "PHOTO", "DATE", "WEATHER", "WEIGHT", "BAIT", "SPECIES"]
        let row = { (fish: Catch) -> [String] in
            [
                fish.id, fish.photo == nil ? "no" : "yes", Catches.time(fish.caughtAt), Catches.weather(fish),
                Catches.weight(fish), fish.bait, fish.species,
            ]
        }
        if options.csv {
            let headers = [
                "id", "water", "caughtAt", "species", "weight", "weightUnit", "length", "lengthUnit", "bait", "latitude",
                "longitude", "released", "note", "photoHash", "conditionsStatus", "weather",
            ]
            // the record's own fields as the service writes them, then the photo, status and weather
            let rows = catches.joined().map { fish in
                [
                    fish.id, fish.water.rawValue, WireTime.format(fish.caughtAt), fish.species, fish.weight.description,
                    fish.weightUnit.rawValue, fish.length?.description ?? "", fish.lengthUnit?.rawValue ?? "", fish.bait,
                    Output.number(fish.latitude), Output.number(fish.longitude), "\(fish.released)", fish.note ?? "",
                    fish.photo?.hash ?? "", fish.conditions.status.rawValue, Catches.weather(fish),
                ]
            }
            FileHandle.standardOutput.write(Data(CSV.document(headers, rows).utf8))
            for (section, page) in pages where page.nextCursor != nil {
                Output.errorLine("more \(section.rawValue)-water rows: --water \(section.rawValue) --cursor \(page.nextCursor!), or --all")
            }
            return
        }
        var blocks: [String] = []
        for ((section, page), fish) in zip(pages, catches) {
            var block = section == .fresh ? "Fresh water" : "Salt water"
            block += "\n" + (fish.isEmpty ? "  (no catches)" : Output.table(headers, fish.map(row)))
            if let next = page.nextCursor {
                block += "\nmore \(section.rawValue)-water rows: --water \(section.rawValue) --cursor \(next), or --all"
            }
            blocks.append(block)
        }
        Output.line(blocks.joined(separator: "\n\n"))
    }
}

struct CatchBestsCommand: GatewayCommand {
    static let configuration = CommandConfiguration(
        commandName: "bests", abstract: "Your personal best of each species: the heaviest catch (kg and lb compared as mass).",
        discussion: """
            Species are grouped whatever their case ("pike" and "Pike"); a tie goes to the \
            earlier catch.
            Examples:
              logbook catch bests
              logbook catch bests --water salt --json
            """)

    @OptionGroup var global: GlobalOptions
    @Option(help: "Only fresh or salt water.") var water: Water?

    func execute(_ context: Context) async throws {
        try await CatchMethods.bests.perform(context, CatchBestsRequest(water: water)) { Catches.bests($0.bests) }
    }
}

struct CatchShow: GatewayCommand {
    static let configuration = CommandConfiguration(
        commandName: "show", abstract: "Show every field of a catch and its weather conditions.",
        discussion: "Example: logbook catch show 0196…")

    @OptionGroup var global: GlobalOptions
    @Argument(help: "The catch's id.") var id: String

    func execute(_ context: Context) async throws {
        let fish = try await CatchMethods.get.call(context, IdBody(id: id))
        // The full conditions live with the weather-fetcher; they are a bonus, so a slow or
        // missing weather-fetcher leaves the catch shown with its summary alone.
        var weather: Conditions?
        if fish.conditions.status == .ready {
            weather = try? await WeatherMethods.conditions.call(
                context, ConditionsGet(catchId: id), timeout: .seconds(2)
            ).conditions
        }
        if context.json {
            var object = try JSONValue.from(fish).objectValue ?? [:]
            if let weather { object["weather"] = try JSONValue.from(weather) }
            Output.json(.object(object))
            return
        }
        Output.line(Self.render(fish, weather: weather))
    }

    static func render(_ fish: Catch, weather: Conditions?, now: Date = Date()) -> String {
        var pairs: [(String, String)] = [
            ("id", fish.id), ("species", fish.species), ("weight", Catches.weight(fish)),
            ("length", fish.length.map { "\($0) \(fish.lengthUnit?.rawValue ?? "-")" } ?? "-"),
            ("bait", fish.bait), ("water", fish.water.rawValue),
            ("place", "\(Output.number(fish.latitude)), \(Output.number(fish.longitude))"),
            ("caught at", Catches.time(fish.caughtAt)), ("released", fish.released ? "yes" : "no"),
            ("note", fish.note ?? "-"), ("photo", Catches.photoText(fish)),
        ]
        pairs.append(("conditions", fish.conditions.status.rawValue))
        if let reason = fish.conditions.reason { pairs.append(("  reason", reason)) }
        // A catch of the hour still going waits for the weather that comes, not a forecast
        // (docs/protocol.md, "Fetching policy"): say when it can come.
        let hour = Date(timeIntervalSince1970: TimeInterval(CatchHour.of(fish.caughtAt) * 3600))
        if fish.conditions.status == .pending, hour.addingTimeInterval(3600) > now {
            pairs.append(
                ("  waiting", "for the weather of \(Catches.time(hour)), fetched after \(Catches.time(hour.addingTimeInterval(3600)))"))
        }
        if let summary = fish.conditions.summary { pairs.append(("  summary", summary)) }
        if let weather { pairs += Self.weatherLines(weather) }
        pairs.append(("created", Catches.time(fish.createdAt, seconds: true)))
        pairs.append(("updated", Catches.time(fish.updatedAt, seconds: true)))
        return Output.fields(pairs)
    }

    /// The weather-fetcher's values and buckets, one line per condition (missing ones left out).
    static func weatherLines(_ w: Conditions) -> [(String, String)] {
        func number(_ value: Double?, _ digits: Int = 0) -> String? { value.map { Catches.fixed($0, digits: digits) } }
        func joined(_ parts: String?...) -> String? {
            let present = parts.compactMap { $0 }
            return present.isEmpty ? nil : present.joined(separator: ", ")
        }
        let lines: [(String, String?)] = [
            ("  temperature", joined(number(w.temperatureC, 1).map { "\($0) °C" }, w.temperatureBand)),
            (
                "  pressure",
                joined(
                    number(w.pressureHpa, 1).map { "\($0) hPa" }, w.pressureBand,
                    w.pressureTrend.map { trend in
                        number(w.pressureChange3h, 1).map { "\(trend) (\($0) hPa in 3 h)" } ?? trend
                    })
            ),
            (
                "  wind",
                joined(
                    number(w.windSpeedKmh).map { "\($0) km/h" }, w.beaufort.map { "force \($0)" },
                    w.windDirection.map { "from \($0)" })
            ),
            ("  sky", joined(w.skyDescription, number(w.cloudCoverPercent).map { "\($0)% cloud" })),
            ("  time of day", w.timeOfDay),
            ("  moon", joined(w.moonPhase, String(format: "%.0f%% lit", w.moonIllumination * 100))),
            (
                "  tide",
                w.tide == "measured"
                    ? joined(w.tidePhase, number(w.tideHeightM, 2).map { "\($0) m" }, w.tideHeightBand)
                    : joined(w.tide, w.tideNote)
            ),
        ]
        return lines.compactMap { label, value in value.map { (label, $0) } }
    }
}

struct CatchEdit: GatewayCommand {
    static let configuration = CommandConfiguration(
        commandName: "edit", abstract: "Change any field of a catch, or its photo.",
        discussion: """
            Changing the place or the time fetches the weather again. --no-length and --note "" \
            clear those; --no-photo removes the photo.
            Examples:
              logbook catch edit 0196… --weight 2.7 --bait "red spoon"
              logbook catch edit 0196… --photo better.jpg
              logbook catch edit 0196… --no-photo
            """)

    @OptionGroup var global: GlobalOptions
    @Argument(help: "The catch's id.") var id: String
    @Option(help: "Species.") var species: String?
    @Option(help: "Weight.") var weight: String?
    @Option(help: "Weight unit: kg or lb.") var unit: WeightUnit?
    @Option(help: "The bait or lure.") var bait: String?
    @Option(help: "fresh or salt.") var water: Water?
    @OptionGroup var place: Place
    @Option(help: "Length.") var length: String?
    @Option(name: .customLong("length-unit"), help: "cm or in.") var lengthUnit: LengthUnit?
    @Flag(name: .customLong("no-length"), help: "Clear the length.") var noLength = false
    @Option(help: ArgumentHelp("When: ISO-8601 or \"2026-05-01 06:30\" (local).", valueName: "time")) var at: String?
    @Flag(inversion: .prefixedNo, help: "The fish was released.") var released: Bool?
    @Option(help: "A note (\"\" clears it).") var note: String?
    @Option(help: ArgumentHelp("A new photo file.", valueName: "file")) var photo: String?
    @Flag(name: .customLong("no-photo"), help: "Remove the photo.") var noPhoto = false

    func validate() throws {
        if photo != nil && noPhoto { throw ValidationError("--photo and --no-photo cannot be used together") }
        if length != nil && noLength { throw ValidationError("--length and --no-length cannot be used together") }
    }

    func execute(_ context: Context) async throws {
        var request = CatchUpdate(
            id: id, species: species, weightUnit: unit, bait: bait, water: water, latitude: place.latitude,
            longitude: place.longitude, released: released)
        if let weight { request.weight = try Quantity.milli(weight, field: "weight") }
        if let length { request.length = .set(try Quantity.milli(length, field: "length")) }
        if let lengthUnit { request.lengthUnit = .set(lengthUnit) }
        if noLength { request.length = .clear }
        if let at { request.caughtAt = try TimeText.parse(at, field: "caughtAt") }
        request.note = Patch.option(note)
        if let photo { request.photo = .set(try Catches.photo(photo, configuration: context.configuration)) }
        if noPhoto { request.photo = .clear }
        guard try request.body().count > 1 else {
            throw ValidationError("nothing to change: give at least one field to edit")
        }
        try await CatchMethods.update.perform(context, request) { fish in
            "updated catch \(fish.id): \(Catches.describe(fish)); weather \(Catches.weather(fish))"
        }
    }
}

struct CatchDelete: GatewayCommand {
    static let configuration = CommandConfiguration(
        commandName: "delete", abstract: "Delete a catch.",
        discussion: "Asks first; --yes skips the question.\nExample: logbook catch delete 0196… --yes")

    @OptionGroup var global: GlobalOptions
    @Argument(help: "The catch's id.") var id: String
    @Flag(help: "Do not ask for confirmation.") var yes = false

    func execute(_ context: Context) async throws {
        let fish = try await CatchMethods.get.call(context, IdBody(id: id))
        let what = "catch \(Catches.describe(fish))"
        try Confirm.delete("Delete the \(what)?", yes: yes)
        let result = try await CatchMethods.delete.call(context, IdBody(id: id))
        if context.json { Output.json(result) } else { Output.line("deleted the \(what)") }
    }
}

struct CatchMap: GatewayCommand {
    static let configuration = CommandConfiguration(
        commandName: "map", abstract: "Write every catch as GeoJSON points, for any map tool.",
        discussion: """
            A FeatureCollection: one Point [longitude, latitude] per catch, with properties id, \
            species, caughtAt, weight, weightUnit and water.
            Examples:
              logbook catch map > catches.geojson
              logbook catch map --water salt -o salt.geojson
            """)

    @OptionGroup var global: GlobalOptions
    @Option(help: "Only fresh or salt water.") var water: Water?
    @Option(name: [.customShort("o"), .long], help: ArgumentHelp("Write to this file instead of stdout.", valueName: "file"))
    var output: String?

    func execute(_ context: Context) async throws {
        let catches = try await context.everything(CatchMethods.list, Contracts.CatchList(water: water))
        let map = GeoJSON.collection(try catches.map(Self.feature))
        try Maps.write(map, to: output, count: catches.count, what: "catch", plural: "catches")
    }

    static func feature(_ fish: Catch) throws -> JSONValue {
        GeoJSON.point(
            latitude: fish.latitude, longitude: fish.longitude,
            properties: [
                "id": .string(fish.id), "species": .string(fish.species),
                "caughtAt": .string(WireTime.format(fish.caughtAt)), "weight": try JSONValue.from(fish.weight),
                "weightUnit": .string(fish.weightUnit.rawValue), "water": .string(fish.water.rawValue),
            ])
    }
}

enum Maps {
    /// GeoJSON to stdout, or to a file with a one-line receipt on stderr.
    static func write(_ map: JSONValue, to path: String?, count: Int, what: String, plural: String) throws {
        guard let path, path != "-" else {
            Output.json(map)
            return
        }
        guard FileManager.default.createFile(atPath: path, contents: Data((map.prettyText + "\n").utf8)) else {
            throw ServiceError(.internal, "cannot write \(path): \(String(cString: strerror(errno)))")
        }
        Output.errorLine("wrote \(count) \(count == 1 ? what : plural) to \(path)")
    }
}

struct CatchPhoto: GatewayCommand {
    static let configuration = CommandConfiguration(
        commandName: "photo", abstract: "Save a catch's photo (or its thumbnail) to a file.",
        discussion: """
            An existing file is not overwritten unless --force is given.
            Examples:
              logbook catch photo 0196… -o pike.jpg
              logbook catch photo 0196… --thumbnail -o pike-small.jpg --force
            """)

    @OptionGroup var global: GlobalOptions
    @Argument(help: "The catch's id.") var id: String
    @Flag(help: "The small JPEG thumbnail (≤ 256 px) instead of the photo.") var thumbnail = false
    @Option(name: [.customShort("o"), .long], help: ArgumentHelp("The file to write.", valueName: "file")) var output: String
    @Flag(help: "Overwrite the file if it exists.") var force = false

    func execute(_ context: Context) async throws {
        if !force && FileManager.default.fileExists(atPath: output) {
            throw ServiceError(
                .failedPrecondition, "\(output) already exists; pass --force to overwrite it", field: "output")
        }
        let photo = try await CatchMethods.photo.call(context, PhotoGet(id: id, thumbnail: thumbnail))
        guard let data = Data(base64Encoded: photo.data) else {
            throw ServiceError(.internal, "records.catch.photo.get answered without base64 data")
        }
        guard FileManager.default.createFile(atPath: output, contents: data) else {
            throw ServiceError(.internal, "cannot write \(output): \(String(cString: strerror(errno)))")
        }
        if context.json {
            var object = try JSONValue.from(photo).objectValue ?? [:]
            object["data"] = nil
            object["file"] = .string(output)
            object["bytes"] = .number(.init(data.count))
            Output.json(.object(object))
        } else {
            Output.line(
                "wrote \(output): \(data.count) bytes, \(photo.contentType), \(photo.width)×\(photo.height)")
        }
    }
}
