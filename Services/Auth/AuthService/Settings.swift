// auth.settings.update: the account's settings a client may change. Today that is the time
// zone every service counts days, weeks and months in. The change and its
// `user.settings.changed` event commit together; session caches elsewhere drop the user's
// cached principal on the event, and analytics recounts the user's days in the new zone.
import Contracts
import Foundation
import GRDB
import Runtime
import Storage
import Wire

extension Handlers {
    func updateSettings(_ body: SettingsUpdate, _ context: RequestContext, _ db: Database) throws
        -> SettingsResult
    {
        let zone = try AccountRules.timeZone(body.timeZone)!
        let userId = context.userId
        guard let user = try User.find(db, id: userId) else { throw DatabaseSessions.refused }
        guard user.timeZone != zone else { return SettingsResult(timeZone: zone, changed: false) }
        try db.execute(sql: "UPDATE users SET timeZone = ? WHERE id = ?", arguments: [zone, userId])
        try Outbox.append(
            db, type: AuthEvents.userSettingsChanged, userId: userId,
            data: AuthEvents.UserSettingsChanged(userId: userId, timeZone: zone), at: now)
        context.logger.info("time zone changed", metadata: ["user.timeZone": "\(zone)"])
        return SettingsResult(timeZone: zone, changed: true)
    }
}
