// A small deterministic random generator (SplitMix64) for property tests and benchmark data:
// tests must not depend on the system's randomness, and a failure must replay from its seed.
public struct SplitMix: Sendable {
    public var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A number in 0..<n.
    public mutating func next(below n: Int) -> Int { Int(next() % UInt64(n)) }

    /// One of `items`, which must not be empty.
    public mutating func pick<T>(_ items: [T]) -> T { items[next(below: items.count)] }
}
