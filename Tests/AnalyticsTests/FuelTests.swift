// Fuel economy against hand-computed cases, and after every change the stored projection
// equals a recomputation from scratch (`oracle`, written independently of the incremental
// walk: one plain loop over every fill-up in date order).
import Foundation
import GRDB
import Runtime
import Testing
import TestSupport
import Wire

@testable import AnalyticsService

/// The rules of docs/fuel-economy.md applied to the whole list at once.
func oracle(_ fills: [FuelFill]) -> FuelSnapshot {
    var snapshot = FuelSnapshot()
    let sorted = fills.sorted { ($0.date, $0.odometer ?? -1, $0.id) < ($1.date, $1.odometer ?? -1, $1.id) }
    var started = false
    var reading: Int64?
    var open = (n: 0, d: Int64(0), v: Int64(0), c: Int64(0), currencies: Set<String>())
    var lastClosed: String?
    var ratios: [Double] = []
    func reset() { open = (0, 0, 0, 0, []) }
    for f in sorted {
        snapshot.fills += 1
        snapshot.spend[f.currency, default: .init()].fills += 1
        snapshot.spend[f.currency]!.totalMinor += f.totalMinor
        snapshot.spend[f.currency]!.volume += f.volume
        if !started {
            started = true
            reading = f.odometer
            reset()
            snapshot.results[f.id] = FuelResult(outcome: .first)
            continue
        }
        if f.missed {
            reading = f.odometer
            reset()
            snapshot.results[f.id] = FuelResult(outcome: .missed)
            continue
        }
        var d: Int64
        if let o = f.odometer, let r = reading {
            if o < r {
                reading = o
                reset()
                snapshot.results[f.id] = FuelResult(outcome: .odometerBackwards)
                continue
            }
            d = o - r
        } else if let t = f.trip {
            d = t
        } else {
            reading = f.odometer
            reset()
            snapshot.results[f.id] = FuelResult(outcome: .distanceUnknown)
            continue
        }
        if let o = f.odometer { reading = o } else if let r = reading { reading = r + d }
        open.d += d
        open.v += f.volume
        open.c += f.totalMinor
        open.currencies.insert(f.currency)
        if !f.full {
            open.n += 1
            snapshot.results[f.id] = FuelResult(outcome: .partial)
            continue
        }
        if open.d == 0 {
            snapshot.results[f.id] = FuelResult(outcome: .noDistance)
        } else {
            let single = open.currencies.count == 1 ? open.currencies.first : nil
            snapshot.results[f.id] = FuelResult(
                outcome: .closed, distance: open.d, volume: open.v, costMinor: single == nil ? nil : open.c,
                currency: single)
            snapshot.closedSegments += 1
            snapshot.closedDistance += open.d
            snapshot.closedVolume += open.v
            if let single {
                snapshot.spend[single]!.closedCostMinor += open.c
                snapshot.spend[single]!.closedDistance += open.d
            }
            lastClosed = f.id
            ratios.append(Double(open.d) / Double(open.v))
        }
        reset()
    }
    snapshot.openFills = open.n
    snapshot.openDistance = open.d
    snapshot.openVolume = open.v
    snapshot.lastFillId = lastClosed
    snapshot.bestRatio = ratios.max()
    snapshot.worstRatio = ratios.min()
    return snapshot
}

/// A vehicle's fill-ups, kept beside the service so the oracle sees what records holds.
final class Garage: @unchecked Sendable {
    let harness: Harness
    let vehicleId: String
    var fills: [String: FuelFill] = [:]

    init(_ harness: Harness, vehicleId: String = "v1", distance: String = "mi", volume: String = "gal") async throws {
        self.harness = harness
        self.vehicleId = vehicleId
        try await harness.feed("vehicle.created", vehicle(vehicleId, distance: distance, volume: volume))
    }

    func put(
        _ id: String, day n: Double, odometer: Double? = nil, trip: Double? = nil, volume: Double,
        totalMinor: Int64? = nil,
        currency: String = "USD", full: Bool = true, missed: Bool = false,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let total = totalMinor ?? Int64((volume * 300).rounded())
        let type = fills[id] == nil ? "fillup.created" : "fillup.updated"
        try await harness.feed(
            type,
            fillup(
                id, vehicle: vehicleId, date: day(n), odometer: odometer, trip: trip, volume: volume, totalMinor: total,
                currency: currency, full: full, missed: missed))
        fills[id] = FuelFill(
            id: id, date: day(n).ms, odometer: odometer.map { Int64(($0 * 1000).rounded()) },
            trip: trip.map { Int64(($0 * 1000).rounded()) }, volume: Int64((volume * 1000).rounded()),
            totalMinor: total,
            currency: currency, full: full, missed: missed)
        try await check(sourceLocation: sourceLocation)
    }

    func delete(_ id: String, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        try await harness.feed(
            "fillup.deleted", ["id": .string(id), "userId": "alice", "vehicleId": .string(vehicleId)])
        fills[id] = nil
        try await check(sourceLocation: sourceLocation)
    }

    /// The stored projection equals the from-scratch recomputation.
    func check(sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let vehicleId = self.vehicleId
        let stored = try await harness.read { db in try FuelSnapshot.stored(db, vehicleId: vehicleId) }
        #expect(stored == oracle(Array(fills.values)), sourceLocation: sourceLocation)
    }

    func stats(_ units: String? = nil) async throws -> JSONValue {
        var body: [String: JSONValue] = ["vehicleId": .string(vehicleId)]
        if let units { body["units"] = .string(units) }
        return try await harness.call("analytics.fuel.stats", .object(body))
    }

    /// Economy per fill-up id, in the vehicle's default units.
    func economy() async throws -> [String: Decimal?] {
        let list = try await harness.call("analytics.fuel.economy", ["vehicleId": .string(vehicleId)])
        var result: [String: Decimal?] = [:]
        for fill in list["fills"]?.arrayValue ?? [] {
            result[fill["fillId"]!.stringValue!] = fill.decimal("economy")
        }
        return result
    }
}

func dec(_ text: String) -> Decimal { Decimal(string: text)! }

@Suite struct FuelTests {
    @Test func allFullFillUps() async throws {
        let garage = try await Garage(try Harness())
        var stats = try await garage.stats()
        #expect(stats["average"] == nil)
        #expect(stats["reason"]?.stringValue == "no fill-ups yet: add two full fill-ups to see your average")

        try await garage.put("f1", day: 0, odometer: 1000, volume: 10, totalMinor: 3000)
        stats = try await garage.stats()
        #expect(stats["average"] == nil)
        #expect(stats["reason"]?.stringValue == "add one more full fill-up to see your average")

        try await garage.put("f2", day: 7, odometer: 1300, volume: 10, totalMinor: 3000)
        try await garage.put("f3", day: 14, odometer: 1650, volume: 14, totalMinor: 4200)
        stats = try await garage.stats()
        #expect(stats["units"]?.stringValue == "mpg_us")
        #expect(stats.decimal("average") == dec("27.08"))  // 650 mi / 24 gal
        #expect(stats["last"]?.decimal("value") == 25)
        #expect(stats["last"]?["fillId"]?.stringValue == "f3")
        #expect(stats["best"]?.decimal("value") == 30)
        #expect(stats["worst"]?.decimal("value") == 25)
        #expect(stats["fills"]?.intValue == 3)
        #expect(stats["closedSegments"]?.intValue == 2)
        let usd = try #require(stats["spending"]?.arrayValue?.first)
        #expect(usd["totalMinor"]?.intValue == 10_200)
        #expect(usd.decimal("averagePricePerUnitMinor") == 300)  // 10,200 / 34 gal
        #expect(usd["costPerDistance"]?.decimal("minor") == dec("11.08"))  // 7,200 / 650 mi
        #expect(usd["costPerDistance"]?["per"]?.stringValue == "mi")
        let economy = try await garage.economy()
        #expect(economy["f1"] == .some(nil))
        #expect(economy["f2"] == 30)
        #expect(economy["f3"] == 25)
    }

    @Test func partialThenFull() async throws {
        let garage = try await Garage(try Harness())
        try await garage.put("f1", day: 0, odometer: 1000, volume: 10)
        try await garage.put("f2", day: 3, odometer: 1200, volume: 5, full: false)
        var stats = try await garage.stats()
        #expect(stats["average"] == nil)
        #expect(
            stats["reason"]?.stringValue
                == "add one more full fill-up to see your average (1 partial fill-up is waiting for it)")
        #expect(stats["waiting"]?["partialFills"]?.intValue == 1)
        try await garage.put("f3", day: 6, odometer: 1500, volume: 8)
        stats = try await garage.stats()
        #expect(stats.decimal("average") == dec("38.46"))  // 500 mi / 13 gal
        #expect(stats["waiting"] == nil)
        let list = try await garage.harness.call("analytics.fuel.economy", ["vehicleId": "v1"])
        let f2 = try #require(list["fills"]?.arrayValue?.first { $0["fillId"] == "f2" })
        #expect(f2["outcome"] == "partial")
        #expect(f2["reason"]?.stringValue?.hasPrefix("partial fill-up") == true)
    }

    @Test func twoPartialsThenFull() async throws {
        let garage = try await Garage(try Harness())
        try await garage.put("f1", day: 0, odometer: 1000, volume: 10)
        try await garage.put("f2", day: 1, odometer: 1100, volume: 3, full: false)
        try await garage.put("f3", day: 2, odometer: 1250, volume: 4, full: false)
        #expect(try await garage.stats()["reason"]?.stringValue?.contains("2 partial fill-ups are waiting") == true)
        try await garage.put("f4", day: 3, odometer: 1400, volume: 5)
        let stats = try await garage.stats()
        #expect(stats.decimal("average") == dec("33.33"))  // 400 / 12
        let economy = try await garage.economy()
        #expect(economy["f2"] == .some(nil) && economy["f3"] == .some(nil))
        #expect(economy["f4"] == dec("33.33"))
    }

    @Test func missedFillUpRestartsTheCount() async throws {
        let garage = try await Garage(try Harness())
        try await garage.put("f1", day: 0, odometer: 1000, volume: 10)
        try await garage.put("f2", day: 7, odometer: 1300, volume: 10)
        try await garage.put("f3", day: 8, odometer: 1400, volume: 4, full: false)  // discarded by the missed fill
        try await garage.put("f4", day: 14, odometer: 1800, volume: 12, missed: true)
        try await garage.put("f5", day: 21, odometer: 2100, volume: 12)
        let stats = try await garage.stats()
        #expect(stats.decimal("average") == dec("27.27"))  // (300 + 300) / (10 + 12)
        #expect(stats["closedSegments"]?.intValue == 2)
        let list = try await garage.harness.call("analytics.fuel.economy", ["vehicleId": "v1"])
        let f4 = try #require(list["fills"]?.arrayValue?.first { $0["fillId"] == "f4" })
        #expect(f4["outcome"] == "missed")
        #expect(f4["economy"] == nil)
        #expect(try await garage.economy()["f5"] == 25)
    }

    @Test func tripOnlyFillUps() async throws {
        let garage = try await Garage(try Harness())
        try await garage.put("f1", day: 0, odometer: 1000, volume: 10)
        try await garage.put("f2", day: 1, trip: 300, volume: 10)  // 30
        try await garage.put("f3", day: 2, odometer: 1650, volume: 14)  // counted reading 1300 → 350 / 14 = 25
        try await garage.put("f4", day: 3, trip: 200, volume: 5, full: false)
        try await garage.put("f5", day: 4, trip: 100, volume: 5)  // 300 / 10 = 30
        let economy = try await garage.economy()
        #expect(economy["f2"] == 30)
        #expect(economy["f3"] == 25)
        #expect(economy["f5"] == 30)
        #expect(try await garage.stats().decimal("average") == dec("27.94"))  // 950 / 34
    }

    @Test func tripOnlyStartThenOdometerOnlyRestarts() async throws {
        let garage = try await Garage(try Harness())
        try await garage.put("f1", day: 0, trip: 250, volume: 10)
        try await garage.put("f2", day: 1, trip: 300, volume: 10)  // 30
        try await garage.put("f3", day: 2, odometer: 5000, volume: 10)  // nothing to measure from
        try await garage.put("f4", day: 3, odometer: 5250, volume: 10)  // 25
        let list = try await garage.harness.call("analytics.fuel.economy", ["vehicleId": "v1"])
        let f3 = try #require(list["fills"]?.arrayValue?.first { $0["fillId"] == "f3" })
        #expect(f3["outcome"] == "distance_unknown")
        #expect(try await garage.stats().decimal("average") == dec("27.5"))
    }

    @Test func fillUpInsertedOutOfDateOrder() async throws {
        let garage = try await Garage(try Harness())
        try await garage.put("f1", day: 0, odometer: 1000, volume: 10)
        try await garage.put("f3", day: 10, odometer: 1600, volume: 20)
        #expect(try await garage.economy()["f3"] == 30)
        // A partial inserted before f3 joins f3's segment.
        try await garage.put("f2", day: 5, odometer: 1300, volume: 8, full: false)
        #expect(try await garage.economy()["f3"] == dec("21.43"))  // 600 / 28
        // Made full, it closes its own segment and splits f3's.
        try await garage.put("f2", day: 5, odometer: 1300, volume: 8, full: true)
        var economy = try await garage.economy()
        #expect(economy["f2"] == dec("37.5"))
        #expect(economy["f3"] == 15)
        // A new first fill-up before everything.
        try await garage.put("f0", day: -5, odometer: 800, volume: 9)
        economy = try await garage.economy()
        #expect(economy["f0"] == .some(nil))
        #expect(economy["f1"] == 20)  // 200 / 10
        // Moved to the end by its date, f2 no longer sits between f1 and f3.
        try await garage.put("f2", day: 20, odometer: 1900, volume: 10)
        economy = try await garage.economy()
        #expect(economy["f3"] == 30)
        #expect(economy["f2"] == 30)
    }

    @Test func fillUpEditedAndDeleted() async throws {
        let garage = try await Garage(try Harness())
        try await garage.put("f1", day: 0, odometer: 1000, volume: 10)
        try await garage.put("f2", day: 1, odometer: 1300, volume: 10)
        try await garage.put("f3", day: 2, odometer: 1600, volume: 12)
        try await garage.put("f4", day: 3, odometer: 1900, volume: 15)
        try await garage.put("f2", day: 1, odometer: 1300, volume: 12, totalMinor: 9999)  // volume and price edited
        #expect(try await garage.economy()["f2"] == 25)
        try await garage.put("f3", day: 2, odometer: 1600, volume: 12, full: false)
        #expect(try await garage.economy()["f4"] == dec("22.22"))  // 600 / 27
        try await garage.delete("f3")
        #expect(try await garage.economy()["f4"] == 40)  // 600 / 15
        try await garage.delete("f1")
        var economy = try await garage.economy()
        #expect(economy["f2"] == .some(nil))  // now the first
        #expect(economy["f4"] == 40)
        try await garage.delete("f4")
        try await garage.delete("f2")
        economy = try await garage.economy()
        #expect(economy.isEmpty)
        let stats = try await garage.stats()
        #expect(stats["fills"]?.intValue == 0)
        #expect(stats["spending"]?.arrayValue == [])
        #expect(stats["reason"]?.stringValue?.hasPrefix("no fill-ups yet") == true)
    }

    @Test func kilometresAndLitres() async throws {
        let garage = try await Garage(try Harness(), distance: "km", volume: "l")
        try await garage.put("f1", day: 0, odometer: 10_000, volume: 35)
        try await garage.put("f2", day: 7, odometer: 10_500, volume: 40, totalMinor: 7200)
        var stats = try await garage.stats()
        #expect(stats["units"]?.stringValue == "l_per_100km")
        #expect(stats.decimal("average") == 8)
        #expect(try await garage.stats("km_per_l").decimal("average") == dec("12.5"))
        #expect(try await garage.stats("mpg_us").decimal("average") == dec("29.4"))
        #expect(try await garage.stats("mpg_uk").decimal("average") == dec("35.31"))
        stats = try await garage.stats()
        let eur = try #require(stats["spending"]?.arrayValue?.first)
        #expect(eur["costPerDistance"]?.decimal("minor") == dec("14.4"))  // 7200 / 500 km
        #expect(eur["costPerDistance"]?["per"] == "km")
        // per mile when asked in MPG: 14.4 × 1.609344
        #expect(
            try await garage.stats("mpg_us")["spending"]?.arrayValue?.first?["costPerDistance"]?.decimal("minor")
                == dec("23.17"))
    }

    @Test func milesAndGallonsConversions() async throws {
        let garage = try await Garage(try Harness())
        try await garage.put("f1", day: 0, odometer: 1000, volume: 10)
        try await garage.put("f2", day: 7, odometer: 1300, volume: 10)
        #expect(try await garage.stats().decimal("average") == 30)
        #expect(try await garage.stats("l_per_100km").decimal("average") == dec("7.84"))
        #expect(try await garage.stats("mpg_uk").decimal("average") == dec("36.03"))
        #expect(try await garage.stats("km_per_l").decimal("average") == dec("12.75"))
    }

    @Test func ukGallonsAndMilesWithLitresDefaultToImperialMPG() async throws {
        let harness = try Harness()
        let uk = try await Garage(harness, vehicleId: "uk", distance: "mi", volume: "ukgal")
        try await uk.put("a", day: 0, odometer: 100, volume: 5)
        try await uk.put("b", day: 1, odometer: 300, volume: 5)
        #expect(try await uk.stats()["units"] == "mpg_uk")
        #expect(try await uk.stats().decimal("average") == 40)
        let litres = try await Garage(harness, vehicleId: "ml", distance: "mi", volume: "l")
        try await litres.put("a", day: 0, odometer: 100, volume: 20)
        try await litres.put("b", day: 1, odometer: 300, volume: 22.73)
        #expect(try await litres.stats()["units"] == "mpg_uk")
        #expect(try await litres.stats().decimal("average") == dec("40"))  // 200 mi / 5.0000 ukgal
    }

    @Test func mixedCurrenciesAreNeverAdded() async throws {
        let garage = try await Garage(try Harness())
        try await garage.put("f1", day: 0, odometer: 1000, volume: 10, totalMinor: 3000)
        try await garage.put("f2", day: 1, odometer: 1300, volume: 10, totalMinor: 3000)
        try await garage.put("f3", day: 2, odometer: 1400, volume: 3, totalMinor: 900, currency: "CAD", full: false)
        try await garage.put("f4", day: 3, odometer: 1600, volume: 7, totalMinor: 2100)
        let spending = try #require(try await garage.stats()["spending"]?.arrayValue)
        #expect(spending.map { $0["currency"]?.stringValue } == ["CAD", "USD"])
        #expect(spending[0]["totalMinor"] == 900)
        #expect(spending[0]["costPerDistance"] == nil)  // its only segment mixed currencies
        #expect(spending[1]["totalMinor"] == 8100)
        #expect(spending[1]["costPerDistance"]?.decimal("minor") == 10)  // 3000 / 300 mi
    }

    @Test func manyRandomChangesMatchTheRecomputation() async throws {
        let garage = try await Garage(try Harness())
        var generator = SplitMix(seed: 7)
        var odometers: [String: Double] = [:]
        for step in 0..<120 {
            let id = "f\(generator.next(below: 25))"
            if odometers[id] != nil && generator.next(below: 5) == 0 {
                try await garage.delete(id)
                odometers[id] = nil
                continue
            }
            // Odometers rise with the date, as records enforces.
            let dayNumber = Double(generator.next(below: 200))
            let odometer = 1000 + dayNumber * 40 + Double(generator.next(below: 30))
            let kind = generator.next(below: 10)
            try await garage.put(
                id, day: dayNumber, odometer: kind == 0 ? nil : odometer, trip: kind <= 1 ? 123.4 : nil,
                volume: Double(5 + generator.next(below: 10)) + 0.125, currency: kind == 9 ? "EUR" : "USD",
                full: generator.next(below: 4) != 0, missed: generator.next(below: 15) == 0)
            odometers[id] = odometer
            _ = step
        }
    }

    /// The worked example of docs/fuel-economy.md.
    @Test func documentedExample() async throws {
        let garage = try await Garage(try Harness())
        try await garage.put("1", day: 0, odometer: 10_000, volume: 10)
        try await garage.put("2", day: 7, odometer: 10_300, volume: 10)
        try await garage.put("3", day: 11, odometer: 10_450, volume: 4, full: false)
        try await garage.put("4", day: 14, odometer: 10_650, volume: 10)
        try await garage.put("5", day: 19, trip: 280.5, volume: 9.35)
        try await garage.put("6", day: 29, odometer: 11_500, volume: 12, missed: true)
        try await garage.put("7", day: 35, odometer: 11_800, volume: 12, full: false)
        var stats = try await garage.stats()
        #expect(stats.decimal("average") == dec("27.9"))
        #expect(try await garage.stats("l_per_100km").decimal("average") == dec("8.43"))
        #expect(stats["last"]?["fillId"] == "5")
        #expect(stats["best"]?.decimal("value") == 30)
        #expect(stats["worst"]?.decimal("value") == 25)
        #expect(stats["waiting"]?["partialFills"] == 1)
        #expect(stats["waiting"]?.decimal("distance") == 300)
        let before = try await garage.harness.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM fill WHERE id IN ('6', '7')").map(\.description)
        }
        try await garage.put("late", day: 9, odometer: 10_380, volume: 3)
        let economy = try await garage.economy()
        #expect(economy["late"] == dec("26.67"))
        #expect(economy["4"] == dec("19.29"))
        stats = try await garage.stats()
        #expect(stats.decimal("average") == dec("25.6"))
        // the walk stopped at #5: the rows after it are as they were
        let after = try await garage.harness.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM fill WHERE id IN ('6', '7')").map(\.description)
        }
        #expect(before == after)
    }

    @Test func foreignAndInvalidArguments() async throws {
        let garage = try await Garage(try Harness())
        try await garage.put("f1", day: 0, odometer: 1000, volume: 10)
        let foreign = try await garage.harness.failure("analytics.fuel.stats", ["vehicleId": "v1"], user: "bob")
        #expect(foreign.code == .notFound)
        #expect(foreign.field == "vehicleId")
        #expect(try await garage.harness.failure("analytics.fuel.economy", ["vehicleId": "nope"]).code == .notFound)
        let units = try await garage.harness.failure("analytics.fuel.stats", ["vehicleId": "v1", "units": "furlongs"])
        #expect(units.code == .invalidArgument)
        #expect(units.field == "units")
        let missing = try await garage.harness.failure("analytics.fuel.stats", [:])
        #expect(missing.code == .invalidArgument)
        #expect(missing.field == "vehicleId")
        let reply = try await garage.harness.transport.reply("analytics.fuel.stats", body: ["vehicleId": "v1"])
        #expect(reply.error?.code == .unauthenticated)
    }

    @Test func deletingAVehicleRemovesItsFillUps() async throws {
        let garage = try await Garage(try Harness())
        try await garage.put("f1", day: 0, odometer: 1000, volume: 10)
        try await garage.put("f2", day: 1, odometer: 1300, volume: 10)
        try await garage.harness.feed("vehicle.deleted", ["id": "v1", "userId": "alice", "fillupsDeleted": 2])
        #expect(try await garage.harness.failure("analytics.fuel.stats", ["vehicleId": "v1"]).code == .notFound)
        let left = try await garage.harness.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM fill") }
        #expect(left == 0)
    }

    /// The economy, cost and price figures worked out in integers (`EconomyUnits.value`,
    /// `Decimal.rounded2`, `Decimal.thousandths`) are the values, and the text, that dividing
    /// Decimals and rounding gave: the code before, kept here as the reference, over random
    /// and edge-case distances, volumes and amounts in every unit.
    @Test func figuresInIntegersAreTheDecimalQuotients() throws {
        let kilometres: [DistanceUnit: Decimal] = [.km: 1, .mi: dec("1.609344")]
        let litres: [VolumeUnit: Decimal] = [.l: 1, .gal: dec("3.785411784"), .ukgal: dec("4.54609")]
        func reference(_ units: EconomyUnits, _ distance: Int64, _ volume: Int64, _ du: DistanceUnit, _ vu: VolumeUnit)
            -> Decimal?
        {
            guard distance > 0, volume > 0 else { return nil }
            let km = Decimal(distance) * kilometres[du]!
            let l = Decimal(volume) * litres[vu]!
            let result: Decimal =
                switch units {
                case .kmPerLitre: km / l
                case .litresPer100km: 100 * l / km
                case .mpgUS: (km / kilometres[.mi]!) / (l / litres[.gal]!)
                case .mpgUK: (km / kilometres[.mi]!) / (l / litres[.ukgal]!)
                }
            return result.rounded(2)
        }
        // the units' integers are the decimals they stand for
        for (unit, value) in kilometres { #expect(Decimal(unit.kilometreMillionths) / 1_000_000 == value) }
        for (unit, value) in litres { #expect(Decimal(unit.litreBillionths) / 1_000_000_000 == value) }

        var random = SplitMix(seed: 31)
        func amount() -> Int64 {
            switch random.next(below: 4) {
            case 0: Int64(random.next(below: 20)) - 2  // zero, negative and tiny
            case 1: Int64(random.next(below: 1_000_000))  // a tank's thousandths
            default: Int64(random.next(below: 2_000_000_000))  // years of driving
            }
        }
        var wrong: [String] = []
        var compared = 0
        for _ in 0..<4_000 {
            let distance = amount(), volume = amount()
            for units in EconomyUnits.allCases {
                for du in [DistanceUnit.km, .mi] {
                    for vu in [VolumeUnit.l, .gal, .ukgal] {
                        let mine = units.value(distance: distance, volume: volume, du, vu)
                        let theirs = reference(units, distance, volume, du, vu)
                        compared += 1
                        if mine != theirs || mine?.description != theirs?.description {
                            let text = "\(String(describing: mine)) vs \(String(describing: theirs))"
                            wrong.append("\(units) \(distance) \(du) / \(volume) \(vu): \(text)")
                        }
                    }
                }
            }
            // a price per unit, a cost per distance (any sign), and thousandths
            let total = amount() - Int64(random.next(below: 2)) * 1_000_000
            if volume > 0 {
                let mine = Decimal.rounded2(Int128(total) * 1000, over: Int128(volume))
                let theirs = (Decimal(total) * 1000 / Decimal(volume)).rounded(2)
                if mine != theirs || mine.description != theirs.description {
                    wrong.append("price \(total)/\(volume): \(mine) vs \(theirs)")
                }
            }
            if distance > 0 {
                let mine = Decimal.rounded2(Int128(total) * 1000 * 1_609_344, over: Int128(distance) * 1_000_000)
                let theirs = (Decimal(total) * 1000 / Decimal(distance) * dec("1.609344")).rounded(2)
                if mine != theirs || mine.description != theirs.description {
                    wrong.append("cost \(total)/\(distance): \(mine) vs \(theirs)")
                }
            }
            let mine = Decimal.thousandths(total), theirs = Decimal(total) / 1000
            if mine != theirs || mine.description != theirs.description {
                wrong.append("thousandths \(total): \(mine) vs \(theirs)")
            }
        }
        #expect(compared == 4_000 * 24)
        #expect(wrong.isEmpty, "\(wrong.count) differ, e.g. \(wrong.prefix(5))")

        // Past what a Decimal quotient holds exactly (its divisions round), the figures are
        // still the exact quotient rounded once, as worked out with exact fractions; no
        // Int64 overflows the integers.
        let most = Int64.max
        #expect(EconomyUnits.mpgUS.value(distance: most, volume: 17, .mi, .l) == dec("2053780070383891213.91"))
        #expect(EconomyUnits.mpgUK.value(distance: most, volume: 17, .mi, .l) == dec("2466487022530889867.56"))
        #expect(EconomyUnits.kmPerLitre.value(distance: most, volume: 1, .km, .ukgal) == dec("2028858213729771255.52"))
        #expect(EconomyUnits.litresPer100km.value(distance: 1, volume: most, .km, .l) == dec("922337203685477580700"))
        #expect(
            EconomyUnits.litresPer100km.value(distance: 3, volume: most, .mi, .gal) == dec("723157203525704689540.08"))
        for units in EconomyUnits.allCases {
            for du in [DistanceUnit.km, .mi] {
                for vu in [VolumeUnit.l, .gal, .ukgal] {
                    for (d, v) in [(most, most), (most, 1), (1, most)] {
                        #expect(units.value(distance: d, volume: v, du, vu) != nil)
                    }
                }
            }
        }
        #expect(
            Decimal.rounded2(Int128(Int64.min) * 1000 * 1_609_344, over: 1) == dec("-14843578447280012317949952000"))
    }
}
