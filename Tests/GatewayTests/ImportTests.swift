// Reading other apps' exports: the CSV reader, numbers and dates as files write them, and each
// format's parser on the sample files in Tests/ImportSamples (written after each app's
// documented export, with their quirks: BOM, CRLF, quoted commas, decimal commas, missing
// columns and values).
import Foundation
import Testing
import Wire

@testable import Gateway

enum Samples {
    static func data(_ name: String) throws -> Data {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("ImportSamples/\(name)")
        return try Data(contentsOf: url)
    }

    static func settings(_ file: String, zone: String = "UTC") -> ImportSettings {
        var s = ImportSettings()
        s.timeZone = TimeZone(identifier: zone)!
        s.fileName = file
        return s
    }
}

@Suite("CSV as real exports write it")
struct ImportCSVTests {
    @Test("BOM, CRLF, quoted delimiters, doubled quotes and line breaks inside quotes")
    func quirks() {
        let text = ImportCSV.text(Data([0xEF, 0xBB, 0xBF] + Array("a,b,c\r\n1,\"x, y\",\"say \"\"hi\"\"\"\r\n2,\"two\r\nlines\",\r\n\r\n".utf8)))
        let rows = ImportCSV.rows(text)
        #expect(rows.count == 3)
        #expect(rows[0].cells == ["a", "b", "c"], "the BOM is not part of the first header")
        #expect(rows[1].cells == ["1", "x, y", "say \"hi\""])
        #expect(rows[2].cells == ["2", "two\nlines", ""])
        #expect(rows.map(\.line) == [1, 2, 3])
        let after = ImportCSV.rows("h\n\"a\nb\"\nlast\n")
        #expect(after.last?.line == 4, "a row after a quoted line break keeps its file line number")
    }

    @Test("the separator is detected: comma, semicolon or tab")
    func delimiter() {
        #expect(ImportCSV.delimiter("a;b;c\n1;2,5;3\n") == ";")
        #expect(ImportCSV.delimiter("a\tb\tc\n") == "\t")
        #expect(ImportCSV.delimiter("\"a;b\",c\n") == ",", "a quoted ; does not count")
        #expect(ImportCSV.delimiter("single\n") == ",")
    }
}

@Suite("numbers and dates as files write them")
struct ImportValueTests {
    @Test("decimal commas, grouping, currency signs and signs become canonical decimals")
    func numbers() {
        #expect(ImportNumber.canonical("1.234,56", decimalComma: true) == "1234.56")
        #expect(ImportNumber.canonical("1,234.56", decimalComma: false) == "1234.56")
        #expect(ImportNumber.canonical("10,5", decimalComma: true) == "10.5")
        #expect(ImportNumber.canonical("10,5", decimalComma: false) == "10.5", "one comma not followed by 3 digits is decimal")
        #expect(ImportNumber.canonical("106,421", decimalComma: false) == "106421", "grouping in a decimal-point file")
        #expect(ImportNumber.canonical("3,459", decimalComma: true) == "3.459")
        #expect(ImportNumber.canonical("$3.969", decimalComma: false) == "3.969")
        #expect(ImportNumber.canonical("€1.799", decimalComma: false) == "1.799")
        #expect(ImportNumber.canonical("-4,80", decimalComma: true) == "-4.80")
        #expect(ImportNumber.canonical("(12.50)", decimalComma: false) == "-12.50")
        #expect(ImportNumber.canonical("12.50 EUR", decimalComma: false) == "12.50")
        #expect(ImportNumber.canonical("1 234,5", decimalComma: true) == "1234.5")
        #expect(ImportNumber.canonical("0", decimalComma: false) == "0")
        for bad in ["", "abc", "1.2.3,4,5", "12a3", "--"] {
            #expect(ImportNumber.canonical(bad, decimalComma: false) == nil, "\(bad)")
        }
        #expect(ImportNumber.currency(in: "$76.03") == "USD")
        #expect(ImportNumber.currency(in: "€80.96") == "EUR")
        #expect(ImportNumber.rounded("10.5678", decimals: 3) == "10.568")
        #expect(ImportNumber.rounded("3.4595", decimals: 3) == "3.46")
    }

    @Test("the decimal mark is detected from the numbers, and a ;-file leans to commas")
    func decimalMark() {
        #expect(ImportNumber.detectDecimalComma(["41,20", "1,659"], delimiter: ",").0 == true)
        #expect(ImportNumber.detectDecimalComma(["106,421", "19.500", "3.899"], delimiter: ",").0 == false)
        #expect(ImportNumber.detectDecimalComma(["1.250,00"], delimiter: ",").0 == true)
        #expect(ImportNumber.detectDecimalComma(["100"], delimiter: ";").0 == true)
        #expect(ImportNumber.detectDecimalComma(["100"], delimiter: ",").0 == false)
    }

    @Test("the date order is the one every date fits; an ambiguous file says so")
    func dates() throws {
        #expect(ImportDate.candidates(["01-19-2025", "02-02-2025"]).orders == [.mdy])
        #expect(ImportDate.candidates(["17.01.2025", "03.01.2025"]).orders == [.dmy])
        #expect(ImportDate.candidates(["2025-01-17 08:00"]).orders == [.ymd])
        #expect(ImportDate.candidates(["03/04/2025"]).orders == [.mdy, .dmy])
        let utc = TimeZone(identifier: "UTC")!
        let date = try #require(ImportDate.date("7/15/2023 8:11 PM", order: .mdy, timeZone: utc))
        #expect(WireTime.format(date) == "2023-07-15T20:11:00Z")
        let tokyo = try #require(ImportDate.date("15.07.2023", order: .dmy, timeZone: TimeZone(identifier: "Asia/Tokyo")!))
        #expect(WireTime.format(tokyo) == "2023-07-14T15:00:00Z", "a date alone is local midnight in the chosen zone")
        #expect(ImportDate.date("31.02.2023", order: .dmy, timeZone: utc) == nil, "no 31 February")
        #expect(ImportDate.date("13/13/2023", order: .mdy, timeZone: utc) == nil)
        #expect(DateOrder(option: "dd.MM.yyyy") == .dmy)
        #expect(DateOrder(option: "M/d/yyyy") == .mdy)
        #expect(DateOrder(option: "nonsense") == nil)
    }
}

@Suite("each format's parser on its sample file")
struct ImportParserTests {
    @Test("Fuelly: cars, units from the columns, partial and missed flags, quoted notes, rows it cannot take")
    func fuelly() throws {
        let plan = try FuellyParser.plan(try Samples.data("fuelly.csv"), settings: Samples.settings("fuelly.csv"))
        #expect(plan.cars.map(\.name) == ["Civic", "Tacoma"])
        #expect(plan.cars.allSatisfy { $0.distanceUnit == "mi" && $0.volumeUnit == "gal" })
        #expect(plan.cars[0].model == "Civic EX")
        #expect(plan.writes.count == 11)
        #expect(plan.rejected == [.init(line: 8, reason: "no volume")])
        #expect(plan.economyUnit == "mpg")
        let partial = try #require(plan.writes.first { $0.line == 4 })
        #expect(partial.body["full"] == .bool(false) && partial.body["missed"] == .bool(false))
        #expect(partial.body["note"] == .string("half tank, in a hurry · Costco"))
        let missed = try #require(plan.writes.first { $0.line == 6 })
        #expect(missed.body["missed"] == .bool(true) && missed.body["full"] == .bool(true))
        let quoted = try #require(plan.writes.first { $0.line == 7 })
        #expect(quoted.body["note"] == .string("Costco, Main St \"pump 4\" · Costco"))
        #expect(quoted.body["date"] == .string("2025-03-10T00:00:00Z"))
        #expect(quoted.body["odometer"] == .number(11735.7))
        #expect(quoted.body["volume"] == .number(10.432))
        #expect(quoted.body["pricePerUnitMinor"] == .number(329.9))
        #expect(quoted.fileEconomy == 30.263)
        let tripOnly = try #require(plan.writes.first { $0.line == 13 })
        #expect(tripOnly.body["odometer"] == nil && tripOnly.body["trip"] == .number(401.6), "an empty odometer: the trip counts")
        #expect(plan.detected.contains { $0.0 == "dates" && $0.1 == "MM-dd-yyyy" })
        #expect(plan.ambiguous.isEmpty)
        // Keys: one per row, the same when the file is read again.
        #expect(Set(plan.writes.map(\.idempotencyKey)).count == plan.writes.count)
        let again = try FuellyParser.plan(try Samples.data("fuelly.csv"), settings: Samples.settings("fuelly.csv"))
        #expect(again.writes.map(\.idempotencyKey) == plan.writes.map(\.idempotencyKey))
        #expect(plan.writes.allSatisfy { $0.idempotencyKey.count <= 128 })
    }

    @Test("Fuelly re-saved in a decimal-comma locale: ';', 41,20 litres, dd.MM.yyyy, no odometer column")
    func fuellyMetric() throws {
        let plan = try FuellyParser.plan(try Samples.data("fuelly-metric.csv"), settings: Samples.settings("fuelly-metric.csv"))
        #expect(plan.cars == [.init(name: "Golf", make: nil, model: "Golf VII", year: nil, distanceUnit: "km", volumeUnit: "l")])
        #expect(plan.detected.contains { $0.0 == "decimal mark" && $0.1 == "comma" })
        #expect(plan.detected.contains { $0.0 == "dates" && $0.1 == "dd.MM.yyyy" })
        #expect(plan.economyUnit == "l/100km")
        // The first row has no odometer and 0 km: nothing to count from, so it is not taken.
        #expect(plan.rejected == [.init(line: 2, reason: "no odometer reading and no distance driven")])
        #expect(plan.writes.count == 3)
        #expect(plan.writes[0].body["trip"] == .number(612.3))
        #expect(plan.writes[0].body["volume"] == .number(39.31))
        #expect(plan.writes[0].body["pricePerUnitMinor"] == .number(168.9))
        #expect(plan.writes[0].fileEconomy == 6.42)
        #expect(plan.writes[1].body["note"] == .string("halb; Autobahn"))
        #expect(plan.writes[1].body["full"] == .bool(false))
    }

    @Test("aCar with ## sections: vehicles and units, $ prices with grouping, event rows listed as not taken")
    func acar() throws {
        let plan = try ACarParser.plan(try Samples.data("acar.csv"), settings: Samples.settings("acar.csv"))
        #expect(plan.cars.map(\.name) == ["Altima", "Leaf"])
        #expect(plan.cars[0] == .init(name: "Altima", make: "Nissan", model: "Altima", year: 2012, distanceUnit: "mi", volumeUnit: "gal"))
        #expect(plan.cars[1].distanceUnit == "km" && plan.cars[1].volumeUnit == "l")
        #expect(plan.writes.count == 5)
        let first = plan.writes[0]
        #expect(first.body["odometer"] == .number(106001))
        #expect(first.body["date"] == .string("2023-07-01T08:11:00Z"))
        #expect(first.body["totalMinor"] == .number(7603))
        #expect(first.body["currency"] == .string("USD"))
        #expect(plan.writes[2].body["full"] == .bool(false))
        #expect(plan.writes[3].body["pricePerUnitMinor"] == nil && plan.writes[3].body["totalMinor"] == .number(4928))
        #expect(plan.writes[1].fileEconomy == 20.894)
        #expect(plan.writes[1].body["note"] == .string("road trip, mostly highway · Maverik"))
        #expect(plan.rejected.map(\.line) == [12, 17])
        #expect(plan.rejected[0].reason == "no odometer reading and no distance driven")
        #expect(plan.rejected[1].reason.contains("event records"))
    }

    @Test("aCar's current export: Metadata's date format, € prices, L/100 km")
    func acarSections() throws {
        let plan = try ACarParser.plan(try Samples.data("acar-sections.csv"), settings: Samples.settings("acar-sections.csv"))
        #expect(plan.cars == [.init(name: "Berlingo", make: "Citroen", model: "Berlingo", year: 2016, distanceUnit: "km", volumeUnit: "l")])
        #expect(plan.writes.count == 2)
        #expect(plan.writes[1].body["date"] == .string("2024-03-16T17:45:00Z"), "dd/MM/yyyy from Metadata")
        #expect(plan.writes[1].body["currency"] == .string("EUR"))
        #expect(plan.writes[1].body["totalMinor"] == .number(7317))
        #expect(plan.economyUnit == "L/100km")
        #expect(Importer.analyticsUnits(plan.economyUnit) == "l_per_100km")
    }

    @Test("LubeLogger: units read from FuelEconomy, quoted decimal commas, the car from --car")
    func lubelogger() throws {
        var settings = Samples.settings("exports/civic-fuel.csv")
        var plan = try LubeLoggerParser.plan(try Samples.data("lubelogger.csv"), settings: settings)
        #expect(plan.cars == [.init(name: "civic-fuel", make: nil, model: nil, year: nil, distanceUnit: "km", volumeUnit: "l")])
        #expect(plan.economyUnit == "l/100km")
        #expect(plan.writes.count == 4)
        #expect(plan.rejected == [.init(line: 6, reason: "no volume")])
        #expect(plan.writes[1].body["volume"] == .number(46.15))
        #expect(plan.writes[1].body["totalMinor"] == .number(7800))
        #expect(plan.writes[1].body["note"] == .string("Aral, Hauptstraße"))
        #expect(plan.writes[1].fileEconomy == 6.5)
        #expect(plan.writes[0].fileEconomy == nil, "0 means no figure")
        #expect(plan.writes[2].body["full"] == .bool(false))
        #expect(plan.writes[1].body["date"] == .string("2025-01-19T00:00:00Z"))
        settings.car = "Civic"
        settings.distanceUnit = "mi"
        settings.volumeUnit = "gal"
        plan = try LubeLoggerParser.plan(try Samples.data("lubelogger.csv"), settings: settings)
        #expect(plan.cars == [.init(name: "Civic", make: nil, model: nil, year: nil, distanceUnit: "mi", volumeUnit: "gal")])
    }

    @Test("a bank CSV with a mapping: money out only, signed decimal commas, identical rows kept apart")
    func bank() throws {
        var settings = Samples.settings("bank.csv", zone: "Europe/Berlin")
        settings.map = ["date": "Booking date", "amount": "Amount", "name": "Payee", "category": "Category", "currency": "#7", "description": "Purpose"]
        let plan = try BankParser.plan(try Samples.data("bank.csv"), settings: settings)
        #expect(plan.writes.count == 4)
        #expect(plan.rejected.map(\.line) == [5, 6])
        #expect(plan.rejected[0].reason.contains("money in"))
        #expect(plan.rejected[1].reason == "no amount")
        #expect(plan.writes[0].body["amountMinor"] == .number(480))
        #expect(plan.writes[0].body["currency"] == .string("EUR"))
        #expect(plan.writes[0].body["date"] == .string("2026-05-01T22:00:00Z"), "local midnight in Berlin")
        #expect(plan.writes[0].idempotencyKey != plan.writes[1].idempotencyKey, "two identical coffees are two expenses")
        #expect(plan.writes[2].body["name"] == .string("Miete; Mai"))
        #expect(plan.writes[2].body["amountMinor"] == .number(125_000))
        #expect(plan.writes[3].body["category"] == nil)
        #expect(throws: ServiceError.self) {
            var bad = settings
            bad.map["amount"] = "Betrag"
            _ = try BankParser.plan(try Samples.data("bank.csv"), settings: bad)
        }
        #expect(throws: ServiceError.self) {
            var bad = settings
            bad.map["name"] = nil
            _ = try BankParser.plan(try Samples.data("bank.csv"), settings: bad)
        }
    }

    @Test("a file that is not the format says what it has instead")
    func wrongFormat() throws {
        #expect(throws: ServiceError.self) { try FuellyParser.plan(try Samples.data("lubelogger.csv"), settings: ImportSettings()) }
        #expect(throws: ServiceError.self) { try ACarParser.plan(try Samples.data("fuelly.csv"), settings: ImportSettings()) }
        #expect(throws: ServiceError.self) { try LubeLoggerParser.plan(Data(), settings: ImportSettings()) }
        #expect(throws: ServiceError.self) { try FuellyParser.plan(Data([0xFF, 0xFE, 0x00]), settings: ImportSettings()) }
    }
}

@Suite("the archive container")
struct TarTests {
    @Test("files come back byte for byte; damage is refused")
    func roundTrip() throws {
        let photo = Data((0..<1500).map { UInt8($0 % 251) })
        let entries = [Tar.Entry(name: "manifest.json", data: Data("{}".utf8)), Tar.Entry(name: "photos/abc", data: photo)]
        let archive = try Tar.write(entries)
        #expect(archive.count % 512 == 0)
        #expect(try Tar.read(archive) == entries)
        var damaged = archive
        damaged[130] ^= 0x01
        #expect(throws: ServiceError.self) { try Tar.read(damaged) }
        #expect(throws: ServiceError.self) { try Tar.read(archive.prefix(700)) }
        #expect(throws: ServiceError.self) { try Tar.read(Data("not a tar".utf8)) }
    }
}

@Suite("wire times keep their milliseconds")
struct WireTimeMillisecondTests {
    @Test("a time read and written again is the same text (an archive round trip depends on it)")
    func exact() throws {
        for text in [
            "2026-11-22T14:30:38.497Z", "2026-11-22T10:15:37.757Z", "2026-11-22T14:29:32.089Z", "2026-05-01T00:00:00.001Z",
            "2026-05-01T23:59:59.999Z", "2026-05-01T12:00:00Z", "1969-12-31T23:59:59.500Z",
        ] {
            let date = try #require(WireTime.parse(text))
            #expect(WireTime.format(date) == text)
        }
        #expect(WireTime.format(Date(timeIntervalSince1970: 1.9996)) == "1970-01-01T00:00:02Z", "rounded to the millisecond")
    }
}

@Suite("what makes a row already there")
struct ImportSignatureTests {
    @Test("a planned fill-up matches the service's record of it, whatever nulls and number forms")
    func fillup() {
        let planned: [String: JSONValue] = [
            "vehicleId": "v1", "date": "2025-03-10T00:00:00Z", "odometer": .number(11735.7), "volume": .number(10.432),
            "pricePerUnitMinor": .number(329.9), "full": true,
        ]
        let stored: [String: JSONValue] = [
            "id": "f1", "vehicleId": "v1", "date": "2025-03-10T00:00:00.000Z", "odometer": .number(11735.700), "trip": .null,
            "volume": .number(10.432), "totalMinor": .number(3441), "note": "other",
        ]
        #expect(Importer.signature(planned) == Importer.signature(stored))
        var other = stored
        other["volume"] = .number(10.433)
        #expect(Importer.signature(planned) != Importer.signature(other))
        other = stored
        other["vehicleId"] = "v2"
        #expect(Importer.signature(planned) != Importer.signature(other))
    }

    @Test("an expense matches on date, amount, currency and name")
    func expense() {
        let planned: [String: JSONValue] = ["date": "2026-05-01T22:00:00Z", "amountMinor": .number(480), "currency": "EUR", "name": "Bäckerei"]
        var stored = planned
        stored["id"] = "e1"
        stored["category"] = "Food"
        #expect(Importer.signature(planned) == Importer.signature(stored))
        stored["amountMinor"] = .number(481)
        #expect(Importer.signature(planned) != Importer.signature(stored))
    }
}
