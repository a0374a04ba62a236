import Foundation
import Testing
@testable import TabBarCore
import TabBarTesting

/// A number in a request's params reads as its literal reads (`Int(String)`/`Double(String)`),
/// bit for bit, whichever way the reader took to it. The seed is printed on a failure
/// (`TABBARD_TEST_SEED` sets it).
@Suite struct RequestNumbersTests {
    static let seed = TestSeed.value(default: 0x5CA1E)

    /// The document of a `scroll` request whose `dy` is `literal`, read by the envelope reader.
    static func read(_ literal: String) throws -> JSONDocument {
        let doc = JSONDocument()
        let bytes = Array(#"{"id":1,"method":"scroll","params":{"dy":\#(literal)}}"#.utf8)
        let request = try bytes.withUnsafeBufferPointer { b throws(Envelope.Rejection) in try Envelope.read(b, into: doc) }
        #expect(request.params?.doc.tokens[request.params!.index + 2].kind == .number)
        return doc
    }

    /// `dy`'s value (the token after its key), the token and `doc`.
    static func dy(_ doc: JSONDocument) -> JSONValue { JSONValue(doc.tape, doc.tokenCount - 1) }

    /// Literals of up to 11 digits, point anywhere, signed or not, zeros often: the values the
    /// request's reader gives are what `Double(String)` / `Int(String)` read.
    @Test func numbersReadAsTheirLiteralsRead() throws {
        var rng = SplitMix64(seed: Self.seed)
        var literals = ["0.1", "0.2", "0.3", "-0.5", "1.5", "37.50", "112.5", "0.0", "-0", "-0.0", "99999999", "100000000"]
        for _ in 0..<100_000 {
            let digits = 1 + rng.int(rng.chance(0.8) ? 8 : 11)
            var d = (0..<digits).map { _ in rng.chance(0.3) ? 0 : rng.int(10) }
            if d.count > 1 && d[0] == 0 { d[0] = 1 + rng.int(9) }
            var s = rng.chance(0.3) ? "-" : ""
            let point = rng.chance(0.6) ? rng.int(digits + 1) : digits
            if point == 0 { s += "0." }
            for (k, x) in d.enumerated() {
                if k == point && point > 0 { s += "." }
                s += String(x)
            }
            literals.append(s)
        }
        var failures = 0
        for s in literals {
            let doc = try Self.read(s)
            let (k, d, i, dl, il) = withExtendedLifetime(doc) { () -> ((digits: Int32, scale: Int)?, Double?, Int?, Double, Int?) in
                let v = Self.dy(doc)
                return (v.token.kept, v.doubleValue, v.intValue, JSONValue.double(v.numberBytes!), JSONValue.int(v.numberBytes!))
            }
            let whole = !s.contains(".")
            let wantD = whole ? Double(Int(s)!) : Double(s)!
            let wantI = whole ? Int(s) : nil
            if d?.bitPattern != wantD.bitPattern || dl.bitPattern != wantD.bitPattern || i != wantI || il != wantI {
                failures += 1
                if failures <= 5 { Issue.record("seed \(Self.seed): \(s) (kept \(String(describing: k))): \(String(describing: d)), \(String(describing: i)) vs \(wantD), \(String(describing: wantI))") }
            }
        }
        #expect(failures == 0, "seed \(Self.seed): \(failures) literals read differently")
    }

    /// A request's numbers read by the declared params (the envelope reader's scan) and by
    /// the general parser (the same params with a key written with an escape, which the
    /// envelope reader leaves to it) give the same commands and the same errors.
    @Test func requestNumbersReadAlike() throws {
        var rng = SplitMix64(seed: Self.seed ^ 1)
        let numbers = ["37.50", "-0", "-0.0", "20", "1e2", "999999999", "1000000000", "0.000000001", "-1.5", "1.0", "7", "-3",
                       "9007199254740993", "12.5e-1", "0"]
        for _ in 0..<2_000 {
            let (x, y, id) = (numbers[rng.int(numbers.count)], numbers[rng.int(numbers.count)], numbers[rng.int(numbers.count)])
            let params = #"{"phase":"down","x":\#(x),"y":\#(y),"touch_id":\#(id)}"#
            let a = decode(#"{"jsonrpc":"2.0","id":1,"method":"touch","params":\#(params)}"#)
            let b = decode(#"{"jsonrpc":"2.0","id":1,"method":"touch","params":\#(params.replacingOccurrences(of: "phase", with: "\\u0070hase"))}"#)
            #expect(a == b, "seed \(Self.seed): \(params): \(a) vs \(b)")
            let want = (Double(x)!, Double(y)!)
            if case .success(.state(.touch(_, let gx, let gy, _))) = a {
                #expect(gx.bitPattern == (x == "-0" ? 0.0 : want.0).bitPattern && gy.bitPattern == (y == "-0" ? 0.0 : want.1).bitPattern, "\(params)")
            }
            let select = #"{"index":\#(x),"if_seq":\#(y)}"#
            #expect(decode(#"{"id":1,"method":"tab.select","params":\#(select)}"#)
                    == decode(#"{"id":1,"method":"tab.select","params":\#(select.replacingOccurrences(of: "index", with: "\\u0069ndex"))}"#),
                    "seed \(Self.seed): \(select)")
        }
    }

    func decode(_ line: String) -> Result<Command, RPCError> {
        let doc = JSONDocument()
        let bytes = Array(line.utf8)
        return withExtendedLifetime(doc) {
            let r = bytes.withUnsafeBufferPointer { Envelope.decode($0, into: doc) }
            guard case .success(let request) = r else { return .failure(.invalidParams("envelope", "\(r)")) }
            return Methods.command(for: request, limits: Limits())
        }
    }
}

/// A declared params' short key is matched by its bytes up to the first quote before it is
/// checked (`declaredKeyEnd`): keys near declared names with a quote, a backslash, a
/// control or a high byte, escapes, cut short at the end of the line, or of 7, 8 and more
/// bytes read (command, error, or the line's refusal) as the old reading reads them.
@Suite struct NumbersDeclaredKeysTests {
    static func outcome(_ line: String, declared: Bool) -> String {
        let bytes = Array(line.utf8)
        if declared {
            let doc = JSONDocument()
            return bytes.withUnsafeBufferPointer { b in
                withExtendedLifetime(doc) {
                    switch Envelope.decode(b, into: doc) {
                    case .failure(let r): return "rejected \(r)"
                    case .success(let r): return "\(Methods.command(for: r, limits: Limits()))"
                    }
                }
            }
        }
        let doc: JSONDocument
        do { doc = try JSONDocument(parsing: bytes) } catch {
            return "rejected \(Envelope.Rejection(id: .null, error: .parseError(error.description), silent: false))"
        }
        return withExtendedLifetime(doc) {
            switch Envelope.decode(doc.root) {
            case .failure(let r): return "rejected \(r)"
            case .success(let r):
                guard let spec = Methods.spec(named: r.method) else { return "\(Result<Command, RPCError>.failure(.methodNotFound(r.method)))" }
                return "\(Result { () throws(RPCError) in try spec.decodeWalking(try Params(r.params), Limits()) })"
            }
        }
    }

    @Test func nearKeysReadAsTheOldWay() {
        let keys = [#""x""#, #""x\"""#, #""x\\""#, #""x\"y""#, "\"x\u{01}\"", "\"x\u{e9}\"", #""\u0078""#, #""phase""#, #""phas\u0065""#,
                    "\"phas\u{7f}\"", #""phase ""#, #"" phase""#, #""touch_i""#, #""touch_id""#, #""touch_idx""#, #""""#, #""y""#,
                    #""xy""#, #""yx""#, "\"ph\u{0}se\"", #""\"""#]
        for k in keys {
            for rest in [#""phase":"down","y":1}}"#, #""x":2,"y":1,"phase":"up"}}"#, "", #""#] {
                let line = #"{"id":1,"method":"touch","params":{\#(k):3,\#(rest)"#
                let a = Self.outcome(line, declared: true), b = Self.outcome(line, declared: false)
                #expect(a == b, "\(line)\n  \(a)\n  \(b)")
            }
            // The key last, the line cut right after it (its quote and the zero bytes that follow the text).
            let cut = #"{"id":1,"method":"touch","params":{"phase":"down",\#(k)"#
            #expect(Self.outcome(cut, declared: true) == Self.outcome(cut, declared: false), "\(cut)")
        }
    }

    /// The envelope's method and version are matched by their bytes before they are
    /// scanned (`knownMethod`, `"2.0"`): names near known ones (a quote, a backslash, an
    /// escape, a control or high byte, 4 to 17 bytes), versions near "2.0", cut at the end
    /// of the line, read (request, error, or the line's refusal) as the old reading reads them.
    @Test func nearMethodsAndVersionsReadAsTheOldWay() {
        let methods = [#""touch""#, #""touch\"""#, #""touc""#, #""touchh""#, #""\u0074ouch""#, #""tab.select""#, #""tab.selec""#,
                       #""tab.selectt""#, #""tab.select\\""#, "\"tab.s\u{e9}lect\"", "\"tou\u{01}ch\"", #""ping""#, #""state.get""#,
                       #""animation.begin""#, #""animation.begin2""#, #""""#, #""bar.configure""#, #""nope""#, "7", "null"]
        let versions = [#""2.0""#, #""2.00""#, #""2.""#, #""\u0032.0""#, #""2.0\"""#, #"" 2.0""#, "2.0", #""1.0""#]
        for method in methods {
            for version in versions {
                for line in [#"{"jsonrpc":\#(version),"id":1,"method":\#(method),"params":{"x":1,"y":2,"phase":"up","index":0}}"#,
                             #"{"method":\#(method),"jsonrpc":\#(version)}"#, #"{"id":"a","method":\#(method)"#, #"{"jsonrpc":\#(version)"#,
                             #"{"method":\#(method),"method":\#(method)}"#, #"{"o":1,"method":\#(method),"params":{"index":1}}"#] {
                    let a = Self.outcome(line, declared: true), b = Self.outcome(line, declared: false)
                    #expect(a == b, "\(line)\n  \(a)\n  \(b)")
                }
            }
        }
    }
}
