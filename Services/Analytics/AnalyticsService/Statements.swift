// The projections run the same few statements for every event; compiling them once per
// connection (GRDB's statement cache) instead of once per call is most of a bulk replay's
// speed. SQL stays fixed text with bound arguments.
import GRDB

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
