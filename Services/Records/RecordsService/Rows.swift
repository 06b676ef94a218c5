// The records tables as GRDB records: one type per table, its stored properties the table's
// columns (Schema.swift), read and written through `Codable` instead of `init(row:)` and
// positional argument lists. Instants are stored as INTEGER milliseconds (`Date.ms`) and
// quantities as INTEGER thousandths (`Milli` is DatabaseValueConvertible, Shared/Storage);
// neither passes through a floating point on its way in or out. Each row converts to and
// from the wire type its methods answer with; queries stay scoped by `userId`.
import Contracts
import Foundation
import GRDB
import Storage
import Wire

/// A table whose rows belong to one user (`userId`) and are named by `id`.
protocol OwnedRow: FetchableRecord, TableRecord {}

extension OwnedRow {
    /// The caller's rows only.
    static func owned(by userId: String) -> QueryInterfaceRequest<Self> { filter(Column("userId") == userId) }

    /// The caller's row `id`, or nil (someone else's row is as absent as a missing one).
    static func find(_ db: Database, userId: String, id: String) throws -> Self? {
        try owned(by: userId).filter(Column("id") == id).fetchOne(db)
    }

    /// Deletes the caller's row `id` (the schema cascades what hangs off it).
    static func delete(_ db: Database, userId: String, id: String) throws {
        try owned(by: userId).filter(Column("id") == id).deleteAll(db)
    }
}

/// A row of `vehicle`.
struct VehicleRow: Codable, OwnedRow, PersistableRecord {
    static let databaseTableName = "vehicle"

    var id: String
    var userId: String
    var nickname: String
    var make: String?
    var model: String?
    var year: Int?
    var distanceUnit: String
    var volumeUnit: String
    var createdAt: Int64
    var updatedAt: Int64

    enum Columns {
        static let id = Column(CodingKeys.id)
        static let userId = Column(CodingKeys.userId)
        static let createdAt = Column(CodingKeys.createdAt)
    }

    init(_ vehicle: Vehicle, userId: String) {
        id = vehicle.id
        self.userId = userId
        nickname = vehicle.nickname
        make = vehicle.make
        model = vehicle.model
        year = vehicle.year
        distanceUnit = vehicle.distanceUnit.rawValue
        volumeUnit = vehicle.volumeUnit.rawValue
        createdAt = vehicle.createdAt.ms
        updatedAt = vehicle.updatedAt.ms
    }

    var vehicle: Vehicle {
        Vehicle(
            id: id, nickname: nickname, make: make, model: model, year: year,
            distanceUnit: DistanceUnit(rawValue: distanceUnit) ?? .mi, volumeUnit: VolumeUnit(rawValue: volumeUnit) ?? .gal,
            createdAt: Date(ms: createdAt), updatedAt: Date(ms: updatedAt))
    }
}

/// A row of `fillup`. The wire's `pricePerUnitMinor` (thousandths of a minor unit) is the
/// column `pricePerUnitMilliMinor` (renamed by records.v3.price-thousandths).
struct FillupRow: Codable, OwnedRow, PersistableRecord {
    static let databaseTableName = "fillup"

    var id: String
    var userId: String
    var vehicleId: String
    var date: Int64
    var odometer: Milli?
    var trip: Milli?
    var volume: Milli
    var pricePerUnitMilliMinor: Milli
    var totalMinor: Int64
    var derived: String
    var currency: String
    var full: Bool
    var missed: Bool
    var note: String?
    var createdAt: Int64
    var updatedAt: Int64

    enum Columns {
        static let id = Column(CodingKeys.id)
        static let userId = Column(CodingKeys.userId)
        static let vehicleId = Column(CodingKeys.vehicleId)
    }

    init(_ fillup: Fillup, userId: String) {
        id = fillup.id
        self.userId = userId
        vehicleId = fillup.vehicleId
        date = fillup.date.ms
        odometer = fillup.odometer
        trip = fillup.trip
        volume = fillup.volume
        pricePerUnitMilliMinor = fillup.pricePerUnitMinor
        totalMinor = fillup.totalMinor
        derived = fillup.derived.rawValue
        currency = fillup.currency
        full = fillup.full
        missed = fillup.missed
        note = fillup.note
        createdAt = fillup.createdAt.ms
        updatedAt = fillup.updatedAt.ms
    }

    var fillup: Fillup {
        var fillup = Fillup(id: id, vehicleId: vehicleId, at: Date(ms: createdAt))
        fillup.date = Date(ms: date)
        fillup.odometer = odometer
        fillup.trip = trip
        fillup.volume = volume
        fillup.pricePerUnitMinor = pricePerUnitMilliMinor
        fillup.totalMinor = totalMinor
        fillup.derived = PriceDerived(rawValue: derived) ?? .none
        fillup.currency = currency
        fillup.full = full
        fillup.missed = missed
        fillup.note = note
        fillup.updatedAt = Date(ms: updatedAt)
        return fillup
    }
}

/// A row of `expense`.
struct ExpenseRow: Codable, OwnedRow, PersistableRecord {
    static let databaseTableName = "expense"

    var id: String
    var userId: String
    var name: String
    var description: String?
    var amountMinor: Int64
    var currency: String
    var date: Int64
    var category: String?
    var createdAt: Int64
    var updatedAt: Int64

    enum Columns {
        static let id = Column(CodingKeys.id)
    }

    init(_ expense: Expense, userId: String) {
        id = expense.id
        self.userId = userId
        name = expense.name
        description = expense.description
        amountMinor = expense.amountMinor
        currency = expense.currency
        date = expense.date.ms
        category = expense.category
        createdAt = expense.createdAt.ms
        updatedAt = expense.updatedAt.ms
    }

    var expense: Expense {
        var expense = Expense(id: id, at: Date(ms: createdAt))
        expense.name = name
        expense.description = description
        expense.amountMinor = amountMinor
        expense.currency = currency
        expense.date = Date(ms: date)
        expense.category = category
        expense.updatedAt = Date(ms: updatedAt)
        return expense
    }
}

/// A row of `attendance`. Coordinates and accuracy are REAL columns, as on the wire.
struct AttendanceRow: Codable, OwnedRow, PersistableRecord {
    static let databaseTableName = "attendance"

    var id: String
    var userId: String
    var kind: String
    var at: Int64
    var latitude: Double?
    var longitude: Double?
    var accuracy: Double?
    var source: String
    var note: String?
    var correction: Bool
    var createdAt: Int64

    enum Columns {
        static let id = Column(CodingKeys.id)
        static let kind = Column(CodingKeys.kind)
        static let at = Column(CodingKeys.at)
    }

    init(_ entry: AttendanceEntry, userId: String) {
        id = entry.id
        self.userId = userId
        kind = entry.kind.rawValue
        at = entry.at.ms
        latitude = entry.latitude
        longitude = entry.longitude
        accuracy = entry.accuracy
        source = entry.source.rawValue
        note = entry.note
        correction = entry.correction
        createdAt = entry.createdAt.ms
    }

    var entry: AttendanceEntry {
        var entry = AttendanceEntry(
            id: id, kind: AttendanceKind(rawValue: kind) ?? .arrival, at: Date(ms: at),
            source: AttendanceSource(rawValue: source) ?? .cli, createdAt: Date(ms: createdAt))
        entry.latitude = latitude
        entry.longitude = longitude
        entry.accuracy = accuracy
        entry.note = note
        entry.correction = correction
        return entry
    }
}

/// A row of `fishCatch`: the catch's fields (`Catch`, Shared/Contracts/Catches.swift) with
/// the conditions spread over three columns and the photo by its hash. `weightMg` is the
/// weight in milligrams whatever its unit (what lists sort by); the conditions' summary is
/// stored as JSON text. A catch is read from `catchView`, which adds its photo's columns
/// (`CatchPhotoColumns`).
struct CatchRow: Codable, OwnedRow, PersistableRecord {
    static let databaseTableName = "fishCatch"

    var id: String
    var userId: String
    var species: String
    var weight: Milli
    var weightUnit: WeightUnit
    var weightMg: Int64
    var length: Milli?
    var lengthUnit: LengthUnit?
    var bait: String
    var water: Water
    var latitude: Double
    var longitude: Double
    var caughtAt: Int64
    var note: String?
    var released: Bool
    var photoHash: String?
    var conditionsStatus: ConditionsStatus
    var conditionsReason: String?
    var conditionsSummary: String?
    var createdAt: Int64
    var updatedAt: Int64

    init(_ fish: Catch, userId: String) {
        id = fish.id
        self.userId = userId
        species = fish.species
        weight = fish.weight
        weightUnit = fish.weightUnit
        weightMg = fish.weightMg
        length = fish.length
        lengthUnit = fish.lengthUnit
        bait = fish.bait
        water = fish.water
        latitude = fish.latitude
        longitude = fish.longitude
        caughtAt = fish.caughtAt.ms
        note = fish.note
        released = fish.released
        photoHash = fish.photo?.hash
        conditionsStatus = fish.conditions.status
        conditionsReason = fish.conditions.reason
        conditionsSummary = fish.conditions.summary.map { JSONValue.string($0).jsonText }
        createdAt = fish.createdAt.ms
        updatedAt = fish.updatedAt.ms
    }

    func fish(photo: Photo?) -> Catch {
        // the summary is JSON text: a string (anything else is shown as its JSON)
        let summary = conditionsSummary.flatMap { try? JSONValue.parse($0) }.map { $0.stringValue ?? $0.jsonText }
        return Catch(
            id: id, species: species, weight: weight, weightUnit: weightUnit, length: length, lengthUnit: lengthUnit,
            bait: bait, water: water, latitude: latitude, longitude: longitude, caughtAt: Date(ms: caughtAt), note: note,
            released: released, photo: photo,
            conditions: CatchConditions(status: conditionsStatus, reason: conditionsReason, summary: summary),
            createdAt: Date(ms: createdAt), updatedAt: Date(ms: updatedAt))
    }

    /// A catch from a row of `catchView` (a projection: keep reading it with SQL).
    static func fish(_ row: Row) throws -> Catch {
        let stored = try CatchRow(row: row)
        let photo = try CatchPhotoColumns(row: row)
        return stored.fish(photo: stored.photoHash.flatMap(photo.photo(hash:)))
    }
}

// A catch's enums are stored as their wire names (TEXT columns).
extension WeightUnit: DatabaseValueConvertible {}
extension LengthUnit: DatabaseValueConvertible {}
extension Water: DatabaseValueConvertible {}
extension ConditionsStatus: DatabaseValueConvertible {}

/// The photo columns `catchView` adds to a catch (all NULL without a photo).
struct CatchPhotoColumns: Decodable, FetchableRecord {
    var photoContentType: String?
    var photoBytes: Int?
    var photoWidth: Int?
    var photoHeight: Int?
    var photoThumbHash: String?
    var photoThumbWidth: Int?
    var photoThumbHeight: Int?

    func photo(hash: String) -> Photo? {
        guard let photoContentType, let photoBytes, let photoWidth, let photoHeight, let photoThumbHash,
            let photoThumbWidth, let photoThumbHeight
        else { return nil }
        return Photo(
            hash: hash, contentType: photoContentType, bytes: photoBytes, width: photoWidth, height: photoHeight,
            thumbnail: PhotoThumbnail(hash: photoThumbHash, width: photoThumbWidth, height: photoThumbHeight))
    }
}

/// A row of `activity`. A deleted activity keeps its row, with `deletedAt` set.
struct ActivityRow: Codable, OwnedRow, PersistableRecord {
    static let databaseTableName = "activity"

    var id: String
    var userId: String
    var name: String
    var createdAt: Int64
    var deletedAt: Int64?

    enum Columns {
        static let id = Column(CodingKeys.id)
        static let deletedAt = Column(CodingKeys.deletedAt)
    }

    /// The caller's activities not deleted.
    static func active(of userId: String) -> QueryInterfaceRequest<Self> {
        owned(by: userId).filter(Columns.deletedAt == nil)
    }
}

/// A row of `timeEntry`: time saved to an activity.
struct TimeEntryRow: Codable, OwnedRow, PersistableRecord {
    static let databaseTableName = "timeEntry"

    var id: String
    var userId: String
    var activityId: String
    var durationMs: Int64
    var startedAt: Int64
    var savedAt: Int64

    enum Columns {
        static let activityId = Column(CodingKeys.activityId)
        static let durationMs = Column(CodingKeys.durationMs)
    }

    init(_ entry: TimeEntry, userId: String) {
        id = entry.id
        self.userId = userId
        activityId = entry.activityId
        durationMs = entry.durationMs
        startedAt = entry.startedAt.ms
        savedAt = entry.savedAt.ms
    }

    var entry: TimeEntry {
        TimeEntry(
            id: id, activityId: activityId, durationMs: durationMs, startedAt: Date(ms: startedAt),
            savedAt: Date(ms: savedAt))
    }

    /// The caller's saved milliseconds (all, or one activity's): `SUM` over the rows.
    static func totalMs(_ db: Database, userId: String, activityId: String? = nil) throws -> Int64 {
        var request = owned(by: userId)
        if let activityId { request = request.filter(Columns.activityId == activityId) }
        return try request.select(sum(Columns.durationMs) ?? 0, as: Int64.self).fetchOne(db) ?? 0
    }
}

/// A row of `timer` (no row: idle). Written by an upsert in `TimerState.store`, which keeps
/// `startedAt` from the first start.
struct TimerRow: Codable, FetchableRecord, TableRecord {
    static let databaseTableName = "timer"

    var activityId: String
    var userId: String
    var state: String
    var accumulatedMs: Int64
    var runningSince: Int64?
    var startedAt: Int64
    var updatedAt: Int64

    enum Columns {
        static let activityId = Column(CodingKeys.activityId)
        static let userId = Column(CodingKeys.userId)
    }

    static func find(_ db: Database, userId: String, activityId: String) throws -> TimerRow? {
        try filter(Columns.userId == userId && Columns.activityId == activityId).fetchOne(db)
    }
}
