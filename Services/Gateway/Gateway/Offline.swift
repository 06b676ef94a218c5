// Offline use: which writes may wait in the local queue, what a command prints when its
// write was queued, and the replay (`logbook sync`, the next command that reaches the
// stack, `register --claim-local`). Replay goes in queue order with each write's own
// idempotency key, so a write applied before a crash or a lost answer is answered again,
// never doubled. Local ids (`local-…`) of records created offline are replaced by their
// real ids before a later write is sent.
import Foundation
import Runtime
import Wire

public enum Offline {
    /// Writes that may be queued: the records service's, except the timer's, whose state
    /// is the server's clock (a `start` replayed an hour later would be a lie).
    static func isQueueable(_ service: String, _ method: String) -> Bool {
        service == "records" && method.hasPrefix("records.") && !method.hasPrefix("records.timer.")
    }

    /// Creates whose records later writes may refer to: they get a local id.
    static func isCreate(_ method: String) -> Bool { method.hasSuffix(".add") }

    /// The field a create defaults to "now": fixed when queued, not when replayed.
    static let timeFields = [
        "records.expense.add": "date", "records.fillup.add": "date", "records.catch.add": "caughtAt",
        "records.attendance.add": "at",
    ]

    /// Error codes that stop a replay and leave the write pending: nothing was applied, or
    /// the idempotency key makes the next try safe.
    static func stopsReplay(_ code: ErrorCode) -> Bool {
        [.unavailable, .deadlineExceeded, .unauthenticated, .permissionDenied, .resourceExhausted].contains(code)
    }

    /// Thrown by `Context.send` when a write went to the queue instead of the stack; the
    /// command's `run()` reports it (exit 0: the write is kept and will be sent).
    public struct Queued: Error, Sendable {
        public var item: QueuedWrite
        /// Why it was not sent now.
        public var reason: String
        public var waiting: Int
    }

    static func report(_ queued: Queued, json: Bool) {
        let item = queued.item
        let anonymous = item.owner == LocalStore.anonymous
        if json {
            var object: [String: JSONValue] = [
                "queued": true, "queueId": .number(.init(item.id ?? 0)), "method": .string(item.method),
                "idempotencyKey": .string(item.idempotencyKey), "reason": .string(queued.reason),
                "anonymous": .bool(anonymous), "uncertain": .bool(item.uncertain),
                "waiting": .number(.init(queued.waiting)),
            ]
            if let localId = item.localId { object["localId"] = .string(localId) }
            Output.json(.object(object))
            return
        }
        var text = "queued #\(item.id ?? 0): \(item.method)"
        if let localId = item.localId { text += " (local id \(localId))" }
        text += " — \(queued.reason)"
        if item.uncertain {
            text += "\n  it may already have been applied; replaying it is safe (same idempotency key, never doubled)"
        }
        if anonymous {
            text +=
                "\n  \(queued.waiting) local record\(queued.waiting == 1 ? "" : "s") kept on this machine; "
                + "`logbook register` offers to move them into your new account"
        } else {
            text +=
                "\n  \(queued.waiting) write\(queued.waiting == 1 ? "" : "s") waiting; `logbook sync` sends them when the stack is back"
        }
        Output.line(text)
    }

    /// What one replay did.
    struct Outcome {
        var synced: [(QueuedWrite, JSONValue)] = []
        var failed: [(QueuedWrite, ServiceError)] = []
        /// Why the replay stopped before the end (the rest stays queued).
        var stopped: ServiceError?
        var remaining = 0
    }

    /// Replays the owner's queue in order as the user of `token`. Pending writes only,
    /// unless `includeFailed` (`logbook sync` retries the refused ones too). `progress` is
    /// told of each write as it is settled.
    static func replay(
        _ context: Context, store: LocalStore, owner: String, token: String, includeFailed: Bool,
        progress: (QueuedWrite, Result<JSONValue, ServiceError>) -> Void = { _, _ in }
    ) async throws -> Outcome {
        var outcome = Outcome()
        let items = try store.items(owner: owner, includeFailed: includeFailed)
        for (index, item) in items.enumerated() {
            // Local ids: the real id once their create was replayed; a create that failed or
            // was dropped leaves this write unsendable.
            let map = try store.realIds(owner: owner)
            let body = item.bodyValue
            if let missing = body.strings(withPrefix: LocalStore.localPrefix).first(where: { map[$0] == nil }) {
                let why: String
                if let creator = try store.creator(of: missing) {
                    why =
                        "it refers to \(missing), created by queued write #\(creator.id ?? 0), which has not been synced"
                        + (creator.state == .failed ? " (it failed: fix or drop it first)" : "")
                } else {
                    why = "it refers to \(missing), a record created offline whose queued write was dropped"
                }
                let error = ServiceError(.failedPrecondition, why)
                try store.fail(item, code: error.code.rawValue, message: error.message)
                outcome.failed.append((item, error))
                progress(item, .failure(error))
                continue
            }
            let sent = body.replacingStrings(map)
            let reply: Reply
            do {
                reply = try await context.reply(
                    item.service, item.method, body: sent, caller: .token(token), idempotencyKey: item.idempotencyKey)
            } catch let error as ServiceError {
                try store.attempted(item, delivered: error.code == .deadlineExceeded, error: error.message)
                outcome.stopped = error
                outcome.remaining = items.count - index
                return outcome
            }
            if let error = reply.error {
                if stopsReplay(error.code) {
                    try store.attempted(item, delivered: true, error: error.message)
                    outcome.stopped = error
                    outcome.remaining = items.count - index
                    return outcome
                }
                try store.fail(item, code: error.code.rawValue, message: error.message)
                outcome.failed.append((item, error))
                progress(item, .failure(error))
                continue
            }
            let result = reply.result ?? .null
            try store.complete(item, realId: result["id"]?.stringValue)
            context.rememberWrite(owner: owner, service: item.service, method: item.method, result: result)
            outcome.synced.append((item, result))
            progress(item, .success(result))
        }
        return outcome
    }

    /// Before the first call of a logged-in command: replay what is queued, once. True when
    /// there was something to replay.
    @discardableResult
    static func replayOnce(_ context: Context, session: Session) async -> Bool {
        // counted without opening the store: nearly always nothing is queued
        guard context.local.claimReplay(), context.local.waiting(owner: session.userId).pending > 0,
            let store = try? context.localStore(create: false), !context.isDown(context.recordsInstance(for: session))
        else { return false }
        do {
            let outcome = try await replay(
                context, store: store, owner: session.userId, token: session.token, includeFailed: false
            ) { item, result in
                if case .failure = result { Output.errorLine(describe(item, result)) }
            }
            if let stopped = outcome.stopped, stopped.code == .unavailable {
                context.reachability.remember(context.recordsInstance(for: session), stopped)
            }
            context.local.replayStopped = outcome.stopped
            var line = "synced \(outcome.synced.count) queued write\(outcome.synced.count == 1 ? "" : "s")"
            if let stopped = outcome.stopped { line += "; \(outcome.remaining) still queued (\(stopped.message))" }
            if !outcome.synced.isEmpty || outcome.stopped != nil { Output.errorLine(line) }
        } catch {
            Output.errorLine("could not replay the queue: \(error)")
        }
        return true
    }

    /// One line for people about a settled write.
    static func describe(_ item: QueuedWrite, _ result: Result<JSONValue, ServiceError>) -> String {
        switch result {
        case .success(let value):
            let id = value["id"]?.stringValue.map { " → \($0)" } ?? ""
            return "synced #\(item.id ?? 0) \(item.method)\(id)"
        case .failure(let error):
            return
                "refused #\(item.id ?? 0) \(item.method): \(error.message) (\(error.code.rawValue)); kept: fix it, or `logbook sync --drop \(item.id ?? 0)`"
        }
    }
}
