// auth.whoami: who the token belongs to. Other services call it through their SessionCache
// to validate a token, decoding the result as a `Principal`.
import Contracts
import Foundation
import Runtime
import Wire

extension Handlers {
    func whoami(_ body: Empty, _ context: RequestContext) async throws -> WhoamiResult {
        let user = try await currentUser(context)
        return WhoamiResult(
            userId: user.id, username: user.username, sessionId: context.principal?.sessionId ?? "",
            email: user.email, createdAt: user.createdAt, timeZone: user.timeZone,
            shard: user.shard)
    }
}
