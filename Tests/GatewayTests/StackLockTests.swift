// The stack's lock under probing: `stack up` polls `liveSupervisor()` while the supervisor
// it started takes the lock, and `restore` asks whether a service holds its database. Both
// probes take the lock shared for a moment, and an owner's lone non-blocking attempt that
// met that moment failed as if another owner held it (a CI run saw a new supervisor exit
// "another supervisor runs this stack" with none running). Owners now wait a probe out
// (FileLocks.lockExclusively).
import Foundation
@testable import Gateway
import Runtime
@testable import StackSupervisor
import Storage
import Synchronization
import Testing

@Suite("the stack's lock")
struct StackLockTests {
    /// A stack's files in a directory of their own (the caller removes `home`).
    static func scratch() throws -> (StackFiles, home: String) {
        let home = "/tmp/lbt-" + UUID().uuidString.prefix(8)
        let files = StackFiles(try StackConfiguration.scratch(home))
        try files.prepare()
        return (files, home)
    }

    @Test("the supervisor's lock is never refused to it while others probe it without pause")
    func probesNeverCostTheOwnerItsLock() throws {
        let (files, home) = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: home) }
        let lockFile = files.lockFile

        let probes = Probes()
        let prober = Thread {
            while !probes.stop.load(ordering: .relaxed) {
                _ = files.liveSupervisor()
                _ = RestoreCommand.holder(of: lockFile)
                probes.count.add(1, ordering: .relaxed)
            }
        }
        prober.start()
        defer { probes.stop.store(true, ordering: .relaxed) }
        while probes.count.load(ordering: .relaxed) == 0 { usleep(100) }

        var refused = 0
        var pidWritten = 0
        for _ in 0..<3_000 {
            guard let fd = try files.lockStack() else {
                refused += 1
                continue
            }
            if StackFiles.readPid(lockFile) == getpid() { pidWritten += 1 }
            close(fd)
        }
        #expect(probes.count.load(ordering: .relaxed) > 100, "the prober must have run alongside")
        #expect(refused == 0, "the owner's lock was refused \(refused) times of 3,000 while probed")
        #expect(pidWritten == 3_000)
    }

    @Test("a lock another owner keeps is refused after the patience, not waited for forever")
    func aHeldLockIsRefused() throws {
        let (files, home) = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: home) }
        let held = try #require(try files.lockStack())
        defer { close(held) }
        let clock = ContinuousClock()
        let start = clock.now
        #expect(try files.lockStack(patience: .milliseconds(100)) == nil)
        #expect(clock.now - start >= .milliseconds(100))
    }
}

private final class Probes: Sendable {
    let stop = Atomic<Bool>(false)
    let count = Atomic<Int>(0)
}
