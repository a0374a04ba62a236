import Testing
@testable import TabBarCore
import TabBarTesting

/// Numbers are read from the line's bytes without a string where that is exact
/// (`JSONValue.exactDouble`); every literal with a fraction or an exponent must read as
/// `Double(String)` reads it, bit for bit. (Whole numbers take the integer path, as before:
/// `-0` reads as 0.)
@Suite struct NumberReadingTests {
    static func read(_ literal: String) throws -> Double? {
        let doc = try JSONDocument(parsing: Array(literal.utf8))
        return withExtendedLifetime(doc) { doc.root.doubleValue }  // (a value does not keep its document)
    }

    static func same(_ literal: String, seed: UInt64? = nil) throws {
        let got = try read(literal)
        let want = Double(literal)!
        #expect(got?.bitPattern == want.bitPattern, "\(seed.map { "seed \($0): " } ?? "")\(literal): \(String(describing: got)) vs \(want)")
    }

    @Test func literalsReadAsStrtodReadsThem() throws {
        for l in ["37.50", "112.5", "20", "-0.0", "0.0", "0.1", "0.3", "1e22", "1e23", "1.5e-22", "2.5E+3",
                  "123456789012345", "1234567890123456", "0.000000000000000000000001", "9007199254740993.0",
                  "-12.75e-3", "1e-400", "1e400", "4.9e-324", "1.7976931348623157e308", "0.1e00001", "100e-2"] {
            try Self.same(l)
        }
    }

    @Test func randomLiteralsReadAsStrtodReadsThem() throws {
        let seed = TestSeed.value(default: 2026)
        var rng = SplitMix64(seed: seed)
        for _ in 0..<20_000 {
            var s = rng.next() % 4 == 0 ? "-" : ""
            let intDigits = Int(rng.next() % 9) + 1
            s += String(rng.next() % 9 + 1)
            for _ in 1..<intDigits { s += String(rng.next() % 10) }
            if rng.next() % 2 == 0 {
                s += "."
                for _ in 0...Int(rng.next() % 12) { s += String(rng.next() % 10) }
            }
            if rng.next() % 3 == 0 { s += "e" + (rng.next() % 2 == 0 ? "-" : "") + String(rng.next() % 30) }
            try Self.same(s, seed: seed)
        }
    }
}

/// Whole numbers are written in one pass (`ByteBuffer.uint`/`int`): every value as `String(v)` spells it.
@Suite struct NumberWritingTests {
    @Test func wholeNumbersAreWrittenAsSwiftSpellsThem() {
        var values: [UInt64] = [0, 1, 9, 10, 99, 100, 12345, 1 << 53, UInt64(Int64.max), UInt64.max - 1, UInt64.max]
        let seed = TestSeed.value(default: 4242)
        var rng = SplitMix64(seed: seed)
        for _ in 0..<5_000 { values.append(rng.next() >> (rng.next() % 64)) }
        for v in values {
            #expect(ByteBuffer.collect { $0.uint(v) } == Array(String(v).utf8), "seed \(seed): \(v)")
            let i = Int(truncatingIfNeeded: v)
            #expect(ByteBuffer.collect { $0.int(i) } == Array(String(i).utf8), "seed \(seed): \(i)")
        }
        // After other bytes, and at the very end of the buffer's capacity (the digits are made past the end).
        var o = ByteBuffer(capacity: 4)
        o.put("ab")
        o.uint(UInt64.max)
        o.put(",")
        o.uint(7)
        #expect(Array(o.bytes) == Array("ab\(UInt64.max),7".utf8))
    }
}
