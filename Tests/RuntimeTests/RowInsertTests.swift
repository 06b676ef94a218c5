// `insertRow` (Shared/Storage/RowInsert.swift) stores the row GRDB's `insert(db)` stores:
// records with every kind of column it takes, values and nils generated, inserted both ways
// into twin tables and read back column by column; a record it does not take (a Date
// inside) is still inserted, by GRDB.
import Foundation
import GRDB
import Storage
import Testing
import TestSupport
import Wire

@Suite struct RowInsertTests {
    struct Sample: Codable, PersistableRecord, FetchableRecord {
        static let databaseTableName = "sample"
        var id: String
        var note: String?
        var count: Int64
        var small: Int?
        var ratio: Double
        var maybeRatio: Double?
        var flag: Bool
        var maybeFlag: Bool?
        var bytes: Data
        var maybeBytes: Data?
        var quantity: Milli
        var maybeQuantity: Milli?
    }

    struct Dated: Codable, PersistableRecord {
        static let databaseTableName = "dated"
        var id: String
        var at: Date
    }

    func database() throws -> DatabaseQueue {
        let queue = try DatabaseQueue()
        try queue.write { db in
            for table in ["sample", "twin"] {
                try db.execute(
                    sql: """
                        CREATE TABLE \(table) (id TEXT PRIMARY KEY, note TEXT, count INTEGER NOT NULL, small INTEGER,
                            ratio REAL NOT NULL, maybeRatio REAL, flag INTEGER NOT NULL, maybeFlag INTEGER,
                            bytes BLOB NOT NULL, maybeBytes BLOB, quantity INTEGER NOT NULL, maybeQuantity INTEGER DEFAULT 7)
                        """)
            }
            try db.execute(sql: "CREATE TABLE dated (id TEXT PRIMARY KEY, at TEXT)")
            try db.execute(sql: "CREATE TABLE datedTwin (id TEXT PRIMARY KEY, at TEXT)")
        }
        return queue
    }

    @Test func storesWhatGRDBStores() throws {
        let queue = try database()
        var random = SplitMix(seed: 9)
        func maybe<T>(_ value: T) -> T? { random.next(below: 3) == 0 ? nil : value }
        let texts = ["", "plain", "Gädda 🐟", "quote \" and 'single'", "NUL\u{0}inside", String(repeating: "x", count: 300)]
        try queue.write { db in
            for i in 0..<300 {
                let sample = Sample(
                    id: "s\(i)", note: maybe(random.pick(texts)), count: Int64(bitPattern: random.next()),
                    small: maybe(Int(Int32(truncatingIfNeeded: random.next()))),
                    ratio: Double(Int64(bitPattern: random.next())) / 1e9, maybeRatio: maybe(Double(random.next(below: 1000)) / 7),
                    flag: random.next(below: 2) == 0, maybeFlag: maybe(random.next(below: 2) == 0),
                    bytes: Data((0..<random.next(below: 40)).map { _ in UInt8(random.next(below: 256)) }),
                    maybeBytes: maybe(Data([0, 1, 2])), quantity: Milli(thousandths: Int64(random.next(below: 1_000_000)) - 500_000),
                    maybeQuantity: maybe(Milli(thousandths: 12_345)))
                try sample.insertRow(db)
                // the same record through GRDB, into the twin table (renamed to GRDB's table
                // name for the insert)
                try db.execute(sql: "ALTER TABLE sample RENAME TO sampleHeld")
                try db.execute(sql: "ALTER TABLE twin RENAME TO sample")
                try sample.insert(db)
                try db.execute(sql: "ALTER TABLE sample RENAME TO twin")
                try db.execute(sql: "ALTER TABLE sampleHeld RENAME TO sample")
            }
        }
        let (mine, theirs) = try queue.read { db in
            (
                try Row.fetchAll(db, sql: "SELECT *, typeof(small), typeof(flag), typeof(quantity) FROM sample ORDER BY id"),
                try Row.fetchAll(db, sql: "SELECT *, typeof(small), typeof(flag), typeof(quantity) FROM twin ORDER BY id")
            )
        }
        #expect(mine.count == 300)
        #expect(mine == theirs)
        // nil is stored as NULL, not left to the column's default
        let defaults = try queue.read { db in
            try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM sample WHERE maybeQuantity = 7") ?? -1
        }
        #expect(defaults == 0)
    }

    @Test func aRecordItDoesNotTakeIsInsertedByGRDB() throws {
        let queue = try database()
        let at = Date(timeIntervalSince1970: 1_780_000_000.25)
        try queue.write { db in
            try Dated(id: "d", at: at).insertRow(db)
            try db.execute(sql: "ALTER TABLE dated RENAME TO datedMine")
            try db.execute(sql: "ALTER TABLE datedTwin RENAME TO dated")
            try Dated(id: "d", at: at).insert(db)
        }
        let (mine, theirs) = try queue.read { db in
            (
                try String.fetchOne(db, sql: "SELECT at FROM datedMine"),
                try String.fetchOne(db, sql: "SELECT at FROM dated")
            )
        }
        #expect(mine != nil)
        #expect(mine == theirs)
    }
}
