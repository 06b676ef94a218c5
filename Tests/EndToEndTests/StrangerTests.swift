// Strangers to the stack get no user data: the real stack on TCP endpoints (CURVE switched
// on by `logbook stack up` with a key it made), a member reading events and statistics, and
// non-members — another process with no keys, a SUB socket without the key, a CURVE client
// without the stack key, a process running as uid `nobody` against the ipc stack — getting
// nothing (or counts only).
import Foundation
import Imaging
import ImagingFixtures
import Runtime
import Testing
import Wire
import ZMQ

@Suite("strangers", .serialized, .timeLimit(.minutes(3)))
struct StrangerTests {
    /// Free TCP ports on 127.0.0.1, as the kernel hands them out.
    static func freePorts(_ count: Int) throws -> [Int] {
        var sockets: [Int32] = []
        defer { sockets.forEach { close($0) } }
        var ports: [Int] = []
        for _ in 0..<count {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            sockets.append(fd)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = 0
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
            }
            try #require(bound == 0)
            _ = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
            }
            ports.append(Int(UInt16(bigEndian: address.sin_port)))
        }
        return ports
    }

    /// Subscribes to `endpoint` (as a CURVE client when `curve` is given) on a thread of its
    /// own for `seconds`, while `during` runs; returns every message received.
    static func subscribe(
        _ endpoint: String, curve: (server: CurveKey, pair: CurveKeyPair)?, seconds: Double,
        during: () async throws -> Void
    ) async throws -> [[Data]] {
        let (stream, continuation) = AsyncStream.makeStream(of: [[Data]].self)
        let thread = Thread {
            var messages: [[Data]] = []
            do {
                let socket = try Socket(.sub)
                if let curve {
                    try socket.set(.curveServerKey(curve.server.bytes))
                    try socket.set(.curvePublicKey(curve.pair.publicKey.bytes))
                    try socket.set(.curveSecretKey(curve.pair.secretKey.bytes))
                }
                try socket.set(.subscribe(Data()))
                try socket.set(.linger(milliseconds: 0))
                try socket.connect(endpoint)
                let end = Date().addingTimeInterval(seconds)
                while Date() < end {
                    if try socket.poll(timeoutMs: 50).socket {
                        while let frames = try socket.receive() { messages.append(frames) }
                    }
                }
                socket.close()
            } catch {
                messages.append([Data("error: \(error)".utf8)])
            }
            continuation.yield(messages)
            continuation.finish()
        }
        thread.start()
        try await Task.sleep(for: .milliseconds(500))  // connected before anything is published
        try await during()
        for await messages in stream { return messages }
        return []
    }

    @Test("TCP endpoints: CURVE on by default; a member reads events and stats, strangers get nothing")
    func tcpStrangers() async throws {
        let ports = try Self.freePorts(4)
        let environment = [
            "LOGBOOK_AUTH_ENDPOINT": "tcp://127.0.0.1:\(ports[0])",
            "LOGBOOK_AUTH_EVENTS": "tcp://127.0.0.1:\(ports[1])",
            "LOGBOOK_RECORDS_ENDPOINT": "tcp://127.0.0.1:\(ports[2])",
            "LOGBOOK_RECORDS_EVENTS": "tcp://127.0.0.1:\(ports[3])",
        ]
        try await withStack(environment: environment) { stack in
            try await stack.upAndRegister("alice")
            #expect(try await stack.logbook("expense", "add", "Secret lunch", "12.50").status == 0)
            #expect(stack.log("records").contains("service.curve=on"), "\(stack.log("records"))")
            for file in ["data/stack.key", "data/curve.key", "data/records.sqlite", "data/auth.sqlite", "run/supervisor.pid"] {
                let mode = try FileManager.default.attributesOfItem(atPath: "\(stack.home)/\(file)")[.posixPermissions] as? Int
                #expect(mode.map { $0 & 0o077 } == 0, "\(file) is \(String(mode ?? 0, radix: 8))")
            }

            // The member: this test process, reading the stack's key files as the CLI does.
            let member = try StackConfiguration.load(environment: stack.environment)
            let curve = try #require(member.curve)
            let records = try ServiceClient(
                service: "records", endpoint: member.endpoint("records"), settings: ClientSettings(configuration: member))
            defer { records.close() }
            let since = try await records.call("events.since", EventsSince(after: 0), as: EventsSinceResult.self)
            #expect(since.events.contains { $0.data["name"] == "Secret lunch" })
            let stats = try await records.call("$srv.stats", Empty(), as: StatsSnapshot.self)
            #expect(stats.member)

            // A CURVE client on the allow-list but without the stack key: refused, counts only.
            let keyless = try ServiceClient(
                service: "records", endpoint: member.endpoint("records"), settings: ClientSettings(curve: curve))
            defer { keyless.close() }
            let refused = await #expect(throws: ServiceError.self) {
                _ = try await keyless.call("events.since", EventsSince(after: 0), as: EventsSinceResult.self)
            }
            #expect(refused?.code == .permissionDenied)
            // Nor can it have every user's data copied out.
            let backup = try await keyless.reply("$srv.backup", body: ["name": "stolen"])
            #expect(backup.error?.code == .permissionDenied, "\(backup.error?.message ?? "answered")")
            #expect(!FileManager.default.fileExists(atPath: stack.home + "/data/backups/stolen"))
            // An error quoting user input, then the stranger's view of it.
            _ = try await stack.logbook("call", "auth", "auth.login", #"{"username":"typo@example.com","password":"x"}"#)
            let authKeyless = try ServiceClient(
                service: "auth", endpoint: member.endpoint("auth"), settings: ClientSettings(curve: curve))
            defer { authKeyless.close() }
            let counts = try await authKeyless.reply("$srv.stats")
            #expect(counts.result?["member"] == false)
            #expect(counts.result?["lastError"]?["method"] == "auth.login")
            #expect(!(counts.result?.jsonText.contains("typo") ?? true), "\(counts.result?.jsonText ?? "")")

            // A stranger process: the real CLI with a home of its own (no keys), the same
            // TCP endpoints. It gets no answer at all.
            let strangerHome = stack.home + "-stranger"
            defer { try? FileManager.default.removeItem(atPath: strangerHome) }
            for method in ["events.since", "$srv.stats"] {
                let call = try await stack.logbook(
                    "call", "records", method, "--home", strangerHome, "--timeout", "1.5", "--json")
                #expect(call.status == 7, "\(method): \(call.status) \(call.stdout) \(call.stderr)")
                #expect(!call.stdout.contains("Secret lunch") && !call.stderr.contains("Secret lunch"))
            }

            // SUB sockets: the member (with the generated key) sees the next expense live;
            // a plain subscriber sees nothing at all, not even heartbeats.
            let eventsEndpoint = member.eventsEndpoint("records")
            var strangerMessages: [[Data]] = []
            let memberMessages = try await Self.subscribe(
                eventsEndpoint, curve: (curve.serverKey(for: "records"), curve.keyPair), seconds: 4
            ) {
                strangerMessages = try await Self.subscribe(eventsEndpoint, curve: nil, seconds: 2.5) {
                    let added = try await stack.logbook("expense", "add", "Second secret", "3.00")
                    #expect(added.status == 0, "\(added.stderr)")
                }
            }
            #expect(strangerMessages.isEmpty, "\(strangerMessages.count) messages reached a stranger")
            #expect(
                memberMessages.contains { $0.count == 2 && String(decoding: $0[1], as: UTF8.self).contains("Second secret") },
                "member got \(memberMessages.count) messages")
        }
    }

    @Test("ipc: another Unix user (nobody) can neither connect nor read the keys")
    func otherUnixUser() async throws {
        guard getuid() == 0 else {
            // Only root can run a process as another user; this says so rather than passing.
            Issue.record("needs root to run a process as nobody (running as uid \(getuid()))")
            return
        }
        try await withStack { stack in
            try await stack.upAndRegister("alice")
            #expect(try await stack.logbook("expense", "add", "Secret lunch", "12.50").status == 0)
            // The stack's home must be reachable for the attempt to mean something.
            chmod(stack.home, 0o755)
            let runMode = try FileManager.default.attributesOfItem(atPath: stack.runDirectory)[.posixPermissions] as? Int
            #expect(runMode == 0o700)
            for name in ["records.sock", "records.events.sock"] {
                let mode = try FileManager.default.attributesOfItem(atPath: "\(stack.runDirectory)/\(name)")[.posixPermissions] as? Int
                #expect(mode.map { $0 & 0o077 } == 0, "\(name) is \(String(mode ?? 0, radix: 8))")
            }
            for arguments in [
                ["call", "records", "events.since", "--home", stack.home, "--timeout", "1.5"],
                ["call", "records", "$srv.stats", "--home", stack.home, "--timeout", "1.5"],
            ] {
                let result = try await Self.runAsNobody(stack.binDirectory + "/logbook", arguments)
                #expect(result.status != 0, "\(arguments): \(result.output)")
                #expect(!result.output.contains("Secret lunch"))
                #expect(!result.output.contains("\"ok\":true") && !result.output.contains("\"ok\" : true"), "\(result.output)")
            }
            let cat = try await Self.runAsNobody("/bin/cat", ["\(stack.home)/data/stack.key"])
            #expect(cat.status != 0, "nobody read the stack key: \(cat.output)")

            // Everything the stack made is owner-only: databases, WAL, pid files, logs, photos.
            let jpeg = try await Imaging.run { () throws(ImagingError) in try Imaging.testImage(width: 300, height: 200) }
            try jpeg.write(to: URL(fileURLWithPath: stack.home + "/pike.jpg"))
            let added = try await stack.logbook(
                "catch", "add", "--species", "Pike", "--weight", "3.1", "--bait", "spoon", "--water", "fresh",
                "--lat", "59.3", "--lon", "18.1", "--photo", stack.home + "/pike.jpg")
            #expect(added.status == 0, "\(added.stderr)")
            var seen = Set<String>()
            for directory in ["data", "run", "logs"] {
                let root = stack.home + "/" + directory
                let entries = (FileManager.default.enumerator(atPath: root)?.allObjects as? [String]) ?? []
                for entry in [""] + entries {
                    let path = entry.isEmpty ? root : root + "/" + entry
                    let mode = (try? FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int) ?? nil
                    guard let mode else { continue }  // gone meanwhile (a -shm, a .tmp)
                    seen.insert(entry.hasPrefix("records-photos/") ? "photo" : (entry as NSString).pathExtension)
                    #expect(mode & 0o077 == 0, "\(path) is \(String(mode, radix: 8))")
                }
            }
            #expect(seen.isSuperset(of: ["sqlite", "sqlite-wal", "pid", "log", "sock", "key", "photo"]), "\(seen)")
        }
    }

    static func runAsNobody(_ executable: String, _ arguments: [String]) async throws -> (status: Int32, output: String) {
        let out = "/tmp/lb-nobody-\(UUID().uuidString.prefix(8))"
        _ = FileManager.default.createFile(atPath: out, contents: nil)
        defer { unlink(out) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        process.arguments = ["--reuid=nobody", "--regid=nogroup", "--clear-groups", "--", executable] + arguments
        process.environment = ["PATH": "/usr/bin:/bin", "HOME": "/tmp"]
        let handle = FileHandle(forWritingAtPath: out)
        process.standardOutput = handle
        process.standardError = handle
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let deadline = Date().addingTimeInterval(20)
        while process.isRunning && Date() < deadline { try await Task.sleep(for: .milliseconds(50)) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        return (process.terminationStatus, (try? String(contentsOfFile: out, encoding: .utf8)) ?? "")
    }
}
