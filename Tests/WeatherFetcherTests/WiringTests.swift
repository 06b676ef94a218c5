// The service as the executable assembles it (`WeatherFetcherService.services`, the runtime's
// LogbookService), over real ZeroMQ: a stand-in records service publishes `catch.created` from its outbox, the weather-fetcher's
// checkpointed consumer turns it into a job, and `conditions.ready` comes out of the
// weather-fetcher's own outbox, readable with `events.since`.
import Contracts
import Foundation
import GRDB
import Logging
import Runtime
import ServiceLifecycle
import Storage
import TestSupport
import Testing
import Wire

@testable import WeatherFetcherService

@Suite struct WiringTests {
    @Test func catchEventsFromRecordsBecomeConditionsOverZeroMQ() async throws {
        let server = try StubHTTPServer(handler: Fixtures.openMeteo())
        defer { server.stop() }
        let directory = "/tmp/lbw-\(UUID().uuidString.prefix(8).lowercased())"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let configuration = try StackConfiguration.scratch(
            directory,
            extra: [
                "LOGBOOK_WEATHER_FETCHER_FORECAST_URL": server.baseURL + "/v1/forecast",
                "LOGBOOK_WEATHER_FETCHER_ARCHIVE_URL": server.baseURL + "/v1/archive",
                "LOGBOOK_WEATHER_FETCHER_MARINE_URL": server.baseURL + "/v1/marine",
                "LOGBOOK_WEATHER_FETCHER_NOAA_URL": server.baseURL,
            ])
        var logger = Logger(label: "wiring-test")
        logger.logLevel = .critical

        // A stand-in for records: one public write that appends `catch.created`.
        let records = try ServiceHost(
            descriptor: ServiceDescriptor(name: "records"), database: configuration.databaseSettings("records"),
            migrator: DatabaseMigrator(), eventsEndpoint: configuration.eventsEndpoint("records"), logger: logger)
        var router = records.makeRouter()
        router.write("test.catch.add", access: .public) { (body: Catch, _, db) -> Catch in
            try Outbox.append(db, type: CatchEvents.created, userId: "u1", data: body)
            return body
        }
        let recordsServices = records.services(
            dispatcher: records.dispatcher(router: router, sessions: nil), endpoint: configuration.endpoint("records"))
        // And for auth, so the session cache's and `user.deleted` consumers start at once.
        let auth = try ServiceHost(
            descriptor: ServiceDescriptor(name: "auth"), database: configuration.databaseSettings("auth"),
            migrator: DatabaseMigrator(), eventsEndpoint: configuration.eventsEndpoint("auth"), logger: logger)
        let authServices = auth.services(
            dispatcher: auth.dispatcher(router: auth.makeRouter(), sessions: nil), endpoint: configuration.endpoint("auth"))
        let weatherServices = try WeatherFetcherService.services(configuration: configuration, logger: logger)
        let group = ServiceGroup(services: authServices + recordsServices + weatherServices, logger: logger)

        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            let recordsClient = try ServiceClient(service: "records", endpoint: configuration.endpoint("records"))
            let caught = try #require(WireTime.parse("2023-05-20T14:40:00Z"))
            let weatherClient = try ServiceClient(
                service: WeatherFetcherService.name, endpoint: configuration.endpoint(WeatherFetcherService.name))
            _ = try await recordsClient.call(
                "test.catch.add",
                Catch(
                    id: "c1", species: "Striped bass", weight: Milli(thousandths: 4_200), weightUnit: .kg, bait: "eel",
                    water: .salt, latitude: 41.5234, longitude: -70.6712, caughtAt: caught, released: true,
                    createdAt: caught, updatedAt: caught),
                as: Catch.self)
            let clock = ContinuousClock()
            let deadline = clock.now + .seconds(15)
            var events: [Event] = []
            while clock.now < deadline {
                if let answer = try? await weatherClient.call(
                    "events.since", EventsSince(after: 0), as: EventsSinceResult.self), !answer.events.isEmpty
                {
                    events = answer.events
                    break
                }
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(events.map(\.type) == ["conditions.ready"])
            #expect(events.first?.data["catchId"] == "c1")
            #expect(events.first?.userId == "u1")
            #expect(server.requests(path: "/v1/archive").count == 1)
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
    }
}
