// The projections run the same few statements for every event; compiling them once per
// connection (GRDB's statement cache) instead of once per call is most of a bulk replay's
// speed. SQL stays fixed text with bound arguments.
import GRDB
import GRDBSQLite

extension Database {
    func execute(cached sql: String, arguments: StatementArguments = []) throws {
        try cachedStatement(sql: sql).execute(arguments: arguments)
    }
}

extension Row {
    static func fetchOne(_ db: Database, cached sql: String, arguments: StatementArguments = []) throws -> Row? {
        try Row.fetchOne(db.cachedStatement(sql: sql), arguments: arguments)
    }

    static func fetchAll(_ db: Database, cached sql: String, arguments: StatementArguments = []) throws -> [Row] {
        try Row.fetchAll(db.cachedStatement(sql: sql), arguments: arguments)
    }
}

extension DatabaseValueConvertible where Self: StatementColumnConvertible {
    static func fetchOne(_ db: Database, cached sql: String, arguments: StatementArguments = []) throws -> Self? {
        try fetchOne(db.cachedStatement(sql: sql), arguments: arguments)
    }
}

/// A cached statement bound and stepped through SQLite's C API: the replay runs a few
/// statements hundreds of thousands of times per batch, and building a `StatementArguments`
/// of boxed values per row (then binding it value by value through GRDB's generic path)
/// cost more than SQLite's own work (docs/performance.md, "The replay, a later round"). The SQL is still
/// fixed text with bound parameters; one `Bound` is used by one batch on the writer's
/// connection, or by one query on a reader's (`SuggestQueries.suggest`), never shared.
struct Bound {
    let statement: Statement
    private var handle: OpaquePointer { statement.sqliteStatement }

    init(_ db: Database, _ sql: String) throws {
        statement = try db.cachedStatement(sql: sql)
        // whatever GRDB bound last is not ours to keep
        sqlite3_reset(statement.sqliteStatement)
        sqlite3_clear_bindings(statement.sqliteStatement)
    }

    /// SQLite copies the text (SQLITE_TRANSIENT): the string may go as soon as this returns.
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    func bind(_ index: Int32, _ text: String) {
        var text = text
        text.withUTF8 { utf8 in
            if let base = utf8.baseAddress {
                base.withMemoryRebound(to: CChar.self, capacity: utf8.count) {
                    _ = sqlite3_bind_text(handle, index, $0, Int32(utf8.count), Self.transient)
                }
            } else {
                _ = sqlite3_bind_text(handle, index, "", 0, Self.transient)
            }
        }
    }

    /// Binds text SQLite does not copy (SQLITE_STATIC): it must stay in place until the
    /// parameter is bound again or the bindings are cleared (`clear`).
    func bind(_ index: Int32, static text: UnsafeBufferPointer<CChar>) {
        sqlite3_bind_text(handle, index, text.baseAddress, Int32(text.count), nil)
    }

    /// Binds bytes SQLite does not copy (SQLITE_STATIC): they must stay in place until the
    /// statement has run; `unbind` after.
    func bind(_ index: Int32, static blob: UnsafeRawBufferPointer) {
        sqlite3_bind_blob(handle, index, blob.baseAddress, Int32(blob.count), nil)
    }

    func unbind(_ index: Int32) { sqlite3_bind_null(handle, index) }

    /// Binds a pointer only a function that asks for `type` can read (SQLite's pointer
    /// passing; to SQL it is NULL). It must stay valid until the statement has run; `unbind` after.
    func bind(_ index: Int32, pointer: UnsafeMutableRawPointer, type: StaticString) {
        sqlite3_bind_pointer(
            handle, index, pointer, UnsafeRawPointer(type.utf8Start).assumingMemoryBound(to: CChar.self), nil)
    }

    /// Forgets every binding (before text bound with `static:` goes away).
    func clear() { sqlite3_clear_bindings(handle) }

    func bind(_ index: Int32, _ text: String?) {
        if let text { bind(index, text) } else { sqlite3_bind_null(handle, index) }
    }

    func bind(_ index: Int32, _ value: Int64) { sqlite3_bind_int64(handle, index, value) }
    func bind(_ index: Int32, _ value: Int) { sqlite3_bind_int64(handle, index, Int64(value)) }
    func bind(_ index: Int32, _ value: Bool) { sqlite3_bind_int64(handle, index, value ? 1 : 0) }

    func bind(_ index: Int32, _ value: Int64?) {
        if let value { sqlite3_bind_int64(handle, index, value) } else { sqlite3_bind_null(handle, index) }
    }

    func bind(_ index: Int32, _ value: Double?) {
        if let value { sqlite3_bind_double(handle, index, value) } else { sqlite3_bind_null(handle, index) }
    }

    /// Runs a statement that returns no rows, then resets it (its bindings stay until replaced).
    func run() throws {
        let code = sqlite3_step(handle)
        sqlite3_reset(handle)
        guard code == SQLITE_DONE || code == SQLITE_ROW else { throw error(code) }
    }

    /// Runs a query and gives its first row to `read` (nil when there is none).
    func first<T>(_ read: (Columns) throws -> T) throws -> T? {
        defer { sqlite3_reset(handle) }
        let code = sqlite3_step(handle)
        if code == SQLITE_ROW { return try read(Columns(handle: handle)) }
        guard code == SQLITE_DONE else { throw error(code) }
        return nil
    }

    /// Runs a query and gives each row to `read`.
    func each(_ read: (Columns) throws -> Void) throws {
        defer { sqlite3_reset(handle) }
        while true {
            let code = sqlite3_step(handle)
            if code == SQLITE_DONE { return }
            guard code == SQLITE_ROW else { throw error(code) }
            try read(Columns(handle: handle))
        }
    }

    private func error(_ code: Int32) -> DatabaseError {
        let connection = sqlite3_db_handle(handle)
        return DatabaseError(
            resultCode: ResultCode(rawValue: sqlite3_extended_errcode(connection)),
            message: String(cString: sqlite3_errmsg(connection)), sql: statement.sql)
    }

    /// Runs a statement that returns no rows, then resets it: true when it inserted, changed
    /// or deleted a row (false, for instance, when an insert's `ON CONFLICT DO NOTHING` took effect).
    func changed() throws -> Bool {
        try run()
        return sqlite3_changes(sqlite3_db_handle(handle)) > 0
    }

    /// The current row's columns, by position (counted from `offset`).
    struct Columns {
        let handle: OpaquePointer
        var offset: Int32 = 0

        /// The columns from `first` on, as if it were the first.
        func from(_ first: Int32) -> Columns { Columns(handle: handle, offset: offset + first) }

        func isNull(_ i: Int32) -> Bool { sqlite3_column_type(handle, offset + i) == SQLITE_NULL }
        func int64(_ i: Int32) -> Int64 { sqlite3_column_int64(handle, offset + i) }
        func int64OrNil(_ i: Int32) -> Int64? { isNull(i) ? nil : int64(i) }
        func int(_ i: Int32) -> Int { Int(sqlite3_column_int64(handle, offset + i)) }
        func bool(_ i: Int32) -> Bool { sqlite3_column_int64(handle, offset + i) != 0 }
        func double(_ i: Int32) -> Double? { isNull(i) ? nil : sqlite3_column_double(handle, offset + i) }
        func string(_ i: Int32) -> String { string(orNil: i) ?? "" }
        /// The column's bytes, valid until the statement steps or resets (empty for NULL).
        func blob(_ i: Int32) -> UnsafeRawBufferPointer {
            guard let bytes = sqlite3_column_blob(handle, offset + i) else {
                return UnsafeRawBufferPointer(start: nil, count: 0)
            }
            return UnsafeRawBufferPointer(start: bytes, count: Int(sqlite3_column_bytes(handle, offset + i)))
        }
        func string(orNil i: Int32) -> String? {
            guard let text = sqlite3_column_text(handle, offset + i) else { return nil }
            let count = Int(sqlite3_column_bytes(handle, offset + i))
            return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
        }
    }
}
