// Offline use through the real `logbook` and the real stack: writes made while the stack is
// down are queued and replayed exactly once (twice, or after the CLI was killed mid-sync,
// still once); a write the service refuses is kept until dropped; logout warns about
// unsynced writes; records made before any account are moved into a new account only when
// asked (seed 002's "sync my data").
import Foundation
import Synchronization
import Testing
import ZMQ

@Suite("logbook offline queue and anonymous use", .serialized, .timeLimit(.minutes(5)))
struct OfflineTests {
    static let password = "correct horse battery staple"

    func up(_ stack: TestStack) async throws {
        let up = try await stack.logbook("stack", "up")
        try #require(up.status == 0, "stack up failed: \(up.stderr)\n\(stack.log("records"))")
    }

    func down(_ stack: TestStack) async throws {
        let down = try await stack.logbook("stack", "down")
        try #require(down.status == 0, "stack down failed: \(down.stderr)")
    }

    func register(_ stack: TestStack, _ user: String, _ extra: String...) async throws -> CommandResult {
        let result = try await stack.logbook(
            arguments: ["register", user, "--password-stdin"] + extra, stdin: Self.password + "\n")
        try #require(result.status == 0, "register \(user): \(result.stderr)")
        return result
    }

    /// `logbook args… --json` that must exit 0; its JSON object.
    func object(_ stack: TestStack, _ arguments: String...) async throws -> [String: Any] {
        let result = try await stack.logbook(arguments: arguments + ["--json"])
        try #require(
            result.status == 0, "logbook \(arguments.joined(separator: " ")): \(result.stdout)\(result.stderr)")
        return result.object
    }

    /// A write that must have been queued.
    func queued(_ stack: TestStack, _ arguments: String...) async throws -> [String: Any] {
        let result = try await object(stack, arguments: arguments)
        try #require(
            result["queued"] as? Bool == true, "logbook \(arguments.joined(separator: " ")) was not queued: \(result)")
        return result
    }

    func object(_ stack: TestStack, arguments: [String]) async throws -> [String: Any] {
        let result = try await stack.logbook(arguments: arguments + ["--json"])
        try #require(
            result.status == 0, "logbook \(arguments.joined(separator: " ")): \(result.stdout)\(result.stderr)")
        return result.object
    }

    func items(_ stack: TestStack, _ arguments: String...) async throws -> [[String: Any]] {
        try await object(stack, arguments: arguments + ["--all"])["items"] as? [[String: Any]] ?? []
    }

    @Test("offline writes are queued, synced once; sync again changes nothing; refused writes are kept; logout warns")
    func queueAndSync() async throws {
        try await withStack { stack in
            try await up(stack)
            _ = try await register(stack, "alice")
            let civic = try await object(stack, "car", "add", "Civic")
            let civicId = try #require(civic["id"] as? String)

            try await down(stack)
            let started = ContinuousClock.now
            _ = try await queued(stack, "fillup", "add", "--odometer", "1000", "--volume", "10", "--total", "30")
            _ = try await queued(
                stack, "fillup", "add", "--odometer", "1300", "--volume", "9.5", "--price-per-unit", "3.10")
            _ = try await queued(stack, "expense", "add", "Lunch", "12.50", "--category", "food")
            let bad = try await queued(stack, "expense", "add", String(repeating: "x", count: 81), "1")
            // A car made offline, and a fill-up naming it: sent with its real id on replay.
            let van = try await queued(stack, "car", "add", "Van", "--distance-unit", "km", "--volume-unit", "l")
            #expect((van["localId"] as? String)?.hasPrefix("local-") == true)
            _ = try await queued(
                stack, "fillup", "add", "--car", "Van", "--odometer", "500", "--volume", "40", "--total", "60")
            let bad2 = try await queued(stack, "expense", "add", "", "2")
            print("7 offline writes queued in \(ContinuousClock.now - started)")

            let status = try await stack.logbook("status")
            #expect(status.stdout.contains("7 writes waiting to sync"), "\(status.stdout)")
            let read = try await stack.logbook("expense", "list")
            #expect(read.status == 7, "a read offline with no saved copy: unavailable")
            #expect(read.stderr.contains("not reachable") && read.stderr.contains("waiting to sync"), "\(read.stderr)")

            try await up(stack)
            let first = try await stack.logbook("sync", "--json")
            #expect(first.status == 9, "two writes were refused: partial. \(first.stdout)\(first.stderr)")
            #expect((first.object["synced"] as? [Any])?.count == 5, "\(first.stdout)")
            let refused = first.object["refused"] as? [[String: Any]] ?? []
            #expect(refused.map { $0["queueId"] as? Int } == [bad["queueId"] as? Int, bad2["queueId"] as? Int])
            #expect(refused.first?["code"] as? String == "invalid_argument")

            func check() async throws {
                let fills = try await items(stack, "fillup", "list", "--car", civicId)
                #expect(fills.count == 2, "\(fills)")
                #expect(Set(fills.compactMap { $0["odometer"] as? Double }) == [1000, 1300])
                let expenses = try await items(stack, "expense", "list")
                #expect(expenses.map { $0["name"] as? String } == ["Lunch"], "\(expenses)")
                let cars = try await items(stack, "car", "list")
                #expect(cars.count == 2)
                let vanId = try #require(cars.first { $0["nickname"] as? String == "Van" }?["id"] as? String)
                let vanFills = try await items(stack, "fillup", "list", "--car", vanId)
                #expect(vanFills.count == 1 && vanFills.first?["vehicleId"] as? String == vanId, "\(vanFills)")
            }
            try await check()

            // Again: the refused ones are tried again and refused again; nothing else changes.
            let second = try await stack.logbook("sync", "--json")
            #expect(second.status == 9)
            #expect((second.object["synced"] as? [Any])?.count == 0, "\(second.stdout)")
            try await check()

            let list = try await object(stack, "sync", "--list")
            let kept = list["items"] as? [[String: Any]] ?? []
            #expect(
                kept.count == 2 && kept.allSatisfy { $0["state"] as? String == "failed" && $0["lastError"] != nil },
                "\(kept)")
            let drop = try await stack.logbook("sync", "--drop", "\(bad["queueId"] as? Int ?? -1)")
            #expect(drop.status == 0, "\(drop.stderr)")

            // Logout with an unsynced write: refused without a terminal, unless told to discard it.
            let logout = try await stack.logbook("logout")
            #expect(logout.status == 5, "\(logout.stdout)\(logout.stderr)")
            #expect(logout.stderr.contains("1 queued write has not been synced"), "\(logout.stderr)")
            let discard = try await stack.logbook("logout", "--discard-unsynced")
            #expect(discard.status == 0, "\(discard.stderr)")
            #expect(discard.stdout.contains("discarded 1 unsynced write"), "\(discard.stdout)")
            let login = try await stack.logbook("login", "alice", "--password-stdin", stdin: Self.password + "\n")
            #expect(login.status == 0, "\(login.stderr)")
            #expect(
                (try await object(stack, "sync", "--list")["items"] as? [Any])?.count == 0,
                "the local queue went with the logout")
            try await check()
            #expect(try await stack.logbook("sync").stdout.contains("nothing to sync"))
        }
    }

    @Test("a frozen records service: the write is queued after its timeout; the next command replays it first")
    func nextCommandReplays() async throws {
        try await withStack { stack in
            try await up(stack)
            _ = try await register(stack, "erin")
            let records = try #require(stack.pid("records"))
            kill(records, SIGSTOP)
            let queued: [String: Any]
            do {
                queued = try await self.queued(stack, "expense", "add", "Tea", "2.10", "--timeout", "1")
                kill(records, SIGCONT)
            } catch {
                kill(records, SIGCONT)
                throw error
            }
            #expect(queued["waiting"] as? Int == 1)
            let list = try await stack.logbook("expense", "list", "--json")
            #expect(list.status == 0, "\(list.stderr)")
            #expect(list.stderr.contains("synced 1 queued write"), "\(list.stderr)")
            let names = (list.object["items"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
            #expect(names == ["Tea"], "the queued write went first, once")
            #expect(try await stack.logbook("sync").stdout.contains("nothing to sync"))
        }
    }

    /// A replay that stops with writes still queued (here: records at capacity) must not let
    /// the command's own write overtake them: sent at once, it would be applied before them,
    /// and a queued edit would later undo a newer one.
    @Test("a replay that stops keeps the command's own write queued behind the ones it could not send")
    func writesStayInOrder() async throws {
        try await withStack { stack in
            try await up(stack)
            _ = try await register(stack, "gus")
            try await down(stack)
            _ = try await queued(stack, "expense", "add", "Tea", "1.00")
            // A stand-in for records that answers every request with resource_exhausted.
            let endpoint = "ipc://\(stack.runDirectory)/records.sock"
            try FileManager.default.createDirectory(atPath: stack.runDirectory, withIntermediateDirectories: true)
            let seen = Mutex<[String]>([])
            let busy = try SocketPump(
                name: "busy-records",
                setup: {
                    let socket = try Socket(.router)
                    try socket.bind(endpoint)
                    return socket
                },
                respond: { frames in
                    guard frames.count == 3, let request = try? JSONSerialization.jsonObject(with: frames[2]) as? [String: Any]
                    else { return nil }
                    let body = request["body"] as? [String: Any]
                    seen.withLock { $0.append("\(request["method"] ?? "?") \(body?["name"] ?? "")") }
                    let reply: [String: Any] = [
                        "v": 1, "id": request["id"] ?? "", "ok": false,
                        "error": ["code": "resource_exhausted", "message": "records is at capacity; retry shortly"],
                    ]
                    return [frames[0], Data(), (try? JSONSerialization.data(withJSONObject: reply)) ?? Data()]
                },
                onEvent: { _ in })
            defer { busy.stop() }
            let coffee = try await stack.logbook("expense", "add", "Coffee", "2.00", "--json")
            #expect(coffee.status == 0, "\(coffee.stdout)\(coffee.stderr)")
            #expect(coffee.object["queued"] as? Bool == true, "queued behind Tea, not sent: \(coffee.stdout)\(coffee.stderr)")
            #expect(coffee.object["waiting"] as? Int == 2, "\(coffee.stdout)")
            #expect(seen.withLock { $0 } == ["records.expense.add Tea"], "only the replay reached records")
        }
    }

    @Test("the CLI killed in the middle of a sync: syncing again creates no duplicate")
    func killedMidSync() async throws {
        try await withStack { stack in
            try await up(stack)
            _ = try await register(stack, "kim")
            try await down(stack)
            let total = 30
            for i in 0..<total {
                _ = try await queued(stack, "expense", "add", "item \(i)", "\(i + 1).25")
            }
            try await up(stack)
            let records = try #require(stack.pid("records"))

            // Start a sync; once it has sent a few, freeze records so the next write is in
            // flight, kill the CLI, then let records go on (it applies that write, unheard).
            let outPath = stack.home + "/sync.out"
            _ = FileManager.default.createFile(atPath: outPath, contents: nil)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: stack.binDirectory + "/logbook")
            process.arguments = ["sync"]
            process.environment = stack.environment
            process.standardOutput = FileHandle(forWritingAtPath: outPath)
            process.standardError = FileHandle.nullDevice
            process.standardInput = FileHandle.nullDevice
            try process.run()
            var syncedBeforeKill = 0
            do {
                let clock = ContinuousClock()
                let deadline = clock.now + .seconds(30)
                while clock.now < deadline {
                    let text = (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? ""
                    syncedBeforeKill = text.components(separatedBy: "synced #").count - 1
                    if syncedBeforeKill >= 2 || !process.isRunning { break }
                    try await Task.sleep(for: .milliseconds(2))
                }
                kill(records, SIGSTOP)
                try await Task.sleep(for: .milliseconds(400))
                let text = (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? ""
                syncedBeforeKill = text.components(separatedBy: "synced #").count - 1
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
                kill(records, SIGCONT)
            } catch {
                kill(process.processIdentifier, SIGKILL)
                kill(records, SIGCONT)
                throw error
            }
            print("sync killed after \(syncedBeforeKill) of \(total) writes")
            try #require(syncedBeforeKill > 0 && syncedBeforeKill < total, "the sync was not interrupted mid-way")

            let again = try await stack.logbook("sync", "--json")
            #expect(again.status == 0, "\(again.stdout)\(again.stderr)")
            #expect((again.object["synced"] as? [Any])?.count == total - syncedBeforeKill, "\(again.stdout)")
            let expenses = try await items(stack, "expense", "list")
            let names = expenses.compactMap { $0["name"] as? String }
            #expect(names.count == total, "\(names.count) expenses for \(total) queued writes")
            #expect(Set(names).count == total, "no duplicates")
            #expect(try await stack.logbook("sync").stdout.contains("nothing to sync"))
        }
    }

    @Test("records made before any account: kept local, moved into a new account only when asked")
    func anonymousThenClaim() async throws {
        try await withStack { stack in
            try await up(stack)
            let car = try await queued(stack, "car", "add", "Civic")
            #expect(car["anonymous"] as? Bool == true)
            _ = try await queued(stack, "fillup", "add", "--odometer", "100", "--volume", "10", "--total", "30")
            _ = try await queued(stack, "expense", "add", "Coffee", "3.20")

            let read = try await stack.logbook("expense", "list")
            #expect(read.status == 6)
            #expect(read.stderr.contains("not logged in; 3 local records waiting"), "\(read.stderr)")

            // Without a terminal and without a flag: not claimed, and said so.
            let carol = try await register(stack, "carol")
            #expect(
                carol.stdout.contains("3 local records made before this account stay on this machine"),
                "\(carol.stdout)")
            #expect(try await items(stack, "expense", "list").isEmpty)
            #expect(try await stack.logbook("logout").status == 0)

            let bob = try await register(stack, "bob", "--no-claim-local", "--json")
            #expect(bob.object["localRecords"] as? Int == 3)
            #expect(try await items(stack, "expense", "list").isEmpty, "not uploaded")
            #expect(try await items(stack, "car", "list").isEmpty, "not uploaded")
            #expect(try await stack.logbook("sync").stdout.contains("nothing to sync"), "bob's sync leaves them alone")
            #expect(try await stack.logbook("logout").status == 0)
            // a login says they are there, not in any account, and how to claim them
            let bobAgain = try await stack.logbook("login", "bob", "--password-stdin", stdin: Self.password + "\n")
            #expect(
                bobAgain.stdout.contains("3 local records made on this machine while logged out are not in any account: "
                    + "`logbook sync --claim-local`"), "\(bobAgain.stdout)")
            #expect(try await items(stack, "expense", "list").isEmpty, "a login claims nothing by itself")
            #expect(try await stack.logbook("logout").status == 0)

            let alice = try await register(stack, "alice", "--claim-local", "--json")
            let claimed = alice.object["claimed"] as? [String: Any]
            #expect((claimed?["synced"] as? [Any])?.count == 3, "\(alice.stdout)")
            let cars = try await items(stack, "car", "list")
            let civicId = try #require(cars.first?["id"] as? String, "\(cars)")
            let fills = try await items(stack, "fillup", "list")
            #expect(fills.count == 1 && fills.first?["vehicleId"] as? String == civicId, "\(fills)")
            #expect(try await items(stack, "expense", "list").map { $0["name"] as? String } == ["Coffee"])
            let left = try await object(stack, "sync", "--list")
            #expect((left["items"] as? [Any])?.count == 0 && left["anonymousWaiting"] as? Int == 0, "\(left)")

            // And bob still has none of it.
            #expect(try await stack.logbook("logout").status == 0)
            let login = try await stack.logbook("login", "bob", "--password-stdin", stdin: Self.password + "\n")
            #expect(login.status == 0)
            #expect(try await items(stack, "expense", "list").isEmpty)
        }
    }
}
