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

extension Catch {
    /// A new catch made at `at`, before the request's fields are applied.
    init(id: String, at: Date) {
        self.init(
            id: id, species: "", weight: Milli(thousandths: 0), weightUnit: .kg, bait: "", water: .fresh, latitude: 0,
            longitude: 0, caughtAt: at, released: false, createdAt: at, updatedAt: at)
    }

    static func find(_ db: Database, userId: String, id: String) throws -> Catch {
        guard
            let row = try Row.fetchOne(
                db, sql: "SELECT * FROM catchView WHERE userId = ? AND id = ?", arguments: [userId, id])
        else { throw notFound("catch", id) }
        return try CatchRow.fish(row)
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
}

/// A write's body with what its photo work left for the commit and for `settle`.
struct WithPhoto<Body: Sendable>: Sendable {
    var body: Body
    var work: PhotoWork
}

extension Records {
    func registerCatches(_ router: inout Router) {
        let photoLimit = photos.settings.requestMaxBytes
        router.writeSettling(
            CatchMethods.add, maxBytes: photoLimit,
            prepare: { body, context in
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
                try CatchRow(fish, userId: context.userId).insertRow(db)
                try Outbox.append(db, type: CatchEvents.created, userId: context.userId, data: fish, at: at)
                return fish
            }, settle: { await photos.settle($0.work) })

        router.read(CatchMethods.get) { body, context in
            try await database.read { db in try Catch.find(db, userId: context.userId, id: body.id) }
        }

        router.writeSettling(
            CatchMethods.update, maxBytes: photoLimit,
            prepare: { body, context in
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
                try CatchRow(fish, userId: context.userId).update(db)
                try Outbox.append(
                    db, type: CatchEvents.updated, userId: context.userId,
                    data: CatchUpdated(record: fish, placeOrTimeChanged: placeOrTimeChanged, waterChanged: waterChanged), at: at)
                if let old = before.photo, old.hash != fish.photo?.hash {
                    try PhotoStore.dereference(db, old, work: prepared.work)
                }
                return fish
            }, settle: { await photos.settle($0.work) })

        router.writeSettling(
            CatchMethods.delete, prepare: { body, _ in WithPhoto(body: body, work: PhotoWork()) },
            { prepared, context, db in
                let fish = try Catch.find(db, userId: context.userId, id: prepared.body.id)
                try CatchRow.delete(db, userId: context.userId, id: fish.id)
                if let photo = fish.photo { try PhotoStore.dereference(db, photo, work: prepared.work) }
                try Outbox.append(
                    db, type: CatchEvents.deleted, userId: context.userId,
                    data: CatchDeleted(id: fish.id, userId: context.userId),
                    at: now())
                return Deleted()
            }, settle: { await photos.settle($0.work) })

        router.read(CatchMethods.photo) { body, context in
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

        router.read(CatchMethods.list) { body, context in
            let limit = try Pagination.limit(body.limit)
            let sort = body.sort ?? .date
            let water = body.water?.rawValue
            let list = ListKey(
                CatchMethods.list.name, sort: sort.rawValue, position: sort == .species ? .text : .integer,
                filters: [water])
            let cursor = try Cursor.decode(body.cursor, for: list)
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
                    db, sql: sql, arguments: [context.userId, water, water] + after, limit: limit, list: list, key: key,
                    row: CatchRow.fish)
            }
        }
        bestsRoute(&router, database: database)
    }

    /// Personal bests: per species (grouped case-insensitively, as suggestions group them),
    /// the heaviest catch — kg and lb compared as mass; on a tie the earlier catch holds it —
    /// and the species' number of catches; species A→Z.
    func bestsRoute(_ router: inout Router, database: any DatabaseReader) {
        router.read(CatchMethods.bests) { body, context in
            let water = body.water?.rawValue
            return try await database.read { db in
                let rows = try Row.fetchAll(
                    db,
                    sql: """
                        SELECT * FROM (
                            SELECT catchView.*,
                                row_number() OVER (
                                    PARTITION BY logbook_fold(species) ORDER BY weightMg DESC, caughtAt, id) AS bestRank,
                                count(*) OVER (PARTITION BY logbook_fold(species)) AS speciesCatches
                            FROM catchView WHERE userId = ? AND (? IS NULL OR water = ?)
                        ) WHERE bestRank = 1 ORDER BY logbook_fold(species), id
                        """,
                    arguments: [context.userId, water, water])
                return CatchBests(
                    bests: try rows.map { row in
                        let best = try CatchRow.fish(row)
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

extension Router {
    /// A write of the contract whose preparation leaves something outside the database (a
    /// photo's files): Router's `write(_:prepare:_:settle:)` with the name, kind, request and
    /// result types of `method`.
    mutating func writeSettling<Body, Prepared: Sendable, Result>(
        _ method: Contracts.Method<Body, Result>, maxBytes: Int = Router.defaultMaxBytes,
        prepare: @escaping @Sendable (Body, RequestContext) async throws -> Prepared,
        _ commit: @escaping @Sendable (Prepared, RequestContext, Database) throws -> Result,
        settle: @escaping @Sendable (Prepared) async -> Void
    ) {
        precondition(method.kind == .write, "\(method.name) is a \(method.kind.rawValue): register it with read(_:)")
        write(method.name, maxBytes: maxBytes, prepare: prepare, commit, settle: settle)
    }
}
