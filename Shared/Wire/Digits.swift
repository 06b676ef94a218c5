// Numbers for people: thousands grouped with commas. One rule for every service and the
// CLI (money, quantities, photo limits, hours), so the same number reads the same everywhere.

public enum Digits {
    /// "1234567" → "1,234,567". `digits` is the whole part, without sign.
    public static func grouped(_ digits: some StringProtocol) -> String {
        var out = ""
        out.reserveCapacity(digits.count + digits.count / 3)
        for (index, digit) in digits.enumerated() {
            if index > 0 && (digits.count - index) % 3 == 0 { out.append(",") }
            out.append(digit)
        }
        return out
    }

    /// -1234567 → "-1,234,567".
    public static func grouped(_ value: some BinaryInteger) -> String {
        (value < 0 ? "-" : "") + grouped(String(value.magnitude))
    }
}
