// Where the service executables are: next to the running `logbook` binary (resolved through
// /proc/self/exe), or in $LOGBOOK_BIN_DIR. A service whose executable is not there is "not
// installed": `stack up` does not start it and `status` does not count it as down.
import Foundation
import Runtime

public struct Executables: Sendable {
    public let directory: String

    public init(configuration: StackConfiguration) {
        directory = configuration.values["LOGBOOK_BIN_DIR"] ?? URL(fileURLWithPath: Self.current).deletingLastPathComponent().path
    }

    /// The running executable's path.
    public static var current: String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    }

    public func path(_ service: String) -> String { directory + "/" + service }

    public func isInstalled(_ service: String) -> Bool {
        FileManager.default.isExecutableFile(atPath: path(service))
    }

    /// The stack's services that are installed, in start order.
    public var installed: [String] { StackConfiguration.services.filter(isInstalled) }
}
