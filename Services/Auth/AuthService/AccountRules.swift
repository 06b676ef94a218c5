// The rules a new account must follow (docs/protocol.md, "Account rules"), each failure an `invalid_argument`
// that names the field and the rule. Lengths are counted in Unicode code points, so the
// rule does not change with the Unicode version's idea of a "character".
import Foundation
import Wire

enum AccountRules {
    static let usernameLength = 3...32
    static let passwordLength = 8...1024
    static let emailMaxLength = 254

    /// A username as stored: lowercased, 3–32 of `a-z 0-9 _ . -`. "Alice" becomes "alice".
    static func username(_ raw: String) throws -> String {
        let name = raw.lowercased()
        guard isValidUsername(name) else {
            throw ServiceError.invalid("username", "must be 3–32 characters of a-z, 0-9, _ . - (got \(quoted(raw)))")
        }
        return name
    }

    /// True for a lowercased name that could belong to an account.
    static func isValidUsername(_ name: String) -> Bool {
        let scalars = name.unicodeScalars
        return usernameLength.contains(scalars.count)
            && scalars.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || "_.-".unicodeScalars.contains($0) }
    }

    /// Passwords are hashed exactly as sent (no trimming, no normalisation).
    static func password(_ password: String, field: String = "password") throws {
        let length = password.unicodeScalars.count
        guard passwordLength.contains(length) else {
            throw ServiceError.invalid(field, "must be 8–1024 characters (got \(length))")
        }
    }

    /// A sane address, not RFC 5322: one @, a non-empty name before it, a domain with a dot
    /// after it (not at either end, no empty label), no spaces, at most 254 characters.
    static func email(_ email: String?) throws -> String? {
        guard let email else { return nil }
        let parts = email.split(separator: "@", omittingEmptySubsequences: false)
        let valid =
            email.unicodeScalars.count <= emailMaxLength
            && !email.unicodeScalars.contains { CharacterSet.whitespacesAndNewlines.contains($0) || CharacterSet.controlCharacters.contains($0) }
            && parts.count == 2 && !parts[0].isEmpty
            && parts[1].contains(".") && !parts[1].split(separator: ".", omittingEmptySubsequences: false).contains { $0.isEmpty }
        guard valid else {
            throw ServiceError.invalid(
                "email",
                "must be an address like name@example.com: one @, a name before it, a domain with a dot after it, at most 254 characters (got \(quoted(email)))"
            )
        }
        return email
    }

    /// An IANA time zone name (`Europe/Oslo`, `UTC`), stored as the zone names itself.
    static func timeZone(_ name: String?) throws -> String? {
        guard let name else { return nil }
        guard let zone = LocalDays.zone(named: name) else {
            throw ServiceError.invalid(
                "timeZone", "must be an IANA time zone such as \"Europe/Oslo\" or \"UTC\" (got \(quoted(name)))")
        }
        return LocalDays.name(of: zone)
    }

    /// A user-supplied value for an error message: JSON-quoted and cut to 40 characters.
    static func quoted(_ value: String) -> String {
        let cut = value.count > 40 ? String(value.prefix(40)) + "…" : value
        let encoder = JSONEncoder()
        encoder.outputFormatting = .withoutEscapingSlashes
        guard let data = try? encoder.encode(cut), let text = String(data: data, encoding: .utf8) else {
            return "\"\""
        }
        return text
    }
}
