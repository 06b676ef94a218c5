// An answer that is not fresh is shown, but marked on stderr, once per command: a figure
// from a projection that is behind (the reply's freshness), or the saved copy of a read made
// while the stack was unreachable.
import Foundation
import Synchronization
import Wire

final class StaleNotes: Sendable {
    private let noted = Mutex(false)

    /// True the first time only.
    private func first() -> Bool {
        noted.withLock { noted in
            defer { noted = true }
            return !noted
        }
    }

    /// A figure computed from a projection that is behind.
    func note(_ service: String, _ freshness: Freshness) {
        guard first() else { return }
        let producers = freshness.producers.joined(separator: " and ")
        var line = "stale: \(service) "
        if let behind = freshness.behindEvents, behind > 0 {
            line += "is \(behind) event\(behind == 1 ? "" : "s") behind \(producers)"
        } else {
            line += "has not heard from \(producers) lately"
        }
        if let asOf = freshness.asOf { line += "; figures as of \(TimeText.local(.string(WireTime.format(asOf))))" }
        Output.errorLine(line)
    }

    /// The saved copy of an answer, shown because the stack did not answer.
    func note(unreachable error: ServiceError, savedAt: String) {
        guard first() else { return }
        Output.errorLine(
            "stale: the stack is unreachable (\(error.message)); showing the copy saved at \(TimeText.local(.string(savedAt)))")
    }
}
