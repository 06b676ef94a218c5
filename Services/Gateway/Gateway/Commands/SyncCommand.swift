// `logbook sync`: replays the offline queue in order, each write with the idempotency key it
// was queued with, so running it twice or after an interrupted run never doubles a record.
// `--list` shows the queue, `--drop ID` removes a write, `--claim-local` first moves the
// writes made before any login into the logged-in account.
import ArgumentParser
import Foundation
import Wire

struct Sync: GatewayCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync",
        abstract: "Send the writes queued while the stack was unreachable (or before you logged in).",
        discussion: """
            Writes are replayed in the order they were made. A write the service refuses is \
            reported with its error and kept (state `failed`): fix the cause and sync again, or \
            drop it with --drop ID. A write that refers to a record created offline is sent with \
            that record's real id once its create has been synced; if the create failed or was \
            dropped, the write is refused locally and kept. The replay stops at the first write \
            that cannot reach the stack; the rest stay queued.
            Exit status: 0 everything synced, 7 the stack is unreachable (writes stay queued), \
            9 some writes were refused and are kept.
            Examples:
              logbook sync
              logbook sync --list
              logbook sync --drop 12
              logbook sync --claim-local      # move the records made before you logged in
            """)

    @OptionGroup var global: GlobalOptions
    @Flag(help: "List the queued writes instead of sending them.") var list = false
    @Option(
        name: .customLong("drop"),
        help: ArgumentHelp("Remove this queued write (see --list); repeatable.", valueName: "id"))
    var drop: [Int64] = []
    @Flag(
        name: .customLong("claim-local"), help: "First move the records made here before any login into your account.")
    var claimLocal = false

    func validate() throws {
        if list && (!drop.isEmpty || claimLocal) {
            throw ValidationError("--list cannot be combined with --drop or --claim-local")
        }
    }

    func execute(_ context: Context) async throws {
        context.usesLocalData = false  // this command replays by itself
        let owner = try context.owner()
        if list { return try show(context, owner: owner) }
        if !drop.isEmpty {
            guard let store = try context.localStore(create: false) else {
                throw ServiceError(.notFound, "nothing is queued", field: "drop")
            }
            for id in drop {
                guard try store.drop(id, owner: owner) else {
                    throw ServiceError(.notFound, "no queued write #\(id) (see `logbook sync --list`)", field: "drop")
                }
            }
            if context.json {
                Output.json(["dropped": .array(drop.map { .number(.init($0)) })])
            } else {
                Output.line("dropped \(drop.map { "#\($0)" }.joined(separator: ", "))")
            }
            return
        }
        let session = try context.requireSession()
        if claimLocal { try Offline.claim(context, session: session) }
        guard let store = try context.localStore(create: false), try store.counts(owner: session.userId).total > 0
        else {
            if context.json { Output.json(Self.json(Offline.Outcome())) } else { Output.line("nothing to sync") }
            return
        }
        let outcome = try await Offline.replay(
            context, store: store, owner: session.userId, token: session.token, includeFailed: true
        ) { item, result in
            if !context.json { Output.line(Offline.describe(item, result)) }
        }
        try Self.finish(outcome, json: context.json)
    }

    /// Prints the summary and throws the exit status: 7 stopped, 9 some refused, else 0.
    static func finish(_ outcome: Offline.Outcome, json: Bool) throws {
        if json {
            Output.json(Self.json(outcome))
        } else {
            var line = "synced \(outcome.synced.count) write\(outcome.synced.count == 1 ? "" : "s")"
            if !outcome.failed.isEmpty { line += "; \(outcome.failed.count) refused and kept (`logbook sync --list`)" }
            if let stopped = outcome.stopped {
                line += "; stopped, \(outcome.remaining) still queued: \(stopped.message)"
            }
            Output.line(line)
        }
        if outcome.stopped != nil { throw ExitCode(ExitStatus.unavailable) }
        if !outcome.failed.isEmpty { throw ExitCode(ExitStatus.partial) }
    }

    static func json(_ outcome: Offline.Outcome) -> JSONValue {
        var object: [String: JSONValue] = [
            "synced": .array(
                outcome.synced.map { item, result in
                    [
                        "queueId": .number(.init(item.id ?? 0)), "method": .string(item.method),
                        "id": result["id"] ?? .null,
                    ]
                }),
            "refused": .array(
                outcome.failed.map { item, error in
                    [
                        "queueId": .number(.init(item.id ?? 0)), "method": .string(item.method),
                        "code": .string(error.code.rawValue), "message": .string(error.message),
                    ]
                }),
            "remaining": .number(.init(outcome.remaining)),
        ]
        if let stopped = outcome.stopped { object["stopped"] = .string(stopped.message) }
        return .object(object)
    }

    func show(_ context: Context, owner: String) throws {
        let items = try context.localStore(create: false)?.items(owner: owner) ?? []
        let anonymous = owner == LocalStore.anonymous ? 0 : context.waiting(owner: LocalStore.anonymous).total
        if context.json {
            Output.json([
                "owner": .string(owner), "items": try JSONValue.from(items),
                "anonymousWaiting": .number(.init(anonymous)),
            ])
            return
        }
        if items.isEmpty {
            Output.line(owner == LocalStore.anonymous ? "no local records" : "nothing queued")
        } else {
            Output.line(
                Output.table(
                    ["ID", "QUEUED", "METHOD", "STATE", "ERROR"],
                    items.map { item in
                        [
                            "\(item.id ?? 0)", TimeText.local(.string(item.createdAt)), item.method,
                            item.state.rawValue + (item.uncertain ? " (maybe applied)" : ""), item.lastError ?? "",
                        ]
                    }))
        }
        if anonymous > 0 {
            Output.line(
                "\(anonymous) record\(anonymous == 1 ? "" : "s") made before any login: `logbook sync --claim-local` moves them into your account"
            )
        }
    }
}

extension Offline {
    /// Moves the anonymous writes into the session's account (they are then replayed as its
    /// own, through the same path as any queued write).
    static func claim(_ context: Context, session: Session) throws {
        guard let store = try context.localStore(create: false) else { return }
        let moved = try store.reassign(from: LocalStore.anonymous, to: session.userId)
        if moved > 0 && !context.json {
            Output.line("moving \(moved) local record\(moved == 1 ? "" : "s") into \(session.username)'s account")
        }
    }
}
