// Fuel logbook, vehicles: `records.vehicle.add|get|update|delete|list`. Deleting a vehicle
// deletes its fill-ups (the schema cascades) and emits one `vehicle.deleted`.
import Foundation
import GRDB
import Runtime
import Storage
import Wire


struct Vehicle: Codable, Sendable, Equatable {
    var id: String
    var nickname: String
    var make: String?
    var model: String?
    var year: Int?
    var distanceUnit: DistanceUnit
    var volumeUnit: VolumeUnit
    var createdAt: Date
    var updatedAt: Date

    init(
        id: String, nickname: String, make: String?, model: String?, year: Int?, distanceUnit: DistanceUnit,
        volumeUnit: VolumeUnit, createdAt: Date, updatedAt: Date
    ) {
        self.id = id
        self.nickname = nickname
        self.make = make
        self.model = model
        self.year = year
        self.distanceUnit = distanceUnit
        self.volumeUnit = volumeUnit
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }

    static func find(_ db: Database, userId: String, id: String) throws -> Vehicle {
        guard let row = try VehicleRow.find(db, userId: userId, id: id) else { throw notFound("vehicle", id) }
        return row.vehicle
    }
}

struct VehicleAdd: Decodable, Sendable {
    var nickname: String
    var make: String?
    var model: String?
    var year: Int?
    var distanceUnit: DistanceUnit?
    var volumeUnit: VolumeUnit?
}

struct VehicleUpdate: Decodable, Sendable {
    var id: String
    var nickname: String?
    var make: Patch<String>
    var model: Patch<String>
    var year: Patch<Int>
    var distanceUnit: DistanceUnit?
    var volumeUnit: VolumeUnit?
}

struct ListBody: Decodable, Sendable {
    var cursor: String?
    var limit: Int?
}

struct VehicleDeleted: Codable, Sendable {
    var id: String
    var userId: String
    var fillupsDeleted: Int
}

extension Records {
    func registerVehicles(_ router: inout Router) {
        router.write("records.vehicle.add") { (body: VehicleAdd, context, db) in
            let at = now()
            var vehicle = Vehicle(
                id: ID.make(at: at), nickname: "", make: nil, model: nil, year: nil,
                distanceUnit: body.distanceUnit ?? .mi, volumeUnit: body.volumeUnit ?? .gal, createdAt: at, updatedAt: at)
            vehicle.nickname = try requiredText(body.nickname, "nickname", max: 60)
            vehicle.make = try optionalText(body.make, "make", max: 60)
            vehicle.model = try optionalText(body.model, "model", max: 60)
            vehicle.year = try checkedYear(body.year, now: at)
            try VehicleRow(vehicle, userId: context.userId).insert(db)
            try Outbox.append(db, type: "vehicle.created", userId: context.userId, data: vehicle, at: at)
            return vehicle
        }

        router.read("records.vehicle.get") { (body: IdBody, context) in
            try await database.read { db in try Vehicle.find(db, userId: context.userId, id: body.id) }
        }

        router.write("records.vehicle.update") { (body: VehicleUpdate, context, db) in
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
            try Outbox.append(db, type: "vehicle.updated", userId: context.userId, data: vehicle, at: at)
            return vehicle
        }

        router.write("records.vehicle.delete") { (body: IdBody, context, db) in
            let vehicle = try Vehicle.find(db, userId: context.userId, id: body.id)
            let fillups = try FillupRow.owned(by: context.userId).filter(FillupRow.Columns.vehicleId == vehicle.id)
                .fetchCount(db)
            try VehicleRow.delete(db, userId: context.userId, id: vehicle.id)
            try Outbox.append(
                db, type: "vehicle.deleted", userId: context.userId,
                data: VehicleDeleted(id: vehicle.id, userId: context.userId, fillupsDeleted: fillups), at: now())
            return Deleted()
        }

        router.read("records.vehicle.list") { (body: ListBody, context) in
            let limit = try Pagination.limit(body.limit)
            let cursor = try Cursor.decode(body.cursor, sort: "created")
            return try await database.read { db in
                try Pagination.page(
                    db,
                    sql: """
                        SELECT * FROM vehicle WHERE userId = ? AND (createdAt, id) < (?, ?)
                        ORDER BY createdAt DESC, id DESC LIMIT ?
                        """,
                    arguments: [context.userId, cursor?.n ?? Int64.max, cursor?.id ?? ""], limit: limit, sort: "created",
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
