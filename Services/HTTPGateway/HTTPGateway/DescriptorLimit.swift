// Each connection the edge serves is a descriptor, and so is each socket it opens to a
// service. The soft limit a process starts with is often 1,024 (systemd's default for
// units, and many shells'), below the 2,048 connections the edge serves by default
// (LOGBOOK_HTTP_MAX_CONNECTIONS): past it, accepting pauses and every other descriptor the
// edge needs fails, a ZeroMQ socket to a service included. So the edge raises its soft
// limit at start, as far as the hard limit lets it.
import Foundation

public enum DescriptorLimit {
    /// Descriptors beyond the connections: the services' sockets, libzmq's, logs, TLS files.
    public static let reserve = 256

    /// Raises the soft limit on open descriptors to `needed` (never past the hard limit,
    /// never lowering it); returns the soft and hard limits in force afterwards.
    @discardableResult
    public static func raise(to needed: Int) -> (soft: Int, hard: Int) {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return (0, 0) }
        let wanted = rlim_t(max(needed, 0))
        if limit.rlim_cur < wanted {
            var raised = limit
            raised.rlim_cur = min(wanted, limit.rlim_max)
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { limit = raised }
        }
        return (Int(clamping: limit.rlim_cur), Int(clamping: limit.rlim_max))
    }
}
