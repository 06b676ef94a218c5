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
        // (set before the routes: each write route keeps the check it was registered with)
        router.commitCheck = { db, context in
            guard let userId = context.principal?.userId else { return }
            if try DeletedUsers.contains(db, userId: userId) {
                throw ServiceError.unauthenticated("session expired or revoked: the account was deleted")
            }
        }
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
        try DeletedUsers.remember(db, userId: userId, at: Date())
        for sql in Schema.userTables {
            try db.execute(sql: sql, arguments: [userId])
        }
        // Their photos' files go at the next sweep (no hook runs after this transaction).
        try PhotoStore.deleteUnreferenced(db)
        try Idempotency.purge(db, principal: userId)
        try Outbox.redact(db, userId: userId)
    }
}

/// With shards (LOGBOOK_RECORDS_SHARDS > 1) this process is the shard LOGBOOK_RECORDS_SHARD
/// names, under its instance name (`records`, `records-2`, …: its own endpoints, database and
/// photos) and with its guard around every route (Shards.swift).
extension RecordsService: LogbookService {
    public static func instance(in configuration: StackConfiguration) throws -> String {
        StackConfiguration.recordsInstance(try configuration.ownRecordsShard())
    }

    /// Every method behind the shard guard, the photo sweeper, and the consumers of auth's
    /// `user.deleted` and weather-fetcher's conditions.
    public static func assemble(on host: ServiceHost, configuration: StackConfiguration) throws -> ServiceAssembly {
        let photoSettings = try PhotoSettings(stack: configuration, instance: host.descriptor.name)
        let photos = PhotoStore(settings: photoSettings, database: host.database, logger: host.logger)
        host.backUpAlso(photoSettings.directory, hold: photos.deletions)
        let shardGuard = try ShardGuard(shard: try configuration.ownRecordsShard(), database: host.database)
        var router = router(host: host, photos: photos)
        registerShardMoves(&router, guard: shardGuard, photos: photos)
        return ServiceAssembly(
            router: router.wrapped(shardGuard.around),
            subscriptions: [
                Subscription("auth", types: [AuthEvents.userDeleted], handler: applyAuthEvent),
                Subscription("weather-fetcher", handler: applyWeatherEvent),
            ],
            extra: [photos.sweeper()])
    }
}

/// What every handler shares: the database for reads, the photo store and the clock.
struct Records: Sendable {
    let database: any DatabaseWriter
    let photos: PhotoStore
    let now: Now
}
