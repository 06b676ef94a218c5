// The records service: the five logbooks' data (fuel, catches, expenses, attendance, time).
// Every method acts for the caller (`.user` access) and every query is scoped by their user
// id; a foreign id answers `not_found`. Writes go through the router's group commit, each
// with exactly one outbox event in the same transaction. The wire contract is in
// docs/protocol.md, "Records service".
import Contracts
import Foundation
import GRDB
import Logging
import Runtime
import ServiceLifecycle
import Storage
import Wire

public enum RecordsService {
    public static let name = "records"

    /// The records schema (the runtime adds its shared tables).
    public static var migrator: DatabaseMigrator { Schema.migrator }

    /// Every records method on a router bound to `host`'s database.
    /// - Parameters:
    ///   - photos: where catch photos are stored (shared with its sweeper).
    ///   - now: the clock (tests move it to exercise timers).
    public static func router(host: ServiceHost, photos: PhotoStore, now: @escaping Now = { Date() }) -> Router {
        var router = host.makeRouter()
        let records = Records(database: host.database, photos: photos, now: now)
        records.registerVehicles(&router)
        records.registerFillups(&router)
        records.registerCatches(&router)
        records.registerExpenses(&router)
        records.registerAttendance(&router)
        records.registerActivities(&router)
        records.registerTimer(&router)
        return router
    }

    /// Applies one of auth's events to the records database: `user.deleted` purges every
    /// row of that user and the idempotency keys they used. Runs in the consumer's
    /// transaction, with its checkpoint.
    public static func applyAuthEvent(_ db: Database, _ event: Event) throws {
        guard event.type == AuthEvents.userDeleted else { return }
        let deleted = try event.decode(AuthEvents.UserDeleted.self)
        try purge(db, userId: deleted.userId)
    }

    /// Deletes every row a user owns, in every records table, and blanks their past events.
    public static func purge(_ db: Database, userId: String) throws {
        for sql in Schema.userTables {
            try db.execute(sql: sql, arguments: [userId])
        }
        // Their photos' files go at the next sweep (no hook runs after this transaction).
        try PhotoStore.deleteUnreferenced(db)
        try Idempotency.purge(db, principal: userId)
        try Outbox.redact(db, userId: userId)
    }
}

/// Builds the whole records service for `main`: its host on the stack's records database,
/// the session cache and both consumers of auth's events.
/// With shards (LOGBOOK_RECORDS_SHARDS > 1) this process is the shard LOGBOOK_RECORDS_SHARD
/// names, under its instance name (`records`, `records-2`, …: its own endpoints, database and
/// photos) and with its guard around every route (Shards.swift).
public func makeRecordsService(stack: StackConfiguration, logger: Logger) throws -> [any Service] {
    let shard = try stack.ownRecordsShard()
    let instance = StackConfiguration.recordsInstance(shard)
    let sessions = try AuthSessions(configuration: stack, logger: logger)
    let host = try ServiceHost(
        descriptor: ServiceDescriptor(name: instance), database: stack.databaseSettings(instance),
        migrator: RecordsService.migrator, eventsEndpoint: stack.eventsEndpoint(instance), curve: stack.curve,
        logger: logger)
    let photoSettings = try PhotoSettings(stack: stack, instance: instance)
    let photos = PhotoStore(settings: photoSettings, database: host.database, logger: host.logger)
    host.backUpAlso(photoSettings.directory)
    let shardGuard = try ShardGuard(shard: shard, database: host.database)
    var router = RecordsService.router(host: host, photos: photos)
    RecordsService.registerShardMoves(&router, guard: shardGuard, photos: photos)
    let dispatcher = host.dispatcher(router: router.wrapped(shardGuard.around), sessions: sessions.cache)
    let purge = try host.consumer(
        of: "auth", configuration: stack, types: [AuthEvents.userDeleted], handler: RecordsService.applyAuthEvent)
    let conditions = try host.consumer(
        of: "weather-fetcher", configuration: stack, handler: RecordsService.applyWeatherEvent)
    return host.services(
        dispatcher: dispatcher, endpoint: stack.endpoint(instance),
        extra: [sessions.consumer, purge, conditions, photos.sweeper()])
}

/// What every handler shares: the database for reads, the photo store and the clock.
struct Records: Sendable {
    let database: any DatabaseWriter
    let photos: PhotoStore
    let now: Now
}
