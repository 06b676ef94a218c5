// The one error type that crosses the wire: a growable code from gRPC's vocabulary, a
// message for people and, for validation errors, the field at fault. Domain errors convert
// to it in one place (`ServiceError.from(_:)` and the storage mapping); anything unexpected
// becomes `internal`, its detail kept for the service log only.

/// An error code. Codes are strings on the wire; new ones can be added without a new type.
public struct ErrorCode: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    public static let invalidArgument = ErrorCode("invalid_argument")
    public static let notFound = ErrorCode("not_found")
    public static let alreadyExists = ErrorCode("already_exists")
    public static let failedPrecondition = ErrorCode("failed_precondition")
    public static let unauthenticated = ErrorCode("unauthenticated")
    public static let permissionDenied = ErrorCode("permission_denied")
    public static let resourceExhausted = ErrorCode("resource_exhausted")
    public static let unavailable = ErrorCode("unavailable")
    public static let deadlineExceeded = ErrorCode("deadline_exceeded")
    public static let `internal` = ErrorCode("internal")

    /// Every code the protocol defines, in documentation order.
    public static let all: [ErrorCode] = [
        .invalidArgument, .notFound, .alreadyExists, .failedPrecondition, .unauthenticated,
        .permissionDenied, .resourceExhausted, .unavailable, .deadlineExceeded, .internal,
    ]
}

public struct ServiceError: Error, Sendable, Codable, Equatable, CustomStringConvertible {
    public var code: ErrorCode
    public var message: String
    /// The request field at fault (`invalid_argument`), as a dotted path.
    public var field: String?
    /// Structured detail a client may act on (e.g. `retryAfterMs`, `shortfall`).
    public var details: JSONValue?

    public init(_ code: ErrorCode, _ message: String, field: String? = nil, details: JSONValue? = nil) {
        self.code = code
        self.message = message
        self.field = field
        self.details = details
    }

    public var description: String { "\(code.rawValue): \(message)" }

    public static func invalid(_ field: String, _ rule: String) -> ServiceError {
        ServiceError(.invalidArgument, "\(field): \(rule)", field: field)
    }

    public static func notFound(_ what: String) -> ServiceError {
        ServiceError(.notFound, "\(what) not found")
    }

    public static func unauthenticated(_ message: String = "sign in first: no valid session token") -> ServiceError {
        ServiceError(.unauthenticated, message)
    }

    public static func `internal`(_ message: String = "internal error") -> ServiceError {
        ServiceError(.internal, message)
    }
}
