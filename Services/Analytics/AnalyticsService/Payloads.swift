// The fields analytics reads from auth's `user.deleted`. Every other payload analytics
// consumes is decoded as the very type its producer publishes (Shared/Contracts: vehicles,
// fill-ups, expenses, attendance, time, catches and their conditions); the consumed events
// are listed in docs/protocol.md, "Analytics service".
import Foundation

struct UserDeletedPayload: Decodable, Sendable {
    var userId: String
}
