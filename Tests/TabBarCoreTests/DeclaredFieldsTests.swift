import Foundation
import Testing
@testable import TabBarCore
import TabBarTesting

/// A method's params are read by its declared fields (`MethodSpec.fields`: as the envelope
/// reads the line when the method comes first, `declaredParams`, else by `Params.reading`,
/// one pass over the keys; then each reader by its slot): on seeded random params of every
/// method — declared, unknown and near-miss names, keys written with escapes, duplicates,
/// values of every type, in and out of range — the command or the error (its text, its
/// field) is what the old reading gives: `only(fields.names)`, then every reader walking the
/// keys (`decodeWalking`), on the line parsed in full. The seed is printed on a failure
/// (`TABBARD_TEST_SEED` sets it, `FIELDS_CASES` the count).
@Suite struct DeclaredFieldsTests {
    static let seed = TestSeed.value(default: 0xDEC1A7ED)
    static let cases = Int(ProcessInfo.processInfo.environment["FIELDS_CASES"] ?? "") ?? 30_000

    /// The old reading: the whole line parsed, the envelope read from the tree's object,
    /// the params read by `only` and walking readers.
    static func reference(_ line: [UInt8]) -> Result<Command, RPCError>? {
        guard let doc = try? JSONDocument(parsing: line) else { return nil }
        return withExtendedLifetime(doc) { () -> Result<Command, RPCError>? in
            guard case .success(let r) = Envelope.decode(doc.root) else { return nil }
            guard let spec = Methods.spec(named: r.method) else { return .failure(.methodNotFound(r.method)) }
            return Result { () throws(RPCError) in try spec.decodeWalking(try Params(r.params), Limits()) }
        }
    }

    /// The reading the server does: the line read by `Envelope.read`, the params by their fields.
    static func declared(_ line: [UInt8]) -> Result<Command, RPCError>? {
        let doc = JSONDocument()
        return line.withUnsafeBufferPointer { b in
            withExtendedLifetime(doc) { () -> Result<Command, RPCError>? in
                guard case .success(let r) = Envelope.decode(b, into: doc) else { return nil }
                guard let spec = Methods.spec(named: r.method) else { return .failure(.methodNotFound(r.method)) }
                return Result { () throws(RPCError) in try spec.decode(try Params(r.params), Limits()) }
            }
        }
    }

    /// A key as a request may spell it: usually plainly, sometimes with escapes.
    static func quoted(_ name: String, _ rng: inout SplitMix64) -> String {
        guard rng.chance(0.15), !name.isEmpty else { return "\"\(name)\"" }
        return "\"" + name.utf8.map { rng.chance(0.5) ? String(format: "\\u%04x", $0) : String(UnicodeScalar($0)) }.joined() + "\""
    }

    /// A value of any type, often one a field accepts.
    static func value(_ rng: inout SplitMix64) -> String {
        rng.pick([
            "0", "1", "3", "-1", "7", "200", "600001", "9007199254740991", "9007199254740992", "1e2", "2.5", "-0", "0.5",
            "37.5", "-3.25", "1e400", "1000001", "3600001", "true", "false", "null", "{}", "[]", #"[1]"#,
            #"["tab","badge.changed"]"#, #"[""]"#, "\"a\"", "\"b\"", "\"\"", "\"user\"", "\"program\"", "\"down\"", "\"up\"",
            "\"cancel\"", "\"begin\"", "\"end\"", "\"full\"", "\"quiet\"", "\"silent\"", "\"finished\"", "\"cancelled\"",
            "\"explicit\"", "\"keyboard\"", "\"bounce\"", "\"tap\"", "\"new\"", "\"x\\u0001\"", "\"\\u0061\"", "\"USER\"",
            "\"" + String(repeating: "z", count: 70) + "\"", #"{"count":2}"#, #"{"width":300}"#, #"{"animation":"slide"}"#,
            #"[{"id":"a","title":"A"},{"id":"b","badge":{"count":1}}]"#, #"[{"id":"a"},{"id":"a"}]"#, #"[{"id":""}]"#,
        ])
    }

    @Test func declaredFieldsReadAsTheOldWay() {
        var rng = SplitMix64(seed: Self.seed)
        let everyName = Array(Set(Methods.all.flatMap { $0.fields.names.map(\.description) })).sorted()
        var differences = 0, accepted = 0, refusedUnknown = 0
        for k in 0..<Self.cases {
            let spec = rng.pick(Methods.all)
            let own = spec.fields.names.map(\.description)
            var keys: [String] = []
            for _ in 0..<rng.int(own.count + 3) {
                switch rng.int(10) {
                case 0: keys.append(rng.pick(everyName))  // another method's field
                case 1:
                    // A near miss: a byte changed, added or dropped, or another case.
                    var s = Array((own.isEmpty ? "tab" : rng.pick(own)).utf8)
                    switch rng.int(4) {
                    case 0: s[rng.int(s.count)] = UInt8(0x61 + rng.int(26))
                    case 1: s.insert(UInt8(0x61 + rng.int(26)), at: rng.int(s.count + 1))
                    case 2: s.remove(at: rng.int(s.count))
                    default: s[0] ^= 0x20
                    }
                    keys.append(String(decoding: s, as: UTF8.self))
                case 2: keys.append(rng.pick(["", "bogus", "x", "params", "tab_id_that_is_long"]))
                default: if !own.isEmpty { keys.append(rng.pick(own)) }
                }
            }
            // (A key given twice is refused by the parser, in both readings.)
            if !keys.isEmpty && rng.chance(0.05) { keys.append(rng.pick(keys)) }
            let members = keys.map { "\(Self.quoted($0, &rng)):\(Self.value(&rng))" }.joined(separator: ",")
            // Params after the method (read as the envelope is read) or before it (read after).
            let params = rng.chance(0.05) ? "" : #","params":{\#(members)}"#
            let line = rng.chance(0.7) ? Array(#"{"id":\#(k),"method":"\#(spec.name)"\#(params)}"#.utf8)
                : Array(#"{"id":\#(k)\#(params),"method":"\#(spec.name)"}"#.utf8)
            let old = Self.reference(line), new = Self.declared(line)
            if case .success? = old { accepted += 1 }
            if case .failure(let e)? = old, e.message.hasPrefix("Unknown field") { refusedUnknown += 1 }
            if old != new {
                differences += 1
                if differences <= 5 {
                    Issue.record("seed \(Self.seed), case \(k): \(String(decoding: line, as: UTF8.self)): \(String(describing: old)) / \(String(describing: new))")
                }
            }
        }
        #expect(differences == 0, "seed \(Self.seed): \(differences) of \(Self.cases) params read differently")
        // (Both kinds are common: commands made, and unknown fields refused.)
        #expect(accepted * 10 >= Self.cases && refusedUnknown * 10 >= Self.cases,
                "seed \(Self.seed): \(accepted) accepted, \(refusedUnknown) refused as unknown of \(Self.cases)")
    }

    /// A badge's `count`, `text` or `dot` given as null is not given (as every reader reads a
    /// null): an error, or the other field, or the hidden flag alone — where `"count":null`
    /// used to reach `p.int("count")!` and stop the daemon (found by the test above).
    @Test func aNullBadgeFieldIsNotGiven() {
        func command(_ method: String, _ params: String) -> Result<Command, RPCError> {
            let line = Array(#"{"id":1,"method":"\#(method)","params":\#(params)}"#.utf8)
            return Self.declared(line)!
        }
        let exactlyOne = RPCError.invalidParams("count", "Give exactly one of \"count\" (integer), \"text\" (string) or \"dot\" (true).")
        #expect(command("badge.set", #"{"tab":"a","count":null}"#) == .failure(exactlyOne))
        #expect(command("badge.set", #"{"tab":"a","dot":null,"text":"new"}"#)
                == .success(.state(.badgeSet("a", BadgeUpdate(value: .set(.text("new")), hidden: nil)))))
        #expect(command("badge.set", #"{"tab":"a","hidden":true,"count":null}"#)
                == .success(.state(.badgeSet("a", BadgeUpdate(value: .keep, hidden: true)))))
        let item = exactlyOne.field == nil ? exactlyOne : RPCError.invalidParams("items[0].badge.count", "Give exactly one of \"count\" (integer), \"text\" (string) or \"dot\" (true).")
        #expect(command("bar.configure", #"{"items":[{"id":"a","badge":{"count":null}}]}"#) == .failure(item))
    }

    /// A field found by its bytes when a reader names it by another literal than the
    /// declaration's (another address), and a name that is not declared is absent.
    @Test func fieldsAreFoundByTheirBytesToo() throws {
        let doc = try JSONDocument(parsing: Array(#"{"tab":"a","index":2}"#.utf8))
        try withExtendedLifetime(doc) {
            let fields: Fields = ["tab", "index", "if_seq"]
            let p = try Params(doc.root).reading(fields)
            #expect(p[name: String("in") + "dex"]?.intValue == 2)
            #expect(try p.requiredString(name: "t" + String("ab")) == "a")
            #expect(p[name: "if_seq"] == nil && p[name: "other"] == nil && p["other"] == nil)
            #expect(!p.has(name: "if_" + "seq") && p.has("tab"))
        }
    }

    /// Slots belong to the text they were read from: after the document reads another line,
    /// params of the new line are read by walking until they are read by their fields.
    @Test func slotsAreForgottenWithTheirText() throws {
        let doc = JSONDocument()
        try doc.parse(Array(#"{"index":2,"tab":"a"}"#.utf8))
        let fields: Fields = ["tab", "index"]
        _ = try Params(doc.root).reading(fields)
        try doc.parse(Array(#"{"tab":"b","index":5}"#.utf8))
        try withExtendedLifetime(doc) {
            let p = try Params(doc.root)
            #expect(p["index"]?.intValue == 5 && p["tab"]?.stringValue == "b")
        }
    }
}
