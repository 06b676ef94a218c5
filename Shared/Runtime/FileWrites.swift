// Writing all of a buffer to a file descriptor: a write may take only part of it (a pipe, a
// terminal) or be interrupted by a signal, so it is repeated until everything is written.
// Used for the CLI's output, the session file and photo files.
#if canImport(Glibc)
    import Glibc
#endif

public enum FileDescriptor {
    /// Writes all of `bytes` to `fd`, again after a partial write or an interruption. False
    /// when a write fails (errno says why) or takes nothing.
    public static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Bool {
        guard var next = bytes.baseAddress else { return true }
        var left = bytes.count
        while left > 0 {
            let written = write(fd, next, left)
            if written > 0 {
                next += written
                left -= written
            } else if written < 0 && errno == EINTR {
                continue
            } else {
                return false
            }
        }
        return true
    }
}
