// Fuel logbook, vehicles: `records.vehicle.add|get|update|delete|list`. Deleting a vehicle
// deletes its fill-ups (the schema cascades) and emits one `vehicle.deleted`.
import Contracts
import Foundation
import GRDB
import Runtime
import Storage
import Wire

extension Vehicle {
    static func find(_ db: Database, userId: String, id: String) throws -> Vehicle {
        guard let row = try VehicleRow.find(db, userId: userId, id: id) else { throw notFound("vehicle", id) }
        return row.vehicle
    }
}

extension Records {
    func registerVehicles(_ router: inout Router) {
        router.write(FuelMethods.vehicleAdd) { body, context, db in
            let at = now()
            var vehicle = Vehicle(id: ID.make(at: at), adding: body, at: at)
            vehicle.nickname = try requiredText(body.nickname, "nickname", max: 60)
            vehicle.make = try optionalText(body.make, "make", max: 60)
            vehicle.model = try optionalText(body.model, "model", max: 60)
            vehicle.year = try checkedYear(body.year, now: at)
            try VehicleRow(vehicle, userId: context.userId).insertRow(db)
            try Outbox.append(db, type: FuelEvents.vehicleCreated, userId: context.userId, data: vehicle, at: at)
            return vehicle
        }

        router.read(FuelMethods.vehicleGet) { body, context in
            try await database.read { db in try Vehicle.find(db, userId: context.userId, id: body.id) }
        }

        router.write(FuelMethods.vehicleUpdate) { body, context, db in
            let at = now()
            var vehicle = try Vehicle.find(db, userId: context.userId, id: body.id)
            if let nickname = body.nickname { vehicle.nickname = try requiredText(nickname, "nickname", max: 60) }
            vehicle.make = try optionalText(body.make.applied(to: vehicle.make), "make", max: 60)
            vehicle.model = try optionalText(body.model.applied(to: vehicle.model), "model", max: 60)
            vehicle.year = try checkedYear(body.year.applied(to: vehicle.year), now: at)
            if let unit = body.distanceUnit { vehicle.distanceUnit = unit }
            if let unit = body.volumeUnit { vehicle.volumeUnit = unit }
            vehicle.updatedAt = at
            try VehicleRow(vehicle, userId: context.userId).update(db)
            try Outbox.append(db, type: FuelEvents.vehicleUpdated, userId: context.userId, data: vehicle, at: at)
            return vehicle
        }

        router.write(FuelMethods.vehicleDelete) { body, context, db in
            let vehicle = try Vehicle.find(db, userId: context.userId, id: body.id)
            let fillups = try FillupRow.owned(by: context.userId).filter(FillupRow.Columns.vehicleId == vehicle.id)
                .fetchCount(db)
            try VehicleRow.delete(db, userId: context.userId, id: vehicle.id)
            try Outbox.append(
                db, type: FuelEvents.vehicleDeleted, userId: context.userId,
                data: VehicleDeleted(id: vehicle.id, userId: context.userId, fillupsDeleted: fillups), at: now())
            return Deleted()
        }

        router.read(FuelMethods.vehicleList) { body, context in
            let limit = try Pagination.limit(body.limit)
            let list = ListKey(FuelMethods.vehicleList.name, sort: "created")
            let cursor = try Cursor.decode(body.cursor, for: list)
            return try await database.read { db in
                try Pagination.page(
                    db,
                    sql: """
                        SELECT * FROM vehicle WHERE userId = ? AND (createdAt, id) < (?, ?)
                        ORDER BY createdAt DESC, id DESC LIMIT ?
                        """,
                    arguments: [context.userId, cursor?.n ?? Int64.max, cursor?.id ?? ""], limit: limit, list: list,
                    key: { (v: Vehicle) in (v.createdAt.ms, nil, v.id) }, row: { try VehicleRow(row: $0).vehicle })
            }
        }
    }

    /// A model year: 1886 (the first car) to next year.
    func checkedYear(_ year: Int?, now: Date) throws -> Int? {
        guard let year else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = .gmt
        let next = calendar.component(.year, from: now) + 1
        try require((1886...next).contains(year), "year", "must be between 1886 and \(next)", got: "\(year)")
        return year
    }
}
