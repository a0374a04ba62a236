import Foundation
import Testing
@testable import TabBarCore
import TabBarTesting

/// Fields are read straight from the line's bytes (`JSONValue.int`/`double`, a number's
/// literal without a string where that is exact; `WireNames`, a choice by its bytes): on
/// seeded random inputs, every value and every error is what the reference — the literal
/// made a `String` and read by `Int(String)`/`Double(String)`, the string matched by the
/// enum's `init(rawValue:)` — gives. The seed is printed on a failure (`TABBARD_TEST_SEED` sets it).
@Suite struct FieldReadingTests {
    static let seed = TestSeed.value(default: 0xF1E1D)

    /// A random JSON number literal: sign, whole digits (some of them past 2^53 and past an
    /// Int), fraction and exponent of any length.
    static func literal(_ rng: inout SplitMix64) -> String {
        var s = rng.chance(0.3) ? "-" : ""
        if rng.chance(0.15) { s += "0" } else {
            s += String(1 + rng.int(9))
            for _ in 0..<[0, 1, 2, 5, 14, 15, 16, 17, 18, 19, 22][rng.int(11)] { s += String(rng.int(10)) }
        }
        if rng.chance(0.5) {
            s += "."
            for _ in 0...[0, 1, 2, 3, 6, 12, 17, 24][rng.int(8)] { s += String(rng.chance(0.2) ? 0 : rng.int(10)) }
        }
        if rng.chance(0.3) {
            s += rng.chance(0.5) ? "e" : "E"
            s += ["", "+", "-"][rng.int(3)]
            for _ in 0...[0, 1, 2, 4, 5][rng.int(5)] { s += String(rng.int(10)) }
        }
        return s
    }

    /// The reference: a whole number (no fraction, no exponent) reads as the integer it is
    /// (`-0` is 0) when it fits, anything else as `strtod` reads it.
    static func referenceDouble(_ s: String) -> Double {
        if !s.contains(where: { $0 == "." || $0 == "e" || $0 == "E" }), let i = Int(s) { return Double(i) }
        return Double(s)!
    }

    static func referenceInt(_ s: String) -> Int? {
        s.contains(where: { $0 == "." || $0 == "e" || $0 == "E" }) ? nil : Int(s)
    }

    @Test func numbersReadAsTheirStringsRead() throws {
        var rng = SplitMix64(seed: Self.seed)
        var fixed = ["0", "-0", "-0.0", "0e5", "-0e-5", "9007199254740992", "9007199254740993", "-9007199254740993",
                     "9223372036854775807", "9223372036854775808", "-9223372036854775808", "-9223372036854775809",
                     "123456789012345678", "1234567890123456789", "1e22", "1e23", "4503599627370497.5", "1.5e-22",
                     "0.1e00001", "1e-400", "1e400", "100000000000000000000000e-23", "576460752303423487.0"]
        for _ in 0..<50_000 { fixed.append(Self.literal(&rng)) }
        var failures = 0
        for s in fixed {
            let doc = try JSONDocument(parsing: Array(s.utf8))
            let (d, i) = withExtendedLifetime(doc) { (doc.root.doubleValue, doc.root.intValue) }
            let want = Self.referenceDouble(s)
            if d?.bitPattern != want.bitPattern || i != Self.referenceInt(s) {
                failures += 1
                if failures <= 5 { Issue.record("seed \(Self.seed): \(s): \(String(describing: d)), \(String(describing: i)) vs \(want), \(String(describing: Self.referenceInt(s)))") }
            }
        }
        #expect(failures == 0, "seed \(Self.seed): \(failures) literals read differently")
    }

    /// `Params.int` and `Params.double` on random literals: the value, or the very error
    /// the number rule gives (`docs/PROTOCOL.md`, "Numbers").
    @Test func numberFieldsAcceptAndRefuseAsTheRuleSays() throws {
        var rng = SplitMix64(seed: Self.seed ^ 1)
        for _ in 0..<5_000 {
            let s = Self.literal(&rng)
            let p = try Params(json: try JSON.parse(Array(#"{"n":\#(s)}"#.utf8)))
            let range = [nil, 0...Int(1 << 53), -5...5][rng.int(3)]
            let clipped = s.utf8.count <= 40 ? s : String(s.prefix(37)) + "..."
            let whole = Self.referenceInt(s)
            let r = range ?? Params.safeIntegers
            let wantInt: Result<Int?, RPCError> =
                !s.contains(where: { $0 == "." || $0 == "e" || $0 == "E" }) && whole.map(r.contains) == true ? .success(whole)
                : s.contains(where: { $0 == "." || $0 == "e" || $0 == "E" })
                ? .failure(.invalidParams("n", "Field \"n\" must be a whole number written without a fraction or exponent, not \(clipped)."))
                : .failure(.invalidParams("n", "Field \"n\" must be between \(r.lowerBound) and \(r.upperBound), not \(clipped)."))
            let gotInt: Result<Int?, RPCError> = Result { () throws(RPCError) in try p.int("n", range: range) }
            #expect(gotInt == wantInt, "seed \(Self.seed): \(s)")
            let d = Self.referenceDouble(s)
            let dRange: ClosedRange<Double>? = rng.chance(0.5) ? nil : -100...100
            let wantDouble: Result<Double?, RPCError> = !d.isFinite ? .failure(.invalidParams("n", "Field \"n\" must be a finite number."))
                : dRange.map { !$0.contains(d) } == true ? .failure(.invalidParams("n", "Field \"n\" must be between -100.0 and 100.0, not \(d)."))
                : .success(d)
            let gotDouble: Result<Double?, RPCError> = Result { () throws(RPCError) in try p.double("n", range: dRange) }
            switch (gotDouble, wantDouble) {
            case let (.success(a), .success(b)): #expect(a?.bitPattern == b?.bitPattern, "seed \(Self.seed): \(s)")
            default: #expect(gotDouble == wantDouble, "seed \(Self.seed): \(s)")
            }
        }
    }

    /// An id is echoed as the line spells it: ids of many lengths, at the end of the line or
    /// before other members, are the bytes the line holds, as `RequestID(text:)` holds them.
    @Test func idsAreCopiedExactly() throws {
        var rng = SplitMix64(seed: Self.seed ^ 3)
        for _ in 0..<3_000 {
            let length = 1 + rng.int(40)
            let number = rng.chance(0.5)
            var text = number ? String(1 + rng.int(9)) : "\""
            while text.utf8.count < (number ? length : length - 1) { text += number ? String(rng.int(10)) : String(UnicodeScalar(UInt8(0x61 + rng.int(26)))) }
            if !number { text += "\"" }
            let line = rng.chance(0.5) ? #"{"method":"ping","id":\#(text)}"# : #"{"id":\#(text),"method":"ping","params":{}}"#
            let bytes = Array(line.utf8)
            let request = try bytes.withUnsafeBufferPointer { b throws(Envelope.Rejection) in try Envelope.decode(b).get() }
            let want = Array(text.utf8).withUnsafeBufferPointer { RequestID(text: $0) }
            #expect(request.id == want && request.id?.text == Array(text.utf8), "seed \(Self.seed): \(line)")
        }
    }

    /// Random strings near every choice's raw values (a byte changed, added or dropped,
    /// another case, escapes, past 16 bytes): matched as `init(rawValue:)` matches them,
    /// refused with the same error.
    @Test func choicesMatchAsTheirRawValuesDo() throws {
        var rng = SplitMix64(seed: Self.seed ^ 2)
        try check(Source.self, &rng)
        try check(TouchPhase.self, &rng)
        try check(HighlightPhase.self, &rng)
        try check(AnimationEndReason.self, &rng)
        try check(HideReason.self, &rng)
        try check(FeedbackProfile.self, &rng)
        try check(ItemKind.self, &rng)
        try check(CenterShape.self, &rng)
        try check(CommitOn.self, &rng)
        try check(CenterCorners.self, &rng)
        try check(AnimationStyle.self, &rng)
    }

    func check<E: WireChoice & Equatable>(_ type: E.Type, _ rng: inout SplitMix64) throws {
        let names = E.allCases.map(\.rawValue)
        for _ in 0..<2_000 {
            var s = Array(names[rng.int(names.count)].utf8)
            switch rng.int(7) {
            case 0 where !s.isEmpty: s[rng.int(s.count)] = UInt8(0x20 + rng.int(0x5F))
            case 1: s.insert(UInt8(0x20 + rng.int(0x5F)), at: rng.int(s.count + 1))
            case 2 where !s.isEmpty: s.remove(at: rng.int(s.count))
            case 3: s += Array(String(repeating: "x", count: 1 + rng.int(20)).utf8)
            case 4: s = Array(s.prefix(rng.int(s.count + 1)))
            case 5 where !s.isEmpty: s[0] ^= 0x20
            default: break
            }
            let text = String(decoding: s, as: UTF8.self)
            // Written plainly or with every byte escaped.
            let quoted = rng.chance(0.2) ? "\"" + s.map { String(format: "\\u%04x", $0) }.joined() + "\"" : String(decoding: JSON.string(text).encoded(), as: UTF8.self)
            let p = try Params(json: try JSON.parse(Array(#"{"k":\#(quoted)}"#.utf8)))
            let got: Result<E?, RPCError> = Result { () throws(RPCError) in try p.choice("k", E.self, allowed: names) }
            let want: Result<E?, RPCError> = text.utf8.count > 64
                ? .failure(.invalidParams("k", "Field \"k\" is \(text.utf8.count) bytes long; at most 64 are allowed."))
                : E(rawValue: text).map { .success($0) }
                ?? .failure(.invalidParams("k", "Field \"k\" must be one of \(names.map { "\"\($0)\"" }.joined(separator: ", ")), not \"\(text)\"."))
            #expect(got == want, "seed \(Self.seed): \(E.self) \(quoted)")
        }
    }
}
