// The saved login: one JSON file, mode 0600 in a 0700 directory, under the user's config
// directory ($LOGBOOK_CONFIG_DIR, else $XDG_CONFIG_HOME/logbook, else ~/.config/logbook).
// Written to a temporary file created 0600 and renamed, so it is never briefly readable.
import Foundation
import Runtime
import Wire

public struct Session: Codable, Sendable, Equatable {
    public var token: String
    public var userId: String
    public var username: String
    public var sessionId: String
    public var expiresAt: String?
    /// The user's records shard, from auth at login (absent in files from before shards: 1).
    /// `records` calls go to its instance (Context.reply); a redirect updates it.
    public var shard: Int?
}

/// Device tokens from earlier logins, by lowercased username: `devices.json` beside the
/// session, mode 0600. `auth.login` presents the user's so that strangers' failed guesses
/// never lock this device out (docs/protocol.md, "Failed-attempt throttling"). Kept across
/// logouts; a token the server no longer knows is simply replaced at the next login.
public struct DeviceStore: Sendable {
    public let sessions: SessionStore
    public var path: String { sessions.directory + "/devices.json" }

    public init(_ sessions: SessionStore) { self.sessions = sessions }

    public func token(for username: String) -> String? {
        load()[username.lowercased()]
    }

    public func save(_ token: String, for username: String) throws {
        var all = load()
        guard all[username.lowercased()] != token else { return }
        all[username.lowercased()] = token
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try SessionStore.writePrivate(try encoder.encode(all), to: path, directory: sessions.directory)
    }

    public func forget(_ username: String) throws {
        var all = load()
        guard all.removeValue(forKey: username.lowercased()) != nil else { return }
        try SessionStore.writePrivate(try JSONEncoder().encode(all), to: path, directory: sessions.directory)
    }

    func load() -> [String: String] {
        guard let data = FileManager.default.contents(atPath: path) else { return [:] }
        return (try? JSONDecoder().decode([String: String].self, from: data)) ?? [:]
    }
}

public struct SessionStore: Sendable {
    public let directory: String
    public var path: String { directory + "/session.json" }

    public init(environment: [String: String]) {
        if let dir = environment["LOGBOOK_CONFIG_DIR"], !dir.isEmpty {
            directory = dir
        } else if let xdg = environment["XDG_CONFIG_HOME"], !xdg.isEmpty {
            directory = xdg + "/logbook"
        } else {
            directory = (environment["HOME"] ?? NSHomeDirectory()) + "/.config/logbook"
        }
    }

    public func load() throws -> Session? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        do {
            return try WireCoding.decode(Session.self, from: data)
        } catch {
            throw ServiceError(.failedPrecondition, "\(path) is not a session file; run `logbook login` again")
        }
    }

    /// The saved session, or `unauthenticated` saying how to log in (and, when records made
    /// while logged out wait on this machine, `localWaiting()` of them, how to keep them).
    func require(localWaiting: () -> Int) throws -> Session {
        guard let session = try load() else {
            let waiting = localWaiting()
            if waiting > 0 {
                throw ServiceError(
                    .unauthenticated,
                    "not logged in; \(waiting) local record\(waiting == 1 ? "" : "s") waiting: `logbook register` to keep them "
                        + "(or `logbook login`, then `logbook sync --claim-local`)")
            }
            throw ServiceError(.unauthenticated, "not logged in; run `logbook login` (or `logbook register`)")
        }
        return session
    }

    public func save(_ session: Session) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try Self.writePrivate(try encoder.encode(session), to: path, directory: directory)
    }

    /// Writes `data` to `path` through a temporary file created 0600 and renamed, in
    /// `directory` (made 0700), so it is never briefly readable by anyone else.
    static func writePrivate(_ data: Data, to path: String, directory: String) throws {
        try FileManager.default.createDirectory(
            atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        chmod(directory, 0o700)
        // (the directory is flushed after the rename too: a session written survives a power cut)
        try FileSync.write(data, to: path, mode: 0o600, temporary: path + ".tmp")
    }

    /// Removes the session file; true if there was one.
    @discardableResult
    public func delete() throws -> Bool {
        if unlink(path) == 0 { return true }
        if errno == ENOENT { return false }
        throw Self.failure("cannot remove \(path)")
    }

    static func failure(_ what: String) -> ServiceError {
        ServiceError(.internal, "\(what): \(String(cString: strerror(errno)))")
    }
}
