// The auth service's settings: plain values with defaults. main reads them from the stack
// configuration (LOGBOOK_AUTH_*); tests build them directly, with the cheapest Argon2 cost
// and a clock they can move.
import CSodium
import Foundation

public struct AuthConfiguration: Sendable {
    /// Argon2id cost of new password hashes. Existing hashes keep the cost they were made with.
    public var argon2: Argon2Cost
    /// How many password hashes may be computed at once (each takes `argon2.memlimit` bytes);
    /// one of them is kept for known devices and signed-in sessions.
    public var hashingConcurrency: Int
    /// Failed sign-ins from unknown clients accepted per minute across all usernames; 0: no
    /// global limit (LoginFailures.swift).
    public var failedLoginsPerMinute: Int
    /// How long a session token stays valid after login.
    public var sessionLifetime: TimeInterval
    public var throttle: LoginThrottle
    /// How many records shards new accounts are spread over (LOGBOOK_RECORDS_SHARDS).
    public var recordsShards = 1
    /// The service's notion of "now" (sessions, throttling); injected so tests can move time.
    public var now: @Sendable () -> Date

    public init(
        argon2: Argon2Cost = .interactive,
        hashingConcurrency: Int = max(1, ProcessInfo.processInfo.activeProcessorCount),
        sessionLifetime: TimeInterval = 30 * 24 * 3600,
        throttle: LoginThrottle = LoginThrottle(),
        failedLoginsPerMinute: Int = 60,
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.failedLoginsPerMinute = failedLoginsPerMinute
        self.argon2 = argon2
        self.hashingConcurrency = hashingConcurrency
        self.sessionLifetime = sessionLifetime
        self.throttle = throttle
        self.now = now
    }

    /// Reads `LOGBOOK_AUTH_*` settings through `setting` (e.g. `{ stack.setting("auth", $0) }`):
    /// ARGON2_OPSLIMIT, ARGON2_MEMLIMIT (bytes), HASHING_CONCURRENCY, SESSION_DAYS,
    /// FAILED_LOGINS_PER_MINUTE.
    public static func from(setting: (String) -> String?) throws -> AuthConfiguration {
        var configuration = AuthConfiguration()
        func number(_ name: String, minimum: Int) throws -> Int? {
            guard let text = setting(name) else { return nil }
            guard let value = Int(text.trimmingCharacters(in: .whitespaces)), value >= minimum else {
                throw AuthConfigurationError("LOGBOOK_AUTH_\(name) must be a whole number ≥ \(minimum) (got \"\(text)\")")
            }
            return value
        }
        if let ops = try number("ARGON2_OPSLIMIT", minimum: Int(Argon2Cost.minimum.opslimit)) {
            configuration.argon2.opslimit = UInt64(ops)
        }
        if let mem = try number("ARGON2_MEMLIMIT", minimum: Argon2Cost.minimum.memlimit) {
            configuration.argon2.memlimit = mem
        }
        if let n = try number("HASHING_CONCURRENCY", minimum: 1) { configuration.hashingConcurrency = n }
        if let n = try number("FAILED_LOGINS_PER_MINUTE", minimum: 0) { configuration.failedLoginsPerMinute = n }
        if let days = try number("SESSION_DAYS", minimum: 1) { configuration.sessionLifetime = TimeInterval(days) * 24 * 3600 }
        return configuration
    }
}

/// Argon2id cost: passes over memory (`opslimit`) and memory in bytes (`memlimit`).
public struct Argon2Cost: Sendable, Equatable {
    public var opslimit: UInt64
    public var memlimit: Int

    public init(opslimit: UInt64, memlimit: Int) {
        self.opslimit = opslimit
        self.memlimit = memlimit
    }

    /// libsodium's INTERACTIVE cost (2 passes, 64 MiB): the production default.
    public static var interactive: Argon2Cost {
        Argon2Cost(
            opslimit: UInt64(crypto_pwhash_argon2id_opslimit_interactive()),
            memlimit: Int(crypto_pwhash_argon2id_memlimit_interactive()))
    }

    /// The smallest cost libsodium accepts: for tests only.
    public static var minimum: Argon2Cost {
        Argon2Cost(
            opslimit: UInt64(crypto_pwhash_argon2id_opslimit_min()),
            memlimit: Int(crypto_pwhash_argon2id_memlimit_min()))
    }
}

/// Slowing down password guessing for one username: the first `freeFailures` failures cost
/// nothing; after that each attempt must wait `base × 2^(failures − freeFailures)`, capped at
/// `cap`, counted from the last failure. A successful login resets the count.
public struct LoginThrottle: Sendable, Equatable {
    public var freeFailures: Int
    public var base: TimeInterval
    public var cap: TimeInterval

    public init(freeFailures: Int = 5, base: TimeInterval = 1, cap: TimeInterval = 300) {
        self.freeFailures = freeFailures
        self.base = base
        self.cap = cap
    }

    /// How long after the last failure the next attempt must wait, given `failures` so far.
    public func wait(afterFailures failures: Int) -> TimeInterval {
        guard failures >= freeFailures else { return 0 }
        let exponent = min(failures - freeFailures, 30)
        return min(base * pow(2, Double(exponent)), cap)
    }
}

public struct AuthConfigurationError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
