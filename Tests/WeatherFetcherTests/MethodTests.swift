// The methods: `weather.get` on demand (through the cache), `weather.conditions.get`.
import Foundation
import Runtime
import TestSupport
import Testing
import Wire

@testable import WeatherFetcherService

@Suite struct MethodTests {
    func get(_ service: WeatherFetcherService, _ body: JSONValue, token: String? = "good-u1") async throws -> Reply {
        try await service.client.reply("weather.get", body: body, options: CallOptions(token: token))
    }

    @Test func weatherGetAnswersAndUsesTheCache() async throws {
        let harness = try Harness()
        let service = try harness.makeService()
        let body: JSONValue = ["latitude": 41.5234, "longitude": -70.6712, "at": "2024-05-20T14:40:00Z"]
        let first = try await get(service, body)
        #expect(first.error == nil)
        #expect(first.result?["summary"]?.stringValue?.hasPrefix("14°C, overcast") == true)
        #expect(first.result?["conditions"]?["latitude"] == 41.52)
        let second = try await get(service, ["latitude": 41.52, "longitude": -70.67, "at": "2024-05-20T15:20:00+00:00"])
        // Same place and hour: the same weather and tide (the moon follows the exact time).
        #expect(second.result?["summary"] == first.result?["summary"])
        #expect(second.result?["conditions"]?["tideHeightM"] == first.result?["conditions"]?["tideHeightM"])
        #expect(harness.server.requests.count == 2, "one weather and one marine call for both")
        let fresh = try await get(service, ["latitude": 41.52, "longitude": -70.67, "at": "2024-05-20T15:00:00Z", "water": "fresh"])
        #expect(fresh.result?["conditions"]?["tide"] == "skipped")
    }

    @Test func weatherGetValidatesAndMapsProviderErrors() async throws {
        let harness = try Harness()
        let service = try harness.makeService()
        let at: JSONValue = "2024-05-20T14:40:00Z"
        #expect(try await get(service, ["latitude": 91, "longitude": 0, "at": at]).error?.field == "latitude")
        #expect(try await get(service, ["latitude": 0, "longitude": 181, "at": at]).error?.field == "longitude")
        #expect(try await get(service, ["latitude": 0, "longitude": 0, "at": "1900-01-01T00:00:00Z"]).error?.field == "at")
        #expect(try await get(service, ["latitude": 0, "longitude": 0, "at": "2030-01-01T00:00:00Z"]).error?.field == "at")
        #expect(try await get(service, ["latitude": 0, "longitude": 0, "at": at, "water": "mud"]).error?.field == "water")
        #expect(try await get(service, ["latitude": 0, "longitude": 0]).error?.field == "at")
        #expect(try await get(service, ["latitude": "north", "longitude": 0, "at": at]).error?.code == .invalidArgument)
        #expect(try await get(service, ["latitude": 0, "longitude": 0, "at": at], token: nil).error?.code == .unauthenticated)
        #expect(harness.server.requests.isEmpty)

        harness.server.respond { _ in .json(#"{"error":true,"reason":"Cannot initialize WeatherVariable"}"#, status: 400) }
        let refused = try await get(service, ["latitude": 1, "longitude": 1, "at": at])
        #expect(refused.error?.code == .failedPrecondition)
        #expect(refused.error?.message.contains("Cannot initialize WeatherVariable") == true)

        harness.server.respond(with: ReliabilityTests.down)
        #expect(try await get(service, ["latitude": 2, "longitude": 2, "at": at]).error?.code == .unavailable)
    }

    @Test func conditionsGetShowsPendingThenReady() async throws {
        let harness = try Harness()
        let service = try harness.makeService()
        try await service.applyRecords([harness.catchEvent(id: "c1")])
        let pending = try await service.status("c1")
        #expect(pending["status"] == "pending")
        #expect(pending["summary"] == nil)
        let ready = try await service.running { try await service.settled("c1") }
        #expect(ready["catchId"] == "c1")
        #expect(ready["status"] == "ready")
        #expect(ready["summary"]?.stringValue != nil)
        #expect(ready["conditions"]?["moonPhase"]?.stringValue != nil)
        #expect(ready["lastError"] == nil)
    }
}
