// What other services' events do here, applied inside the consumer's checkpointed
// transaction: records' catch events become fetch jobs, auth's `user.deleted` purges.
// An event this service cannot read is logged and skipped, never retried forever: one bad
// event must not stop every later one.
import Contracts
import Foundation
import GRDB
import Logging
import Runtime
import Storage
import Wire

struct EventHandlers: Sendable {
    let now: @Sendable () -> Date
    let wakeup: Wakeup
    let logger: Logger

    func records(_ db: Database, _ event: Event) throws {
        var logger = logger
        logger[metadataKey: "event.seq"] = "\(event.seq)"
        logger[metadataKey: "event.type"] = "\(event.type)"
        switch event.type {
        case CatchEvents.created, CatchEvents.updated:
            let isUpdate = event.type == CatchEvents.updated
            let read = { () throws -> (Catch, changed: Bool) in
                guard isUpdate else { return (try event.decode(Catch.self), true) }
                let updated = try event.decode(CatchUpdated.self)
                return (updated.record, updated.placeOrTimeChanged || updated.waterChanged)
            }
            guard let userId = event.userId, case let (fish, changed)? = try? read() else {
                logger.error("catch event without a user or a readable catch; skipped")
                return
            }
            // (the user's deletion came first on auth's stream: nothing of theirs is kept)
            if try DeletedUsers.contains(db, userId: userId) { return }
            // An update that changes neither place, time nor water keeps the conditions we have,
            // but a catch never seen (its creation predates this service) gets a job now.
            if !changed, try Jobs.exists(db, catchId: fish.id) { return }
            let queued = try Jobs.enqueue(
                db, catchId: fish.id, userId: userId, latitude: fish.latitude, longitude: fish.longitude,
                at: fish.caughtAt, water: fish.water.rawValue, now: now())
            if queued {
                logger.debug("fetch queued", metadata: ["catch.id": "\(fish.id)"])
                let wakeup = self.wakeup
                db.afterNextTransaction(onCommit: { _ in wakeup.signal() })
            }
        case CatchEvents.deleted:
            guard let deleted = try? event.decode(CatchDeleted.self) else {
                logger.error("catch.deleted without an id; skipped")
                return
            }
            try Jobs.delete(db, catchId: deleted.id)
        default:
            break
        }
    }

    func auth(_ db: Database, _ event: Event) throws {
        guard event.type == AuthEvents.userDeleted else { return }
        guard let deleted = try? event.decode(AuthEvents.UserDeleted.self) else {
            logger.error("user.deleted without a userId; skipped", metadata: ["event.seq": "\(event.seq)"])
            return
        }
        try Jobs.purge(db, userId: deleted.userId, at: event.at)
    }
}
