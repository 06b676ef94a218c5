// `logbook status`: every service's state, version, uptime and round-trip time.
import ArgumentParser
import Wire

struct Status: GatewayCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show every service's version, uptime and round-trip time.",
        discussion: """
            Each service is asked `$srv.info` at once with a 1 s deadline. A service that does \
            not answer is `down`, or `not installed` when its executable is not next to \
            `logbook`. Then how many writes wait in the offline queue (with --json the array of \
            services only: `logbook sync --list --json` gives the queue). Exits 0 when every \
            installed service is up, 7 otherwise.
            """)

    @OptionGroup var global: GlobalOptions

    func execute(_ context: Context) async throws {
        let statuses = await Probe.all(context)
        if context.json {
            Output.json(statuses)
        } else {
            Output.line(Probe.table(statuses))
            let owner = (try? context.owner()) ?? LocalStore.anonymous
            let queue = context.waiting(owner: owner)
            if owner == LocalStore.anonymous {
                if queue.total > 0 { Output.line("not logged in; \(queue.total) local record\(queue.total == 1 ? "" : "s") waiting: `logbook register` to keep them") }
            } else {
                var line = queue.pending == 0 ? "nothing waiting to sync" : "\(queue.pending) write\(queue.pending == 1 ? "" : "s") waiting to sync (`logbook sync`)"
                if queue.failed > 0 { line += "; \(queue.failed) refused and kept (`logbook sync --list`)" }
                Output.line(line)
            }
        }
        if !Probe.healthy(statuses) { throw ExitStatus.exitCode(for: .unavailable) }
    }
}
