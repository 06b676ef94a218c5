// The units a vehicle's fill-ups are kept in, defined once for records (which validates
// them), analytics (which converts between them) and the CLI (which offers them as options).
// Conversion factors are exact: the international mile is 1.609344 km, the US gallon
// 3.785411784 L, the imperial gallon 4.54609 L.
import Foundation

/// A string enumeration whose decoding failure lists the accepted values:
/// `water: must be one of fresh, salt (got "lake")`.
public protocol WireEnum: RawRepresentable, CaseIterable, Codable, Sendable, Hashable where RawValue == String {}

extension WireEnum {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let value = Self(rawValue: text) else {
            let accepted = Self.allCases.map(\.rawValue).joined(separator: ", ")
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "must be one of \(accepted) (got \"\(text)\")")
        }
        self = value
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}

public enum DistanceUnit: String, WireEnum {
    case mi, km

    /// Millionths of a kilometre in one unit, exactly (a mile is 1.609344 km).
    public var kilometreMillionths: Int64 { self == .mi ? 1_609_344 : 1_000_000 }
}

public enum VolumeUnit: String, WireEnum {
    case gal, l, ukgal

    /// Billionths of a litre in one unit, exactly (a US gallon is 3.785411784 L, an imperial
    /// one 4.54609 L).
    public var litreBillionths: Int64 {
        switch self {
        case .gal: 3_785_411_784
        case .l: 1_000_000_000
        case .ukgal: 4_546_090_000
        }
    }
}
