// Prices per unit to a tenth of a cent, as pumps show them ($3.459/gal = 345.9 minor units),
// derived both ways exactly, and older databases' whole-cent prices carried over.
import Foundation
import GRDB
import RecordsService
import Testing
import Wire

@Suite("Fill-up prices")
struct PriceTests {
    @Test func aPumpPriceToATenthOfACentIsKeptAndTheTotalDerivedExactly() async throws {
        let records = try Harness()
        let vehicle = try await records.vehicle()
        let fill = try await records.ok(
            "records.fillup.add", #"{"vehicleId":"\#(vehicle)","odometer":100,"volume":10.5,"pricePerUnitMinor":345.9}"#)
        // 10.5 × 3.459 = 36.3195 → 3632 cents (half up).
        #expect(fill["pricePerUnitMinor"] == 345.9)
        #expect(fill["totalMinor"] == 3632)
        #expect(fill["derived"] == "total")

        // From a total: 3632 / 10.5 = 345.90476… → 345.905 (half up, to a thousandth).
        let other = try await records.ok(
            "records.fillup.add", #"{"vehicleId":"\#(vehicle)","odometer":200,"volume":10.5,"totalMinor":3632}"#)
        #expect(other["pricePerUnitMinor"] == 345.905)

        let tooFine = try await records.fails(
            "records.fillup.add", #"{"vehicleId":"\#(vehicle)","odometer":300,"volume":1,"pricePerUnitMinor":345.9001}"#)
        #expect(tooFine.code == .invalidArgument)
        #expect(tooFine.field == "pricePerUnitMinor")
    }

    @Test func wholeCentPricesOfOlderDatabasesAreCarriedOver() throws {
        let database = try DatabaseQueue()
        try RecordsService.migrator.migrate(database, upTo: "records.v2.photos")
        try database.write { db in
            try db.execute(
                sql: """
                    INSERT INTO vehicle (id, userId, nickname, distanceUnit, volumeUnit, createdAt, updatedAt)
                    VALUES ('v1', 'alice', 'Civic', 'mi', 'gal', 1, 1);
                    INSERT INTO fillup (id, userId, vehicleId, date, odometer, volume, pricePerUnitMinor, totalMinor,
                        derived, currency, full, missed, createdAt, updatedAt)
                    VALUES ('f1', 'alice', 'v1', 1, 1000000, 10000, 345, 3450, 'total', 'USD', 1, 0, 1, 1);
                    """)
        }
        try RecordsService.migrator.migrate(database)
        let price = try database.read { db in
            try Int64.fetchOne(db, sql: "SELECT pricePerUnitMilliMinor FROM fillup WHERE id = 'f1'")
        }
        #expect(price == 345_000)
    }
}
