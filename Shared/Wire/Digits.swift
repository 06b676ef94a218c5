// Numbers for people: thousands grouped with commas. One rule for every service and the
// CLI (money, quantities, photo limits, hours), so the same number reads the same everywhere.

public enum Digits {
    /// "1234567" → "1,234,567". `digits` is the whole part, without sign: ASCII digits,
    /// grouped by their bytes.
    /// (A String or a Substring, not any `StringProtocol`: unspecialized generic code made
    /// the runtime scan its conformance records in every one-shot command that printed money.)
    public static func grouped(_ digits: Substring) -> String {
        let count = digits.utf8.count
        var out = [UInt8]()
        out.reserveCapacity(count + count / 3)
        for (index, digit) in digits.utf8.enumerated() {
            if index > 0 && (count - index) % 3 == 0 { out.append(UInt8(ascii: ",")) }
            out.append(digit)
        }
        return String(decoding: out, as: UTF8.self)
    }

    public static func grouped(_ digits: String) -> String { grouped(Substring(digits)) }

    /// -1234567 → "-1,234,567".
    public static func grouped(_ value: some BinaryInteger) -> String {
        (value < 0 ? "-" : "") + grouped(String(value.magnitude))
    }
}
