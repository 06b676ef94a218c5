// Names the CLI resolves while the stack is unreachable: the local store's saved answers and
// the creates still queued, read as the contract's records. A car queued without units is
// the car records will make (mi and gal), under its local id; what does not read as a record
// is skipped, not a failure.
import Contracts
import Foundation
import Testing
import Wire

@testable import Gateway

@Suite("resolving names offline: saved answers and queued creates, typed")
struct ResolveTests {
    @Test("saved cars, a queued car with the service's default units, and nothing unreadable")
    func localCars() throws {
        let store = try LocalStore.inMemory()
        let saved = try JSONValue.from(Vehicle.sample)
        try store.remember(
            owner: "u1", service: "records", method: FuelMethods.vehicleList.name, body: ["limit": 500],
            result: ["items": [saved, ["id": "broken", "nickname": 7]]])
        let queuedAt = Date(timeIntervalSince1970: 1_777_000_000)
        try store.enqueue(
            owner: "u1", service: "records", method: FuelMethods.vehicleAdd.name, body: ["nickname": "Civic", "year": 2019],
            idempotencyKey: "k1", localId: "local-1", now: queuedAt)
        try store.enqueue(
            owner: "u1", service: "records", method: FuelMethods.vehicleAdd.name, body: ["make": "no nickname"],
            idempotencyKey: "k2", localId: "local-2")
        try store.enqueue(
            owner: "u2", service: "records", method: FuelMethods.vehicleAdd.name, body: ["nickname": "Not mine"],
            idempotencyKey: "k3", localId: "local-3")

        let cars: [Vehicle] = store.records(owner: "u1")
        #expect(cars.map(\.id) == [Vehicle.sample.id, "local-1"])
        #expect(cars.first == Vehicle.sample)
        let civic = try #require(cars.last)
        #expect(civic.nickname == "Civic" && civic.year == 2019 && civic.make == nil)
        #expect(civic.distanceUnit == .mi && civic.volumeUnit == .gal, "the units records gives an add without them")
        #expect(civic.createdAt.ms == queuedAt.ms)
        #expect(Cars.summary(civic) == "Civic (id local-1, mi/gal)")
        #expect(Cars.describe(civic) == "Civic 2019")

        // Once its create is synced, the queued copy gives way (the real one comes from the service).
        let item = try #require(try store.items(owner: "u1").first { $0.localId == "local-1" })
        try store.complete(item, realId: "0196real")
        #expect((store.records(owner: "u1") as [Vehicle]).map(\.id) == [Vehicle.sample.id])
    }

    @Test("a queued activity is idle with no time, under its local id")
    func localActivity() throws {
        let store = try LocalStore.inMemory()
        try store.enqueue(
            owner: "u1", service: "records", method: TimeMethods.activityAdd.name, body: ["name": "Guitar"],
            idempotencyKey: "k1", localId: "local-g")
        let activities: [Activity] = store.records(owner: "u1")
        let guitar = try #require(activities.first)
        #expect(activities.count == 1 && guitar.id == "local-g" && guitar.name == "Guitar")
        #expect(guitar.totalMs == 0 && guitar.amount == "$0.00" && guitar.timer.state == .idle)
        #expect(guitar.timer.activityId == "local-g")
        #expect((store.records(owner: "u1") as [Vehicle]).isEmpty, "an activity is no car")
    }
}
