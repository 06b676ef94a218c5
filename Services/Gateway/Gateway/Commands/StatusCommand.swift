// `logbook status`: every service's state, version, uptime and round-trip time.
import ArgumentParser
import Wire

struct Status: GatewayCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show every service's version, uptime and round-trip time.",
        discussion: """
            Each service is asked `$srv.info` at once with a 1 s deadline. A service that \
            answers is `up`, or `degraded` when it says so (an event consumer behind or stalled, \
            still catching up after a start, an outbox it cannot read: the reasons are listed \
            under the table). One that does not answer is `down` when its executable is next to \
            `logbook`, `unreachable` when its endpoint is configured (LOGBOOK_<SERVICE>_ENDPOINT, \
            another host), and `not installed` otherwise. Then how many writes wait in the \
            offline queue (with --json the array of services only: `logbook sync --list --json` \
            gives the queue). Exits 0 when every installed or configured service is up, 7 when \
            one is down or unreachable, 9 when one is degraded.
            """)

    @OptionGroup var global: GlobalOptions

    func execute(_ context: Context) async throws {
        let statuses = await Probe.all(context)
        if context.json {
            Output.json(statuses)
        } else {
            Output.line(Probe.table(statuses))
            Probe.problems(statuses).forEach { Output.line($0) }
            Probe.shardLines(statuses, configuration: context.configuration).forEach { Output.line($0) }
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
        let code = Probe.exitCode(statuses)
        if code != 0 { throw ExitCode(code) }
    }
}
