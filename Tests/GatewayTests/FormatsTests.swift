// The CLI's pure parts: money typed as decimals, quantities, CSV quoting, GeoJSON shape,
// durations, progress bars and the times people type.
import Contracts
import Foundation
import Testing
import Wire

@testable import Gateway

@Suite("local times in tables")
struct LocalTimeTextTests {
    @Test("written as DateFormatter writes them, in zones with half- and quarter-hour offsets and DST")
    func agreesWithDateFormatter() throws {
        let zones = [
            "UTC", "Europe/Oslo", "America/St_Johns", "Asia/Kathmandu", "Australia/Lord_Howe", "Pacific/Kiritimati",
            "America/Los_Angeles", "Pacific/Pago_Pago",
        ].compactMap(TimeZone.init(identifier:))
        #expect(zones.count == 8)
        var state: UInt64 = 0x5eed
        func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        var dates = [Date(timeIntervalSince1970: 0), Date(timeIntervalSince1970: -0.5), Date(timeIntervalSince1970: 59.999)]
        for _ in 0..<1_500 {
            // 1600 to 2400, with milliseconds
            let ms = -11_676_096_000_000 + Int64(next() % 25_245_000_000_000)
            dates.append(Date(ms: ms))
        }
        for zone in zones {
            for (i, date) in dates.enumerated() where i % 4 == 0 || zone.identifier == "Europe/Oslo" {
                for seconds in [false, true] {
                    #expect(
                        TimeText.local(date, timeZone: zone, seconds: seconds)
                            == TimeText.formatted(date, timeZone: zone, seconds: seconds),
                        "\(zone.identifier) \(date.timeIntervalSince1970)")
                }
            }
        }
    }
}

@Suite("money on the command line")
struct MoneyTests {
    @Test("decimals become exact minor units with the currency's exponent")
    func parse() throws {
        #expect(try Money.parse("3.45") == 345)
        #expect(try Money.parse("3.4") == 340)
        #expect(try Money.parse("3") == 300)
        #expect(try Money.parse("0.01") == 1)
        #expect(try Money.parse(".5") == 50)
        #expect(try Money.parse("7.") == 700)
        #expect(try Money.parse("1200.00") == 120_000)
        #expect(try Money.parse("3.450") == 345, "trailing zeros beyond the exponent are exact")
        #expect(try Money.parse("0.29") == 29, "no binary rounding (0.29 * 100 = 28.999… as a Double)")
        #expect(try Money.parse("1.15") == 115)
        #expect(try Money.parse("19.99", currency: "EUR") == 1999)
        #expect(try Money.parse("2300", currency: "JPY") == 2300)
        #expect(try Money.parse("2300.0", currency: "jpy") == 2300)
        #expect(try Money.parse("1.234", currency: "KWD") == 1234)
        #expect(try Money.parse("1.23", currency: "XYZ") == 123, "unknown currencies have 2 decimals")
        #expect(try Money.parse("90000000000000.00") == 9_000_000_000_000_000, "the largest exact JSON integer we send")
    }

    @Test("refuses what is not an exact amount, naming the field")
    func refuse() {
        for bad in ["", "-3", "+3", "3,45", "1,000.00", "3.459", "1e3", "abc", ".", "3.4.5", "$3", " 3 4"] {
            #expect(throws: ServiceError.self, "\(bad)") { try Money.parse(bad, field: "total") }
        }
        #expect(throws: ServiceError.self) { try Money.parse("12.5", currency: "JPY") }
        #expect(throws: ServiceError.self) { try Money.parse("99999999999999999999") }
        #expect(throws: ServiceError.self) { try Money.parse("90000000000000.01") }
        do {
            _ = try Money.parse("3.459", field: "price-per-unit")
            Issue.record("accepted 3.459")
        } catch let error as ServiceError {
            #expect(error.code == .invalidArgument)
            #expect(error.field == "price-per-unit")
            #expect(error.message.contains("at most 2 decimals"), "\(error.message)")
        } catch {
            Issue.record("\(error)")
        }
    }

    @Test("minor units back to text")
    func format() {
        #expect(Money.plain(345) == "3.45")
        #expect(Money.plain(5) == "0.05")
        #expect(Money.plain(0) == "0.00")
        #expect(Money.plain(2300, currency: "JPY") == "2300")
        #expect(Money.plain(1234, currency: "KWD") == "1.234")
        #expect(Money.format(123_456_789) == "$1,234,567.89")
        #expect(Money.format(100) == "$1.00")
        #expect(Money.format(1999, currency: "EUR") == "19.99 EUR")
        #expect(Money.format(1_000_000, currency: "JPY") == "1,000,000 JPY")
        #expect(Money.format(-250) == "-$2.50")
    }
}

@Suite("prices per unit")
struct UnitPriceTests {
    @Test("pump prices keep a tenth of a cent, exactly")
    func unitPrices() throws {
        #expect(try Money.parseUnitPrice("3.459", field: "price-per-unit") == Milli(thousandths: 345_900))
        #expect(try Money.parseUnitPrice("3.45", field: "price-per-unit") == Milli(thousandths: 345_000))
        #expect(try Money.parseUnitPrice("1.23456", currency: "EUR", field: "price-per-unit") == Milli(thousandths: 123_456))
        #expect(try Money.parseUnitPrice("159.9", currency: "JPY", field: "price-per-unit") == Milli(thousandths: 159_900))
        #expect(try Money.parseUnitPrice("3.45999", field: "price-per-unit") == Milli(thousandths: 345_999))
        #expect(throws: ServiceError.self) { try Money.parseUnitPrice("3.459991", field: "price-per-unit") }
        #expect(Money.unitPrice(345.9, plain: false) == "$3.459")
        #expect(Money.unitPrice(345, plain: false) == "$3.45")
        #expect(Money.unitPrice(345.905, plain: true) == "3.45905")
        #expect(Money.unitPrice(123.456, currency: "EUR", plain: false) == "1.23456 EUR")
        #expect(Money.unitPrice(nil, plain: true) == nil)
    }
}

@Suite("durations typed by people")
struct DurationTests {
    @Test("1h30m, 90m, 45s, 1:30 and friends")
    func durations() throws {
        #expect(try TimeText.duration("1h30m", field: "d") == 5_400_000)
        #expect(try TimeText.duration("90m", field: "d") == 5_400_000)
        #expect(try TimeText.duration("1:30", field: "d") == 5_400_000)
        #expect(try TimeText.duration("45s", field: "d") == 45_000)
        #expect(try TimeText.duration("2H", field: "d") == 7_200_000)
        #expect(try TimeText.duration("1h 5m 30s", field: "d") == 3_930_000)
        for bad in ["", "90", "1x", "h", "1:3", "1:75", "0m", "-5m", "1.5h"] {
            #expect(throws: ServiceError.self, "\(bad)") { try TimeText.duration(bad, field: "d") }
        }
    }

    @Test("hours past what a number of milliseconds holds are refused, not a crash")
    func hugeDurations() throws {
        #expect(try TimeText.duration("1000000:00", field: "d") == 3_600_000_000_000)
        let tooMany = String(repeating: "1000000h", count: 2_600_000)  // 2.6e6 × 3.6e12 ms > Int64.max
        for bad in ["3000000000000:00", "9223372036854775807:59", "1000001:00", tooMany] {
            #expect(throws: ServiceError.self, "\(bad.prefix(30))") { try TimeText.duration(bad, field: "d") }
        }
    }
}

@Suite("quantities")
struct QuantityTests {
    @Test("at most three decimals, read into exact thousandths that encode as typed")
    func parse() throws {
        #expect(try JSONValue.from(Quantity.milli("12.345", field: "volume")).jsonText == "12.345")
        #expect(try JSONValue.from(Quantity.milli("12345.6", field: "odometer")).jsonText == "12345.6")
        #expect(try Quantity.milli("11", field: "volume").description == "11")
        #expect(try Quantity.milli("0.100", field: "volume").description == "0.1")
        #expect(try Quantity.milli("-3", field: "volume").description == "-3", "the service names the rule for negatives")
        #expect(throws: ServiceError.self) { try Quantity.milli("1.2345", field: "volume") }
        #expect(throws: ServiceError.self) { try Quantity.milli("12,5", field: "volume") }
        #expect(throws: ServiceError.self) { try Quantity.milli("ten", field: "volume") }
        #expect(throws: ServiceError.self) { try Quantity.milli("", field: "volume") }
        // read digit by digit into thousandths: no floating point on the way
        #expect(try Quantity.milli("11.2", field: "volume") == Milli(thousandths: 11_200))
        #expect(try Quantity.milli("0.001", field: "volume") == Milli(thousandths: 1))
        #expect(try Quantity.milli("123456789012.345", field: "odometer") == Milli(thousandths: 123_456_789_012_345))
        #expect(try Quantity.milli("-3", field: "volume") == Milli(thousandths: -3_000))
        #expect(throws: ServiceError.self) { try Quantity.milli(".", field: "volume") }
        #expect(throws: ServiceError.self) { try Quantity.milli("1e3", field: "volume") }
        #expect(Quantity.text(.number(12345.6), grouped: true) == "12,345.6")
        #expect(Quantity.text(.number(.init(0.1 + 0.2))) == "0.3")
        #expect(Quantity.text(nil) == "-")
    }
}

@Suite("CSV")
struct CSVTests {
    @Test("RFC 4180: quotes only when needed, doubled quotes, CRLF lines, header first")
    func quoting() {
        #expect(CSV.field("plain") == "plain")
        #expect(CSV.field("") == "")
        #expect(CSV.field("a,b") == "\"a,b\"")
        #expect(CSV.field("say \"hi\"") == "\"say \"\"hi\"\"\"")
        #expect(CSV.field("two\nlines") == "\"two\nlines\"")
        #expect(CSV.field("cr\rhere") == "\"cr\rhere\"")
        #expect(CSV.field("crlf\r\nhere") == "\"crlf\r\nhere\"")
        #expect(CSV.field(" spaced ") == " spaced ")
        let document = CSV.document(["name", "note"], [["Lunch", "with Sam, Jo"], ["Tea", "\"green\""]])
        #expect(document == "name,note\r\nLunch,\"with Sam, Jo\"\r\nTea,\"\"\"green\"\"\"\r\n")
    }

    @Test("JSON values as cells")
    func cells() {
        #expect(CSV.cell(nil) == "")
        #expect(CSV.cell(.null) == "")
        #expect(CSV.cell(.bool(true)) == "true")
        #expect(CSV.cell(.number(12)) == "12")
        #expect(CSV.cell(.number(2.5)) == "2.5")
    }
}

@Suite("GeoJSON")
struct GeoJSONTests {
    @Test("a FeatureCollection of Points, coordinates [longitude, latitude]")
    func shape() throws {
        let point = GeoJSON.point(latitude: 59.33, longitude: 18.07, properties: ["species": "Pike"])
        let map = GeoJSON.collection([point])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(map.jsonText.utf8)) as? [String: Any])
        #expect(object["type"] as? String == "FeatureCollection")
        let features = try #require(object["features"] as? [[String: Any]])
        #expect(features.count == 1)
        #expect(features[0]["type"] as? String == "Feature")
        let geometry = try #require(features[0]["geometry"] as? [String: Any])
        #expect(geometry["type"] as? String == "Point")
        #expect(geometry["coordinates"] as? [Double] == [18.07, 59.33])
        #expect((features[0]["properties"] as? [String: Any])?["species"] as? String == "Pike")
        #expect(GeoJSON.collection([]).jsonText == #"{"features":[],"type":"FeatureCollection"}"#)
    }

    @Test("catch features carry id, species, caughtAt, weight and water")
    func catchFeature() throws {
        let at = try #require(WireTime.parse("2026-05-01T06:30:00Z"))
        let fish = Catch(
            id: "c1", species: "Bass", weight: Milli(thousandths: 4_100), weightUnit: .lb, bait: "squid", water: .salt,
            latitude: 36.6, longitude: -121.9, caughtAt: at, released: false, createdAt: at, updatedAt: at)
        let feature = try CatchMap.feature(fish)
        #expect(feature["geometry"]?["coordinates"] == [-121.9, 36.6])
        let properties = feature["properties"]?.objectValue ?? [:]
        #expect(Set(properties.keys) == ["id", "species", "caughtAt", "weight", "weightUnit", "water"])
        #expect(properties["weight"] == 4.1)
        #expect(properties["caughtAt"] == .string(WireTime.format(at)))
    }
}

@Suite("times and durations")
struct TimeTests {
    let utc = TimeZone(identifier: "UTC")!
    let newYork = TimeZone(identifier: "America/New_York")!

    @Test("H:MM:SS, hours unbounded, seconds truncated")
    func clock() {
        #expect(TimeText.clock(milliseconds: 0) == "0:00:00")
        #expect(TimeText.clock(milliseconds: 999) == "0:00:00")
        #expect(TimeText.clock(milliseconds: 1_500) == "0:00:01")
        #expect(TimeText.clock(milliseconds: 3_723_000) == "1:02:03")
        #expect(TimeText.clock(milliseconds: 36_000_000_000) == "10000:00:00")
    }

    @Test("a text bar toward the goal")
    func progress() {
        #expect(TimeText.progress(0) == "[....................] 0.00%")
        #expect(TimeText.progress(0.5) == "[##########..........] 50.00%")
        #expect(TimeText.progress(1.7) == "[####################] 100.00%")
        #expect(TimeText.progress(.nan) == "[....................] 0.00%")
    }

    @Test("ISO with an offset, local date-times, plain dates, words")
    func parse() throws {
        let iso = try TimeText.parse("2026-05-01T14:45:00Z", field: "date", timeZone: newYork)
        #expect(WireTime.format(iso) == "2026-05-01T14:45:00Z")
        let offset = try TimeText.parse("2026-05-01T16:45:00+02:00", field: "date")
        #expect(WireTime.format(offset) == "2026-05-01T14:45:00Z")
        let local = try TimeText.parse("2026-05-01 14:45", field: "date", timeZone: newYork)
        #expect(WireTime.format(local) == "2026-05-01T18:45:00Z", "EDT is UTC−4")
        let t = try TimeText.parse("2026-05-01T14:45", field: "date", timeZone: utc)
        #expect(WireTime.format(t) == "2026-05-01T14:45:00Z")
        let seconds = try TimeText.parse("2026-05-01 14:45:30", field: "date", timeZone: utc)
        #expect(WireTime.format(seconds) == "2026-05-01T14:45:30Z")
        let day = try TimeText.parse("2026-01-15", field: "date", timeZone: newYork)
        #expect(WireTime.format(day) == "2026-01-15T05:00:00Z", "local midnight, EST is UTC−5")
        let now = WireTime.parse("2026-05-10T12:00:00Z")!
        #expect(try TimeText.parse("now", field: "at", now: now) == now)
        #expect(WireTime.format(try TimeText.parse("today", field: "at", timeZone: utc, now: now)) == "2026-05-10T00:00:00Z")
        #expect(WireTime.format(try TimeText.parse("yesterday", field: "at", timeZone: utc, now: now)) == "2026-05-09T00:00:00Z")
        #expect(TimeText.isDateOnly("2026-05-31"))
        #expect(!TimeText.isDateOnly("2026-05-31 10:00"))
    }

    @Test("refuses what is not a time, naming the field")
    func refuse() {
        for bad in ["", "tomorrow-ish", "2026-13-01", "2026-02-30", "05/01/2026", "2026-05-01 25:00", "14:45"] {
            #expect(throws: ServiceError.self, "\(bad)") { try TimeText.parse(bad, field: "date", timeZone: utc) }
        }
    }

    @Test("wire times shown in the local zone")
    func local() {
        #expect(TimeText.local("2026-05-01T18:45:00Z", timeZone: newYork) == "2026-05-01 14:45")
        #expect(TimeText.local("2026-05-01T18:45:07.250Z", timeZone: utc, seconds: true) == "2026-05-01 18:45:07")
        #expect(TimeText.local(nil) == "-")
    }

    /// Seconds no Duration holds are refused as the command line is read: `shard move` used
    /// to trap on `--consumers-wait inf` after freezing the user's writes, and stay frozen.
    @Test func waitsInSecondsAreCheckedBeforeAnythingRuns() throws {
        let commands: [[String]] = [
            ["shard", "move", "alice", "2", "--consumers-wait"], ["stack", "up", "--wait"],
            ["backup", "/tmp/b", "--service-timeout"], ["probe", "analytics", "--wait"], ["whoami", "--timeout"],
        ]
        for command in commands {
            #expect(throws: Never.self, "\(command)") { try Logbook.parseAsRoot(command + ["30"]) }
            for bad in ["inf", "nan", "1e20", "-1", "100000"] {
                #expect(throws: (any Error).self, "\(command) \(bad)") { try Logbook.parseAsRoot(command + [bad]) }
            }
        }
        do {
            _ = try Logbook.parseAsRoot(["shard", "move", "alice", "2", "--consumers-wait", "inf"])
        } catch {
            #expect(Logbook.message(for: error) == "--consumers-wait must be between 0 and 86400 seconds (got inf)")
        }
    }

    @Test func negativeNumbersReachTheCommand() throws {
        #expect(NegativeNumbers.arrange(["fillup", "add", "--volume", "-3", "--odometer", "5"])
            == ["fillup", "add", "--volume=-3", "--odometer", "5"])
        #expect(NegativeNumbers.arrange(["expense", "add", "Lunch", "-5", "--category", "food"])
            == ["expense", "add", "Lunch", "--category", "food", "--", "-5"])
        #expect(NegativeNumbers.arrange(["catch", "add", "--lon", "-121.9"]) == ["catch", "add", "--lon=-121.9"])
        // nothing to do, or already arranged by the user
        #expect(NegativeNumbers.arrange(["expense", "list", "-h"]) == ["expense", "list", "-h"])
        #expect(NegativeNumbers.arrange(["expense", "add", "--", "-5"]) == ["expense", "add", "--", "-5"])
        let parsed = try Logbook.parseAsRoot(NegativeNumbers.arrange(["expense", "add", "Lunch", "-5"]))
        #expect(parsed is Gateway.ExpenseAdd)
        #expect(throws: ServiceError.self) { try Money.parse("-5") }
        do {
            _ = try Money.parse("-5")
        } catch let error as ServiceError {
            #expect(error.message == "amount: must be greater than 0 (got -5)")
        }
    }
}
