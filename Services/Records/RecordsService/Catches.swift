// Catches logbook: `records.catch.add|get|update|delete|list`. A new catch waits for its
// weather and tide (`conditions.status = pending`); editing its place or time sets it back
// to pending and says so in `catch.updated` (`placeOrTimeChanged: true`), which is what
// the weather-fetcher listens for. A catch may carry a photo (Photos.swift): its bytes
// arrive base64 in `photo`, are checked and thumbnailed in the write's `prepare`, outside
// the transaction, and only the reference is written inside it.
// The weather-fetcher's answer is written back by consuming its events (CatchConditions.swift).
import Contracts
import Foundation
import GRDB
import Runtime
import Storage
import Wire

enum WeightUnit: String, WireEnum { case kg, lb }
enum LengthUnit: String, WireEnum { case cm, `in` }
enum Water: String, WireEnum { case fresh, salt }
enum ConditionsStatus: String, WireEnum { case pending, ready, unavailable }

struct Conditions: Codable, Sendable, Equatable {
    var status: ConditionsStatus
    var reason: String?
    var summary: JSONValue?

    static let pending = Conditions(status: .pending)
}

struct Catch: Encodable, Sendable, Equatable {
    var id: String
    var species: String
    var weight: Milli
    var weightUnit: WeightUnit
    var length: Milli?
    var lengthUnit: LengthUnit?
    var bait: String
    var water: Water
    var latitude: Double
    var longitude: Double
    var caughtAt: Date
    var note: String?
    var released: Bool
    /// Nil shows the placeholder (`photoPlaceholder: "fish-shadow"`, the seed's fish shadow).
    var photo: Photo?
    var conditions: Conditions
    var createdAt: Date
    var updatedAt: Date

    init(id: String, at: Date) {
        self.id = id
        species = ""
        weight = Milli(thousandths: 0)
        weightUnit = .kg
        bait = ""
        water = .fresh
        latitude = 0
        longitude = 0
        caughtAt = at
        released = false
        conditions = .pending
        createdAt = at
        updatedAt = at
    }

    init(row: Row) {
        id = row["id"]
        species = row["species"]
        weight = Milli(row["weight"] as Int64)
        weightUnit = WeightUnit(rawValue: row["weightUnit"]) ?? .kg
        length = (row["length"] as Int64?).map { Milli(thousandths: $0) }
        lengthUnit = (row["lengthUnit"] as String?).flatMap(LengthUnit.init(rawValue:))
        bait = row["bait"]
        water = Water(rawValue: row["water"]) ?? .fresh
        latitude = row["latitude"]
        longitude = row["longitude"]
        caughtAt = Date(ms: row["caughtAt"])
        note = row["note"]
        released = row["released"]
        photo = Photo(catchRow: row)
        conditions = Conditions(
            status: ConditionsStatus(rawValue: row["conditionsStatus"]) ?? .pending, reason: row["conditionsReason"],
            summary: (row["conditionsSummary"] as String?).flatMap { try? JSONValue.parse($0) })
        createdAt = Date(ms: row["createdAt"])
        updatedAt = Date(ms: row["updatedAt"])
    }

    static func find(_ db: Database, userId: String, id: String) throws -> Catch {
        guard
            let row = try Row.fetchOne(
                db, sql: "SELECT * FROM catchView WHERE userId = ? AND id = ?", arguments: [userId, id])
        else { throw notFound("catch", id) }
        return Catch(row: row)
    }

    /// The weight in milligrams, whatever its unit, so that lists sort kg and lb together.
    var weightMg: Int64 {
        switch weightUnit {
        case .kg: weight.thousandths * 1000
        case .lb: (weight.thousandths * 45_359_237 + 50_000) / 100_000  // 1 lb = 453.59237 g
        }
    }

    var arguments: StatementArguments {
        [
            species, weight.thousandths, weightUnit.rawValue, weightMg, length?.thousandths, lengthUnit?.rawValue, bait,
            water.rawValue, latitude, longitude, caughtAt.ms, note, released, photo?.hash, conditions.status.rawValue,
            conditions.reason, conditions.summary?.jsonText, updatedAt.ms,
        ]
    }

    /// Rules that hold whatever an add or update leaves.
    func validate() throws {
        try positive(weight, "weight")
        try require(weight.thousandths <= 1_000_000_000, "weight", "must be at most 1,000,000", got: weight.description)
        if let length {
            try positive(length, "length")
            try require(length.thousandths <= 1_000_000_000, "length", "must be at most 1,000,000", got: length.description)
            if lengthUnit == nil { throw ServiceError.invalid("lengthUnit", "is required with length (cm or in)") }
        }
        try checkLatitude(latitude)
        try checkLongitude(longitude)
    }

    static let photoPlaceholder = "fish-shadow"

    enum CodingKeys: String, CodingKey {
        case id, species, weight, weightUnit, length, lengthUnit, bait, water, latitude, longitude, caughtAt, note
        case released, photo, photoPlaceholder, conditions, createdAt, updatedAt
    }

    /// Written out for `photo`: an explicit `null` plus the placeholder when there is none.
    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(species, forKey: .species)
        try c.encode(weight, forKey: .weight)
        try c.encode(weightUnit, forKey: .weightUnit)
        try c.encodeIfPresent(length, forKey: .length)
        try c.encodeIfPresent(lengthUnit, forKey: .lengthUnit)
        try c.encode(bait, forKey: .bait)
        try c.encode(water, forKey: .water)
        try c.encode(latitude, forKey: .latitude)
        try c.encode(longitude, forKey: .longitude)
        try c.encode(caughtAt, forKey: .caughtAt)
        try c.encodeIfPresent(note, forKey: .note)
        try c.encode(released, forKey: .released)
        if let photo {
            try c.encode(photo, forKey: .photo)
        } else {
            try c.encodeNil(forKey: .photo)
            try c.encode(Self.photoPlaceholder, forKey: .photoPlaceholder)
        }
        try c.encode(conditions, forKey: .conditions)
        try c.encode(createdAt, forKey: .createdAt)
        try c.encode(updatedAt, forKey: .updatedAt)
    }
}

/// `catch.updated`: the record plus whether its place or time, or its water, changed
/// (either refetches the conditions).
struct CatchUpdated: Encodable, Sendable {
    var record: Catch
    var placeOrTimeChanged: Bool
    var waterChanged: Bool = false

    enum Keys: String, CodingKey { case placeOrTimeChanged, waterChanged }

    func encode(to encoder: any Encoder) throws {
        try record.encode(to: encoder)
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(placeOrTimeChanged, forKey: .placeOrTimeChanged)
        try container.encode(waterChanged, forKey: .waterChanged)
    }
}

struct CatchAdd: Decodable, Sendable {
    var species: String
    var weight: Milli
    var weightUnit: WeightUnit
    var length: Milli?
    var lengthUnit: LengthUnit?
    var bait: String?
    var water: Water
    var latitude: Double
    var longitude: Double
    var caughtAt: Date?
    var note: String?
    var released: Bool?
    /// The image's bytes, standard base64.
    var photo: String?
}

struct CatchUpdate: Decodable, Sendable {
    var id: String
    var species: String?
    var weight: Milli?
    var weightUnit: WeightUnit?
    var length: Patch<Milli>
    var lengthUnit: Patch<LengthUnit>
    var bait: String?
    var water: Water?
    var latitude: Double?
    var longitude: Double?
    var caughtAt: Date?
    var note: Patch<String>
    var released: Bool?
    /// New bytes (base64) replace the photo; `null` removes it.
    var photo: Patch<String>
}

/// A write's body with what its photo work left for the commit and for `settle`.
struct WithPhoto<Body: Sendable>: Sendable {
    var body: Body
    var work: PhotoWork
}

struct PhotoGet: Decodable, Sendable {
    var id: String
    var thumbnail: Bool?
}

struct PhotoData: Encodable, Sendable {
    var contentType: String
    /// Standard base64.
    var data: String
    var hash: String
    var width: Int
    var height: Int
}

enum CatchSort: String, WireEnum { case date, weight, species }

struct CatchList: Decodable, Sendable {
    var water: Water?
    var sort: CatchSort?
    var cursor: String?
    var limit: Int?
}

struct CatchBestsBody: Decodable, Sendable {
    var water: Water?
}

/// A species' personal best: its heaviest catch and how many of that species there are.
struct SpeciesBest: Encodable, Sendable {
    var species: String
    var catches: Int
    var best: Catch
}

struct CatchBests: Encodable, Sendable {
    var bests: [SpeciesBest]
}

struct CatchDeleted: Codable, Sendable {
    var id: String
    var userId: String
}

extension Records {
    func registerCatches(_ router: inout Router) {
        let photoLimit = photos.settings.requestMaxBytes
        router.write(
            "records.catch.add", maxBytes: photoLimit,
            prepare: { (body: CatchAdd, context) in
                var work = PhotoWork()
                if let base64 = body.photo { work = try await photos.prepare(base64: base64, user: context.userId) }
                return WithPhoto(body: body, work: work)
            },
            { prepared, context, db in
                let body = prepared.body
                let at = now()
                var fish = Catch(id: ID.make(at: at), at: at)
                fish.species = try requiredText(body.species, "species", max: 80)
                fish.weight = body.weight
                fish.weightUnit = body.weightUnit
                fish.length = body.length
                fish.lengthUnit = body.length == nil ? nil : body.lengthUnit
                fish.bait = try bait(body.bait ?? "")
                fish.water = body.water
                fish.latitude = body.latitude
                fish.longitude = body.longitude
                if let caughtAt = body.caughtAt {
                    try notInFuture(caughtAt, "caughtAt", now: at)
                    fish.caughtAt = Date(ms: caughtAt.ms)
                }
                fish.note = try optionalText(body.note, "note", max: 500)
                fish.released = body.released ?? false
                try fish.validate()
                if let photo = prepared.work.upload {
                    try PhotoStore.reference(db, photo)
                    fish.photo = photo
                }
                try db.execute(
                    sql: """
                        INSERT INTO fishCatch (species, weight, weightUnit, weightMg, length, lengthUnit, bait, water, latitude,
                            longitude, caughtAt, note, released, photoHash, conditionsStatus, conditionsReason,
                            conditionsSummary, updatedAt, id, userId, createdAt)
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                        """,
                    arguments: fish.arguments + [fish.id, context.userId, at.ms])
                try Outbox.append(db, type: "catch.created", userId: context.userId, data: fish, at: at)
                return fish
            }, settle: { await photos.settle($0.work) })

        router.read("records.catch.get") { (body: IdBody, context) in
            try await database.read { db in try Catch.find(db, userId: context.userId, id: body.id) }
        }

        router.write(
            "records.catch.update", maxBytes: photoLimit,
            prepare: { (body: CatchUpdate, context) in
                var work = PhotoWork()
                if case .set(let base64) = body.photo {
                    work = try await photos.prepare(base64: base64, user: context.userId)
                }
                return WithPhoto(body: body, work: work)
            },
            { prepared, context, db in
                let body = prepared.body
                let at = now()
                let before = try Catch.find(db, userId: context.userId, id: body.id)
                var fish = before
                if let species = body.species { fish.species = try requiredText(species, "species", max: 80) }
                if let weight = body.weight { fish.weight = weight }
                if let unit = body.weightUnit { fish.weightUnit = unit }
                fish.length = body.length.applied(to: fish.length)
                fish.lengthUnit = fish.length == nil ? nil : body.lengthUnit.applied(to: fish.lengthUnit)
                if let bait = body.bait { fish.bait = try self.bait(bait) }
                if let water = body.water { fish.water = water }
                if let latitude = body.latitude { fish.latitude = latitude }
                if let longitude = body.longitude { fish.longitude = longitude }
                if let caughtAt = body.caughtAt {
                    try notInFuture(caughtAt, "caughtAt", now: at)
                    fish.caughtAt = Date(ms: caughtAt.ms)
                }
                fish.note = try optionalText(body.note.applied(to: fish.note), "note", max: 500)
                if let released = body.released { fish.released = released }
                try fish.validate()
                let placeOrTimeChanged =
                    fish.latitude != before.latitude || fish.longitude != before.longitude
                    || fish.caughtAt != before.caughtAt
                // fresh ↔ salt changes the conditions too: a salt-water catch has a tide
                let waterChanged = fish.water != before.water
                if placeOrTimeChanged || waterChanged { fish.conditions = .pending }
                fish.updatedAt = at
                switch body.photo {
                case .unchanged: break
                case .clear: fish.photo = nil
                case .set: fish.photo = prepared.work.upload
                }
                if let photo = fish.photo, photo != before.photo { try PhotoStore.reference(db, photo) }
                try db.execute(
                    sql: """
                        UPDATE fishCatch SET species = ?, weight = ?, weightUnit = ?, weightMg = ?, length = ?, lengthUnit = ?,
                            bait = ?, water = ?, latitude = ?, longitude = ?, caughtAt = ?, note = ?, released = ?,
                            photoHash = ?, conditionsStatus = ?, conditionsReason = ?, conditionsSummary = ?, updatedAt = ?
                        WHERE id = ? AND userId = ?
                        """,
                    arguments: fish.arguments + [fish.id, context.userId])
                try Outbox.append(
                    db, type: "catch.updated", userId: context.userId,
                    data: CatchUpdated(record: fish, placeOrTimeChanged: placeOrTimeChanged, waterChanged: waterChanged), at: at)
                if let old = before.photo, old.hash != fish.photo?.hash {
                    try PhotoStore.dereference(db, old, work: prepared.work)
                }
                return fish
            }, settle: { await photos.settle($0.work) })

        router.write(
            "records.catch.delete", prepare: { (body: IdBody, _) in WithPhoto(body: body, work: PhotoWork()) },
            { prepared, context, db in
                let fish = try Catch.find(db, userId: context.userId, id: prepared.body.id)
                try db.execute(
                    sql: "DELETE FROM fishCatch WHERE userId = ? AND id = ?", arguments: [context.userId, fish.id])
                if let photo = fish.photo { try PhotoStore.dereference(db, photo, work: prepared.work) }
                try Outbox.append(
                    db, type: "catch.deleted", userId: context.userId,
                    data: CatchDeleted(id: fish.id, userId: context.userId),
                    at: now())
                return Deleted()
            }, settle: { await photos.settle($0.work) })

        router.read("records.catch.photo.get") { (body: PhotoGet, context) in
            let find = { @Sendable in
                try await database.read { db in try Catch.find(db, userId: context.userId, id: body.id) }
            }
            guard let photo = try await find().photo else {
                throw ServiceError(.notFound, "catch \(body.id) has no photo", field: "id")
            }
            let thumbnail = body.thumbnail ?? false
            let hash = thumbnail ? photo.thumbnail.hash : photo.hash
            guard let data = try await photos.read(hash) else {
                // Deleted or replaced since it was looked up: answer as if that had come first.
                if try await find().photo == photo {
                    context.logger.error("photo file missing", metadata: ["photo.hash": "\(hash)"])
                    throw ServiceError(.internal, "the photo's file is missing")
                }
                throw ServiceError(.notFound, "catch \(body.id) has no photo", field: "id")
            }
            return thumbnail
                ? PhotoData(
                    contentType: "image/jpeg", data: data.base64EncodedString(), hash: hash,
                    width: photo.thumbnail.width,
                    height: photo.thumbnail.height)
                : PhotoData(
                    contentType: photo.contentType, data: data.base64EncodedString(), hash: hash, width: photo.width,
                    height: photo.height)
        }

        router.read("records.catch.list") { (body: CatchList, context) in
            let limit = try Pagination.limit(body.limit)
            let sort = body.sort ?? .date
            let cursor = try Cursor.decode(body.cursor, sort: sort.rawValue)
            let water = body.water?.rawValue
            // One fixed statement per sort; the water filter is a bound parameter.
            let sql: String
            let after: StatementArguments
            let key: @Sendable (Catch) -> (n: Int64?, t: String?, id: String)
            switch sort {
            case .date:
                sql = """
                    SELECT * FROM catchView WHERE userId = ? AND (? IS NULL OR water = ?) AND (caughtAt, id) < (?, ?)
                    ORDER BY caughtAt DESC, id DESC LIMIT ?
                    """
                after = [cursor?.n ?? Int64.max, cursor?.id ?? ""]
                key = { ($0.caughtAt.ms, nil, $0.id) }
            case .weight:
                sql = """
                    SELECT * FROM catchView WHERE userId = ? AND (? IS NULL OR water = ?) AND (weightMg, id) < (?, ?)
                    ORDER BY weightMg DESC, id DESC LIMIT ?
                    """
                after = [cursor?.n ?? Int64.max, cursor?.id ?? ""]
                key = { ($0.weightMg, nil, $0.id) }
            case .species:
                sql = """
                    SELECT * FROM catchView WHERE userId = ? AND (? IS NULL OR water = ?) AND (species, id) > (?, ?)
                    ORDER BY species ASC, id ASC LIMIT ?
                    """
                after = [cursor?.t ?? "", cursor?.id ?? ""]
                key = { (nil, $0.species, $0.id) }
            }
            return try await database.read { db in
                try Pagination.page(
                    db, sql: sql, arguments: [context.userId, water, water] + after, limit: limit, sort: sort.rawValue,
                    key: key,
                    row: Catch.init(row:))
            }
        }
        bestsRoute(&router, database: database)
    }

    /// Personal bests: per species (grouped case-insensitively, as suggestions group them),
    /// the heaviest catch — kg and lb compared as mass; on a tie the earlier catch holds it —
    /// and the species' number of catches; species A→Z.
    func bestsRoute(_ router: inout Router, database: any DatabaseReader) {
        router.read("records.catch.bests") { (body: CatchBestsBody, context) in
            let water = body.water?.rawValue
            return try await database.read { db in
                let rows = try Row.fetchAll(
                    db,
                    sql: """
                        SELECT * FROM (
                            SELECT catchView.*,
                                row_number() OVER (
                                    PARTITION BY lower(trim(species)) ORDER BY weightMg DESC, caughtAt, id) AS bestRank,
                                count(*) OVER (PARTITION BY lower(trim(species))) AS speciesCatches
                            FROM catchView WHERE userId = ? AND (? IS NULL OR water = ?)
                        ) WHERE bestRank = 1 ORDER BY lower(trim(species)), id
                        """,
                    arguments: [context.userId, water, water])
                return CatchBests(
                    bests: rows.map { row in
                        let best = Catch(row: row)
                        return SpeciesBest(species: best.species, catches: row["speciesCatches"], best: best)
                    })
            }
        }
    }

    /// The seed's app warns when no bait is given; the logbook requires it.
    func bait(_ value: String) throws -> String {
        try requiredText(
            value, "bait", max: 80,
            rule:
                "is required, 1–80 characters: the logbook warns when a catch has no bait (write \"unknown\" if you do not know it)"
        )
    }
}
