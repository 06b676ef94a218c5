// Inserting a Codable record without GRDB's record machinery: the row's fields are read by
// its `Encodable` conformance, as GRDB reads them, into a list of columns and values, and
// the INSERT is a statement compiled once per connection. GRDB's `insert(db)` puts the
// fields in a dictionary of case-insensitive column names and looks the statement up by
// them; that cost 20–25 µs of a 500 µs write (docs/performance.md, "The write path, a later
// round"). The stored row is the same: Tests/RuntimeTests/RowInsertTests.swift inserts rows
// of every kind of column both ways and compares them.
//
// Supported: the values GRDB stores as themselves (DatabaseValueConvertible: text,
// integers, reals, booleans, blobs, and types such as `Milli` that say how they are
// stored), and nil, stored as NULL (as GRDB does; Swift's synthesized `encodeIfPresent`
// would leave the column out). A record with anything else in it (a Date or UUID, which
// GRDB formats by its strategies; a nested value, which it stores as JSON) is inserted by
// GRDB's `insert(db)` as before.
import Foundation
import GRDB
import Synchronization

extension TableRecord where Self: PersistableRecord & Encodable {
    /// Inserts this record: the row GRDB's `insert(db)` stores, without its overhead.
    public func insertRow(_ db: Database) throws {
        let columns = ColumnList()
        do {
            try encode(to: ColumnEncoder(columns: columns))
        } catch is ColumnEncoder.Unsupported {
            return try insert(db)
        }
        let statement = try db.cachedStatement(sql: RowInsertSQL.text(Self.self, columns.names))
        // The values as `(any DatabaseValueConvertible)?`: GRDB's initializer for a sequence
        // of one concrete type maps it with a key path, which a generic context builds at
        // run time, demangling its type names, on every call (7 µs of a write's commit).
        statement.setUncheckedArguments(StatementArguments(columns.values))
        try statement.execute()
    }
}

/// The INSERT of a record type's table and columns, made once per type (a type encodes the
/// same columns every time: nil is a column too).
private enum RowInsertSQL {
    private static let texts = Mutex<[ObjectIdentifier: (columns: [String], sql: String)]>([:])

    static func text<Record: TableRecord>(_ type: Record.Type, _ columns: [String]) -> String {
        let key = ObjectIdentifier(type)
        if let known = texts.withLock({ $0[key] }), known.columns == columns { return known.sql }
        let sql =
            "INSERT INTO \(type.databaseTableName.quotedDatabaseIdentifier) (\(columns.map(\.quotedDatabaseIdentifier).joined(separator: ", "))) VALUES (\(Array(repeating: "?", count: columns.count).joined(separator: ", ")))"
        texts.withLock { $0[key] = (columns, sql) }
        return sql
    }
}

/// The columns and values read so far.
private final class ColumnList {
    var names: [String] = []
    var values: [(any DatabaseValueConvertible)?] = []

    init() {
        names.reserveCapacity(16)
        values.reserveCapacity(16)
    }

    func append(_ key: some CodingKey, _ value: DatabaseValue) {
        // DatabaseValue fits an existential's inline buffer: no allocation per value.
        names.append(key.stringValue)
        values.append(value)
    }
}

/// Reads a record's top-level fields as columns (see the header for what it takes).
private struct ColumnEncoder: Encoder {
    struct Unsupported: Error {}

    let columns: ColumnList
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(Columns(columns: columns))
    }

    // A record is a keyed container of columns; anything else is not a row of columns.
    func unkeyedContainer() -> any UnkeyedEncodingContainer { RefusingContainer() }
    func singleValueContainer() -> any SingleValueEncodingContainer { RefusingContainer() }

    struct Columns<Key: CodingKey>: RefusesNesting {
        let columns: ColumnList
        var codingPath: [any CodingKey] { [] }

        mutating func encodeNil(forKey key: Key) throws { columns.append(key, .null) }
        mutating func encode(_ value: Bool, forKey key: Key) throws { columns.append(key, value.databaseValue) }
        mutating func encode(_ value: String, forKey key: Key) throws { columns.append(key, value.databaseValue) }
        mutating func encode(_ value: Double, forKey key: Key) throws { columns.append(key, value.databaseValue) }
        mutating func encode(_ value: Float, forKey key: Key) throws { columns.append(key, value.databaseValue) }
        mutating func encode(_ value: Int, forKey key: Key) throws { columns.append(key, value.databaseValue) }
        mutating func encode(_ value: Int8, forKey key: Key) throws { columns.append(key, value.databaseValue) }
        mutating func encode(_ value: Int16, forKey key: Key) throws { columns.append(key, value.databaseValue) }
        mutating func encode(_ value: Int32, forKey key: Key) throws { columns.append(key, value.databaseValue) }
        mutating func encode(_ value: Int64, forKey key: Key) throws { columns.append(key, value.databaseValue) }
        mutating func encode(_ value: UInt8, forKey key: Key) throws { columns.append(key, value.databaseValue) }
        mutating func encode(_ value: UInt16, forKey key: Key) throws { columns.append(key, value.databaseValue) }
        mutating func encode(_ value: UInt32, forKey key: Key) throws { columns.append(key, value.databaseValue) }
        // UInt and UInt64 may not fit SQLite's integers: GRDB's own rules decide.
        mutating func encode(_ value: UInt, forKey key: Key) throws { throw Unsupported() }
        mutating func encode(_ value: UInt64, forKey key: Key) throws { throw Unsupported() }

        mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
            // Dates and UUIDs are stored by GRDB's strategies, not as their own values.
            guard !(value is Date), !(value is UUID), let convertible = value as? any DatabaseValueConvertible else {
                throw Unsupported()
            }
            columns.append(key, convertible.databaseValue)
        }

        // nil is NULL (GRDB stores it so), not a column left out.
        mutating func encodeIfPresent(_ value: Bool?, forKey key: Key) throws { try encodeOptional(value, key) }
        mutating func encodeIfPresent(_ value: String?, forKey key: Key) throws { try encodeOptional(value, key) }
        mutating func encodeIfPresent(_ value: Double?, forKey key: Key) throws { try encodeOptional(value, key) }
        mutating func encodeIfPresent(_ value: Float?, forKey key: Key) throws { try encodeOptional(value, key) }
        mutating func encodeIfPresent(_ value: Int?, forKey key: Key) throws { try encodeOptional(value, key) }
        mutating func encodeIfPresent(_ value: Int8?, forKey key: Key) throws { try encodeOptional(value, key) }
        mutating func encodeIfPresent(_ value: Int16?, forKey key: Key) throws { try encodeOptional(value, key) }
        mutating func encodeIfPresent(_ value: Int32?, forKey key: Key) throws { try encodeOptional(value, key) }
        mutating func encodeIfPresent(_ value: Int64?, forKey key: Key) throws { try encodeOptional(value, key) }
        mutating func encodeIfPresent(_ value: UInt?, forKey key: Key) throws { try encodeOptional(value, key) }
        mutating func encodeIfPresent(_ value: UInt8?, forKey key: Key) throws { try encodeOptional(value, key) }
        mutating func encodeIfPresent(_ value: UInt16?, forKey key: Key) throws { try encodeOptional(value, key) }
        mutating func encodeIfPresent(_ value: UInt32?, forKey key: Key) throws { try encodeOptional(value, key) }
        mutating func encodeIfPresent(_ value: UInt64?, forKey key: Key) throws { try encodeOptional(value, key) }
        mutating func encodeIfPresent<T: Encodable>(_ value: T?, forKey key: Key) throws {
            try encodeOptional(value, key)
        }

        private mutating func encodeOptional<T: Encodable>(_ value: T?, _ key: Key) throws {
            if let value { try encode(value, forKey: key) } else { try encodeNil(forKey: key) }
        }

    }
}

// What a row of columns does not hold: every write to these throws `Unsupported`, and the
// record is inserted by GRDB.

private struct RefusingEncoder: Encoder {
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }
    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(RefusingKeyed<Key>())
    }
    func unkeyedContainer() -> any UnkeyedEncodingContainer { RefusingContainer() }
    func singleValueContainer() -> any SingleValueEncodingContainer { RefusingContainer() }
}

/// A keyed container whose nested containers and super encoders refuse everything.
private protocol RefusesNesting: KeyedEncodingContainerProtocol {}

extension RefusesNesting {
    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type, forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        KeyedEncodingContainer(RefusingKeyed<NestedKey>())
    }
    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer { RefusingContainer() }
    mutating func superEncoder() -> any Encoder { RefusingEncoder() }
    mutating func superEncoder(forKey key: Key) -> any Encoder { RefusingEncoder() }
}

private struct RefusingKeyed<Key: CodingKey>: RefusesNesting {
    var codingPath: [any CodingKey] { [] }
    mutating func encodeNil(forKey key: Key) throws { throw ColumnEncoder.Unsupported() }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws { throw ColumnEncoder.Unsupported() }
}

private struct RefusingContainer: UnkeyedEncodingContainer, SingleValueEncodingContainer {
    var codingPath: [any CodingKey] { [] }
    var count: Int { 0 }
    mutating func encodeNil() throws { throw ColumnEncoder.Unsupported() }
    mutating func encode<T: Encodable>(_ value: T) throws { throw ColumnEncoder.Unsupported() }
    mutating func encode(_ value: Bool) throws { throw ColumnEncoder.Unsupported() }
    mutating func encode(_ value: String) throws { throw ColumnEncoder.Unsupported() }
    mutating func encode(_ value: Double) throws { throw ColumnEncoder.Unsupported() }
    mutating func encode(_ value: Float) throws { throw ColumnEncoder.Unsupported() }
    mutating func encode(_ value: Int) throws { throw ColumnEncoder.Unsupported() }
    mutating func encode(_ value: Int8) throws { throw ColumnEncoder.Unsupported() }
    mutating func encode(_ value: Int16) throws { throw ColumnEncoder.Unsupported() }
    mutating func encode(_ value: Int32) throws { throw ColumnEncoder.Unsupported() }
    mutating func encode(_ value: Int64) throws { throw ColumnEncoder.Unsupported() }
    mutating func encode(_ value: UInt) throws { throw ColumnEncoder.Unsupported() }
    mutating func encode(_ value: UInt8) throws { throw ColumnEncoder.Unsupported() }
    mutating func encode(_ value: UInt16) throws { throw ColumnEncoder.Unsupported() }
    mutating func encode(_ value: UInt32) throws { throw ColumnEncoder.Unsupported() }
    mutating func encode(_ value: UInt64) throws { throw ColumnEncoder.Unsupported() }
    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        KeyedEncodingContainer(RefusingKeyed<NestedKey>())
    }
    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer { RefusingContainer() }
    mutating func superEncoder() -> any Encoder { RefusingEncoder() }
}
