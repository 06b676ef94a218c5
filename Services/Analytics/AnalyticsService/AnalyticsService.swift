// The analytics service: projections of records', weather-fetcher's and auth's events into
// analytics.sqlite, and the read methods over them (docs/protocol.md, "Analytics service"). Every
// projection is updated inside the event consumer's transaction with its checkpoint, so a
// restart, a replay or a duplicate neither loses nor double-counts anything; a wiped
// database replays every stream from sequence 0. Queries read stored aggregates only.
import Contracts
import Foundation
import GRDB
import Logging
import Runtime
import ServiceLifecycle
import Storage
import Wire

public struct AnalyticsService: Sendable {
    public static let name = "analytics"
    /// The producers analytics consumes, in the order `main` starts their consumers.
    public static let producers = ["records", "weather-fetcher", "auth"]

    public let host: ServiceHost
    public let dispatcher: Dispatcher

    /// - Parameters:
    ///   - database: analytics.sqlite, or `.inMemory` in tests.
    ///   - sessions: resolves tokens (the auth session cache in production).
    ///   - curve: the stack's CURVE settings; nil serves plain.
    ///   - now: the clock running timers are read against.
    public init(
        database: DatabaseSettings, sessions: (any SessionResolver)?, curve: CurveSettings? = nil, logger: Logger,
        now: @escaping @Sendable () -> Date = { Date() }
    ) throws {
        host = try ServiceHost(
            descriptor: ServiceDescriptor(name: Self.name), database: Self.database(database), migrator: Self.migrator,
            eventsEndpoint: nil, curve: curve, logger: logger)
        dispatcher = host.dispatcher(for: try Self.assemble(on: host, now: now), sessions: sessions)
    }

    /// The projections read back what they wrote for other events (the fuel chain, tallies,
    /// answers) all through a replay: with SQLite's 2 MiB default most of those reads went to
    /// the kernel. 64 MiB on the writer took a 50,000-run's rebuild from 3,209 to 4,462
    /// events/s (`logbook-bench analytics --large 50000`, docs/performance.md, "The writer's page cache").
    public static let writerCacheKiB = 65_536

    /// The projections' tables are b-trees of user-keyed rows: a catch-up's transaction of
    /// 20,000 events dirties a leaf of each user-keyed index per user, and its commit writes
    /// every dirty page to the WAL. With pages of 8 KiB, `logbook-bench analytics` at
    /// 1,000,000 applied its events in 37-38 s instead of 45-49 s (docs/performance.md,
    /// "Pages of 8 KiB").
    /// Only a new file takes it (a rebuild starts one); a file that exists keeps its size.
    public static let pageSize = 8_192

    /// The writer's cache and the page size, on the stack's settings: both ways in (the
    /// executable's `ServiceMain` through `LogbookService.services`, and `init`, which tests
    /// and benchmarks use) open the database with them (docs/performance.md, "The cache the
    /// service never had").
    public static func database(_ settings: DatabaseSettings) -> DatabaseSettings {
        var settings = settings
        settings.writerCacheKiB = writerCacheKiB
        settings.pageSize = pageSize
        return settings
    }

    /// The event handler for one producer, as a consumer calls it: a whole batch in its
    /// transaction, the aggregates it changes written once at the end (Batch.swift). An
    /// event whose payload cannot be read is logged and skipped (retrying it would stop the
    /// stream for good); a database error is thrown, so the batch is retried.
    public func batchHandler(for producer: String) -> @Sendable (Database, [Event]) throws -> Void {
        Self.batchHandler(for: producer, logger: host.logger)
    }

    static func batchHandler(for producer: String, logger: Logger, backlog: Bool = false)
        -> @Sendable (Database, [Event]) throws -> Void
    {
        let apply = Self.applyEach(producer)
        return { db, events in
            let batch = ProjectionBatch(backlog: backlog)
            for event in events {
                do {
                    try apply(db, event, batch)
                } catch let error as DecodingError {
                    logger.error(
                        "event payload unreadable; skipped",
                        metadata: [
                            "events.producer": "\(producer)", "event.seq": "\(event.seq)", "event.type": "\(event.type)",
                            "error.detail": "\(WireCoding.describe(error))",
                        ])
                }
            }
            try batch.flush(db)
        }
    }

    /// How a consumer of `producer` applies a catch-up's backlog: as `batchHandler` does,
    /// except that the catch counters and the vehicle aggregates are not changed per page but
    /// recomputed once, when the catch-up ends (`settle`), for each user and vehicle the
    /// pages changed: in a rebuild most pages change most users' counters and most vehicles
    /// again. Nil for producers whose events change neither (auth).
    /// The consumers of records and weather-fetcher share one settle (`host.backlogs`).
    public func backlog(for producer: String) -> DatabaseEventSink.Backlog? {
        Self.backlog(for: producer, host: host)
    }

    static func backlog(for producer: String, host: ServiceHost) -> DatabaseEventSink.Backlog? {
        guard Self.countsCatches(producer) else { return nil }
        return DatabaseEventSink.Backlog(
            batch: batchHandler(for: producer, logger: host.logger, backlog: true), settle: settle,
            group: host.backlogs)
    }

    /// Recomputes whatever a catch-up's backlog left behind: catch counters and vehicle aggregates.
    static func settle(_ db: Database) throws {
        try CatchProjection.settle(db)
        try FuelProjection.settle(db)
    }

    /// Records (catches and fill-ups) and weather-fetcher (answers) change what a backlog
    /// leaves behind.
    static func countsCatches(_ producer: String) -> Bool {
        StackConfiguration.shard(of: producer) != nil || producer == "weather-fetcher"
    }

    /// `batchHandler` for one event at a time.
    public func handler(for producer: String) -> @Sendable (Database, Event) throws -> Void {
        let batch = batchHandler(for: producer)
        return { db, event in try batch(db, [event]) }
    }

    /// The projection code for one producer's events, one at a time (throws on an unreadable payload).
    public static func apply(_ producer: String) -> @Sendable (Database, Event) throws -> Void {
        let each = applyEach(producer)
        return { db, event in
            let batch = ProjectionBatch()
            try each(db, event, batch)
            try batch.flush(db)
        }
    }

    /// The projection code for a batch of one producer's events (throws on an unreadable
    /// payload); `backlog`: as a backlog batch applies them (`backlog(for:)`).
    public static func applyBatch(_ producer: String, backlog: Bool = false)
        -> @Sendable (Database, [Event]) throws -> Void
    {
        let each = applyEach(producer)
        return { db, events in
            let batch = ProjectionBatch(backlog: backlog)
            for event in events { try each(db, event, batch) }
            try batch.flush(db)
        }
    }

    /// `backlog(for:)` with `applyBatch`'s handler (throws on an unreadable payload),
    /// settling with the other members of `group`.
    public static func applyBacklog(_ producer: String, group: BacklogGroup? = nil) -> DatabaseEventSink.Backlog? {
        guard countsCatches(producer) else { return nil }
        return DatabaseEventSink.Backlog(batch: applyBatch(producer, backlog: true), settle: settle, group: group)
    }

    static func applyEach(_ producer: String) -> @Sendable (Database, Event, ProjectionBatch) throws -> Void {
        switch producer {
        case _ where StackConfiguration.shard(of: producer) != nil: skippingDeletedUsers(applyRecordsEvent)
        case "weather-fetcher": skippingDeletedUsers(applyWeatherEvent)
        case "auth": { db, event, _ in try applyAuthEvent(db, event) }
        default: { _, _, _ in }
        }
    }

    /// `apply`, for every event but those of a user whose account was deleted
    /// (`ProjectionBatch.isDeleted`).
    static func skippingDeletedUsers(
        _ apply: @escaping @Sendable (Database, Event, ProjectionBatch) throws -> Void
    ) -> @Sendable (Database, Event, ProjectionBatch) throws -> Void {
        { db, event, batch in
            if let userId = event.userId, try batch.isDeleted(db, userId: userId) { return }
            try apply(db, event, batch)
        }
    }

    /// Records' events, one at a time.
    public static func applyRecordsEvent(_ db: Database, _ event: Event) throws {
        let batch = ProjectionBatch()
        try applyRecordsEvent(db, event, batch)
        try batch.flush(db)
    }

    /// Records' events: vehicles, fill-ups, catches, expenses, attendance, activities, time.
    static func applyRecordsEvent(_ db: Database, _ event: Event, _ batch: ProjectionBatch) throws {
        guard let userId = event.userId else { return }
        switch event.type {
        case FuelEvents.vehicleCreated, FuelEvents.vehicleUpdated:
            try FuelProjection.putVehicle(db, userId: userId, event.decode(Vehicle.self))
        case FuelEvents.vehicleDeleted:
            try FuelProjection.deleteVehicle(db, userId: userId, id: event.decode(VehicleDeleted.self).id, batch: batch)
        case FuelEvents.fillupCreated, FuelEvents.fillupUpdated:
            try FuelProjection.putFill(db, userId: userId, event.read(FillupRead.self), batch: batch)
        case FuelEvents.fillupDeleted:
            try FuelProjection.deleteFill(db, userId: userId, id: event.decode(FillupDeleted.self).id, batch: batch)
        case ExpenseEvents.created, ExpenseEvents.updated:
            try ExpenseProjection.put(db, userId: userId, event.decode(Expense.self))
        case ExpenseEvents.deleted:
            try ExpenseProjection.delete(db, userId: userId, id: event.decode(ExpenseDeleted.self).id)
        case AttendanceEvents.created:
            try AttendanceProjection.add(db, userId: userId, event.decode(AttendanceEntry.self))
        case AttendanceEvents.deleted:
            try AttendanceProjection.remove(db, userId: userId, id: event.decode(AttendanceDeleted.self).id)
        case TimeEvents.activityCreated:
            try TimeProjection.activityCreated(db, userId: userId, event.decode(ActivityCreated.self), at: event.at)
        case TimeEvents.activityDeleted:
            try TimeProjection.activityDeleted(db, userId: userId, event.decode(ActivityDeleted.self), at: event.at)
        case TimeEvents.timeSaved:
            try TimeProjection.timeSaved(db, userId: userId, event.decode(TimeSavedEvent.self), at: event.at)
        case TimeEvents.timerChanged:
            try TimeProjection.timerChanged(db, userId: userId, event.decode(TimerState.self))
        case CatchEvents.created, CatchEvents.updated:
            // `catch.updated` is the record plus two flags, which the projection does not need
            try CatchProjection.putCatch(db, userId: userId, event.read(CatchRead.self), batch: batch)
        case CatchEvents.deleted:
            try CatchProjection.deleteCatch(db, userId: userId, id: event.decode(CatchDeleted.self).id, batch: batch)
        default:
            break
        }
    }

    /// Weather-fetcher's events: `conditions.ready` and `conditions.unavailable`.
    static func applyWeatherEvent(_ db: Database, _ event: Event, _ batch: ProjectionBatch) throws {
        switch event.type {
        case WeatherEvents.conditionsReady:
            try CatchProjection.conditionsReady(db, userId: event.userId, event.read(ConditionsReadyRead.self), batch: batch)
        case WeatherEvents.conditionsUnavailable:
            try CatchProjection.conditionsUnavailable(
                db, userId: event.userId, event.decode(ConditionsUnavailable.self), batch: batch)
        default:
            break
        }
    }

    /// Auth's events: `user.deleted` purges every row of that user; `user.registered` and
    /// `user.settings.changed` set the time zone their days are counted in.
    public static func applyAuthEvent(_ db: Database, _ event: Event) throws {
        switch event.type {
        case AuthEvents.userDeleted:
            try purge(db, userId: event.decode(UserDeletedPayload.self).userId)
        case AuthEvents.userRegistered:
            let registered = try event.decode(AuthEvents.UserRegistered.self)
            try UserZones.set(db, userId: registered.userId, name: registered.timeZone)
        case AuthEvents.userSettingsChanged:
            let changed = try event.decode(AuthEvents.UserSettingsChanged.self)
            try UserZones.set(db, userId: changed.userId, name: changed.timeZone)
        default:
            break
        }
    }

    public static func purge(_ db: Database, userId: String) throws {
        for sql in Schema.userTables { try db.execute(cached: sql, arguments: [userId]) }
        // remembered, so the user's events still on their way do not bring rows back
        try db.execute(cached: "INSERT OR IGNORE INTO deletedUser (userId) VALUES (?)", arguments: [userId])
    }

    static func router(_ router: Router, database: any DatabaseReader, now: @escaping @Sendable () -> Date) -> Router {
        var router = router
        // `fuel.stats` and `suggest` read a few stored rows through an index (a vehicle and its
        // spend per currency; a user's tally rows of one filter, one per bait and water), so
        // they run on the handler's thread (`pointRead`): handing them to a reader's queue and
        // back cost more than the read, and the wake-ups were most of their p99
        // (docs/performance.md, "Rebuild, a second look").
        router.read(FuelMethods.stats) { body, context in
            try database.pointRead { db in try FuelQueries.stats(db, userId: context.userId, body: body) }
        }
        router.read(FuelMethods.economy) { body, context in
            try await database.read { db in try FuelQueries.economy(db, userId: context.userId, body: body) }
        }
        router.read(ExpenseMethods.summary) { body, context in
            try await database.read { db in try ExpenseQueries.summary(db, userId: context.userId, body: body) }
        }
        router.read(AttendanceMethods.hours) { body, context in
            try await database.read { db in try AttendanceQueries.hours(db, userId: context.userId, body: body) }
        }
        router.read(TimeMethods.summary) { _, context in
            let at = now()
            return try await database.read { db in try TimeQueries.summary(db, userId: context.userId, now: at) }
        }
        let buckets = TallyBuckets()
        router.read(SuggestMethods.suggest) { body, context in
            try database.pointRead { db in
                try SuggestQueries.suggest(db, userId: context.userId, body: body, buckets: buckets)
            }
        }
        return router
    }
}

/// Reads only (it publishes nothing); consumes every records shard, weather-fetcher and auth,
/// each a projection users read.
extension AnalyticsService: LogbookService {
    public static var migrator: DatabaseMigrator { Schema.migrator }
    public static var publishesEvents: Bool { false }

    public static func assemble(on host: ServiceHost, configuration: StackConfiguration) throws -> ServiceAssembly {
        try assemble(on: host, now: { Date() })
    }

    /// Both ways in (the executable's `ServiceMain` and `init`, in tests and benchmarks) come
    /// here, so the projections' SQL function is registered on the writer connection that
    /// runs them before any consumer starts.
    static func assemble(on host: ServiceHost, now: @escaping @Sendable () -> Date) throws -> ServiceAssembly {
        try host.database.writeWithoutTransaction { try TallyCounts.registerMerge($0) }
        return ServiceAssembly(
            router: router(host.makeRouter(), database: host.database, now: now),
            subscriptions: producers.map {
                Subscription(
                    $0, feedsReplies: true, batch: batchHandler(for: $0, logger: host.logger),
                    backlog: backlog(for: $0, host: host))
            })
    }
}
