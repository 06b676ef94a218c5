// Analytics' fishing suggestions: which conditions and baits the user's catches came with.
// docs/protocol.md, "analytics.suggest".
import Foundation
import Wire

/// `{species?, water?}`: narrows the catches counted.
public struct SuggestRequest: Documented, Equatable {
    /// Case-insensitive; blank is refused.
    public var species: String?
    public var water: Water?

    public init(species: String? = nil, water: Water? = nil) {
        self.species = species
        self.water = water
    }

    public static let sample = SuggestRequest(species: "pike", water: .fresh)
}

public struct BaitCount: Codable, Sendable, Equatable {
    public var bait: String
    public var count: Int
    public var share: Decimal

    public init(bait: String, count: Int, share: Decimal) {
        self.bait = bait
        self.count = count
        self.share = share
    }
}

public struct BucketCount: Codable, Sendable, Equatable {
    public var bucket: String
    public var count: Int
    /// count / catches with a value for this condition, 3 decimals.
    public var share: Decimal
    /// The baits most caught in this bucket (up to 3).
    public var baits: [BaitCount]

    public init(bucket: String, count: Int, share: Decimal, baits: [BaitCount]) {
        self.bucket = bucket
        self.count = count
        self.share = share
        self.baits = baits
    }
}

public struct ConditionSuggestion: Codable, Sendable, Equatable {
    public var condition: String
    public var label: String
    /// Ready catches with a value for this condition.
    public var catches: Int
    /// The most frequent bucket (ties: alphabetical); nil without data.
    public var best: BucketCount?
    public var buckets: [BucketCount]
    public var confidence: String
    public var basis: String

    public init(
        condition: String, label: String, catches: Int, best: BucketCount?, buckets: [BucketCount], confidence: String,
        basis: String
    ) {
        self.condition = condition
        self.label = label
        self.catches = catches
        self.best = best
        self.buckets = buckets
        self.confidence = confidence
        self.basis = basis
    }
}

/// `analytics.suggest`.
public struct Suggestions: Codable, Sendable, Equatable {
    public var species: String?
    public var water: Water?
    /// Catches matching the filter, whatever the state of their conditions.
    public var catches: Int
    public var ready: Int
    public var pending: Int
    public var unavailable: Int
    /// none | low (< 5) | medium (5–19) | high (≥ 20), from the catches with conditions.
    public var confidence: String
    /// "based on 4 catches: low confidence"
    public var basis: String
    /// What is not counted yet, and why.
    public var note: String?
    public var conditions: [ConditionSuggestion]
    /// Baits of every matching catch, most caught first.
    public var baits: [BaitCount]

    public init(
        species: String?, water: Water?, catches: Int, ready: Int, pending: Int, unavailable: Int, confidence: String,
        basis: String, note: String?, conditions: [ConditionSuggestion], baits: [BaitCount]
    ) {
        self.species = species
        self.water = water
        self.catches = catches
        self.ready = ready
        self.pending = pending
        self.unavailable = unavailable
        self.confidence = confidence
        self.basis = basis
        self.note = note
        self.conditions = conditions
        self.baits = baits
    }
}

public enum SuggestMethods {
    public static let suggest = Method<SuggestRequest, Suggestions>("analytics.suggest", .read)
}
