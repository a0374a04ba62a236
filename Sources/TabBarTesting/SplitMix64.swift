/// SplitMix64: a seeded generator, so that a failing run is repeated by its seed (the model
/// tests and the decoding differential check share it).
public struct SplitMix64 {
    public var state: UInt64
    public init(seed: UInt64) { state = seed }
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    /// 0 ..< n
    public mutating func int(_ n: Int) -> Int { n <= 1 ? 0 : Int(next() % UInt64(n)) }
    public mutating func chance(_ p: Double) -> Bool { Double(next() >> 11) / Double(1 << 53) < p }
    public mutating func pick<T>(_ a: [T]) -> T { a[int(a.count)] }
    public mutating func unit() -> Double { Double(next() >> 11) / Double(1 << 53) }
}
