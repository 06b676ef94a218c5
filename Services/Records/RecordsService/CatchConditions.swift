// Weather and tide for a catch arrive from the weather-fetcher as events: `conditions.ready`
// marks the catch `ready` with its one-line summary, `conditions.unavailable` marks it
// `unavailable` with the reason. A result for a place or time the catch no longer has (it
// was edited while the fetch ran) is ignored: the refetch the edit caused will answer.
// The full details stay with the weather-fetcher (`weather.conditions.get`).
import Contracts
import Foundation
import GRDB
import Runtime
import Storage
import Wire

extension RecordsService {
    /// Applies one of the weather-fetcher's events, in the consumer's transaction.
    public static func applyWeatherEvent(_ db: Database, _ event: Event) throws {
        guard let userId = event.userId else { return }
        switch event.type {
        case WeatherEvents.conditionsReady:
            let ready = try event.decode(ConditionsReady.self)
            guard let row = try pendingCatch(db, userId: userId, id: ready.catchId),
                matches(row, ready.conditions.latitude, ready.conditions.longitude, ready.conditions.hour),
                sameWater(row, ready.conditions.water)
            else { return }  // settled already, or fetched for the catch's old place, time or water
            try db.execute(
                sql: """
                    UPDATE fishCatch SET conditionsStatus = 'ready', conditionsReason = NULL, conditionsSummary = ?
                    WHERE userId = ? AND id = ?
                    """,
                arguments: [JSONValue.string(ready.summary).jsonText, userId, ready.catchId])
        case WeatherEvents.conditionsUnavailable:
            let unavailable = try event.decode(ConditionsUnavailable.self)
            guard let row = try pendingCatch(db, userId: userId, id: unavailable.catchId) else { return }
            if let latitude = unavailable.latitude, let longitude = unavailable.longitude, let hour = unavailable.hour,
                !matches(row, latitude, longitude, hour)
            {
                return  // about the catch's old place or time
            }
            guard sameWater(row, unavailable.water) else { return }
            try db.execute(
                sql: """
                    UPDATE fishCatch SET conditionsStatus = 'unavailable', conditionsReason = ?, conditionsSummary = NULL
                    WHERE userId = ? AND id = ?
                    """,
                arguments: [unavailable.reason, userId, unavailable.catchId])
        default:
            return
        }
    }

    private static func pendingCatch(_ db: Database, userId: String, id: String) throws -> Row? {
        try Row.fetchOne(
            db,
            sql: "SELECT latitude, longitude, caughtAt, water FROM fishCatch WHERE userId = ? AND id = ? AND conditionsStatus = 'pending'",
            arguments: [userId, id])
    }

    /// The answer is for the catch's current place (to 2 decimals) and time (the same
    /// nearest hour: `CatchHour`; an `unavailable` answer carries the catch time it was made
    /// for, a `ready` one its hour).
    private static func matches(_ row: Row, _ latitude: Double, _ longitude: Double, _ hour: Date) -> Bool {
        rounded(row["latitude"]) == rounded(latitude) && rounded(row["longitude"]) == rounded(longitude)
            && CatchHour.same(hour.ms, row["caughtAt"])
    }

    /// The answer was made for the catch's water (answers from before this was sent say nothing).
    private static func sameWater(_ row: Row, _ water: Water?) -> Bool {
        guard let water else { return true }
        return (row["water"] as String?) == water.rawValue
    }

    /// Two decimals, as the weather-fetcher rounds the place it asks for.
    private static func rounded(_ value: Double) -> Double { (value * 100).rounded() / 100 }
}
