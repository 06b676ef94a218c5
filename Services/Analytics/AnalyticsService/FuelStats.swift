// `analytics.fuel.stats` and `analytics.fuel.economy`: the stored fuel projection read back
// in the units the caller asks for. Sums are exact integers (thousandths, minor units);
// ratios are computed here, at the end, in Decimal, and rounded for display.
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
    func value(distance: Int64, volume: Int64, _ du: DistanceUnit, _ vu: VolumeUnit) -> Decimal? {
        guard distance > 0, volume > 0 else { return nil }
        let km = Decimal(distance) * du.kilometres
        let litres = Decimal(volume) * vu.litres
        let result: Decimal =
            switch self {
            case .kmPerLitre: km / litres
            case .litresPer100km: 100 * litres / km
            case .mpgUS: (km / DistanceUnit.mi.kilometres) / (litres / VolumeUnit.gal.litres)
            case .mpgUK: (km / DistanceUnit.mi.kilometres) / (litres / VolumeUnit.ukgal.litres)
            }
        return result.rounded(2)
    }
}

extension Decimal {
    /// Rounded half away from zero to `places` decimals.
    func rounded(_ places: Int) -> Decimal {
        var value = self
        var result = Decimal()
        NSDecimalRound(&result, &value, places, .plain)
        return result
    }

    /// An exact count of thousandths as a decimal (12345 → 12.345).
    static func thousandths(_ value: Int64) -> Decimal { Decimal(value) / 1000 }
}

// MARK: Queries

struct VehicleRow {
    var id: String
    var distanceUnit: DistanceUnit
    var volumeUnit: VolumeUnit
    var row: Row

    static func find(_ db: Database, userId: String, id: String) throws -> VehicleRow {
        guard
            let row = try Row.fetchOne(
                db, cached: "SELECT * FROM vehicle WHERE userId = ? AND id = ?", arguments: [userId, id])
        else { throw ServiceError(.notFound, "vehicle \(id) not found", field: "vehicleId") }
        return VehicleRow(
            id: id, distanceUnit: DistanceUnit(rawValue: row["distanceUnit"]) ?? .mi,
            volumeUnit: VolumeUnit(rawValue: row["volumeUnit"]) ?? .gal, row: row)
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
        let row = vehicle.row
        let du = vehicle.distanceUnit
        let vu = vehicle.volumeUnit
        func point(_ prefix: String) -> EconomyPoint? {
            guard let id = row[prefix + "FillId"] as String?, let date = row[prefix + "Date"] as Int64?,
                let d = row[prefix + "Distance"] as Int64?, let v = row[prefix + "Volume"] as Int64?,
                let value = units.value(distance: d, volume: v, du, vu)
            else { return nil }
            return EconomyPoint(fillId: id, date: Date(ms: date), value: value)
        }
        let fills: Int = row["fills"]
        let segments: Int = row["closedSegments"]
        let closedDistance: Int64 = row["closedDistance"]
        let closedVolume: Int64 = row["closedVolume"]
        let openFills: Int = row["openFills"]
        let average = segments > 0 ? units.value(distance: closedDistance, volume: closedVolume, du, vu) : nil
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
        let spending = try Row.fetchAll(
            db, cached: "SELECT * FROM fuelSpend WHERE vehicleId = ? ORDER BY currency", arguments: [vehicle.id]
        ).map { spend -> FuelSpending in
            let volume: Int64 = spend["volume"]
            let total: Int64 = spend["totalMinor"]
            let cost: Int64 = spend["closedCostMinor"]
            let distance: Int64 = spend["closedDistance"]
            var costPerDistance: CostPerDistance?
            if distance > 0 {
                // minor per vehicle unit = cost / (distance / 1000); then per mile or km
                let perUnit = Decimal(cost) * 1000 / Decimal(distance)
                let per = units.costDistance
                costPerDistance = CostPerDistance(
                    minor: (perUnit * per.kilometres / du.kilometres).rounded(2), per: per.rawValue)
            }
            return FuelSpending(
                currency: spend["currency"], fills: spend["fills"], totalMinor: total, volume: .thousandths(volume),
                averagePricePerUnitMinor: volume > 0 ? (Decimal(total) * 1000 / Decimal(volume)).rounded(2) : nil,
                costPerDistance: costPerDistance)
        }.filter { $0.fills > 0 }
        return FuelStats(
            vehicleId: vehicle.id, units: units.rawValue, unitLabel: units.label, distanceUnit: du.rawValue,
            volumeUnit: vu.rawValue, fills: fills, closedSegments: segments, average: average, reason: reason,
            last: point("last"), best: point("best"), worst: point("worst"),
            closedDistance: .thousandths(closedDistance), closedVolume: .thousandths(closedVolume),
            waiting: openFills > 0
                ? WaitingFills(
                    partialFills: openFills, distance: .thousandths(row["openDistance"]),
                    volume: .thousandths(row["openVolume"]))
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
