// `logbook status`: every service's state, version, uptime and round-trip time.
import ArgumentParser
import Wire

struct Status: GatewayCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show every service's version, uptime and round-trip time.",
        discussion: """
            Each service is asked `$srv.info` at once with a 1 s deadline. A service that does \
            not answer is `down`, or `not installed` when its executable is not next to \
            `logbook`. Exits 0 when every installed service is up, 7 otherwise.
            """)

    @OptionGroup var global: GlobalOptions

    func execute(_ context: Context) async throws {
        let statuses = await Probe.all(context)
        if context.json { Output.json(statuses) } else { Output.line(Probe.table(statuses)) }
        if !Probe.healthy(statuses) { throw ExitStatus.exitCode(for: .unavailable) }
    }
}
