// The fishing logbook's contract: catches and their photos (records), their events, and
// the personal bests. docs/protocol.md, "Catches". Weights and lengths are `Milli` (exact
// thousandths) from the CLI's text to the database and into the events; coordinates are
// JSON numbers (`Double`), as the weather providers take them.
import Foundation
import Wire

public enum WeightUnit: String, WireEnum { case kg, lb }
public enum LengthUnit: String, WireEnum { case cm, `in` }
public enum Water: String, WireEnum { case fresh, salt }

/// Where a catch's weather and tide stand: asked for (`pending`), fetched (`ready`), or
/// not to be had (`unavailable`). Records keeps it on the catch, the weather-fetcher on
/// the catch's fetch job.
public enum ConditionsStatus: String, WireEnum { case pending, ready, unavailable }

/// A catch's `conditions`: the status, why they are unavailable, and the one-line summary
/// once ready (the full values are the weather-fetcher's: `weather.conditions.get`).
public struct CatchConditions: Documented, Equatable {
    public var status: ConditionsStatus
    public var reason: String?
    public var summary: String?

    public init(status: ConditionsStatus, reason: String? = nil, summary: String? = nil) {
        self.status = status
        self.reason = reason
        self.summary = summary
    }

    public static let pending = CatchConditions(status: .pending)
    public static let sample = CatchConditions(status: .ready, reason: "r", summary: "14°C, overcast")
}

/// A catch's photo: the image's SHA-256 (lowercase hex), its type and size as displayed,
/// and its JPEG thumbnail (docs/photos.md). Never the bytes.
public struct Photo: Codable, Sendable, Equatable {
    public var hash: String
    public var contentType: String
    public var bytes: Int
    public var width: Int
    public var height: Int
    public var thumbnail: PhotoThumbnail

    public init(hash: String, contentType: String, bytes: Int, width: Int, height: Int, thumbnail: PhotoThumbnail) {
        self.hash = hash
        self.contentType = contentType
        self.bytes = bytes
        self.width = width
        self.height = height
        self.thumbnail = thumbnail
    }
}

public struct PhotoThumbnail: Codable, Sendable, Equatable {
    public var hash: String
    public var width: Int
    public var height: Int

    public init(hash: String, width: Int, height: Int) {
        self.hash = hash
        self.width = width
        self.height = height
    }
}

/// A catch as records keeps it, answers it and publishes it (`catch.created`, and inside
/// `catch.updated`). `photo` is written as `null` when there is none, with
/// `photoPlaceholder` beside it; reading ignores the placeholder.
public struct Catch: Documented, Equatable {
    public var id: String
    public var species: String
    public var weight: Milli
    public var weightUnit: WeightUnit
    public var length: Milli?
    public var lengthUnit: LengthUnit?
    public var bait: String
    public var water: Water
    public var latitude: Double
    public var longitude: Double
    public var caughtAt: Date
    public var note: String?
    public var released: Bool
    /// Nil shows the placeholder (`photoPlaceholder: "fish-shadow"`, the seed's fish shadow).
    public var photo: Photo?
    public var conditions: CatchConditions
    public var createdAt: Date
    public var updatedAt: Date

    /// What the seed's app shows for a catch without a photo.
    public static let photoPlaceholder = "fish-shadow"

    public init(
        id: String, species: String, weight: Milli, weightUnit: WeightUnit, length: Milli? = nil,
        lengthUnit: LengthUnit? = nil, bait: String, water: Water, latitude: Double, longitude: Double, caughtAt: Date,
        note: String? = nil, released: Bool, photo: Photo? = nil, conditions: CatchConditions = .pending,
        createdAt: Date, updatedAt: Date
    ) {
        self.id = id
        self.species = species
        self.weight = weight
        self.weightUnit = weightUnit
        self.length = length
        self.lengthUnit = lengthUnit
        self.bait = bait
        self.water = water
        self.latitude = latitude
        self.longitude = longitude
        self.caughtAt = caughtAt
        self.note = note
        self.released = released
        self.photo = photo
        self.conditions = conditions
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }

    /// The weight in milligrams, whatever its unit, so that kg and lb compare as mass.
    public var weightMg: Int64 {
        switch weightUnit {
        case .kg: weight.thousandths * 1000
        case .lb: (weight.thousandths * 45_359_237 + 50_000) / 100_000  // 1 lb = 453.59237 g
        }
    }

    enum CodingKeys: String, CodingKey {
        case id, species, weight, weightUnit, length, lengthUnit, bait, water, latitude, longitude, caughtAt, note
        case released, photo, photoPlaceholder, conditions, createdAt, updatedAt
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(String.self, forKey: .id)
        species = try c.decode(String.self, forKey: .species)
        weight = try c.decode(Milli.self, forKey: .weight)
        weightUnit = try c.decode(WeightUnit.self, forKey: .weightUnit)
        length = try c.decodeIfPresent(Milli.self, forKey: .length)
        lengthUnit = try c.decodeIfPresent(LengthUnit.self, forKey: .lengthUnit)
        bait = try c.decode(String.self, forKey: .bait)
        water = try c.decode(Water.self, forKey: .water)
        latitude = try c.decode(Double.self, forKey: .latitude)
        longitude = try c.decode(Double.self, forKey: .longitude)
        caughtAt = try c.decode(Date.self, forKey: .caughtAt)
        note = try c.decodeIfPresent(String.self, forKey: .note)
        released = try c.decode(Bool.self, forKey: .released)
        photo = try c.decodeIfPresent(Photo.self, forKey: .photo)
        conditions = try c.decode(CatchConditions.self, forKey: .conditions)
        createdAt = try c.decode(Date.self, forKey: .createdAt)
        updatedAt = try c.decode(Date.self, forKey: .updatedAt)
    }

    /// Written out for `photo`: an explicit `null` plus the placeholder when there is none.
    public func encode(to encoder: any Encoder) throws {
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

    public static let sample = Catch(
        id: "c", species: "Pike", weight: Milli(thousandths: 2_500), weightUnit: .kg, length: Milli(thousandths: 71_000),
        lengthUnit: .cm, bait: "spoon", water: .fresh, latitude: 59.33, longitude: 18.07,
        caughtAt: Date(timeIntervalSince1970: 0), note: "n", released: true,
        photo: Photo(
            hash: "h", contentType: "image/jpeg", bytes: 1, width: 1, height: 1,
            thumbnail: PhotoThumbnail(hash: "t", width: 1, height: 1)),
        conditions: .sample, createdAt: Date(timeIntervalSince1970: 0), updatedAt: Date(timeIntervalSince1970: 0))
}

public struct CatchAdd: Documented, Equatable {
    public var species: String
    public var weight: Milli
    public var weightUnit: WeightUnit
    public var length: Milli?
    public var lengthUnit: LengthUnit?
    public var bait: String?
    public var water: Water
    public var latitude: Double
    public var longitude: Double
    public var caughtAt: Date?
    public var note: String?
    public var released: Bool?
    /// The image's bytes, standard base64.
    public var photo: String?

    public init(
        species: String, weight: Milli, weightUnit: WeightUnit, length: Milli? = nil, lengthUnit: LengthUnit? = nil,
        bait: String?, water: Water, latitude: Double, longitude: Double, caughtAt: Date? = nil, note: String? = nil,
        released: Bool? = nil, photo: String? = nil
    ) {
        self.species = species
        self.weight = weight
        self.weightUnit = weightUnit
        self.length = length
        self.lengthUnit = lengthUnit
        self.bait = bait
        self.water = water
        self.latitude = latitude
        self.longitude = longitude
        self.caughtAt = caughtAt
        self.note = note
        self.released = released
        self.photo = photo
    }

    public static let sample = CatchAdd(
        species: "Pike", weight: Milli(thousandths: 2_500), weightUnit: .kg, length: Milli(thousandths: 71_000),
        lengthUnit: .cm, bait: "spoon", water: .fresh, latitude: 59.33, longitude: 18.07,
        caughtAt: Date(timeIntervalSince1970: 0), note: "n", released: false, photo: "aGk=")
}

public struct CatchUpdate: Documented {
    public var id: String
    public var species: String?
    public var weight: Milli?
    public var weightUnit: WeightUnit?
    public var length: Patch<Milli>
    public var lengthUnit: Patch<LengthUnit>
    public var bait: String?
    public var water: Water?
    public var latitude: Double?
    public var longitude: Double?
    public var caughtAt: Date?
    public var note: Patch<String>
    public var released: Bool?
    /// New bytes (base64) replace the photo; `null` removes it.
    public var photo: Patch<String>

    public init(
        id: String, species: String? = nil, weight: Milli? = nil, weightUnit: WeightUnit? = nil,
        length: Patch<Milli> = .unchanged, lengthUnit: Patch<LengthUnit> = .unchanged, bait: String? = nil,
        water: Water? = nil, latitude: Double? = nil, longitude: Double? = nil, caughtAt: Date? = nil,
        note: Patch<String> = .unchanged, released: Bool? = nil, photo: Patch<String> = .unchanged
    ) {
        self.id = id
        self.species = species
        self.weight = weight
        self.weightUnit = weightUnit
        self.length = length
        self.lengthUnit = lengthUnit
        self.bait = bait
        self.water = water
        self.latitude = latitude
        self.longitude = longitude
        self.caughtAt = caughtAt
        self.note = note
        self.released = released
        self.photo = photo
    }

    public static let sample = CatchUpdate(
        id: "c", species: "Pike", weight: Milli(thousandths: 1), weightUnit: .lb, length: .clear, lengthUnit: .set(.in),
        bait: "worm", water: .salt, latitude: 1, longitude: 1, caughtAt: Date(timeIntervalSince1970: 0), note: .clear,
        released: true, photo: .clear)
}

public enum CatchSort: String, WireEnum { case date, weight, species }

public struct CatchList: Documented, Equatable {
    public var water: Water?
    public var sort: CatchSort?
    public var cursor: String?
    public var limit: Int?

    public init(water: Water? = nil, sort: CatchSort? = nil, cursor: String? = nil, limit: Int? = nil) {
        self.water = water
        self.sort = sort
        self.cursor = cursor
        self.limit = limit
    }

    public static let sample = CatchList(water: .fresh, sort: .weight, cursor: "c", limit: 50)
}

/// `{water?}`: `records.catch.bests`.
public struct CatchBestsRequest: Documented, Equatable {
    public var water: Water?
    public init(water: Water? = nil) { self.water = water }
    public static let sample = CatchBestsRequest(water: .salt)
}

/// A species' personal best: its heaviest catch and how many of that species there are.
public struct SpeciesBest: Codable, Sendable, Equatable {
    public var species: String
    public var catches: Int
    public var best: Catch

    public init(species: String, catches: Int, best: Catch) {
        self.species = species
        self.catches = catches
        self.best = best
    }
}

public struct CatchBests: Codable, Sendable, Equatable {
    public var bests: [SpeciesBest]
    public init(bests: [SpeciesBest]) { self.bests = bests }
}

/// `{id, thumbnail?}`: `records.catch.photo.get`.
public struct PhotoGet: Documented, Equatable {
    public var id: String
    public var thumbnail: Bool?

    public init(id: String, thumbnail: Bool? = nil) {
        self.id = id
        self.thumbnail = thumbnail
    }

    public static let sample = PhotoGet(id: "c", thumbnail: true)
}

/// A photo's bytes (standard base64) and what they are.
public struct PhotoData: Codable, Sendable, Equatable {
    public var contentType: String
    public var data: String
    public var hash: String
    public var width: Int
    public var height: Int

    public init(contentType: String, data: String, hash: String, width: Int, height: Int) {
        self.contentType = contentType
        self.data = data
        self.hash = hash
        self.width = width
        self.height = height
    }
}

// MARK: Events

/// `catch.updated`: the record plus whether its place or time, or its water, changed
/// (either refetches the conditions). Events from before `waterChanged` existed read it as false.
public struct CatchUpdated: Codable, Sendable, Equatable {
    public var record: Catch
    public var placeOrTimeChanged: Bool
    public var waterChanged: Bool

    public init(record: Catch, placeOrTimeChanged: Bool, waterChanged: Bool = false) {
        self.record = record
        self.placeOrTimeChanged = placeOrTimeChanged
        self.waterChanged = waterChanged
    }

    enum Keys: String, CodingKey { case placeOrTimeChanged, waterChanged }

    public init(from decoder: any Decoder) throws {
        record = try Catch(from: decoder)
        let container = try decoder.container(keyedBy: Keys.self)
        placeOrTimeChanged = try container.decode(Bool.self, forKey: .placeOrTimeChanged)
        waterChanged = try container.decodeIfPresent(Bool.self, forKey: .waterChanged) ?? false
    }

    public func encode(to encoder: any Encoder) throws {
        try record.encode(to: encoder)
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(placeOrTimeChanged, forKey: .placeOrTimeChanged)
        try container.encode(waterChanged, forKey: .waterChanged)
    }
}

/// `catch.deleted`.
public struct CatchDeleted: Documented, Equatable {
    public var id: String
    public var userId: String

    public init(id: String, userId: String) {
        self.id = id
        self.userId = userId
    }

    public static let sample = CatchDeleted(id: "c", userId: "u")
}

// MARK: Methods and events

/// The catch methods, named once for the routes that serve them and the clients that call them.
public enum CatchMethods {
    public static let add = Method<CatchAdd, Catch>("records.catch.add", .write)
    public static let get = Method<IdBody, Catch>("records.catch.get", .read)
    public static let update = Method<CatchUpdate, Catch>("records.catch.update", .write)
    public static let delete = Method<IdBody, Deleted>("records.catch.delete", .write)
    public static let list = Method<CatchList, Page<Catch>>("records.catch.list", .read)
    public static let bests = Method<CatchBestsRequest, CatchBests>("records.catch.bests", .read)
    public static let photo = Method<PhotoGet, PhotoData>("records.catch.photo.get", .read)
}

/// The catch events records publishes.
public enum CatchEvents {
    public static let created = "catch.created"
    public static let updated = "catch.updated"
    public static let deleted = "catch.deleted"
}
