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
    /// count / the catches of its list (its bucket's, or every matching catch), 3 decimals.
    public var share: Milli

    public init(bait: String, count: Int, share: Milli) {
        self.bait = bait
        self.count = count
        self.share = share
    }
}

public struct BucketCount: Codable, Sendable, Equatable {
    public var bucket: String
    public var count: Int
    /// count / catches with a value for this condition, 3 decimals.
    public var share: Milli
    /// The baits most caught in this bucket (up to 3).
    public var baits: [BaitCount]

    public init(bucket: String, count: Int, share: Milli, baits: [BaitCount]) {
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

// MARK: Written without the encoder (Shared/Wire/JSONWritable.swift)

// Keys in UTF-8 byte order, optionals left out when nil: what the synthesized `Encodable`
// gives through the shared encoder. Tests/AnalyticsTests/SuggestTests.swift compares the two.

// A bait and a bucket are most of an answer (a user's every bucket, with up to 3 baits each),
// so their fixed text, an object's opening and each key with its comma, is written as one
// literal run rather than key by key.

extension BaitCount: JSONWritable {
    public func writeJSON(to out: inout JSONOutput) {
        out.raw(#"{"bait":"#)
        out.string(bait)
        out.raw(#","count":"#)
        out.int(count)
        out.raw(#","share":"#)
        out.milli(share)
        out.endObject()
    }
}

extension BucketCount: JSONWritable {
    public func writeJSON(to out: inout JSONOutput) {
        out.raw(#"{"baits":"#)
        out.array(baits) { $0.write($1) }
        out.raw(#","bucket":"#)
        out.string(bucket)
        out.raw(#","count":"#)
        out.int(count)
        out.raw(#","share":"#)
        out.milli(share)
        out.endObject()
    }
}

extension ConditionSuggestion: JSONWritable {
    public func writeJSON(to out: inout JSONOutput) {
        out.beginObject()
        out.key("basis")
        out.string(basis)
        var bestText = 0..<0
        if let best {
            out.key("best")
            let start = out.written
            out.write(best)
            bestText = start..<out.written
        }
        out.key("buckets")
        // `best` is nearly always the first bucket (the service takes it from there): when it
        // is, the bytes just written for it are copied rather than written again.
        out.beginArray()
        for (i, bucket) in buckets.enumerated() {
            out.element()
            if i == 0, !bestText.isEmpty, bucket == best {
                out.repeatWritten(bestText)
            } else {
                out.write(bucket)
            }
        }
        out.endArray()
        out.key("catches")
        out.int(catches)
        out.key("condition")
        out.string(condition)
        out.key("confidence")
        out.string(confidence)
        out.key("label")
        out.string(label)
        out.endObject()
    }
}

extension Suggestions: JSONWritable {
    public func writeJSON(to out: inout JSONOutput) {
        out.beginObject()
        out.key("baits")
        out.array(baits) { $0.write($1) }
        out.key("basis")
        out.string(basis)
        out.key("catches")
        out.int(catches)
        out.key("conditions")
        out.array(conditions) { $0.write($1) }
        out.key("confidence")
        out.string(confidence)
        if let note {
            out.key("note")
            out.string(note)
        }
        out.key("pending")
        out.int(pending)
        out.key("ready")
        out.int(ready)
        if let species {
            out.key("species")
            out.string(species)
        }
        out.key("unavailable")
        out.int(unavailable)
        if let water {
            out.key("water")
            out.string(water.rawValue)
        }
        out.endObject()
    }
}
