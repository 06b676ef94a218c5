// Exact quantities in SQLite: a `Milli` is stored as its INTEGER count of thousandths and read
// back from one, so a record type can hold `Milli` columns without a floating-point step
// (Shared/Wire/Quantities.swift). A REAL or TEXT value is refused (nil), not converted.
import GRDB
import Wire

extension Milli: DatabaseValueConvertible {
    public var databaseValue: DatabaseValue { thousandths.databaseValue }

    public static func fromDatabaseValue(_ dbValue: DatabaseValue) -> Milli? {
        guard case .int64(let thousandths) = dbValue.storage else { return nil }
        return Milli(thousandths: thousandths)
    }
}
