import Foundation
import Testing
@testable import TabBarCore
import TabBarTesting

/// Decoding a request line (`Envelope.read`: the envelope read straight from the bytes, its
/// members' values into the tape) against the reference — the whole line parsed into the
/// tape by `JSONDocument.parse`, then the envelope read from its object — which is how
/// every line was decoded before: same accept/reject, same error (text, code, id), same
/// request, same typed command.
@Suite struct DecodeTests {
    /// A request as the reference decodes it.
    static func reference(_ line: [UInt8], maxDepth: Int = JSON.defaultMaxDepth) -> Result<Request, Envelope.Rejection> {
        let doc = JSONDocument()
        do { try doc.parse(line, maxDepth: maxDepth) } catch {
            return .failure(Envelope.Rejection(id: .null, error: .parseError(error.description), silent: false))
        }
        return Envelope.decode(doc.root).map { $0.owned(by: doc) }
    }

    /// nil when both ways agree; else what differs.
    static func difference(_ line: [UInt8], maxDepth: Int = JSON.defaultMaxDepth) -> String? {
        let old = reference(line, maxDepth: maxDepth)
        let new = line.withUnsafeBufferPointer { Envelope.decode($0, maxDepth: maxDepth) }
        switch (old, new) {
        case let (.failure(a), .failure(b)):
            return a == b ? nil : "rejections differ: \(a) / \(b)"
        case let (.success(a), .success(b)):
            if a.id != b.id { return "ids differ: \(String(describing: a.id)) / \(String(describing: b.id))" }
            if a.method != b.method || a.methodIndex != b.methodIndex { return "methods differ: \(a.method) / \(b.method)" }
            let pa = a.params.map { Array($0.raw) }, pb = b.params.map { Array($0.raw) }
            if pa != pb { return "params differ" }
            let ca = Methods.command(for: a, limits: Limits()), cb = Methods.command(for: b, limits: Limits())
            let same = withExtendedLifetime((a.owner, b.owner)) { ca == cb }
            return same ? nil : "commands differ: \(ca) / \(cb)"
        default:
            return "accepted by one only: \(old) / \(new)"
        }
    }

    /// A valid request of every method, in several member orders, with ids of every kind.
    static let requests: [String] = [
        #"{"jsonrpc":"2.0","id":100000,"method":"tab.select","params":{"index":0,"source":"program"}}"#,
        #"{"params":{"tab":"b","if_seq":3},"method":"tab.select","id":"x","jsonrpc":"2.0"}"#,
        #"{"jsonrpc":"2.0","id":1,"method":"touch","params":{"phase":"down","x":12.5,"y":20}}"#,
        #"{"method":"touch","params":{"y":1e1,"touch_id":4,"phase":"up","x":-0.0}}"#,
        #"{"id":2,"method":"ping"}"#,
        #"{"id":2,"method":"ping","params":null}"#,
        #"{"id":2,"method":"state.get","params":{}}"#,
        #"{"id":3,"method":"bar.configure","params":{"items":[{"id":"a","title":"A"},{"id":"b","title":"B","badge":{"count":2}}],"selected":"a"}}"#,
        #"{"id":4,"method":"bar.configure","params":{"layout":{"width":300},"settings":{"animation":"slide"}}}"#,
        #"{"id":5,"method":"action.trigger","params":{"tab":"a","source":"user"}}"#,
        #"{"id":6,"method":"action.finish","params":{"tab":"a"}}"#,
        #"{"id":7,"method":"badge.set","params":{"tab":"a","count":3,"hidden":false}}"#,
        #"{"id":8,"method":"badge.set","params":{"tab":"a","text":"new"}}"#,
        #"{"id":9,"method":"badge.clear","params":{"tab":"a"}}"#,
        #"{"id":10,"method":"feedback.set","params":{"profile":"quiet","volume":0.5}}"#,
        #"{"id":11,"method":"sound.play","params":{"name":"tap"}}"#,
        #"{"id":12,"method":"sound.list"}"#,
        #"{"id":13,"method":"subscribe","params":{"topics":["tab","badge.changed"]}}"#,
        #"{"id":14,"method":"unsubscribe"}"#,
        #"{"id":15,"method":"stats.get"}"#,
        #"{"id":16,"method":"tab.highlight","params":{"tab":"a","phase":"begin"}}"#,
        #"{"id":17,"method":"bar.set_hidden","params":{"hidden":true,"animated":true}}"#,
        #"{"id":18,"method":"nav.push","params":{"hides_bar":true}}"#,
        #"{"id":18,"method":"nav.pop"}"#,
        #"{"id":19,"method":"scroll","params":{"dy":-3.25}}"#,
        #"{"id":20,"method":"animation.begin","params":{"kind":"bounce","tab":"a","duration_ms":200}}"#,
        #"{"id":20,"method":"animation.end","params":{"animation":3,"reason":"cancelled"}}"#,
        #"{"id":-0.5e3,"method":"clock.advance","params":{"ms":5}}"#,
        #"{"id":21,"method":"clock.get"}"#,
        #"{"id":22,"method":"capture.start","params":{"path":"/tmp/x.wav"}}"#,
        #"{"id":23,"method":"capture.stop"}"#,
        #"{"id":24,"method":"sound.reload"}"#,
        #"{"id":25,"method":"rpc.discover"}"#,
        #"{"id":"\u0041\n","method":"t\u0061b.select","params":{"index":1}}"#,
        #" {"\u0069d" : 1 , "method" : "ping" , "x" : [ {"y":{}} ] , "\u0078x":1} "#,
        #"{"id":1,"method":"no.such","params":{"a":1},"extra":{"a":[1,2,{"b":null}]},"extra2":"s"}"#,
    ]

    @Test func everyMethodDecodesAsBefore() {
        for name in Methods.names {
            #expect(Self.requests.contains { $0.contains(#""method":"\#(name)""#) }, "no request of \(name)")
        }
        for r in Self.requests {
            let line = Array(r.utf8)
            #expect(Self.difference(line) == nil, "\(r)")
            guard case .success = line.withUnsafeBufferPointer({ Envelope.decode($0) }) else {
                Issue.record("refused: \(r)"); continue
            }
        }
    }

    /// Every method is found by its name's bytes, and nothing else is: not a prefix, not a
    /// longer name, not a name with one byte changed (at its start, in its first eight
    /// bytes or past them).
    @Test func methodsAreFoundByTheirBytesOnly() throws {
        let doc = JSONDocument()
        func lookup(_ name: [UInt8]) throws -> Int? {
            try doc.parse(Array("\"".utf8) + name + Array("\"".utf8))
            return withExtendedLifetime(doc) { Methods.index(named: doc.root.inner) }
        }
        for (k, m) in Methods.all.enumerated() {
            let name = Array(m.name.utf8)
            #expect(try lookup(name) == k, "\(m.name)")
            #expect(try lookup(Array(name.dropLast())) .map { Methods.all[$0].name } != m.name)
            #expect(try lookup(name + Array("x".utf8)) == nil, "\(m.name)x")
            for at in Set([0, min(7, name.count - 1), name.count - 1]) {
                var changed = name
                changed[at] = changed[at] == UInt8(ascii: "q") ? UInt8(ascii: "z") : UInt8(ascii: "q")
                #expect(try lookup(changed) == nil, "\(String(decoding: changed, as: UTF8.self))")
            }
        }
        #expect(try lookup([]) == nil)
    }

    /// Past the other keys the reader compares (`otherKeys`), the line is read in full: the
    /// same request, and a duplicate among many keys is still refused.
    @Test func manyOtherMembersAreReadToo() {
        for extra in [1, 15, 16, 17, 40] {
            let members = (0..<extra).map { #""k\#($0)":\#($0)"# }.joined(separator: ",")
            let good = Array(#"{"id":1,\#(members),"method":"ping"}"#.utf8)
            #expect(Self.difference(good) == nil, "\(extra) others")
            guard case .success(let r) = good.withUnsafeBufferPointer({ Envelope.decode($0) }) else { Issue.record("refused \(extra)"); continue }
            #expect(r.method == "ping" && r.id == .int(1))
            let dup = Array(#"{"id":1,\#(members),"method":"ping","k0":0}"#.utf8)
            #expect(Self.difference(dup) == nil, "\(extra) others and a duplicate")
            guard case .failure(let e) = dup.withUnsafeBufferPointer({ Envelope.decode($0) }) else { Issue.record("accepted a duplicate"); continue }
            #expect(e.error.message.contains("duplicate key \"k0\""))
        }
    }

    /// The envelope is read first with no room for keys other than its four; another key
    /// stops that read and the line is read again from its start with room for them.
    /// Wherever that key comes — first, between the method and its params, after params
    /// read by their fields, last — the request and its command are the reference's, and a
    /// second copy of it is still refused as a duplicate.
    @Test func anOtherKeyAnywhereReadsTheLineAgain() {
        let parts = [#""jsonrpc":"2.0""#, #""id":7"#, #""method":"tab.select""#, #""params":{"index":1,"source":"user"}"#]
        for at in 0...parts.count {
            var members = parts
            members.insert(#""x":{"a":[1]}"#, at: at)
            let line = Array(("{" + members.joined(separator: ",") + "}").utf8)
            #expect(Self.difference(line) == nil, "another key at \(at)")
            guard case .success(let r) = line.withUnsafeBufferPointer({ Envelope.decode($0) }) else { Issue.record("refused, another key at \(at)"); continue }
            #expect(r.method == "tab.select" && r.id == .int(7))
            let command = withExtendedLifetime(r.owner) { Methods.command(for: r, limits: Limits()) }
            #expect(command == .success(.state(.select(.index(1), ifSeq: nil, source: .user))), "another key at \(at)")
            let dup = Array(("{" + (members + [#""x":2"#]).joined(separator: ",") + "}").utf8)
            #expect(Self.difference(dup) == nil)
            guard case .failure(let e) = dup.withUnsafeBufferPointer({ Envelope.decode($0) }) else { Issue.record("accepted a duplicate"); continue }
            #expect(e.error.message.contains("duplicate key \"x\""))
        }
    }

    /// A params field is found among keys of the same length, plain or written with
    /// escapes, the empty key included; `only` names an unknown key as decoded.
    @Test func fieldsAreFoundByTheirKeys() throws {
        let p = try Params(json: try JSON.parse(Array(#"{"ab":1,"\u0061c":2,"ad":3,"":4,"abc":5}"#.utf8)))
        #expect(try p.int("ab") == 1 && p.int("ac") == 2 && p.int("ad") == 3 && p.int("") == 4 && p.int("abc") == 5)
        #expect(try p.int("ae") == nil && p.int("a") == nil)
        #expect(throws: Never.self) { try p.only(["ab", "ac", "ad", "", "abc"]) }
        #expect(throws: RPCError.invalidParams("ac", #"Unknown field "ac"; accepted fields: ab, ad, , abc."#)) { try p.only(["ab", "ad", "", "abc"]) }
        #expect(throws: RPCError.invalidParams("abc", #"Unknown field "abc"; accepted fields: ab, ac, ad, ."#)) { try p.only(["ab", "ac", "ad", ""]) }
    }

    /// Keys that begin like the envelope's four, or are theirs with a byte more or less,
    /// are other members (ignored), whatever follows them in the line.
    @Test func nearKeysAreOtherMembers() throws {
        for key in ["i", "idx", "iD", "id ", "metho", "methods", "method2", "param", "paramsx", "jsonrp", "jsonrpcx", "jsonrpc2", "ids"] {
            for rest in [#","method":"ping"}"#, #"}"#] {
                let line = Array(#"{"\#(key)":"x","id":7\#(rest)"#.utf8)
                #expect(Self.difference(line) == nil, "\(key)")
                let r = line.withUnsafeBufferPointer { Envelope.decode($0) }
                if rest == "}" {
                    guard case .failure(let e) = r else { Issue.record("\(key): accepted without a method"); continue }
                    #expect(e.error.message == #"The request has no "method"."#, "\(key)")
                } else {
                    let request = try r.get()
                    #expect(request.id == .int(7) && request.method == "ping" && request.params == nil, "\(key)")
                }
            }
        }
    }

    /// Refusals the reader must leave to the parser, with its error text and offset.
    @Test(arguments: [
        (#"{"id":1,"id":2,"method":"ping"}"#, "duplicate key \"id\""),
        (#"{"id":1,"method":"ping","\u0069d":2}"#, "duplicate key \"id\""),
        (#"{"a":1,"method":"ping","a":2}"#, "duplicate key \"a\""),
        (#"{"a":1,"method":"ping","\u0061":2}"#, "duplicate key \"a\""),
        (#"{"id":1,"method":"ping","params":{"a":1,"a":2}}"#, "duplicate key \"a\""),
        (#"{"id":1 "method":"ping"}"#, "expected ',' or '}' in an object"),
        (#"{"id":1,"method":"ping",}"#, "expected a quoted key"),
        (#"{"id" 1}"#, "expected ':' after a key"),
        (#"{"id":1,"method":"ping"} x"#, "unexpected text after the JSON value"),
        (#"{"id":1,"method":"ping""#, "unexpected end of input in an object"),
        ("", "empty input"),
        (#"{"id":1,"method":"p\#u{01}ing"}"#, "unescaped control character in a string"),
    ])
    func refusalsAreTheParsers(_ line: String, _ reason: String) {
        let bytes = Array(line.utf8)
        #expect(Self.difference(bytes) == nil, "\(line)")
        guard case .failure(let r) = bytes.withUnsafeBufferPointer({ Envelope.decode($0) }) else {
            Issue.record("accepted \(line)"); return
        }
        #expect(r.error.kind == "parse_error")
        #expect(r.error.message.contains(reason), "\(r.error.message)")
    }

    /// The depth limit counts the envelope's object: params at depth 2, one more inside.
    @Test func depthCountsTheEnvelope() {
        let line = Array(#"{"id":1,"method":"ping","params":{"a":{"b":1}}}"#.utf8)
        for depth in 0...4 { #expect(Self.difference(line, maxDepth: depth) == nil, "maxDepth \(depth)") }
        let refused = line.withUnsafeBufferPointer { Envelope.decode($0, maxDepth: 2) }
        guard case .failure(let r) = refused else { Issue.record("accepted at depth 2"); return }
        #expect(r.error.message.contains("nesting deeper than 2 levels"))
    }

    /// A document reused after a longer line holds only the new line's values.
    @Test func aReusedDocumentForgetsTheLastLine() throws {
        let doc = JSONDocument()
        let long = Array(#"{"id":1,"method":"bar.configure","params":{"items":[{"id":"a"},{"id":"b"},{"id":"c"}]}}"#.utf8)
        let short = Array(#"{"method":"ping","id":"z"}"#.utf8)
        _ = try long.withUnsafeBufferPointer { b throws(Envelope.Rejection) in try Envelope.read(b, into: doc) }
        let r = try short.withUnsafeBufferPointer { b throws(Envelope.Rejection) in try Envelope.read(b, into: doc) }
        #expect(r.method == "ping" && r.id == .string("z") && r.params == nil)
        #expect(Self.difference(short) == nil)
    }

    /// Every JSONTestSuite case, as a line and inside a request's params.
    @Test func jsonTestSuiteAgrees() throws {
        for file in try Self.suiteFiles() {
            let text = Array(FileManager.default.contents(atPath: file)!)
            #expect(Self.difference(text) == nil, "\(file)")
            let wrapped = Array(#"{"id":1,"method":"ping","params":"#.utf8) + text + Array("}".utf8)
            #expect(Self.difference(wrapped) == nil, "\(file) as params")
            let member = Array(#"{"method":"ping","x":"#.utf8) + text + Array(#","id":2}"#.utf8)
            #expect(Self.difference(member) == nil, "\(file) as a member")
        }
    }

    /// Seeded mutants of valid requests (bytes flipped, inserted, deleted, truncated,
    /// spliced): the same verdict and the same request. The seed is printed on a failure.
    @Test func seededMutantsAgree() {
        let seed = TestSeed.value(default: 0x5EED_17)
        let count = Int(ProcessInfo.processInfo.environment["DECODE_MUTANTS"] ?? "") ?? 20_000
        var rng = SplitMix64(seed: seed)
        let seeds = Self.requests.map { Array($0.utf8) }
        let alphabet = Array(#"{}[]:,"\ u0123456789.eE+-tfnal"#.utf8) + [0x00, 0x1F, 0x7F, 0xC3, 0xA9, 0xFF, 0x0A]
        var differences = 0, accepted = 0
        for k in 0..<count {
            var line = seeds[Int(rng.next() % UInt64(seeds.count))]
            for _ in 0..<(1 + Int(rng.next() % 3)) {
                let at = line.isEmpty ? 0 : Int(rng.next() % UInt64(line.count))
                switch rng.next() % 6 {
                case 0 where !line.isEmpty: line[at] = alphabet[Int(rng.next() % UInt64(alphabet.count))]
                case 1: line.insert(alphabet[Int(rng.next() % UInt64(alphabet.count))], at: at)
                case 2 where !line.isEmpty: line.remove(at: at)
                case 3: line = Array(line.prefix(at))
                case 4:
                    let other = seeds[Int(rng.next() % UInt64(seeds.count))]
                    let from = Int(rng.next() % UInt64(other.count))
                    line = Array(line.prefix(at)) + other[from...]
                default: line.insert(contentsOf: Array(#","id":1"#.utf8), at: at)
                }
            }
            if case .success = Self.reference(line) { accepted += 1 }
            if let d = Self.difference(line, maxDepth: 2 + k % 3) {
                differences += 1
                if differences <= 5 {
                    Issue.record("seed \(seed), mutant \(k): \(String(decoding: line, as: UTF8.self)): \(d)")
                }
            }
        }
        #expect(differences == 0, "seed \(seed): \(differences) of \(count) mutants differ")
        // (Enough of them are requests, not only refusals: 1 in 20 at least.)
        #expect(accepted * 20 >= count, "seed \(seed): only \(accepted) of \(count) mutants are requests")
        if ProcessInfo.processInfo.environment["DECODE_MUTANTS"] != nil { print("decode mutants: \(count), accepted \(accepted), differences \(differences)") }
    }

    static func suiteFiles() throws -> [String] {
        var dir = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { dir.deleteLastPathComponent() }
        for _ in 0..<4 {
            dir.deleteLastPathComponent()
            let candidate = dir.appendingPathComponent("shared/conformance/JSONTestSuite/test_parsing").path
            if FileManager.default.fileExists(atPath: candidate) {
                return try FileManager.default.contentsOfDirectory(atPath: candidate).filter { $0.hasSuffix(".json") }.sorted().map { candidate + "/" + $0 }
            }
        }
        Issue.record("JSONTestSuite not found (shared/conformance/JSONTestSuite/test_parsing)")
        return []
    }
}

