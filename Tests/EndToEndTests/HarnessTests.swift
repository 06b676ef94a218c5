// The end-to-end harness stops every process of a test's stack, even one `stack down` does
// not know of: a CI run once left a supervisor running after its test, restarting its
// services for an hour, because `stack down` did not find it and removed its pid file.
import Foundation
import Testing

@Suite("the test harness")
struct HarnessTests {
    @Test("a process of the stack that no pid file names is stopped when the test ends")
    func aProcessNoPidFileNamesIsStopped() async throws {
        var stray: pid_t = 0
        try await withStack { stack in
            let sleeper = Process()
            sleeper.executableURL = URL(fileURLWithPath: "/bin/sleep")
            sleeper.arguments = ["600"]
            sleeper.environment = ["LOGBOOK_HOME": stack.home, "PATH": "/usr/bin:/bin"]
            try sleeper.run()
            stray = sleeper.processIdentifier
            // `run()` can return before the child has exec'd `sleep` with its own environment
            // (until then /proc shows the parent's): look for up to two seconds.
            var found: [pid_t] = []
            for _ in 0..<200 {
                found = TestStack.processes(home: stack.home)
                if !found.isEmpty { break }
                try await Task.sleep(for: .milliseconds(10))
            }
            #expect(found == [stray])
        }
        #expect(stray > 0)
        #expect(!TestStack.isRunning(stray), "pid \(stray) outlived its test")
    }
}
