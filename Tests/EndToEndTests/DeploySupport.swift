// Running outside tools (systemd-analyze, python3, ip) from the deployment tests, with the
// same care as the harness's `logbook(…)`: output through files, a deadline, then SIGKILL.
import Foundation
import Testing

enum Tool {
    /// The repository's root (deploy/ lives there).
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path

    /// The first of `names` found on PATH (or as an absolute path), if any.
    static func find(_ names: String...) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for name in names {
            if name.hasPrefix("/") {
                if FileManager.default.isExecutableFile(atPath: name) { return name }
                continue
            }
            for directory in path.split(separator: ":") + ["/usr/sbin", "/sbin", "/usr/bin", "/bin"] {
                let candidate = "\(directory)/\(name)"
                if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            }
        }
        return nil
    }

    /// Runs `executable arguments…`, with output and input through files named from
    /// `scratch`; kills it after `timeout`. The harness's `logbook(…)` runs through here too.
    @discardableResult
    static func run(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil, stdin: String? = nil,
        timeout: Duration = .seconds(60), scratch: String = FileManager.default.temporaryDirectory.path + "/lbtool-"
    ) async throws -> CommandResult {
        let prefix = scratch + UUID().uuidString.prefix(8)
        let outPath = prefix + ".out"
        let errPath = prefix + ".err"
        let inPath = prefix + ".in"
        defer { for path in [outPath, errPath, inPath] { unlink(path) } }
        _ = FileManager.default.createFile(atPath: outPath, contents: nil)
        _ = FileManager.default.createFile(atPath: errPath, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let environment { process.environment = environment }
        process.standardOutput = FileHandle(forWritingAtPath: outPath)
        process.standardError = FileHandle(forWritingAtPath: errPath)
        if let stdin {
            _ = FileManager.default.createFile(atPath: inPath, contents: Data(stdin.utf8))
            process.standardInput = FileHandle(forReadingAtPath: inPath)
        } else {
            process.standardInput = FileHandle.nullDevice
        }
        try process.run()
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        while process.isRunning {
            if clock.now >= deadline {
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
                let name = URL(fileURLWithPath: executable).lastPathComponent
                throw HarnessError("\(name) \(arguments.joined(separator: " ")) did not finish within \(timeout)")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        process.waitUntilExit()
        let read = { (path: String) in (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }
        return CommandResult(status: process.terminationStatus, stdout: read(outPath), stderr: read(errPath))
    }
}
