// SQLite's process-wide settings, made once, before the process opens its first connection
// (`sqlite3_config` refuses them after that). Every service opens its database through
// `ServiceDatabase.open`, which makes them first.
import CSQLite

public enum SQLiteProcess {
    /// SQLite counts every allocation and free under one process-wide mutex, for
    /// `sqlite3_memory_used` and the soft heap limit, neither of which Logbook reads. A
    /// replay into analytics allocates and frees millions of times: without the counting
    /// it ran up to a tenth faster (docs/performance.md, "Rebuild, a second look").
    /// False when a connection was opened first (SQLite keeps counting then).
    public static let memoryCountingOff: Bool = logbook_sqlite_memstatus(0) == SQLITE_OK

    /// Makes the settings, once; later calls do nothing.
    public static func configure() { _ = memoryCountingOff }

    /// Whether SQLite counts its memory in this process, as it takes effect: "on" when
    /// `sqlite3_memory_used` has counted anything (it stays 0 once counting is off from the
    /// start), "off" otherwise. Shown in `$srv.info` (docs/protocol.md).
    public static var memoryStatus: String { sqlite3_memory_used() > 0 ? "on" : "off" }
}
