// The full-to-full walk (docs/fuel-economy.md) as a pure step: the state
// after the previous fill-up and this fill-up give this fill-up's result and the state after
// it. The projection stores both per fill-up so that a change re-walks from the first
// affected position only. Distances and volumes are integer thousandths; money is minor
// units; nothing here divides.
import Contracts

/// One fill-up as the walk sees it, in the vehicle's own units.
struct FuelFill: Sendable, Equatable {
    var id: String
    /// Milliseconds since 1970.
    var date: Int64
    var odometer: Int64?
    var trip: Int64?
    var volume: Int64
    var totalMinor: Int64
    var currency: String
    var full: Bool
    var missed: Bool

    /// The walk's order: date, then odometer (none first), then id.
    var key: FillKey { FillKey(date: date, odoKey: odometer ?? -1, id: id) }
}

struct FillKey: Sendable, Comparable, Hashable {
    var date: Int64
    var odoKey: Int64
    var id: String

    static func < (a: FillKey, b: FillKey) -> Bool {
        (a.date, a.odoKey, a.id) < (b.date, b.odoKey, b.id)
    }
}

/// What happened at one fill-up (the outcome is part of the contract: Contracts/Fuel.swift).
extension FuelOutcome {
    /// Why this fill-up has no economy (nil when it has one).
    var reason: String? {
        switch self {
        case .first: "first fill-up: it sets the starting odometer"
        case .partial: "partial fill-up: counted when the next full fill-up closes the segment"
        case .closed: nil
        case .missed: "a fill-up before this one was not recorded: counting restarts here"
        case .distanceUnknown: "no odometer reading to measure from and no trip distance: counting restarts here"
        case .odometerBackwards: "the odometer reads less than the distance already counted: counting restarts here"
        case .noDistance: "no distance driven since the last full fill-up"
        }
    }
}

/// The result of one fill-up. A closed segment carries its distance, volume and cost (the
/// cost only when every fill-up in it used one currency).
struct FuelResult: Sendable, Equatable {
    var outcome: FuelOutcome
    var distance: Int64? = nil
    var volume: Int64? = nil
    var costMinor: Int64? = nil
    var currency: String? = nil

    /// Used for ordering best and worst only; values are computed exactly at the end.
    var ratio: Double? {
        guard let distance, let volume, volume > 0 else { return nil }
        return Double(distance) / Double(volume)
    }
}

/// The walk's state between fill-ups.
struct FuelState: Sendable, Equatable {
    /// A starting point exists (some fill-up came before).
    var anchored = false
    /// The odometer as counted so far (the last reading plus trips since), when known.
    var reading: Int64?
    /// The open segment: partial fill-ups since the last full one.
    var openFills = 0
    var openDistance: Int64 = 0
    var openVolume: Int64 = 0
    var openCostMinor: Int64 = 0
    /// The open segment's currency; `FuelState.mixed` when it has more than one.
    var openCurrency: String?

    static let start = FuelState()
    static let mixed = "*"

    /// Anchored at `reading` with nothing open.
    static func restart(at reading: Int64?) -> FuelState {
        FuelState(anchored: true, reading: reading)
    }
}

enum FuelWalk {
    /// One step of the walk.
    static func step(_ state: FuelState, _ fill: FuelFill) -> (FuelResult, FuelState) {
        guard state.anchored else { return (FuelResult(outcome: .first), .restart(at: fill.odometer)) }
        if fill.missed { return (FuelResult(outcome: .missed), .restart(at: fill.odometer)) }
        let distance: Int64
        if let odometer = fill.odometer, let reading = state.reading {
            distance = odometer - reading
            if distance < 0 { return (FuelResult(outcome: .odometerBackwards), .restart(at: odometer)) }
        } else if let trip = fill.trip {
            distance = trip
        } else {
            return (FuelResult(outcome: .distanceUnknown), .restart(at: fill.odometer))
        }
        let reading = fill.odometer ?? state.reading.map { $0 + distance }
        let segmentDistance = state.openDistance + distance
        let segmentVolume = state.openVolume + fill.volume
        let segmentCost = state.openCostMinor + fill.totalMinor
        let currency: String =
            switch state.openCurrency {
            case nil: fill.currency
            case fill.currency?: fill.currency
            default: FuelState.mixed
            }
        if fill.full {
            guard segmentDistance > 0 else { return (FuelResult(outcome: .noDistance), .restart(at: reading)) }
            let single = currency != FuelState.mixed
            return (
                FuelResult(
                    outcome: .closed, distance: segmentDistance, volume: segmentVolume,
                    costMinor: single ? segmentCost : nil, currency: single ? currency : nil),
                .restart(at: reading)
            )
        }
        var after = FuelState.restart(at: reading)
        after.openFills = state.openFills + 1
        after.openDistance = segmentDistance
        after.openVolume = segmentVolume
        after.openCostMinor = segmentCost
        after.openCurrency = currency
        return (FuelResult(outcome: .partial), after)
    }
}
