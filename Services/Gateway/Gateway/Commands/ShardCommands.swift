// `logbook shard list|move`: the records shards (Shared/Runtime/Shards.swift). `list` shows
// each shard's instance, state and how many accounts auth put on it; `move USER TO` moves
// one user's records to another shard while the stack runs (docs/operations.md, "Moving a
// user"): the user's writes are held on the source (refused with `unavailable` and
// `retryAfterMs`) until their rows are on the target, the consumers of the source's events
// have caught up with it, and auth names the new shard. Both are operator commands: they
// present the stack key (LOGBOOK_STACK_KEY or data/stack.key) in the body of each call.
import ArgumentParser
import Foundation
import Runtime
import Wire

struct ShardCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "shard", abstract: "The records shards: list them, move a user between them.",
        subcommands: [ShardList.self, ShardMove.self])
}

struct ShardList: GatewayCommand {
    static let configuration = CommandConfiguration(
        commandName: "list", abstract: "Each records shard: its instance, state, endpoint and how many users it holds.")

    @OptionGroup var global: GlobalOptions

    func execute(_ context: Context) async throws {
        let statuses = await Probe.all(context)
        let counts = try? await ShardMover(context: context).call("auth", "auth.shard.get", [:])
        var rows: [[String]] = []
        var json: [JSONValue] = []
        for (index, instance) in context.configuration.recordsInstances.enumerated() {
            let shard = index + 1
            let status = statuses.first { $0.service == instance }
            let users = counts?["shards"]?.arrayValue?.first { $0["shard"]?.intValue == shard }?["users"]?.intValue
            rows.append([
                String(shard), instance, status?.state.rawValue ?? "-", users.map(String.init) ?? "-",
                context.configuration.endpoint(instance),
            ])
            json.append([
                "shard": .number(.init(shard)), "instance": .string(instance),
                "state": .string(status?.state.rawValue ?? "unknown"), "users": users.map { .number(.init($0)) } ?? .null,
                "endpoint": .string(context.configuration.endpoint(instance)),
            ])
        }
        if context.json {
            Output.json(JSONValue.array(json))
        } else {
            Output.line(Output.table(["SHARD", "INSTANCE", "STATE", "USERS", "ENDPOINT"], rows))
            if counts == nil { Output.line("(auth did not answer: no user counts)") }
        }
        let code = Probe.exitCode(statuses.filter { StackConfiguration.shard(of: $0.service) != nil })
        if code != 0 { throw ExitCode(code) }
    }
}

struct ShardMove: GatewayCommand {
    static let configuration = CommandConfiguration(
        commandName: "move", abstract: "Move one user's records to another shard, online.",
        discussion: """
            The user's writes are refused (unavailable, try again in a second) while it runs; \
            their reads and every other user are served as usual. Their rows are copied to the \
            target, the services that read records' events are waited for until they have \
            applied everything the source published, auth then names the new shard, and the \
            source forgets the rows (it redirects the user from then on). Nothing is published: \
            projections keep what they had. A failure before auth switches leaves the user on the \
            source, as before. Exits 0 when moved (or already there).
            """)

    @OptionGroup var global: GlobalOptions
    @Argument(help: "The username.") var username: String
    @Argument(help: "The shard to move to (1…LOGBOOK_RECORDS_SHARDS).") var to: Int
    @Option(help: ArgumentHelp("Seconds to wait for the consumers of records' events to catch up.", valueName: "seconds"))
    var consumersWait: Double = 30

    func validate() throws { try GlobalOptions.checkSeconds(consumersWait, "--consumers-wait", within: 0...86_400) }

    func execute(_ context: Context) async throws {
        guard (1...context.configuration.recordsShards).contains(to) else {
            throw ServiceError.invalid("TO", "must be a shard from 1 to \(context.configuration.recordsShards) (LOGBOOK_RECORDS_SHARDS)")
        }
        let mover = ShardMover(context: context)
        let report = try await mover.move(username: username, to: to, consumersWait: consumersWait) { line in
            if !context.json { Output.errorLine(line) }
        }
        if context.json {
            Output.json(report.json)
        } else if report.from == report.to {
            Output.line("\(report.username) is on shard \(report.to) already")
        } else {
            Output.line(
                "moved \(report.username) from shard \(report.from) to shard \(report.to): \(report.rows) rows, "
                    + "\(report.photos) photos in \(String(format: "%.2f", report.seconds)) s (writes held \(String(format: "%.2f", report.heldSeconds)) s)")
        }
    }
}

struct ShardMover {
    let context: Context

    struct Report {
        var username: String
        var userId: String
        var from: Int
        var to: Int
        var rows: Int
        var photos: Int
        var seconds: Double
        var heldSeconds: Double

        var json: JSONValue {
            [
                "username": .string(username), "userId": .string(userId), "from": .number(.init(from)),
                "to": .number(.init(to)), "rows": .number(.init(rows)), "photos": .number(.init(photos)),
                "seconds": .number(.init(seconds)), "heldSeconds": .number(.init(heldSeconds)),
            ]
        }
    }

    /// The tables a move copies, parents first (RecordsService, Shards.swift).
    static let tables = [
        "vehicle", "fillup", "photo", "fishCatch", "expense", "attendance", "activity", "timeEntry", "timer", "idempotency",
    ]
    /// The services that consume records' events.
    static let consumers = ["analytics", "store", "weather-fetcher"]

    /// One operator call: the stack key goes in the body.
    func call(_ service: String, _ method: String, _ body: [String: JSONValue], timeout: Duration = .seconds(30))
        async throws -> JSONValue
    {
        guard let key = context.configuration.stackKey else {
            throw ServiceError(
                .failedPrecondition,
                "no stack key here (\(StackKeys.setting) or \(context.configuration.dataDirectory)/\(StackKeys.keyFileName)): only a member of the stack may do this")
        }
        var body = body
        body["stackKey"] = .string(key)
        let reply = try await context.reply(service, method, body: .object(body), caller: .anonymous, timeout: timeout)
        if let error = reply.error { throw error }
        return reply.result ?? .null
    }

    func move(username: String, to: Int, consumersWait: Double, progress: (String) -> Void) async throws -> Report {
        let clock = ContinuousClock()
        let start = clock.now
        let user = try await call("auth", "auth.shard.get", ["username": .string(username)])
        guard let userId = user["userId"]?.stringValue, let from = user["shard"]?.intValue else {
            throw ServiceError(.internal, "auth.shard.get answered without the user: \(user.jsonText)")
        }
        var report = Report(
            username: user["username"]?.stringValue ?? username, userId: userId, from: from, to: to, rows: 0, photos: 0,
            seconds: 0, heldSeconds: 0)
        guard from != to else {
            try await finishElsewhere(userId: userId, to: to)
            return report
        }
        let source = StackConfiguration.recordsInstance(from)
        let target = StackConfiguration.recordsInstance(to)
        // First, while the user still writes: let the consumers catch up with what the source
        // has published so far, so the wait inside the hold below is short.
        try? await waitForConsumers(
            source: source, head: nil, seconds: min(consumersWait, 10), waitForSilent: false, progress: { _ in })
        let frozen = try await call(source, "records.shard.freeze", ["userId": .string(userId), "shard": .number(.init(to))])
        let heldFrom = clock.now
        var imported = false
        do {
            let head = Int64(frozen["head"]?.intValue ?? 0)
            progress("\(report.username)'s writes are held on \(source); copying to \(target)")
            for table in Self.tables {
                var after: Int64 = 0
                var afterKey: String?
                while true {
                    var query: [String: JSONValue] = [
                        "userId": .string(userId), "table": .string(table), "after": .number(.init(after)), "limit": 1000,
                    ]
                    if let afterKey { query["afterKey"] = .string(afterKey) }
                    let page = try await call(source, "records.shard.export", query)
                    let rows = page["rows"]?.arrayValue ?? []
                    if !rows.isEmpty || page["files"]?.objectValue?.isEmpty == false {
                        var body: [String: JSONValue] = [
                            "userId": .string(userId), "shard": .number(.init(from)), "table": .string(table),
                            "rows": .array(rows),
                        ]
                        if let files = page["files"] { body["files"] = files }
                        imported = true
                        _ = try await call(target, "records.shard.import", body)
                        if table == "photo" { report.photos += rows.count }
                    }
                    guard let next = page["next"]?.intValue else { break }
                    after = Int64(next)
                    afterKey = page["nextKey"]?.stringValue
                }
            }
            let committed = try await call(target, "records.shard.commit", ["userId": .string(userId), "shard": .number(.init(from))])
            imported = true
            report.rows = committed["rows"]?.intValue ?? 0
            let sourceRows = frozen["rows"]?.intValue ?? report.rows
            guard report.rows == sourceRows else {
                throw ServiceError(.internal, "\(target) holds \(report.rows) rows of the user, \(source) \(sourceRows); not switching")
            }
            try await waitForConsumers(source: source, head: head, seconds: consumersWait, waitForSilent: true, progress: progress)
            _ = try await call(
                "auth", "auth.shard.set",
                ["userId": .string(userId), "from": .number(.init(from)), "shard": .number(.init(to))])
        } catch {
            // Only while auth names the source may the move be undone: after the switch (an
            // answer lost on its way) the target is the user's shard and the move only lacks
            // its last step; when auth cannot say, undoing either side could split the user.
            let named = (try? await call("auth", "auth.shard.get", ["username": .string(username)]))?["shard"]?.intValue
            if named == to {
                progress("auth names \(target) already: finishing the move")
            } else if named == from {
                // The user stays on the source, as before; the target forgets the copy, even
                // once committed (it would answer for the user beside the source).
                if imported {
                    _ = try? await call(target, "records.shard.abort", ["userId": .string(userId), "shard": .number(.init(from))])
                }
                _ = try? await call(source, "records.shard.abort", ["userId": .string(userId), "shard": .number(.init(to))])
                throw error
            } else {
                throw ServiceError(
                    .unavailable,
                    "\(Self.message(error)); auth could not say which shard now names \(report.username), so nothing was undone: run `logbook shard move \(username) \(to)` again")
            }
        }
        _ = try await call(source, "records.shard.finish", ["userId": .string(userId), "shard": .number(.init(to))])
        report.heldSeconds = Self.seconds(clock.now - heldFrom)
        report.seconds = Self.seconds(clock.now - start)
        return report
    }

    /// A user auth names on `to` already: every other shard is told the move is finished, so
    /// one left holding the user by a move whose last step failed redirects from now on (a
    /// shard the user never left answers that nothing is moving, which is fine).
    func finishElsewhere(userId: String, to: Int) async throws {
        for shard in 1...context.configuration.recordsShards where shard != to {
            let instance = StackConfiguration.recordsInstance(shard)
            do {
                _ = try await call(instance, "records.shard.finish", ["userId": .string(userId), "shard": .number(.init(to))])
            } catch let error as ServiceError where error.code == .failedPrecondition {
                continue  // nothing of the user is moving there
            } catch let error as ServiceError {
                throw ServiceError(
                    error.code, "the user is on shard \(to), but \(instance) could not be told: \(error.message); run the move again")
            }
        }
    }

    static func message(_ error: any Error) -> String {
        (error as? ServiceError)?.message ?? "\(error)"
    }

    /// Waits until every consumer of records' events that answers has applied the source's
    /// events up to `head` (the user's last event there; nil: the last event it has heard of).
    /// One that does not answer is waited for too when `waitForSilent` and it is installed here
    /// or configured elsewhere (it would apply the target's events before the source's).
    func waitForConsumers(
        source: String, head: Int64?, seconds: Double, waitForSilent: Bool, progress: (String) -> Void
    ) async throws {
        let executables = Executables(configuration: context.configuration)
        let clock = ContinuousClock()
        let deadline = clock.now + .milliseconds(Int64(seconds * 1000))
        var pending = Self.consumers
        while !pending.isEmpty {
            var still: [String] = []
            for service in pending {
                let info: JSONValue
                do {
                    info = try await call(service, "$srv.info", [:], timeout: .seconds(2))
                } catch {
                    if waitForSilent, executables.isInstalled(service) || context.configuration.isConfigured(service) {
                        still.append(service)
                    } else if waitForSilent {
                        // Not part of this stack: nothing consumes records' events there.
                        progress("\(service) is not installed here; not waiting for it")
                    }
                    continue
                }
                let consumers = (try? info["health"]?.decode(HealthReport.self))?.consumers ?? []
                guard let consumer = consumers.first(where: { $0.producer == source }) else { continue }
                if consumer.position < head ?? consumer.producerLast ?? 0 { still.append(service) }
            }
            pending = still
            if pending.isEmpty { break }
            guard clock.now < deadline else {
                throw ServiceError(
                    .unavailable,
                    "\(pending.joined(separator: ", ")) did not catch up with \(source) within \(Int(seconds)) s; the user stays where they were")
            }
            try await Task.sleep(for: .milliseconds(100))
        }
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}
