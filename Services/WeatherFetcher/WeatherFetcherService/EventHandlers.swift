// What other services' events do here, applied inside the consumer's checkpointed
// transaction: records' catch events become fetch jobs, auth's `user.deleted` purges.
// An event this service cannot read is logged and skipped, never retried forever: one bad
// event must not stop every later one.
import Foundation
import GRDB
import Logging
import Runtime
import Storage
import Wire

/// The part of records' catch snapshot this service needs.
struct CatchSnapshot: Decodable, Sendable {
    var id: String
    var latitude: Double
    var longitude: Double
    var caughtAt: Date
    var water: String?
    /// Only on `catch.updated`.
    var placeOrTimeChanged: Bool?
    /// Only on `catch.updated`: fresh ↔ salt, so the tide must be fetched or dropped.
    var waterChanged: Bool?
}

struct CatchRef: Decodable, Sendable {
    var id: String
}

public enum RecordsEvents {
    public static let catchCreated = "catch.created"
    public static let catchUpdated = "catch.updated"
    public static let catchDeleted = "catch.deleted"
}

struct EventHandlers: Sendable {
    let now: @Sendable () -> Date
    let wakeup: Wakeup
    let logger: Logger

    func records(_ db: Database, _ event: Event) throws {
        var logger = logger
        logger[metadataKey: "event.seq"] = "\(event.seq)"
        logger[metadataKey: "event.type"] = "\(event.type)"
        switch event.type {
        case RecordsEvents.catchCreated, RecordsEvents.catchUpdated:
            guard let userId = event.userId, let snapshot = try? event.decode(CatchSnapshot.self) else {
                logger.error("catch event without a user or a readable catch; skipped")
                return
            }
            let isUpdate = event.type == RecordsEvents.catchUpdated
            // An update that changes neither place, time nor water keeps the conditions we have,
            // but a catch never seen (its creation predates this service) gets a job now.
            if isUpdate && snapshot.placeOrTimeChanged != true && snapshot.waterChanged != true {
                if try Jobs.exists(db, catchId: snapshot.id) { return }
            }
            let queued = try Jobs.enqueue(
                db, catchId: snapshot.id, userId: userId, latitude: snapshot.latitude, longitude: snapshot.longitude,
                at: snapshot.caughtAt, water: snapshot.water, now: now())
            if queued {
                logger.debug("fetch queued", metadata: ["catch.id": "\(snapshot.id)"])
                let wakeup = self.wakeup
                db.afterNextTransaction(onCommit: { _ in wakeup.signal() })
            }
        case RecordsEvents.catchDeleted:
            guard let ref = try? event.decode(CatchRef.self) else {
                logger.error("catch.deleted without an id; skipped")
                return
            }
            try Jobs.delete(db, catchId: ref.id)
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
        try Jobs.purge(db, userId: deleted.userId)
    }
}
