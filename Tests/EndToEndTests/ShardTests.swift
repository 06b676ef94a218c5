// Records sharded by user, on one machine with real processes (Shared/Runtime/Shards.swift):
// two shards under one supervisor, a user on each, the same commands for both, one shard
// down affecting only its users, and `logbook shard move` with the user's writes held
// while it runs. MultiHostShardTests runs shards on two hosts.
import Foundation
import GRDB
import Testing

@Suite("records shards", .serialized, .timeLimit(.minutes(4)))
struct ShardTests {
    static let environment = [
        "LOGBOOK_RECORDS_SHARDS": "2",
        // A stopped shard stays stopped while the test looks (the supervisor would kill it as hung).
        "LOGBOOK_SUPERVISOR_PING_MISSES": "0",
    ]

    /// `logbook` as one user: each has a config directory (session) of their own.
    static func user(_ stack: TestStack, _ name: String) -> [String: String] {
        ["LOGBOOK_CONFIG_DIR": stack.home + "/users/" + name]
    }

    static func register(_ stack: TestStack, _ name: String) async throws -> [String: Any] {
        let register = try await stack.logbook(
            "register", name, "--password-stdin", stdin: TestStack.password + "\n", environment: user(stack, name))
        try #require(register.status == 0, "\(register.stderr)")
        let whoami = try await stack.logbook("whoami", "--json", environment: user(stack, name))
        try #require(whoami.status == 0, "\(whoami.stderr)")
        return whoami.object
    }

    /// Rows of `userId` in a table of one shard's database, read from the file.
    static func rows(_ path: String, _ table: String, userId: String) throws -> Int {
        var configuration = Configuration()
        configuration.readonly = true
        let queue = try DatabaseQueue(path: path, configuration: configuration)
        defer { try? queue.close() }
        return try queue.read { db in
            try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM \(table.quotedDatabaseIdentifier) WHERE userId = ?", arguments: [userId]) ?? -1
        }
    }

    @Test("two shards: users on both, the same commands, one shard down affects only its users")
    func twoShards() async throws {
        try await withStack(environment: Self.environment) { stack in
            let up = try await stack.logbook("stack", "up")
            try #require(up.status == 0, "\(up.stderr)\n\(stack.log("supervisor"))")
            #expect(up.stdout.contains("records-2"), "\(up.stdout)")
            let alice = try await Self.register(stack, "alice")
            let bob = try await Self.register(stack, "bob")
            // The least loaded shard: alice on 1, then bob on 2.
            #expect(alice["shard"] as? Int == 1, "\(alice)")
            #expect(bob["shard"] as? Int == 2, "\(bob)")
            let aliceId = try #require(alice["userId"] as? String)
            let bobId = try #require(bob["userId"] as? String)

            for (name, amount) in [("alice", "12.50"), ("bob", "7.25")] {
                let env = Self.user(stack, name)
                let expense = try await stack.logbook("expense", "add", "Lunch", amount, "--category", "food", environment: env)
                #expect(expense.status == 0, "\(name): \(expense.stderr)")
                #expect(try await stack.logbook("car", "add", "Civic", environment: env).status == 0)
                let fill = try await stack.logbook(
                    "fillup", "add", "--odometer", "1000", "--volume", "10", "--price-per-unit", "3.00", environment: env)
                #expect(fill.status == 0, "\(name): \(fill.stderr)")
                #expect(try await stack.logbook("activity", "add", "Guitar", environment: env).status == 0)
                let time = try await stack.logbook(
                    "activity", "add-time", "Guitar", "2h", "--started", "2026-01-05T08:00:00Z", environment: env)
                #expect(time.status == 0, "\(name): \(time.stderr)")
            }
            // Each user's rows are in their own shard's file, and only there.
            let shard1 = stack.home + "/data/records.sqlite"
            let shard2 = stack.home + "/data/records-2.sqlite"
            #expect(try Self.rows(shard1, "expense", userId: aliceId) == 1)
            #expect(try Self.rows(shard2, "expense", userId: aliceId) == 0)
            #expect(try Self.rows(shard2, "expense", userId: bobId) == 1)
            #expect(try Self.rows(shard1, "expense", userId: bobId) == 0)

            // The same commands read back each user's own data, and the consumers of every
            // shard's events (analytics, store) have both users.
            for (name, amount) in [("alice", 1250.0), ("bob", 725.0)] {
                let env = Self.user(stack, name)
                let list = try await stack.logbook("expense", "list", "--json", environment: env)
                let items = list.object["items"] as? [[String: Any]] ?? []
                #expect(items.count == 1 && items.first?["amountMinor"] as? Double == amount, "\(name): \(list.stdout)")
                let fillups = try await stack.logbook("fillup", "list", "--json", environment: env)
                #expect((fillups.object["items"] as? [Any])?.count == 1, "\(name): \(fillups.stdout)\(fillups.stderr)")
                let summed = try await stack.eventually {
                    let summary = try await stack.logbook(
                        "expense", "summary", "--by", "category", "--json", environment: env)
                    return summary.status == 0 && summary.stdout.contains("food")
                }
                #expect(summed, "analytics has \(name)'s expense")
                let earned = try await stack.eventually {
                    let wallet = try await stack.logbook("wallet", "--json", environment: env)
                    return wallet.status == 0 && (wallet.object["netWorthCents"] as? Double ?? 0) == 200
                }
                #expect(earned, "the store counted \(name)'s two hours")
            }

            // A shard answers only for its users: the redirect names the right one.
            let aliceToken = try Self.token(stack, "alice")
            let wrong = try await stack.logbook(
                "call", "records-2", "records.expense.list", "--token", aliceToken, environment: Self.user(stack, "nobody"))
            #expect(wrong.status != 0)
            let error = wrong.object["error"] as? [String: Any]
            #expect(error?["code"] as? String == "failed_precondition", "\(wrong.stdout)")
            #expect((error?["details"] as? [String: Any])?["shard"] as? Int == 1, "\(wrong.stdout)")

            // status lists each shard.
            let status = try await stack.logbook("status", "--json")
            let rows = status.json as? [[String: Any]] ?? []
            #expect(rows.first { $0["service"] as? String == "records" }?["state"] as? String == "up", "\(status.stdout)")
            #expect(rows.first { $0["service"] as? String == "records-2" }?["state"] as? String == "up", "\(status.stdout)")

            // Shard 2 down (stopped): bob's records cannot be reached, alice's can, and status says which.
            let shard2Pid = try #require(stack.pid("records-2"))
            kill(shard2Pid, SIGSTOP)
            defer { kill(shard2Pid, SIGCONT) }
            let aliceAdd = try await stack.logbook("expense", "add", "Coffee", "3", environment: Self.user(stack, "alice"))
            #expect(aliceAdd.status == 0, "\(aliceAdd.stderr)")
            #expect(!aliceAdd.stdout.contains("queued") && !aliceAdd.stderr.contains("queued"), "\(aliceAdd.stdout)")
            let bobList = try await stack.logbook(
                "expense", "list", "--timeout", "1", environment: Self.user(stack, "bob").merging(["LOGBOOK_LOCAL_DISABLED": "1"]) { $1 })
            #expect(bobList.status == 7 || bobList.stderr.contains("stale"), "bob's shard is down: \(bobList.stdout)\(bobList.stderr)")
            let down = try await stack.logbook("status")
            #expect(down.status == 7, "\(down.stdout)")
            #expect(down.stdout.contains("records shard 2 (records-2) is down"), "\(down.stdout)")
            let downRows = down.stdout.split(separator: "\n")
            #expect(downRows.first { $0.hasPrefix("records ") }?.contains(" up ") == true, "\(down.stdout)")
            #expect(downRows.first { $0.hasPrefix("records-2 ") }?.contains(" down ") == true, "\(down.stdout)")
            // The HTTP edge's /readyz asks every shard, and tells anyone only the code.
            let edge = try await stack.edge()
            let ready = try await edge.send("GET", "/readyz")
            let states = ready.json["services"] as? [String: String] ?? [:]
            #expect(ready.status == 503 && states["records-2"] == "unavailable" && states["records"] == "up", "\(ready.text)")
            #expect(!ready.text.contains("ipc://") && !ready.text.contains("tcp://"), "\(ready.text)")
            kill(shard2Pid, SIGCONT)
            let back = try await stack.eventually {
                try await stack.logbook("expense", "list", "--json", environment: Self.user(stack, "bob")).status == 0
            }
            #expect(back, "bob works again once his shard answers")
        }
    }

    @Test("a failed move is undone on both sides and runs again; a move left unfinished is finished by running it again")
    func moveFailures() async throws {
        try await withStack(environment: Self.environment) { stack in
            let up = try await stack.logbook("stack", "up")
            try #require(up.status == 0, "\(up.stderr)\n\(stack.log("supervisor"))")
            let alice = try await Self.register(stack, "alice")
            _ = try await Self.register(stack, "bob")
            let aliceId = try #require(alice["userId"] as? String)
            try #require(alice["shard"] as? Int == 1)
            let env = Self.user(stack, "alice")
            for index in 1...3 {
                #expect(try await stack.logbook("expense", "add", "Item \(index)", "\(index)", environment: env).status == 0)
            }
            let shard2 = stack.home + "/data/records-2.sqlite"

            // Fails after the target committed: analytics is stopped, and the wait for it is 1 s.
            let analytics = try #require(stack.pid("analytics"))
            kill(analytics, SIGSTOP)
            var resumed = false
            defer { if !resumed { kill(analytics, SIGCONT) } }
            let failed = try await stack.logbook("shard", "move", "alice", "2", "--consumers-wait", "1", timeout: .seconds(60))
            kill(analytics, SIGCONT)
            resumed = true
            #expect(failed.status != 0)
            #expect(failed.stderr.contains("did not catch up"), "\(failed.stderr)")
            // The target forgot its copy and does not answer for her; the source serves her.
            #expect(try Self.rows(shard2, "expense", userId: aliceId) == 0)
            #expect(try Self.rows(shard2, "shardUser", userId: aliceId) == 0)
            let token = try Self.token(stack, "alice")
            let target = try await stack.logbook(
                "call", "records-2", "records.expense.list", "--token", token, environment: Self.user(stack, "nobody"))
            let redirect = target.object["error"] as? [String: Any]
            #expect((redirect?["details"] as? [String: Any])?["shard"] as? Int == 1, "\(target.stdout)")
            #expect(try await stack.logbook("expense", "add", "Item 4", "4", environment: env).status == 0)
            // Run again, it moves.
            let moved = try await stack.logbook(
                "shard", "move", "alice", "2", "--json", "--consumers-wait", "60", timeout: .seconds(90))
            #expect(moved.status == 0, "\(moved.stdout)\(moved.stderr)")
            #expect(moved.object["rows"] as? Int == 4, "\(moved.stdout)")
            #expect(try Self.rows(shard2, "expense", userId: aliceId) == 4)

            // A user with nothing written, whose move stopped before its last step: the source
            // still holds her writes. Running the move again finishes it.
            let carol = try await Self.register(stack, "carol")
            let carolId = try #require(carol["userId"] as? String)
            try #require(carol["shard"] as? Int == 1, "\(carol)")
            let key = try Self.stackKey(stack)
            for (service, method, body) in [
                ("records", "records.shard.freeze", #"{"userId": "\#(carolId)", "shard": 2, "stackKey": "\#(key)"}"#),
                ("records-2", "records.shard.commit", #"{"userId": "\#(carolId)", "shard": 1, "stackKey": "\#(key)"}"#),
                ("auth", "auth.shard.set", #"{"userId": "\#(carolId)", "from": 1, "shard": 2, "stackKey": "\#(key)"}"#),
            ] {
                let step = try await stack.logbook("call", service, method, body)
                #expect(step.object["ok"] as? Bool == true, "\(method): \(step.stdout)\(step.stderr)")
            }
            let carolEnv = Self.user(stack, "carol")
            let heldWrite = try await stack.logbook("expense", "add", "Held", "1", environment: carolEnv)
            #expect(heldWrite.status == 7, "the source holds her writes: \(heldWrite.stdout)\(heldWrite.stderr)")
            let again = try await stack.logbook("shard", "move", "carol", "2", timeout: .seconds(60))
            #expect(again.status == 0, "\(again.stdout)\(again.stderr)")
            let write = try await stack.logbook("expense", "add", "After", "1", environment: carolEnv)
            #expect(write.status == 0, "\(write.stdout)\(write.stderr)")
            #expect(try Self.rows(shard2, "expense", userId: carolId) == 1)
        }
    }

    static func token(_ stack: TestStack, _ name: String) throws -> String {
        let path = stack.home + "/users/" + name + "/session.json"
        let session = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path)))
        return try #require((session as? [String: Any])?["token"] as? String)
    }

    static func stackKey(_ stack: TestStack) throws -> String {
        try String(contentsOfFile: stack.home + "/data/stack.key", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test("shard move: the data moves, writes are held while it runs, nothing lost or doubled")
    func move() async throws {
        try await withStack(environment: Self.environment) { stack in
            let up = try await stack.logbook("stack", "up")
            try #require(up.status == 0, "\(up.stderr)\n\(stack.log("supervisor"))")
            let alice = try await Self.register(stack, "alice")
            let bob = try await Self.register(stack, "bob")
            let aliceId = try #require(alice["userId"] as? String)
            try #require(alice["shard"] as? Int == 1 && bob["shard"] as? Int == 2)
            let env = Self.user(stack, "alice")
            for index in 1...5 {
                #expect(try await stack.logbook("expense", "add", "Item \(index)", "\(index)", environment: env).status == 0)
            }
            #expect(try await stack.logbook("car", "add", "Civic", environment: env).status == 0)
            for odometer in ["1000", "1300"] {
                let fill = try await stack.logbook(
                    "fillup", "add", "--odometer", odometer, "--volume", "10", "--price-per-unit", "3.00", environment: env)
                #expect(fill.status == 0, "\(fill.stderr)")
            }
            #expect(try await stack.logbook("activity", "add", "Guitar", environment: env).status == 0)
            #expect(
                try await stack.logbook(
                    "activity", "add-time", "Guitar", "3h", "--started", "2026-01-05T08:00:00Z", environment: env
                ).status == 0)
            let catchAdd = try await stack.logbook(
                "catch", "add", "--species", "Pike", "--weight", "2.5", "--bait", "spoon", "--water", "fresh", "--lat", "59.33",
                "--lon", "18.07", environment: env)
            #expect(catchAdd.status == 0, "\(catchAdd.stderr)")
            // A write with a key of its own: retried after the move, the target answers it from
            // the moved idempotency log instead of storing it again.
            let keyed = #"{"name": "Keyed", "amountMinor": 700}"#
            let first = try await stack.logbook(
                "call", "records", "records.expense.add", keyed, "--idempotency-key", "shard-move-key", environment: env)
            let keyedId = try #require((first.object["result"] as? [String: Any])?["id"] as? String, "\(first.stdout)")
            let shard1 = stack.home + "/data/records.sqlite"
            let shard2 = stack.home + "/data/records-2.sqlite"
            #expect(try Self.rows(shard1, "expense", userId: aliceId) == 6)
            let earned = try await stack.eventually {
                (try await stack.logbook("wallet", "--json", environment: env).object["netWorthCents"] as? Double) == 300
            }
            #expect(earned)

            // A non-member cannot move anyone.
            let stranger = try await stack.logbook(
                "call", "records", "records.shard.freeze", #"{"userId": "\#(aliceId)", "shard": 2, "stackKey": "nope"}"#)
            #expect((stranger.object["error"] as? [String: Any])?["code"] as? String == "permission_denied", "\(stranger.stdout)")

            // Hold the move while analytics is stopped (it must catch up before the switch):
            // meanwhile alice's writes are refused with unavailable and a retry hint, her
            // reads answer, bob is not affected.
            let analytics = try #require(stack.pid("analytics"))
            kill(analytics, SIGSTOP)
            var resumed = false
            defer { if !resumed { kill(analytics, SIGCONT) } }
            let moving = Task {
                try await stack.logbook("shard", "move", "alice", "2", "--json", "--consumers-wait", "60", timeout: .seconds(90))
            }
            let held = try await stack.eventually(timeout: .seconds(15)) {
                let write = try await stack.logbook(
                    "call", "records", "records.expense.add", #"{"description": "During", "amountMinor": 100, "currency": "USD"}"#,
                    environment: env)
                let error = write.object["error"] as? [String: Any]
                return error?["code"] as? String == "unavailable"
                    && (error?["details"] as? [String: Any])?["retryAfterMs"] as? Int == 1000
            }
            #expect(held, "alice's writes are refused while she moves")
            let cliWrite = try await stack.logbook("expense", "add", "During", "1", environment: env)
            #expect(cliWrite.status == 7, "\(cliWrite.stdout)\(cliWrite.stderr)")
            #expect(cliWrite.stderr.contains("being moved"), "\(cliWrite.stderr)")
            let read = try await stack.logbook("expense", "list", "--json", environment: env)
            #expect((read.object["items"] as? [Any])?.count == 6, "reads still answer: \(read.stdout)\(read.stderr)")
            let bobWrite = try await stack.logbook("expense", "add", "Bob's", "2", environment: Self.user(stack, "bob"))
            #expect(bobWrite.status == 0, "bob is not affected: \(bobWrite.stderr)")
            kill(analytics, SIGCONT)
            resumed = true
            let moved = try await moving.value
            #expect(moved.status == 0, "\(moved.stdout)\(moved.stderr)")
            #expect(moved.object["from"] as? Int == 1 && moved.object["to"] as? Int == 2, "\(moved.stdout)")
            #expect(moved.object["rows"] as? Int == 12, "6 expenses, a car, 2 fill-ups, an activity, a time entry, a catch: \(moved.stdout)")

            // Data on the target, gone from the source.
            #expect(try Self.rows(shard2, "expense", userId: aliceId) == 6)
            #expect(try Self.rows(shard2, "fillup", userId: aliceId) == 2)
            #expect(try Self.rows(shard2, "fishCatch", userId: aliceId) == 1)
            for table in ["expense", "fillup", "vehicle", "activity", "timeEntry", "fishCatch"] {
                #expect(try Self.rows(shard1, table, userId: aliceId) == 0, "\(table) left on the source")
            }
            // The source refuses her with the redirect to shard 2.
            let token = try Self.token(stack, "alice")
            let source = try await stack.logbook(
                "call", "records", "records.expense.list", "--token", token, environment: Self.user(stack, "nobody"))
            let refusal = source.object["error"] as? [String: Any]
            #expect((refusal?["details"] as? [String: Any])?["shard"] as? Int == 2, "\(source.stdout)")

            // Her old session keeps working: the CLI follows the redirect and remembers it.
            let retried = try await stack.logbook(
                "call", "records", "records.expense.add", keyed, "--idempotency-key", "shard-move-key", environment: env)
            #expect((retried.object["result"] as? [String: Any])?["id"] as? String == keyedId, "\(retried.stdout)")
            let after = try await stack.logbook("expense", "add", "After", "6", environment: env)
            #expect(after.status == 0, "\(after.stderr)")
            let list = try await stack.logbook("expense", "list", "--json", environment: env)
            #expect((list.object["items"] as? [Any])?.count == 7, "\(list.stdout)\(list.stderr)")
            #expect(try Self.rows(shard2, "expense", userId: aliceId) == 7)
            let whoami = try await stack.logbook("whoami", "--json", environment: env)
            #expect(whoami.object["shard"] as? Int == 2)

            // Projections stay right: nothing doubled, the new write counted.
            let time = try await stack.logbook(
                "activity", "add-time", "Guitar", "1h", "--started", "2026-01-06T08:00:00Z", environment: env)
            #expect(time.status == 0, "\(time.stderr)")
            let wallet = try await stack.eventually {
                (try await stack.logbook("wallet", "--json", environment: env).object["netWorthCents"] as? Double) == 400
            }
            #expect(wallet, "3 h before the move + 1 h after = $4.00, not more")
            let summary = try await stack.eventually {
                let result = try await stack.logbook("expense", "summary", "--by", "category", "--json", environment: env)
                return result.stdout.contains("2800")
            }
            #expect(summary, "analytics: 1+2+3+4+5+7+6 = $28.00 once each")

            // shard list counts the users.
            let shards = try await stack.logbook("shard", "list", "--json")
            let counts = shards.json as? [[String: Any]] ?? []
            #expect(counts.first { $0["shard"] as? Int == 2 }?["users"] as? Int == 2, "\(shards.stdout)")
        }
    }
}
