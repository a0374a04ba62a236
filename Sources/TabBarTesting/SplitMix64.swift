import Glibc

/// SplitMix64: a seeded generator, so that a failing run is repeated by its seed (the model
/// tests, the decoding differential check and every other random test share it).
public struct SplitMix64 {
    /// The generator's state (the seed, advanced by each draw).
    public var state: UInt64
    /// A generator that starts at `seed`.
    public init(seed: UInt64) { state = seed }
    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    /// 0 ..< n
    public mutating func int(_ n: Int) -> Int { n <= 1 ? 0 : Int(next() % UInt64(n)) }
    /// true with probability `p`.
    public mutating func chance(_ p: Double) -> Bool { Double(next() >> 11) / Double(1 << 53) < p }
    /// One element of `a` (not empty).
    public mutating func pick<T>(_ a: [T]) -> T { a[int(a.count)] }
    /// 0 ..< 1
    public mutating func unit() -> Double { Double(next() >> 11) / Double(1 << 53) }
}

/// The seed of a random test: `TABBARD_TEST_SEED` (decimal, or hexadecimal after `0x`) when
/// it is set, else the test's own fixed default — so every run is the same run, and a
/// failure, which prints its seed, is repeated with `TABBARD_TEST_SEED=<seed>`.
public enum TestSeed {
    /// `TABBARD_TEST_SEED` if set and readable, else `fallback`.
    public static func value(default fallback: UInt64) -> UInt64 {
        guard let p = getenv("TABBARD_TEST_SEED") else { return fallback }
        let text = String(cString: p)
        if text.hasPrefix("0x") || text.hasPrefix("0X") { return UInt64(text.dropFirst(2), radix: 16) ?? fallback }
        return UInt64(text) ?? fallback
    }
}
