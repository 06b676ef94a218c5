// The stack's lock under probing: `stack up` polls `liveSupervisor()` while the supervisor
// it started takes the lock, and `restore` looks for a service holding its database. A probe
// that tried the lock itself made the owner's own attempt fail at that moment (a CI run saw
// a supervisor exit "another supervisor runs this stack" with none running).
import Foundation
import Runtime
@testable import StackSupervisor
import Storage
import Synchronization
import Testing

@Suite("the stack's lock")
struct StackLockTests {
    @Test("probing who holds the lock, as fast as it can, never makes the owner's attempt fail")
    func probesNeverTakeTheLock() throws {
        let home = "/tmp/lbt-" + UUID().uuidString.prefix(8)
        defer { try? FileManager.default.removeItem(atPath: home) }
        let files = StackFiles(try StackConfiguration.scratch(home))
        try files.prepare()
        let lockFile = files.lockFile

        // The supervisor's own way in, once: it holds the lock, and the probe names it.
        let taken = try #require(try files.lockStack())
        #expect(FileLocks.holder(of: lockFile) == getpid())
        close(taken)
        #expect(FileLocks.holder(of: lockFile) == nil)

        // Then the owner's attempt, 3,000 times, beside a thread that probes without pause.
        // One descriptor, locked and unlocked: other tests in this process spawn children,
        // and a child between fork and exec holds a copy of every open descriptor, which a
        // new descriptor's lock would collide with (a test artefact; the lock is only ever
        // attempted once in a supervisor).
        let fd = open(lockFile, O_RDWR | O_CLOEXEC)
        try #require(fd >= 0)
        defer { close(fd) }
        let probes = Probes()
        let prober = Thread {
            while !probes.stop.load(ordering: .relaxed) {
                _ = files.liveSupervisor()
                _ = FileLocks.holder(of: lockFile)
                probes.count.add(1, ordering: .relaxed)
            }
        }
        prober.start()
        defer { probes.stop.store(true, ordering: .relaxed) }
        while probes.count.load(ordering: .relaxed) == 0 { usleep(100) }
        var refused = 0
        var misreported = 0
        for _ in 0..<3_000 {
            guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
                refused += 1
                continue
            }
            if FileLocks.holder(of: lockFile) != getpid() { misreported += 1 }
            flock(fd, LOCK_UN)
        }
        #expect(probes.count.load(ordering: .relaxed) > 100, "the prober must have run alongside")
        #expect(refused == 0, "the owner's lock was refused \(refused) times of 3,000 while probed")
        #expect(misreported == 0)
    }
}

private final class Probes: Sendable {
    let stop = Atomic<Bool>(false)
    let count = Atomic<Int>(0)
}
