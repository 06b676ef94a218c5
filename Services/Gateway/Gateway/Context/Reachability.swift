// Is a service worth calling? `isDown` answers true only when the local stack is plainly not
// running (then a call would only wait out its timeout); a command also remembers the
// services it already found unreachable, so later calls fail at once.
import Foundation
import Runtime
import StackSupervisor
import Synchronization
import Wire

public final class Reachability: Sendable {
    let configuration: StackConfiguration
    /// Services this command already found unreachable (the replay before its first call).
    private let unreachable = Mutex<[String: ServiceError]>([:])

    init(configuration: StackConfiguration) { self.configuration = configuration }

    /// Remembers that `service` did not answer, for the rest of this command.
    func remember(_ service: String, _ error: ServiceError) { unreachable.withLock { $0[service] = error } }

    /// Throws when a call to `service` cannot be answered: it was found unreachable before,
    /// or the stack is not running.
    func check(_ service: String) throws {
        if let known = unreachable.withLock({ $0[service] }) { throw known }
        if isDown(service) {
            throw ServiceError(
                .unavailable,
                "\(service) is not reachable: the stack is not running (nothing listens at \(configuration.endpoint(service))); "
                    + "start it with `logbook stack up`")
        }
    }

    /// `Reachability.isDown` (asked afresh each time: `stack up` may have started it since).
    func isDown(_ service: String) -> Bool { Self.isDown(service, configuration: configuration) }

    /// Is the local stack plainly not running? True only when no supervisor is alive and the
    /// service's ipc socket is missing or refuses connections: then a call would only wait out
    /// its timeout. A supervisor restarting a service, or a tcp endpoint, answers false.
    /// (The socket is tried first: when the service listens, as it almost always does, one
    /// connect answers, where the supervisor's check reads three files.)
    static func isDown(_ service: String, configuration: StackConfiguration) -> Bool {
        let endpoint = configuration.endpoint(service)
        guard endpoint.hasPrefix("ipc://"), refuses(String(endpoint.dropFirst("ipc://".count))) else { return false }
        return StackFiles(configuration).liveSupervisor() == nil
    }

    /// Connecting to the unix socket at `path` fails because nothing listens there.
    static func refuses(_ path: String) -> Bool {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard bytes.count < capacity else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        if rc == 0 { return false }
        return errno == ENOENT || errno == ECONNREFUSED
    }
}
