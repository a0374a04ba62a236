import Testing
import TabBarTesting
@testable import TabBarCore

/// The decimal writer (`ByteBuffer.uint`), which computes eight digits at a time in one
/// word and stores them whole: every value it treats differently, against `String`.
@Suite struct WritesNumberTests {
    func written(_ v: UInt64) -> String {
        String(decoding: ByteBuffer.collect { $0.put("["); $0.uint(v); $0.put("]") }, as: UTF8.self)
    }

    /// Every value below a million (one block, every count of leading zeros, every pair of
    /// digits in every place).
    @Test func everyValueBelowAMillion() {
        for v in UInt64(0)..<1_000_000 where written(v) != "[\(v)]" {
            Issue.record("\(v) written as \(written(v))")
            return
        }
    }

    /// The edges of each block and of each lane: 10^k and its neighbours, a lone digit at
    /// each end of a block of zeros, nines in every place.
    @Test func blockAndLaneEdges() {
        var values: [UInt64] = [UInt64.max, UInt64.max - 1, 18_446_744_073_709_551_609]
        var p: UInt64 = 1
        for k in 0...19 {
            values += [p &- 1, p, p &+ 1, p &+ p / 10]
            if k < 19 { values += [p &* 10 &- 1, p &* 9, p &* 5 &+ p / 2] }
            p = p &* 10
        }
        values += [100_000_001, 10_000_000_000_000_001, 1_000_000_010_000_000_001, 99_999_999,
                   9_999_999_999_999_999, 10_000_000_000_000_000, 12_345_678_901_234_567_890]
        for v in values { #expect(written(v) == "[\(v)]", "\(v)") }
    }

    /// Random values of every magnitude (the seed is printed on failure; `TABBARD_TEST_SEED` sets it).
    @Test func randomValuesOfEveryMagnitude() {
        let seed = TestSeed.value(default: 0x3157_D161)
        var g = SplitMix64(seed: seed)
        for _ in 0..<200_000 {
            let v = g.next() >> (g.next() % 64)
            if written(v) != "[\(v)]" {
                Issue.record("seed \(seed): \(v) written as \(written(v))")
                return
            }
        }
    }

    /// A number written where the reserved room ends: what follows is the next piece, not
    /// the bytes the whole-word store left past the digits.
    @Test func theBytesAfterTheDigitsAreTheNextPiece() {
        for capacity in [1, 7, 8, 20, 21, 27] {
            var b = ByteBuffer(capacity: capacity)
            b.uint(7); b.uint(12_345_678); b.put(","); b.uint(123); b.uint(1_000_000_000_000_000_000)
            #expect(String(decoding: b.bytes, as: UTF8.self) == "712345678,1231000000000000000000")
        }
        #expect(String(decoding: ByteBuffer.collect { $0.int(-100_000_000); $0.int(Int.min) }, as: UTF8.self)
                == "-100000000\(Int.min)")
    }
}
