// `logbook probe SERVICE`: one `$srv.ping` with a deadline (the global --timeout), for
// supervisors that are not `logbook stack up`: systemd's ExecStartPost readiness check
// (deploy/systemd/) and Kubernetes' readiness and liveness probes (deploy/kubernetes/).
// With --wait, pings again (each with --timeout) until one is answered or the wait is over:
// systemd's start-up check, while the service still migrates and checks its database.
// Exit 0 when the service answered in time, 7 when it did not (unavailable or deadline
// exceeded), 1 on a bad configuration, 2 for an unknown service. Prints one line (or
// JSON with --json) either way, so a probe's output in `kubectl describe pod` or the
// journal says what happened.
import ArgumentParser
import Foundation
import Runtime
import Wire

struct ProbeCommand: GatewayCommand {
    static let configuration = CommandConfiguration(
        commandName: "probe",
        abstract: "Ping one service ($srv.ping) within --timeout seconds; exit 0 if it answered, 7 if not.",
        discussion: """
            For readiness and liveness checks by systemd and Kubernetes:
              logbook probe records --timeout 2
              logbook probe records --timeout 1 --wait 60   (until it answers, ≤ 60 s)
            The service is found where every command finds it (logbook.conf, LOGBOOK_CONFIG, \
            the environment), with CURVE when the configuration switches it on.
            """)

    @OptionGroup var global: GlobalOptions
    @Argument(help: "The service: \(StackConfiguration.services.joined(separator: ", ")).")
    var service: String
    @Option(help: ArgumentHelp("Keep pinging until the service answers, for at most this many seconds.", valueName: "seconds"))
    var wait: Double = 0

    func validate() throws { try GlobalOptions.checkSeconds(wait, "--wait", within: 0...3_600) }

    func execute(_ context: Context) async throws {
        try context.configuration.requireInstance(service)
        let clock = ContinuousClock()
        let giveUp = clock.now + .milliseconds(Int64((wait * 1000).rounded()))
        var elapsed: Duration
        while true {
            let start = clock.now
            do {
                try await ping(context)
                elapsed = clock.now - start
                break
            } catch let error as ServiceError where clock.now < giveUp {
                // not yet: try again shortly (a missing ipc:// socket fails at once)
                _ = error
                try await Task.sleep(for: .milliseconds(250))
            }
        }
        let ms = (Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15)
        let rounded = (ms * 10).rounded() / 10
        if global.json {
            Output.json(["service": .string(service), "ok": .bool(true), "rttMs": .number(.init(rounded))] as JSONValue)
        } else {
            Output.line("\(service) answered $srv.ping in \(rounded) ms at \(context.configuration.endpoint(service))")
        }
    }

    /// One ping with the global --timeout; throws `unavailable` or `deadline_exceeded`.
    private func ping(_ context: Context) async throws {
        let reply: Reply
        do {
            reply = try await context.reply(service, "$srv.ping", caller: .anonymous, timeout: context.timeout)
        } catch let error as ServiceError {
            throw ServiceError(
                error.code == .deadlineExceeded ? .deadlineExceeded : .unavailable,
                "\(service) did not answer $srv.ping: \(error.message)")
        }
        if let error = reply.error {
            // a ping is answered by the runtime itself: any error means "not healthy"
            throw ServiceError(
                error.code == .deadlineExceeded ? .deadlineExceeded : .unavailable,
                "\(service) did not answer $srv.ping: \(error.message)")
        }
    }
}
