// The weather-fetcher service assembled: its database, the job runner, the methods
// (`weather.get`, `weather.conditions.get`) and the consumers of records' and auth's
// events. The executable runs it through the runtime's LogbookService; tests build a
// `WeatherFetcherService` directly with an in-process transport, a stub HTTP server and short
// delays.
import Contracts
import Foundation
import GRDB
import Logging
import Runtime
import ServiceLifecycle
import Storage
import Wire

public final class WeatherFetcherService: Sendable {
    public static let name = "weather-fetcher"

    public let host: ServiceHost
    public let settings: WeatherFetcherSettings
    /// The fetch loop; run it with the host's services.
    public let runner: JobRunner
    let fetcher: Fetcher
    let handlers: EventHandlers

    /// - Parameters:
    ///   - eventsEndpoint: where to publish `conditions.*`; nil publishes nothing (tests
    ///     read the outbox with `events.since`).
    ///   - curve: the stack's CURVE settings; nil serves plain.
    public convenience init(
        database: DatabaseSettings, settings: WeatherFetcherSettings, eventsEndpoint: String?,
        curve: CurveSettings? = nil, logger: Logger
    ) throws {
        let host = try ServiceHost(
            descriptor: ServiceDescriptor(name: Self.name), database: database, migrator: Self.migrator,
            eventsEndpoint: eventsEndpoint, curve: curve, logger: logger)
        self.init(host: host, settings: settings)
    }

    init(host: ServiceHost, settings: WeatherFetcherSettings) {
        self.host = host
        self.settings = settings
        let wakeup = Wakeup()
        fetcher = Fetcher(
            settings: settings, cache: ProviderCache(writer: host.database, now: settings.now), logger: host.logger)
        runner = JobRunner(
            settings: settings, fetcher: fetcher, reader: host.database, commits: host.commits, wakeup: wakeup,
            logger: host.logger)
        handlers = EventHandlers(now: settings.now, wakeup: wakeup, logger: host.logger)
    }

    /// Applies one of records' events (`catch.*`) inside the consumer's transaction.
    public var recordsHandler: @Sendable (Database, Event) throws -> Void {
        let handlers = self.handlers
        return { db, event in try handlers.records(db, event) }
    }

    /// Applies one of auth's events (`user.deleted`) inside the consumer's transaction.
    public var authHandler: @Sendable (Database, Event) throws -> Void {
        let handlers = self.handlers
        return { db, event in try handlers.auth(db, event) }
    }

    public func router() -> Router {
        var router = host.makeRouter()
        let fetcher = self.fetcher
        let settings = self.settings
        let reader = host.database
        router.read(WeatherMethods.get) { body, context in
            try body.validate(now: settings.now())
            do {
                // (its caller waits 5 s: a pause longer than a second is answered, not waited out)
                let conditions = try await UserCallBudget.$user.withValue(context.userId) {
                    try await RateLimiter.$pauseLimit.withValue(.seconds(1)) {
                        try await fetcher.conditions(
                            latitude: body.latitude, longitude: body.longitude, at: body.at, water: body.water?.rawValue)
                    }
                }
                return WeatherGetResult(summary: conditions.summary, conditions: conditions)
            } catch let failure as FetchFailure {
                switch failure {
                case .rejected(let reason):
                    throw ServiceError(.failedPrecondition, "the weather provider refused: \(reason)")
                case .rateLimited(let retryAfter):
                    let ms = (retryAfter ?? settings.rateLimitPause).milliseconds
                    throw ServiceError(
                        .unavailable, "the weather provider asks us to slow down; try again later",
                        details: ["retryAfterMs": .number(.init(ms))])
                case .userBudget(let retryAfter):
                    throw ServiceError(
                        .resourceExhausted,
                        "your weather lookups are used up for now (\(settings.userCallsPerHour) provider calls an hour); "
                            + "try again in \(Int((Double(retryAfter.milliseconds) / 1000).rounded(.up))) s",
                        details: ["retryAfterMs": .number(.init(retryAfter.milliseconds))])
                case .transient(let detail):
                    context.logger.warning("weather.get failed", metadata: ["error.detail": "\(detail)"])
                    throw ServiceError(.unavailable, "the weather provider is not answering; try again later")
                }
            }
        }
        router.read(WeatherMethods.conditions) { body, context in
            guard !body.catchId.isEmpty else { throw ServiceError.invalid("catchId", "must not be empty") }
            let userId = context.userId
            let status = try await reader.read { db in try Jobs.status(db, userId: userId, catchId: body.catchId) }
            guard let status else { throw ServiceError.notFound("conditions for catch \(body.catchId)") }
            return status
        }
        return router
    }
}

/// The job runner, and the consumers of every records shard's `catch.*` events and auth's
/// `user.deleted`. The results go out as this service's events, which every shard consumes;
/// only the shard holding the catch has it pending and applies them (RecordsService,
/// CatchConditions.swift).
extension WeatherFetcherService: LogbookService {
    public static var migrator: DatabaseMigrator { Jobs.migrator }

    public static func assemble(on host: ServiceHost, configuration: StackConfiguration) throws -> ServiceAssembly {
        try WeatherFetcherService(host: host, settings: WeatherFetcherSettings(configuration: configuration)).assembly()
    }

    func assembly() -> ServiceAssembly {
        ServiceAssembly(
            router: router(),
            subscriptions: [
                Subscription("records", types: ["catch."], handler: recordsHandler),
                Subscription("auth", types: [AuthEvents.userDeleted], handler: authHandler),
            ],
            extra: [runner])
    }
}

extension WeatherGet {
    func validate(now: Date) throws {
        guard (-90...90).contains(latitude) else {
            throw ServiceError.invalid("latitude", "must be between -90 and 90 (got \(latitude))")
        }
        guard (-180...180).contains(longitude) else {
            throw ServiceError.invalid("longitude", "must be between -180 and 180 (got \(longitude))")
        }
        guard at >= Fetcher.earliest else {
            throw ServiceError.invalid("at", "must be 1940-01-01 or later: there are no weather records before 1940")
        }
        guard at <= now.addingTimeInterval(14 * 86400) else {
            throw ServiceError.invalid("at", "must be at most 14 days ahead (the forecast's reach)")
        }
    }
}
