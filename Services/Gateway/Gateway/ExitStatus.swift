// Exit statuses, mapped from wire error codes in exactly one place. Scripts branch on
// these; README.md and `logbook --help` print the same table (from `ExitStatus.table`).
import ArgumentParser
import Wire

public enum ExitStatus {
    public static let ok: Int32 = 0
    /// `internal`, an unknown code, or a local failure that fits nothing else.
    public static let failure: Int32 = 1
    /// A usage error (bad flags or arguments) or `invalid_argument`.
    public static let usage: Int32 = 2
    public static let notFound: Int32 = 3
    public static let alreadyExists: Int32 = 4
    public static let failedPrecondition: Int32 = 5
    /// `unauthenticated` or `permission_denied`: log in (again).
    public static let unauthenticated: Int32 = 6
    /// `unavailable` or `deadline_exceeded`: the stack is down or too slow; retry later.
    public static let unavailable: Int32 = 7
    public static let resourceExhausted: Int32 = 8
    /// Partly done: `dashboard` with a section unavailable, `sync` with a write refused,
    /// `status` with a service degraded.
    public static let partial: Int32 = 9

    /// The exit status for an error code.
    public static func status(for code: ErrorCode) -> Int32 {
        switch code {
        case .invalidArgument: usage
        case .notFound: notFound
        case .alreadyExists: alreadyExists
        case .failedPrecondition: failedPrecondition
        case .unauthenticated, .permissionDenied: unauthenticated
        case .unavailable, .deadlineExceeded: unavailable
        case .resourceExhausted: resourceExhausted
        default: failure
        }
    }

    public static func exitCode(for code: ErrorCode) -> ExitCode { ExitCode(status(for: code)) }

    /// The table shown by `logbook --help`.
    static let table = """
        EXIT STATUS
          0  success
          1  internal error, or anything else unexpected
          2  usage error or invalid_argument
          3  not_found
          4  already_exists
          5  failed_precondition
          6  unauthenticated or permission_denied (log in again)
          7  unavailable or deadline_exceeded (is the stack up? `logbook stack up`)
          8  resource_exhausted (slow down, retry later)
          9  partial (a dashboard section did not answer; sync kept a refused write;
             status: a service is degraded)
        """
}
