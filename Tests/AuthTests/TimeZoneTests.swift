// Each account's time zone (issue #17, item 1): given at register, shown by whoami, carried
// in the principal other services resolve, changed by auth.settings.update with an event.
import AuthService
import Foundation
import Runtime
import Testing
import Wire

@Suite struct TimeZoneTests {
    @Test func registerKeepsTheZoneAndWhoamiShowsIt() async throws {
        let h = try Harness()
        let result = try await h.call(
            "auth.register", ["username": "kenji", "password": "correct horse", "timeZone": "Asia/Tokyo"])
        #expect(result["timeZone"] == "Asia/Tokyo")
        let token = try await h.login("kenji")
        let me = try await h.call("auth.whoami", token: token)
        #expect(me["timeZone"] == "Asia/Tokyo")
        // the principal other services decode from whoami carries it
        #expect(try me.decode(Principal.self).timeZone == "Asia/Tokyo")
        let registered = try #require(try await h.events().first { $0.type == AuthEvents.userRegistered })
        #expect(try registered.decode(AuthEvents.UserRegistered.self).timeZone == "Asia/Tokyo")
    }

    @Test func withoutAZoneTheAccountIsUTC() async throws {
        let h = try Harness()
        try await h.register("ann")
        let me = try await h.call("auth.whoami", token: try await h.login("ann"))
        #expect(me["timeZone"] == "UTC")
    }

    @Test(arguments: ["CEST", "Mars/Olympus", "", "Europe/Oslo; DROP TABLE users", String(repeating: "A/", count: 40)])
    func refusesUnknownZones(zone: String) async throws {
        let h = try Harness()
        let error = try await h.failure(
            "auth.register", ["username": "zed", "password": "correct horse", "timeZone": .string(zone)])
        #expect(error.code == .invalidArgument)
        #expect(error.field == "timeZone")
        #expect(error.message.hasPrefix("timeZone: must be an IANA time zone such as \"Europe/Oslo\""))
        try await h.register("zed")
        let token = try await h.login("zed")
        let again = try await h.failure("auth.settings.update", ["timeZone": .string(zone)], token: token)
        #expect(again.field == "timeZone")
        #expect(try await h.call("auth.whoami", token: token)["timeZone"] == "UTC")
    }

    @Test func settingsUpdateChangesTheZoneOnceWithAnEvent() async throws {
        let h = try Harness()
        try await h.register("olga")
        let token = try await h.login("olga")
        let before = try await h.events().count
        let result = try await h.call("auth.settings.update", ["timeZone": "Europe/Oslo"], token: token)
        #expect(result == ["timeZone": "Europe/Oslo", "changed": true])
        #expect(try await h.call("auth.whoami", token: token)["timeZone"] == "Europe/Oslo")
        let events = try await h.events(after: before)
        #expect(events.map(\.type) == [AuthEvents.userSettingsChanged])
        let changed = try events[0].decode(AuthEvents.UserSettingsChanged.self)
        #expect(changed.timeZone == "Europe/Oslo")
        #expect(changed.userId == events[0].userId)
        // the same zone again writes nothing
        let same = try await h.call("auth.settings.update", ["timeZone": "Europe/Oslo"], token: token)
        #expect(same["changed"] == false)
        #expect(try await h.events(after: before).count == 1)
        // no zone, no token
        #expect(try await h.failure("auth.settings.update", [:], token: token).field == "timeZone")
        #expect(try await h.failure("auth.settings.update", ["timeZone": "UTC"]).code == .unauthenticated)
    }

    @Test func anotherServicesSessionCacheSeesTheNewZoneAfterTheEvent() async throws {
        let h = try Harness()
        try await h.call("auth.register", ["username": "kari", "password": "correct horse", "timeZone": "UTC"])
        let token = try await h.login("kari")
        let cache = SessionCache(auth: h.transport)
        #expect(try await cache.resolve(token: token).timeZone == "UTC")
        let before = try await h.events().count
        try await h.call("auth.settings.update", ["timeZone": "Europe/Oslo"], token: token)
        // still the cached principal until auth's event arrives …
        #expect(try await cache.resolve(token: token).timeZone == "UTC")
        // … which drops it: the next request asks auth again
        try await cache.apply(try await h.events(after: before))
        #expect(try await cache.resolve(token: token).timeZone == "Europe/Oslo")
    }
}
