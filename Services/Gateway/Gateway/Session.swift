// The saved login: one JSON file, mode 0600 in a 0700 directory, under the user's config
// directory ($LOGBOOK_CONFIG_DIR, else $XDG_CONFIG_HOME/logbook, else ~/.config/logbook).
// Written to a temporary file created 0600 and renamed, so it is never briefly readable.
import Foundation
import Wire

public struct Session: Codable, Sendable, Equatable {
    public var token: String
    public var userId: String
    public var username: String
    public var sessionId: String
    public var expiresAt: String?
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
            return try JSONDecoder().decode(Session.self, from: data)
        } catch {
            throw ServiceError(.failedPrecondition, "\(path) is not a session file; run `logbook login` again")
        }
    }

    public func save(_ session: Session) throws {
        try FileManager.default.createDirectory(
            atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        chmod(directory, 0o700)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let data = try encoder.encode(session)
        let temporary = path + ".tmp"
        unlink(temporary)
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw Self.failure("cannot create \(temporary)") }
        fchmod(fd, 0o600)
        let written = data.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        let synced = fsync(fd)
        close(fd)
        guard written == data.count, synced == 0, rename(temporary, path) == 0 else {
            unlink(temporary)
            throw Self.failure("cannot write \(path)")
        }
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
