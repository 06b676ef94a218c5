// Errors as RFC 9457 problem details (application/problem+json), mapped here and only here
// from the wire's error codes (docs/protocol.md, "Error codes"). The service's message
// becomes `detail`, its field `field`, `details.retryAfterMs` the Retry-After header
// (whole seconds, rounded up). Errors the edge raises itself (a body too large, a slow
// client, the rate limit) use the same shape with codes of their own.
import Foundation
import Wire

public struct Problem: Error, Sendable {
    public var status: Int
    /// The wire code (or the edge's own, e.g. `payload_too_large`).
    public var code: String
    public var title: String
    public var detail: String
    public var field: String?
    public var retryAfterMs: Int?
    public var details: JSONValue?
    /// For a 405: the methods the path answers (the Allow header).
    public var allow: [String]?

    public init(status: Int, code: String, title: String, detail: String, field: String? = nil, retryAfterMs: Int? = nil) {
        self.status = status
        self.code = code
        self.title = title
        self.detail = detail
        self.field = field
        self.retryAfterMs = retryAfterMs
    }

    /// HTTP status and title for each wire code.
    public static let statuses: [ErrorCode: (status: Int, title: String)] = [
        .invalidArgument: (400, "Invalid argument"),
        .notFound: (404, "Not found"),
        .alreadyExists: (409, "Already exists"),
        .failedPrecondition: (409, "Failed precondition"),
        .unauthenticated: (401, "Unauthenticated"),
        .permissionDenied: (403, "Permission denied"),
        .resourceExhausted: (429, "Too many requests"),
        .unavailable: (503, "Service unavailable"),
        .deadlineExceeded: (504, "Deadline exceeded"),
        .internal: (500, "Internal error"),
    ]

    public init(_ error: ServiceError) {
        let mapped = Self.statuses[error.code] ?? (500, "Internal error")
        self.init(status: mapped.status, code: error.code.rawValue, title: mapped.title, detail: error.message, field: error.field)
        if let ms = error.details?["retryAfterMs"]?.intValue { retryAfterMs = ms }
        details = error.details
    }

    static func edge(_ status: Int, _ code: String, _ title: String, _ detail: String, field: String? = nil) -> Problem {
        Problem(status: status, code: code, title: title, detail: detail, field: field)
    }

    static func badRequest(_ detail: String, field: String? = nil) -> Problem {
        Problem(ServiceError(.invalidArgument, detail, field: field))
    }

    /// The problem document.
    public var json: Data {
        var object: [String: JSONValue] = [
            "type": .string("https://logbook.invalid/problems/\(code)"), "title": .string(title), "status": .number(.init(status)),
            "detail": .string(detail), "code": .string(code),
        ]
        if let field { object["field"] = .string(field) }
        if let retryAfterMs { object["retryAfterMs"] = .number(.init(retryAfterMs)) }
        if let details { object["details"] = details }
        return (try? WireCoding.encode(JSONValue.object(object))) ?? Data("{}".utf8)
    }

    /// Retry-After in whole seconds, rounded up (at least 1).
    public var retryAfterSeconds: Int? { retryAfterMs.map { max(1, ($0 + 999) / 1000) } }
}
