// `logbook call SERVICE METHOD [JSON]`: one raw request, the whole reply printed.
import ArgumentParser
import Foundation
import Runtime
import Wire

struct Call: GatewayCommand {
    static let configuration = CommandConfiguration(
        commandName: "call",
        abstract: "Send one raw request to a service and print the whole reply.",
        discussion: """
            Examples:
              logbook call auth '$srv.info'
              logbook call auth auth.whoami
              echo '{"username":"alice"}' | logbook call auth auth.login -
            The saved session's token is sent unless --token is given (--token '' sends none). \
            A fresh idempotency key is sent unless --idempotency-key is given. The exit status \
            follows the reply's error code.
            """)

    @OptionGroup var global: GlobalOptions
    @Argument(help: "The service: \(["auth", "records", "weather-fetcher", "analytics", "store"].joined(separator: ", ")).")
    var service: String
    @Argument(help: "The method, e.g. auth.whoami or $srv.ping.") var method: String
    @Argument(help: "The request body as JSON, or - to read it from stdin (default {}).") var body: String?
    @Option(help: "Send this token instead of the saved session's.") var token: String?
    @Option(name: .customLong("idempotency-key"), help: "Send this idempotency key instead of a fresh one.")
    var idempotencyKey: String?

    func execute(_ context: Context) async throws {
        // an unknown service is named at once, not after a timeout asking whether the stack runs
        try context.configuration.requireInstance(service)
        let text = body == "-" ? String(decoding: FileHandle.standardInput.readDataToEndOfFile(), as: UTF8.self) : body
        let json: JSONValue
        do {
            json = try text.map { try JSONValue.parse($0) } ?? [:]
        } catch let error as ServiceError {
            // JSONValue.parse's own words ("not valid JSON: <the reason>"), once
            throw ServiceError(.invalidArgument, "the body is \(error.message)", field: "body")
        }
        let caller: Context.Caller =
            if let token { .token(token.isEmpty ? nil : token) } else { .token(try context.session()?.token) }
        let reply = try await context.reply(
            service, method, body: json, caller: caller, idempotencyKey: idempotencyKey ?? ID.make())
        Output.json(reply)
        if let error = reply.error { throw ExitStatus.exitCode(for: error.code) }
    }
}
