// The local stack driven through `logbook`: up (twice), status, call, restart after a
// crash, down. Needs only a service that serves the runtime's `$srv.*` methods.
import Foundation
import Testing

@Suite("logbook stack", .serialized, .timeLimit(.minutes(3)))
struct StackTests {
    @Test("up twice, status, call, down")
    func lifecycle() async throws {
        try await withStack { stack in
            let up = try await stack.logbook("stack", "up")
            try #require(up.status == 0, "stack up failed: \(up.stderr)\n\(stack.log("supervisor"))\n\(stack.log("auth"))")
            let supervisor = try #require(stack.pid("supervisor"))
            let auth = try #require(stack.pid("auth"))

            let again = try await stack.logbook("stack", "up")
            #expect(again.status == 0, "\(again.stderr)")
            #expect(again.stdout.contains("already running"))
            #expect(stack.pid("supervisor") == supervisor)

            let status = try await stack.logbook("status")
            #expect(status.status == 0, "\(status.stdout)\(status.stderr)")
            let authRow = status.stdout.split(separator: "\n").first { $0.hasPrefix("auth ") }
            #expect(authRow?.contains(" up ") == true, "\(status.stdout)")
            #expect(authRow?.hasSuffix(" ms") == true, "\(status.stdout)")

            let json = try await stack.logbook("status", "--json")
            let rows = try #require(json.json as? [[String: Any]], "\(json.stdout)")
            let authStatus = try #require(rows.first { $0["service"] as? String == "auth" })
            #expect(authStatus["state"] as? String == "up")
            #expect((authStatus["rttMs"] as? Double ?? -1) >= 0)
            #expect(authStatus["version"] as? String != nil)
            let records = rows.first { $0["service"] as? String == "records" }
            if !FileManager.default.fileExists(atPath: stack.binDirectory + "/records") {
                #expect(records?["state"] as? String == "not installed")
            }

            let ping = try await stack.logbook("call", "auth", "$srv.ping")
            #expect(ping.status == 0, "\(ping.stderr)")
            #expect(ping.object["ok"] as? Bool == true)
            #expect((ping.object["result"] as? [String: Any])?["service"] as? String == "auth")

            // OpenPGM's protocol lookup, made as libzmq's context starts, is bound to the
            // CLI's own answer (Services/Gateway/logbook/ProtocolLookup.swift), not to the C
            // library's name service: the dynamic linker says where it bound the call.
            let trace = stack.home + "/ld-debug"
            let traced = try await stack.logbook(
                "call", "auth", "$srv.ping", environment: ["LD_DEBUG": "bindings", "LD_DEBUG_OUTPUT": trace])
            #expect(traced.status == 0, "\(traced.stderr)")
            let traces = try FileManager.default.contentsOfDirectory(atPath: stack.home).filter { $0.hasPrefix("ld-debug.") }
            let bindings = try traces.map { try String(contentsOfFile: stack.home + "/" + $0, encoding: .utf8) }.joined()
            let lookup = bindings.split(separator: "\n").filter { $0.contains("`getprotobyname_r'") }
            #expect(!lookup.isEmpty, "libpgm never looked the protocol up (\(traces.count) trace files)")
            #expect(
                lookup.allSatisfy { $0.contains("libpgm") && $0.contains("to \(stack.binDirectory)/logbook ") },
                "bound elsewhere: \(lookup)")

            let unknown = try await stack.logbook("call", "auth", "auth.no.such.method")
            #expect(unknown.status == 3, "not_found maps to 3: \(unknown.stdout)")
            #expect(unknown.object["ok"] as? Bool == false)

            let stackStatus = try await stack.logbook("stack", "status")
            #expect(stackStatus.status == 0)
            #expect(stackStatus.stdout.contains("supervisor: pid \(supervisor)"))

            let down = try await stack.logbook("stack", "down")
            #expect(down.status == 0, "\(down.stderr)")
            #expect(!TestStack.isRunning(supervisor), "the supervisor is gone")
            #expect(stack.pid("supervisor") == nil, "its pid file is removed")
            #expect(!TestStack.isRunning(auth), "auth is stopped too")

            let after = try await stack.logbook("status", "--json")
            #expect(after.status == 7, "down services exit 7")
            let afterRows = after.json as? [[String: Any]] ?? []
            #expect(afterRows.first { $0["service"] as? String == "auth" }?["state"] as? String == "down")
            if FileManager.default.fileExists(atPath: stack.binDirectory + "/logbook-http") {
                // The edge ran here: down like the rest. Not started here and not answering, it
                // is still down (a systemd unit that failed before listening wrote no address);
                // only in a Kubernetes pod that did not start it (a service pod: every
                // executable in the image, the edge in pods of its own) is it not counted.
                #expect(afterRows.first { $0["service"] as? String == "logbook-http" }?["state"] as? String == "down", "\(after.stdout)")
                try FileManager.default.removeItem(atPath: stack.home + "/run/logbook-http.url")
                let notStarted = try await stack.logbook("status", "--json", environment: ["LOGBOOK_HTTP_LISTEN": ""])
                let notStartedRows = notStarted.json as? [[String: Any]] ?? []
                #expect(notStartedRows.first { $0["service"] as? String == "logbook-http" }?["state"] as? String == "down", "\(notStarted.stdout)")
                let elsewhere = try await stack.logbook(
                    "status", "--json", environment: ["LOGBOOK_HTTP_LISTEN": "", "KUBERNETES_SERVICE_HOST": "10.96.0.1"])
                let rows = elsewhere.json as? [[String: Any]] ?? []
                #expect(rows.first { $0["service"] as? String == "logbook-http" }?["state"] as? String == "not run here", "\(elsewhere.stdout)")
                #expect(elsewhere.status == 7, "the services are still down")
            }

            let downAgain = try await stack.logbook("stack", "down")
            #expect(downAgain.status == 0)
            #expect(downAgain.stdout.contains("not running"))
        }
    }

    /// The supervisor keeps running when its log cannot be written (the disk full: here its
    /// output is /dev/full, where every write fails with ENOSPC), and when `logs/` is
    /// removed under it: a service that dies is still started again
    /// (Services/Gateway/StackSupervisor/Supervisor.swift, Spawn.swift).
    @Test("a full disk under the supervisor's log, or logs/ removed: services are still restarted")
    func supervisorOnAFullDisk() async throws {
        try await withStack { stack in
            let supervisor = Process()
            supervisor.executableURL = URL(fileURLWithPath: stack.binDirectory + "/logbook")
            supervisor.arguments = ["stack", "supervise"]
            supervisor.environment = stack.environment
            supervisor.standardOutput = try #require(FileHandle(forWritingAtPath: "/dev/full"))
            supervisor.standardError = try #require(FileHandle(forWritingAtPath: "/dev/full"))
            supervisor.standardInput = FileHandle.nullDevice
            try supervisor.run()
            defer {
                if supervisor.isRunning { kill(supervisor.processIdentifier, SIGTERM) }
                supervisor.waitUntilExit()
            }
            func answers(_ service: String) async throws -> Bool {
                try await stack.logbook("probe", service, "--timeout", "1").status == 0
            }
            #expect(try await stack.eventually(timeout: .seconds(30)) { try await answers("auth") }, "auth never started")
            for (service, removeLogs) in [("auth", false), ("auth", true)] {
                if removeLogs { try stack.removeWhileInUse(stack.home + "/logs") }
                let before = try #require(stack.pid(service))
                kill(before, SIGKILL)
                let back = try await stack.eventually(timeout: .seconds(30)) {
                    guard let now = stack.pid(service), now != before else { return false }
                    return try await answers(service)
                }
                #expect(back, "\(service) was not restarted (logs removed: \(removeLogs))")
                #expect(supervisor.isRunning, "the supervisor is still running")
            }
        }
    }

    /// run/ removed while a service hangs: the supervisor's SIGTERM (to restart it with its
    /// socket) cannot end it, and the SIGKILL that follows `stopGrace` (10 s) later does.
    @Test("run/ removed while a service hangs: it is killed and started again")
    func runRemovedWhileHung() async throws {
        try await withStack { stack in
            let up = try await stack.logbook("stack", "up")
            try #require(up.status == 0, "\(up.stderr)")
            let hung = try #require(stack.pid("records"))
            kill(hung, SIGSTOP)
            defer { kill(hung, SIGCONT) }
            try stack.removeWhileInUse(stack.runDirectory)
            let back = try await stack.eventually(timeout: .seconds(40)) {
                guard let now = stack.pid("records"), now != hung else { return false }
                return try await stack.logbook("probe", "records", "--timeout", "1").status == 0
            }
            #expect(back, "records was not started again: \(stack.log("supervisor").suffix(1500))")
            #expect(!TestStack.isRunning(hung), "the hung process is gone")
        }
    }

    /// `ProcessMain.run` (Shared/Runtime/ServiceHost.swift): a service's main thread is
    /// parked with the signals blocked that `dispatch_main` blocks, not ended by
    /// `pthread_exit` (whose unwind kept the executable's unwind tables resident), and a
    /// SIGTERM still reaches ServiceLifecycle, which stops the service cleanly.
    @Test("each service's main thread stays parked with signals blocked, and SIGTERM still stops it cleanly")
    func mainThreadParked() async throws {
        try await withStack { stack in
            let up = try await stack.logbook("stack", "up")
            try #require(up.status == 0, "stack up failed: \(up.stderr)\n\(stack.log("supervisor"))")
            let names = ["auth", "records", "weather-fetcher", "analytics", "store", "logbook-http"]
            var running: [String] = []
            for name in names {
                guard let pid = stack.pid(name) else { continue }
                running.append(name)
                // the main thread is the task whose id is the process's
                let status = try String(contentsOfFile: "/proc/\(pid)/task/\(pid)/status", encoding: .utf8)
                let fields = Dictionary(
                    status.split(separator: "\n").compactMap { line -> (String, String)? in
                        guard let colon = line.firstIndex(of: ":") else { return nil }
                        let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                        return (String(line[..<colon]), value)
                    }, uniquingKeysWith: { first, _ in first })
                #expect(fields["State"]?.hasPrefix("S") == true, "\(name)'s main thread: \(fields["State"] ?? "?")")
                let blocked = try #require(UInt64(fields["SigBlk"] ?? "", radix: 16), "\(name): \(status)")
                #expect(blocked & (1 << (UInt64(SIGTERM) - 1)) != 0, "\(name) blocks SIGTERM on its main thread")
                #expect(blocked & (1 << (UInt64(SIGSEGV) - 1)) == 0, "\(name) leaves SIGSEGV deliverable")
            }
            #expect(running.contains("auth"), "at least auth is built: \(running)")

            let down = try await stack.logbook("stack", "down")
            #expect(down.status == 0, "\(down.stderr)")
            let log = stack.log("supervisor")
            for name in running {
                #expect(log.contains("\(name) stopped (status 0)"), "\(name) did not stop cleanly:\n\(log)")
            }
        }
    }

    /// A service's own database settings (`LogbookService.database`) reach the database the
    /// real process opens, not only the one tests and benchmarks open through `init`:
    /// analytics' file is made with its 8 KiB pages, seen in the page size its header
    /// records (bytes 16-17, big-endian), and records' with SQLite's 4 KiB.
    @Test("the real analytics makes its database with its own settings")
    func serviceDatabaseSettings() async throws {
        try await withStack { stack in
            let up = try await stack.logbook("stack", "up")
            try #require(up.status == 0, "stack up failed: \(up.stderr)\n\(stack.log("supervisor"))")
            func pageSize(_ service: String) async throws -> Int? {
                let path = "\(stack.home)/data/\(service).sqlite"
                var header: Data?
                _ = try await stack.eventually {
                    header = FileManager.default.contents(atPath: path).flatMap { $0.count >= 18 ? $0.prefix(18) : nil }
                    return header != nil
                }
                return header.map { Int($0[$0.startIndex + 16]) << 8 | Int($0[$0.startIndex + 17]) }
            }
            try #require(stack.pid("analytics") != nil && stack.pid("records") != nil, "\(stack.log("supervisor"))")
            #expect(try await pageSize("analytics") == 8_192, "\(stack.log("analytics"))")
            #expect(try await pageSize("records") == 4_096)
        }
    }

    @Test("a killed service is restarted by the supervisor")
    func restartAfterKill() async throws {
        try await withStack { stack in
            let up = try await stack.logbook("stack", "up")
            try #require(up.status == 0, "stack up failed: \(up.stderr)\n\(stack.log("auth"))")
            let first = try #require(stack.pid("auth"))
            let before = try await stack.logbook("call", "auth", "$srv.ping")
            let instance = (before.object["result"] as? [String: Any])?["instanceId"] as? String
            #expect(instance != nil)

            #expect(kill(first, SIGKILL) == 0)
            let restarted = try await stack.eventually {
                guard let pid = stack.pid("auth"), pid != first else { return false }
                let ping = try await stack.logbook("call", "auth", "$srv.ping", "--timeout", "1")
                return ping.status == 0
            }
            #expect(restarted, "auth came back: \(stack.log("supervisor"))")
            let after = try await stack.logbook("call", "auth", "$srv.ping")
            #expect((after.object["result"] as? [String: Any])?["instanceId"] as? String != instance)
            #expect(stack.log("supervisor").contains("signal 9"))
        }
    }

    @Test("without a stack, requests fail with unavailable (exit 7), usage errors exit 2")
    func stackDown() async throws {
        try await withStack { stack in
            let login = try await stack.logbook("login", "alice", "--password-stdin", "--timeout", "1", stdin: "secret-password\n")
            #expect(login.status == 7, "\(login.stderr)")
            #expect(login.stderr.hasPrefix("error: auth is not reachable"), "\(login.stderr)")
            #expect(login.stderr.contains("(unavailable)"))

            let json = try await stack.logbook("call", "auth", "$srv.ping", "--json", "--timeout", "1")
            #expect(json.status == 7)
            let error = try? JSONSerialization.jsonObject(with: Data(json.stderr.utf8)) as? [String: Any]
            #expect(error?["code"] as? String == "unavailable", "\(json.stderr)")

            let whoami = try await stack.logbook("whoami")
            #expect(whoami.status == 6)
            #expect(whoami.stderr == "error: not logged in; run `logbook login` (or `logbook register`) (unauthenticated)\n")

            let usage = try await stack.logbook("call")
            #expect(usage.status == 2)
            let badTimeout = try await stack.logbook("status", "--timeout", "0")
            #expect(badTimeout.status == 2)
        }
    }

    @Test("a service executable answers --version and --help, refuses other arguments, and starts nothing")
    func serviceArguments() async throws {
        let bin = try TestStack.findBinaries()
        let home = "/tmp/lbe-args-" + UUID().uuidString.prefix(8).lowercased()
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: home) }
        let environment = ["PATH": "/usr/bin:/bin", "HOME": home, "LOGBOOK_HOME": home]
        for name in ["auth", "records", "weather-fetcher", "analytics", "store", "logbook-http"] {
            let path = "\(bin)/\(name)"
            guard FileManager.default.isExecutableFile(atPath: path) else {
                Issue.record("no \(name) in \(bin)")
                continue
            }
            // Each must exit by itself: a service that started instead would hit the deadline.
            let version = try await Tool.run(path, ["--version"], environment: environment, timeout: .seconds(20))
            #expect(version.status == 0, "\(name) --version: \(version.stderr)")
            #expect(version.stdout.hasPrefix("\(name) ") && version.stdout.contains("."), "\(version.stdout)")
            let help = try await Tool.run(path, ["--help"], environment: environment, timeout: .seconds(20))
            #expect(help.status == 0, "\(name) --help: \(help.stderr)")
            #expect(help.stdout.contains("USAGE: \(name)") && help.stdout.contains("logbook stack up"), "\(help.stdout)")
            let wrong = try await Tool.run(path, ["--port", "9000"], environment: environment, timeout: .seconds(20))
            #expect(wrong.status == 2, "\(name) --port: \(wrong.status) \(wrong.stdout)")
            #expect(wrong.stderr.contains("unknown argument '--port'"), "\(wrong.stderr)")
        }
        // None of them opened a database, made keys or a socket.
        let made = (try? FileManager.default.subpathsOfDirectory(atPath: home)) ?? []
        #expect(made.isEmpty, "created under LOGBOOK_HOME: \(made)")
    }
}
