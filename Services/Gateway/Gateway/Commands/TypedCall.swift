// Calling a method of the contract from a command: the request is built as its Contracts
// type and the result read as one, so a field's name and type are the services' own. The
// call goes through `Context.send` like every other (session, shard, offline queue, saved
// answers), which carries JSON values; this is the one place a typed request becomes one
// and a result comes back typed.
import Contracts
import Foundation
import Wire

extension Contracts.Method {
    /// Sends `request`; returns the result, or throws the service's error (a write made
    /// offline throws `Offline.Queued`, as `Context.send` does). `write` says how the CLI
    /// sends it (an idempotency key, no saved answer); by default, unless the method is a read.
    func call(
        _ context: Context, _ request: Request, caller: Context.Caller = .session, write: Bool? = nil,
        timeout: Duration? = nil
    ) async throws -> Result {
        let body = try JSONValue.from(request)
        let result = try await context.send(
            service, name, body: body, caller: caller, write: write ?? (kind != .read), timeout: timeout)
        do {
            return try result.decode(Result.self)
        } catch {
            throw ServiceError(.internal, "\(service) answered \(name) with an unexpected result: \(WireCoding.describe(error))")
        }
    }

    /// `call`, then print: the result as JSON with `--json`, else `human(result)`.
    func perform(_ context: Context, _ request: Request, write: Bool? = nil, human: (Result) -> String) async throws {
        let result = try await call(context, request, write: write)
        if context.json { Output.json(result) } else { Output.line(human(result)) }
    }
}

extension Contracts.Method where Request == Empty {
    func call(_ context: Context, caller: Context.Caller = .session, timeout: Duration? = nil) async throws -> Result {
        try await call(context, Empty(), caller: caller, timeout: timeout)
    }

    func perform(_ context: Context, human: (Result) -> String) async throws {
        try await perform(context, Empty(), human: human)
    }
}

extension Patch where Value == String {
    /// An option that edits a text field: not given leaves it, "" (or blanks) clears it.
    static func option(_ text: String?) -> Patch<String> {
        guard let text else { return .unchanged }
        return text.trimmingCharacters(in: .whitespaces).isEmpty ? .clear : .set(text)
    }
}

extension Documented {
    /// The request as a JSON object: the body of a paged list call (Listing.swift pages with
    /// JSON values); an update's fields beyond its id are the ones it changes.
    func body() throws -> [String: JSONValue] { try JSONValue.from(self).objectValue ?? [:] }
}

extension Contracts.Method {
    /// One item of a page this method answers (as Listing.swift fetched it), read as its type.
    func item<Item>(_ value: JSONValue) throws -> Item where Result == Page<Item> {
        do {
            return try value.decode(Item.self)
        } catch {
            throw ServiceError(.internal, "\(service) answered \(name) with an unexpected item: \(WireCoding.describe(error))")
        }
    }
}
