// The hashing lane kept for known devices and sessions takes checks in turn by user
// (Services/Auth/AuthService/Passwords.swift, `FairLane`): anyone with an account can send
// checks there, and one user's burst must not queue in front of another owner's check.
import Dispatch
import Foundation
import Synchronization
import Testing

@testable import AuthService

@Suite struct FairLaneTests {
    @Test func anotherUsersCheckWaitsForAtMostOneOfABurst() async throws {
        let lane = FairLane(queue: DispatchQueue(label: "fair-lane-test"))
        let order = Mutex<[String]>([])
        let gate = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        // mallory's first check holds the lane while the rest queue up
        lane.submit("mallory") {
            gate.wait()
            order.withLock { $0.append("mallory-0") }
            done.signal()
        }
        for n in 1...20 {
            lane.submit("mallory") {
                order.withLock { $0.append("mallory-\(n)") }
                done.signal()
            }
        }
        lane.submit("owner") {
            order.withLock { $0.append("owner") }
            done.signal()
        }
        gate.signal()
        for _ in 0..<22 { #expect(done.wait(timeout: .now() + 5) == .success) }
        let served = order.withLock { $0 }
        #expect(served.count == 22)
        let owner = try #require(served.firstIndex(of: "owner"))
        #expect(owner <= 2, "the owner's check waited behind \(owner) of mallory's: \(served)")
        // and mallory's own checks keep their order
        let mallory = served.filter { $0 != "owner" }
        #expect(mallory == (0...20).map { "mallory-\($0)" })
    }

    @Test func aLaneSharedWithOtherWorkStillServesIt() async throws {
        let queue = DispatchQueue(label: "fair-lane-shared")
        let lane = FairLane(queue: queue)
        let done = DispatchSemaphore(value: 0)
        for n in 0..<50 {
            if n % 2 == 0 { lane.submit("user-\(n % 3)") { done.signal() } } else { queue.async { done.signal() } }
        }
        for _ in 0..<50 { #expect(done.wait(timeout: .now() + 5) == .success) }
    }
}
