// Lowercase hex from bytes through a lookup table: one pass, no per-byte formatting (ids,
// hashes and keys are made on every request; `String(format: "%02x")` per byte was a
// sixth of a write's CPU).
public enum Hex {
    /// The sixteen lowercase hex digits (also the JSON escapes of DataText.swift).
    static let digits: [UInt8] = Array("0123456789abcdef".utf8)

    /// `bytes` as lowercase hex, two characters per byte.
    public static func encode<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        let input = Array(bytes)
        return String(unsafeUninitializedCapacity: input.count * 2) { buffer in
            digits.withUnsafeBufferPointer { table in
                var i = 0
                for byte in input {
                    buffer[i] = table[Int(byte >> 4)]
                    buffer[i + 1] = table[Int(byte & 0x0F)]
                    i += 2
                }
            }
            return input.count * 2
        }
    }

    /// A UUID's 16 bytes in the canonical 8-4-4-4-12 form.
    public static func uuid(_ bytes: [UInt8]) -> String {
        precondition(bytes.count == 16, "a UUID is 16 bytes")
        return String(unsafeUninitializedCapacity: 36) { buffer in
            digits.withUnsafeBufferPointer { table in
                var o = 0
                for (i, byte) in bytes.enumerated() {
                    if i == 4 || i == 6 || i == 8 || i == 10 {
                        buffer[o] = UInt8(ascii: "-")
                        o += 1
                    }
                    buffer[o] = table[Int(byte >> 4)]
                    buffer[o + 1] = table[Int(byte & 0x0F)]
                    o += 2
                }
            }
            return 36
        }
    }
}
