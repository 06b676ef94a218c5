// `analytics.fuel.stats` and `analytics.fuel.economy`: the stored fuel projection read back
// in the units the caller asks for. Sums are exact integers (thousandths, minor units);
// ratios are computed here, at the end, exactly in integers (the units' factors are exact
// decimals), and rounded to 2 decimals for display.
import Contracts
import Foundation
import GRDB
import Runtime
import Wire

enum EconomyUnits: String, Sendable, Codable, CaseIterable {
    case mpgUS = "mpg_us"
    case mpgUK = "mpg_uk"
    case litresPer100km = "l_per_100km"
    case kmPerLitre = "km_per_l"

    /// What a vehicle shows unless asked otherwise: litres with kilometres → L/100 km;
    /// litres with miles (the UK pump and odometer) and imperial gallons → MPG (UK); US
    /// gallons → MPG (US).
    static func defaults(_ distance: DistanceUnit, _ volume: VolumeUnit) -> EconomyUnits {
        switch (distance, volume) {
        case (.km, .l): .litresPer100km
        case (.mi, .l), (_, .ukgal): .mpgUK
        case (_, .gal): .mpgUS
        }
    }

    var label: String {
        switch self {
        case .mpgUS: "mpg (US)"
        case .mpgUK: "mpg (UK)"
        case .litresPer100km: "L/100 km"
        case .kmPerLitre: "km/L"
        }
    }

    /// Distance unit for cost per distance: miles for MPG, kilometres otherwise.
    var costDistance: DistanceUnit { self == .mpgUS || self == .mpgUK ? .mi : .km }

    /// Economy of `distance` over `volume` (any common scale), rounded to 2 decimals.
    ///
    /// With K the unit's millionths of a kilometre and L its billionths of a litre, the
    /// distance is d·K/10⁶ km and the volume v·L/10⁹ L, so each economy is one quotient of
    /// integers, rounded once (Foundation's Decimal division, three of them per value, was
    /// over half of a `fuel.stats`: docs/performance.md, "Economy in integers"). No product
    /// overflows 128 bits for any Int64 distance and volume (the largest, 200·d·K·3785411784
    /// for miles per US gallon, is below 2^124).
    func value(distance: Int64, volume: Int64, _ du: DistanceUnit, _ vu: VolumeUnit) -> Decimal? {
        guard distance > 0, volume > 0 else { return nil }
        let d = Int128(distance) * Int128(du.kilometreMillionths)
        let v = Int128(volume) * Int128(vu.litreBillionths)
        let mile = Int128(DistanceUnit.mi.kilometreMillionths)
        return switch self {
        case .kmPerLitre: Decimal.rounded2(d * 1000, over: v)
        case .litresPer100km: Decimal.rounded2(v, over: d * 10)
        case .mpgUS: Decimal.rounded2(d * Int128(VolumeUnit.gal.litreBillionths), over: mile * v)
        case .mpgUK: Decimal.rounded2(d * Int128(VolumeUnit.ukgal.litreBillionths), over: mile * v)
        }
    }
}

extension Decimal {
    /// n / d rounded half away from zero to 2 decimals (what dividing Decimals and
    /// `rounded(2)` give), worked out in integers; d is not 0, and 200·|n| + |d| must fit in
    /// 128 bits.
    static func rounded2(_ n: Int128, over d: Int128) -> Decimal {
        // ⌊100·|n|/|d| + ½⌋, the sign put back after
        let hundredths = (n.magnitude * 200 + d.magnitude) / (d.magnitude * 2)
        return exact(hundredths, negative: (n < 0) != (d < 0), exponent: -2)
    }

    /// ±magnitude·10^exponent, made without a division.
    static func exact(_ magnitude: UInt128, negative: Bool, exponent: Int) -> Decimal {
        guard magnitude != 0 else { return 0 }
        let significand =
            magnitude <= UInt64.max ? Decimal(UInt64(magnitude)) : Decimal(string: String(magnitude))!
        return Decimal(sign: negative ? .minus : .plus, exponent: exponent, significand: significand)
    }

    /// Rounded half away from zero to `places` decimals.
    func rounded(_ places: Int) -> Decimal {
        var value = self
        var result = Decimal()
        NSDecimalRound(&result, &value, places, .plain)
        return result
    }

    /// An exact count of thousandths as a decimal (12345 → 12.345).
    static func thousandths(_ value: Int64) -> Decimal {
        exact(UInt128(value.magnitude), negative: value < 0, exponent: -3)
    }
}

// MARK: Queries

/// A vehicle's stored aggregates (`vehicle`), read by column position: GRDB's lookup of a
/// column by name lowercased the names for every one of the twenty-odd read, which was a
/// third of a `fuel.stats` (docs/performance.md, "Economy in integers").
struct VehicleRow {
    /// A fill-up the aggregates point at (the last, best or worst economy).
    struct Point {
        var fillId: String
        var date: Int64
        var distance: Int64
        var volume: Int64
    }

    var id: String
    var distanceUnit: DistanceUnit
    var volumeUnit: VolumeUnit
    var fills: Int
    var closedSegments: Int
    var closedDistance: Int64
    var closedVolume: Int64
    var openFills: Int
    var openDistance: Int64
    var openVolume: Int64
    var last: Point?
    var best: Point?
    var worst: Point?

    static func find(_ db: Database, userId: String, id: String) throws -> VehicleRow {
        let select = try Bound(
            db,
            """
            SELECT distanceUnit, volumeUnit, fills, closedSegments, closedDistance, closedVolume, openFills, openDistance,
                openVolume, lastFillId, lastDate, lastDistance, lastVolume, bestFillId, bestDate, bestDistance, bestVolume,
                worstFillId, worstDate, worstDistance, worstVolume
            FROM vehicle WHERE userId = ? AND id = ?
            """)
        select.bind(1, userId)
        select.bind(2, id)
        let found = try select.first { row in
            /// The four columns from `at` on, when none is NULL.
            func point(_ at: Int32) -> Point? {
                guard (at..<(at + 4)).allSatisfy({ !row.isNull($0) }) else { return nil }
                return Point(
                    fillId: row.string(at), date: row.int64(at + 1), distance: row.int64(at + 2),
                    volume: row.int64(at + 3))
            }
            return VehicleRow(
                id: id, distanceUnit: DistanceUnit(rawValue: row.string(0)) ?? .mi,
                volumeUnit: VolumeUnit(rawValue: row.string(1)) ?? .gal, fills: row.int(2), closedSegments: row.int(3),
                closedDistance: row.int64(4), closedVolume: row.int64(5), openFills: row.int(6),
                openDistance: row.int64(7), openVolume: row.int64(8), last: point(9), best: point(13), worst: point(17))
        }
        guard let found else { throw ServiceError(.notFound, "vehicle \(id) not found", field: "vehicleId") }
        return found
    }

    func units(_ requested: String?) throws -> EconomyUnits {
        guard let requested else { return .defaults(distanceUnit, volumeUnit) }
        guard let units = EconomyUnits(rawValue: requested) else {
            throw ServiceError.invalid(
                "units",
                "must be one of \(EconomyUnits.allCases.map(\.rawValue).joined(separator: ", ")) (got \"\(requested)\")"
            )
        }
        return units
    }
}

enum FuelQueries {
    static func stats(_ db: Database, userId: String, body: FuelStatsRequest) throws -> FuelStats {
        let vehicle = try VehicleRow.find(db, userId: userId, id: body.vehicleId)
        let units = try vehicle.units(body.units)
        let du = vehicle.distanceUnit
        let vu = vehicle.volumeUnit
        func point(_ stored: VehicleRow.Point?) -> EconomyPoint? {
            guard let stored, let value = units.value(distance: stored.distance, volume: stored.volume, du, vu) else {
                return nil
            }
            return EconomyPoint(fillId: stored.fillId, date: Date(ms: stored.date), value: value)
        }
        let fills = vehicle.fills
        let segments = vehicle.closedSegments
        let openFills = vehicle.openFills
        let average =
            segments > 0 ? units.value(distance: vehicle.closedDistance, volume: vehicle.closedVolume, du, vu) : nil
        var reason: String?
        if average == nil {
            switch fills {
            case 0: reason = "no fill-ups yet: add two full fill-ups to see your average"
            default:
                reason = "add one more full fill-up to see your average"
                if openFills > 0 {
                    reason! += " (\(openFills) partial fill-up\(openFills == 1 ? " is" : "s are") waiting for it)"
                }
            }
        }
        var spending: [FuelSpending] = []
        let spends = try Bound(
            db,
            """
            SELECT currency, fills, totalMinor, volume, closedCostMinor, closedDistance
            FROM fuelSpend WHERE vehicleId = ? ORDER BY currency
            """)
        spends.bind(1, vehicle.id)
        try spends.each { spend in
            let fills = spend.int(1)
            guard fills > 0 else { return }
            let total = spend.int64(2)
            let volume = spend.int64(3)
            let cost = spend.int64(4)
            let distance = spend.int64(5)
            var costPerDistance: CostPerDistance?
            if distance > 0 {
                // minor per vehicle unit = cost / (distance / 1000); then per mile or km
                let per = units.costDistance
                costPerDistance = CostPerDistance(
                    minor: Decimal.rounded2(
                        Int128(cost) * 1000 * Int128(per.kilometreMillionths),
                        over: Int128(distance) * Int128(du.kilometreMillionths)),
                    per: per.rawValue)
            }
            spending.append(
                FuelSpending(
                    currency: spend.string(0), fills: fills, totalMinor: total, volume: .thousandths(volume),
                    averagePricePerUnitMinor: volume > 0
                        ? Decimal.rounded2(Int128(total) * 1000, over: Int128(volume)) : nil,
                    costPerDistance: costPerDistance))
        }
        return FuelStats(
            vehicleId: vehicle.id, units: units.rawValue, unitLabel: units.label, distanceUnit: du.rawValue,
            volumeUnit: vu.rawValue, fills: fills, closedSegments: segments, average: average, reason: reason,
            last: point(vehicle.last), best: point(vehicle.best), worst: point(vehicle.worst),
            closedDistance: .thousandths(vehicle.closedDistance), closedVolume: .thousandths(vehicle.closedVolume),
            waiting: openFills > 0
                ? WaitingFills(
                    partialFills: openFills, distance: .thousandths(vehicle.openDistance),
                    volume: .thousandths(vehicle.openVolume))
                : nil,
            spending: spending)
    }

    static func economy(_ db: Database, userId: String, body: FuelStatsRequest) throws -> FuelEconomyList {
        let vehicle = try VehicleRow.find(db, userId: userId, id: body.vehicleId)
        let units = try vehicle.units(body.units)
        let rows = try Row.fetchAll(
            db,
            cached: StoredFill.select + " FROM fill WHERE vehicleId = ? ORDER BY date DESC, odoKey DESC, id DESC",
            arguments: [vehicle.id])
        let fills = rows.map(StoredFill.init(row:)).map { stored -> FillEconomy in
            let result = stored.result ?? FuelResult(outcome: .partial)
            return FillEconomy(
                fillId: stored.fill.id, date: Date(ms: stored.fill.date), full: stored.fill.full,
                missed: stored.fill.missed,
                outcome: result.outcome,
                economy: result.distance.flatMap { d in
                    result.volume.flatMap {
                        units.value(distance: d, volume: $0, vehicle.distanceUnit, vehicle.volumeUnit)
                    }
                },
                reason: result.outcome.reason, distance: result.distance.map(Decimal.thousandths),
                volume: result.volume.map(Decimal.thousandths))
        }
        return FuelEconomyList(vehicleId: vehicle.id, units: units.rawValue, unitLabel: units.label, fills: fills)
    }
}

// MARK: Snapshot (what tests compare with a recomputation from scratch)

/// Everything the fuel projection stores for one vehicle, in a comparable form.
struct FuelSnapshot: Sendable, Equatable {
    struct Spend: Sendable, Equatable {
        var fills = 0
        var totalMinor: Int64 = 0
        var volume: Int64 = 0
        var closedCostMinor: Int64 = 0
        var closedDistance: Int64 = 0
    }

    var results: [String: FuelResult] = [:]
    var fills = 0
    var closedSegments = 0
    var closedDistance: Int64 = 0
    var closedVolume: Int64 = 0
    var openFills = 0
    var openDistance: Int64 = 0
    var openVolume: Int64 = 0
    var lastFillId: String?
    var bestRatio: Double?
    var worstRatio: Double?
    var spend: [String: Spend] = [:]

    static func stored(_ db: Database, vehicleId: String) throws -> FuelSnapshot {
        var snapshot = FuelSnapshot()
        for row in try Row.fetchAll(
            db, cached: StoredFill.select + " FROM fill WHERE vehicleId = ?", arguments: [vehicleId])
        {
            let stored = StoredFill(row: row)
            snapshot.results[stored.fill.id] = stored.result
        }
        guard let vehicle = try Row.fetchOne(db, cached: "SELECT * FROM vehicle WHERE id = ?", arguments: [vehicleId])
        else {
            return snapshot
        }
        snapshot.fills = vehicle["fills"]
        snapshot.closedSegments = vehicle["closedSegments"]
        snapshot.closedDistance = vehicle["closedDistance"]
        snapshot.closedVolume = vehicle["closedVolume"]
        snapshot.openFills = vehicle["openFills"]
        snapshot.openDistance = vehicle["openDistance"]
        snapshot.openVolume = vehicle["openVolume"]
        snapshot.lastFillId = vehicle["lastFillId"]
        func ratio(_ prefix: String) -> Double? {
            guard let d = vehicle[prefix + "Distance"] as Int64?, let v = vehicle[prefix + "Volume"] as Int64? else {
                return nil
            }
            return Double(d) / Double(v)
        }
        snapshot.bestRatio = ratio("best")
        snapshot.worstRatio = ratio("worst")
        for row in try Row.fetchAll(db, cached: "SELECT * FROM fuelSpend WHERE vehicleId = ?", arguments: [vehicleId]) {
            snapshot.spend[row["currency"]] = Spend(
                fills: row["fills"], totalMinor: row["totalMinor"], volume: row["volume"],
                closedCostMinor: row["closedCostMinor"], closedDistance: row["closedDistance"])
        }
        return snapshot
    }
}
