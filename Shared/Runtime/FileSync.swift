// Files put in place so that they outlast a power cut, for the files SQLite does not write
// itself (a backup's copies and manifest, a restore's databases): the data is flushed
// before the name that makes it count, and the directory holding that name after. A rename
// or a link is an entry in a directory, and ext4 does not write the entry with the file.
import Foundation
import Wire

public enum FileSync {
    /// Flushes a file's or a directory's data and metadata to the disk.
    public static func sync(_ path: String) throws {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw failure("open", path) }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw failure("fsync", path) }
    }

    /// The directory holding `path`, flushed: after a rename, link or unlink there.
    public static func syncParent(_ path: String) throws {
        try sync(URL(fileURLWithPath: path).deletingLastPathComponent().path)
    }

    /// Every regular file and directory under `root`, then `root` and the directory holding
    /// it: a tree copied or moved into place. Returns how many files were flushed.
    @discardableResult
    public static func syncTree(_ root: String) throws -> Int {
        var files = 0
        var directories: [String] = []
        if let walker = FileManager.default.enumerator(atPath: root) {
            while let relative = walker.nextObject() as? String {
                let path = root + "/" + relative
                var isDirectory: ObjCBool = false
                guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { continue }
                if isDirectory.boolValue {
                    directories.append(path)
                } else {
                    try sync(path)
                    files += 1
                }
            }
        }
        // deepest first, so each directory is flushed after the entries made in it
        for directory in directories.reversed() { try sync(directory) }
        try sync(root)
        try syncParent(root)
        return files
    }

    /// Writes `data` as `path` in one step: a temporary file beside it (`temporary`, else
    /// `path` with the pid and `.tmp`), flushed, renamed over `path`, and the directory
    /// flushed. A crash leaves the old file or the new one (and perhaps the temporary). The
    /// file is made with `mode` less the umask (the stack's is 077: its files are its owner's).
    public static func write(_ data: Data, to path: String, mode: mode_t = 0o600, temporary: String? = nil) throws {
        let temporary = temporary ?? path + ".\(getpid()).tmp"
        unlink(temporary)
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard fd >= 0 else { throw failure("create", temporary) }
        let written = data.withUnsafeBytes { FileDescriptor.writeAll(fd, $0) }
        let synced = written && fsync(fd) == 0
        let error = synced ? nil : failure(written ? "fsync" : "write", temporary)
        close(fd)
        if let error {
            unlink(temporary)
            throw error
        }
        guard rename(temporary, path) == 0 else {
            let error = failure("rename", temporary)
            unlink(temporary)
            throw error
        }
        try syncParent(path)
    }

    /// Swaps the names of `a` and `b` in one step (Linux `renameat2` with RENAME_EXCHANGE,
    /// looked up in the C library at run time: Glibc's Swift module does not declare it);
    /// false where the call or the file system cannot (then nothing changed).
    public static func exchange(_ a: String, _ b: String) -> Bool {
        typealias RenameAt2 = @convention(c) (Int32, UnsafePointer<CChar>, Int32, UnsafePointer<CChar>, UInt32) -> Int32
        guard let symbol = renameat2Symbol else { return false }
        let call = unsafeBitCast(symbol, to: RenameAt2.self)
        let renameExchange: UInt32 = 1 << 1  // <linux/fs.h> RENAME_EXCHANGE
        return call(AT_FDCWD, a, AT_FDCWD, b, renameExchange) == 0
    }

    private nonisolated(unsafe) static let renameat2Symbol: UnsafeMutableRawPointer? = dlsym(
        UnsafeMutableRawPointer(bitPattern: 0), "renameat2")

    static func failure(_ call: String, _ path: String) -> ServiceError {
        ServiceError(.unavailable, "cannot \(call) \(path): \(String(cString: strerror(errno)))")
    }
}
