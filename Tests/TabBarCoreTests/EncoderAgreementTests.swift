import Foundation
import Testing
@testable import TabBarCore
import TabBarTesting

/// The typed encoders (`Wire.reply`, `Reply.writeLine`, `BarEvent.write`, `Persistence.journalLine`)
/// write each line with one reservation and unchecked pieces after it. Against a reference —
/// the same line built as a `JSON` tree and encoded by `JSON.write`, the encoder every line
/// went through before — over seeded random values: ids with escapes, non-ASCII and past
/// every short-copy length, previous tabs present or not, seqs of every digit count, request
/// ids of every shape, after bytes already queued and across buffer growth. Byte for byte;
/// debug builds also assert that no piece is written past the room reserved for it. The
/// seed is printed on a failure (`ENCODER_SEED` repeats a run).
@Suite struct EncoderAgreementTests {
    static let seed = UInt64(ProcessInfo.processInfo.environment["ENCODER_SEED"] ?? "") ?? 0xE2C0_DE17

    static func text(_ rng: inout SplitMix64) -> String {
        let pieces = ["home", "a", "x", "é", "€", "\"", "\\", "\u{01}", "\u{7F}", "\n", "tab", "🙂", "_", "0"]
        var s = ""
        for _ in 0..<rng.int(rng.chance(0.2) ? 70 : 20) { s += rng.pick(pieces) }
        return s
    }

    static func seq(_ rng: inout SplitMix64) -> UInt64 {
        if rng.chance(0.05) { return UInt64.max - UInt64(rng.int(3)) }
        let digits = 1 + rng.int(20)
        var v: UInt64 = 0
        for _ in 0..<digits { v = v &* 10 &+ UInt64(rng.int(10)) }
        return v
    }

    static func requestID(_ rng: inout SplitMix64) -> (RequestID, JSON) {
        switch rng.int(3) {
        case 0: let n = Int(rng.next() >> UInt64(1 + rng.int(63))); return (.int(n), .int(n))
        case 1: let s = text(&rng); return (.string(s), .string(s))
        default: return (.number("1e2"), .number("1e2"))
        }
    }

    static func reference(id: JSON, result: JSON) -> [UInt8] {
        JSON.object([JSON.Member("jsonrpc", .string("2.0")), JSON.Member("id", id), JSON.Member("result", result)]).encoded() + [0x0A]
    }

    /// What `body` appends after `before` bytes already in a small buffer (so that it grows).
    static func written(after before: Int, _ body: (inout ByteBuffer) -> Void) -> [UInt8] {
        var o = ByteBuffer(capacity: 8)
        defer { o.free() }
        for _ in 0..<before { o.append(UInt8(ascii: ".")) }
        body(&o)
        return Array(o.array.dropFirst(before))
    }

    @Test func repliesAndJournalLinesAgreeWithTheTreeEncoder() {
        var rng = SplitMix64(seed: Self.seed)
        var differences = 0
        func check(_ got: [UInt8], _ want: [UInt8], _ what: String) {
            guard got != want else { return }
            differences += 1
            if differences <= 5 {
                Issue.record("seed \(Self.seed): \(what): \(String(decoding: got, as: UTF8.self)) ≠ \(String(decoding: want, as: UTF8.self))")
            }
        }
        for k in 0..<3000 {
            let (id, idJSON) = Self.requestID(&rng)
            let seq = Self.seq(&rng)
            let tab = Self.text(&rng)
            let previous: String? = rng.chance(0.3) ? nil : Self.text(&rng)
            let before = rng.int(40)
            let prev: JSON = previous.map { .string($0) } ?? .null

            let reselected = rng.chance(0.5)
            let selected = Reply.selected(seq: seq, tab: QuotedText(tab), previous: previous.map(QuotedText.init), reselected: reselected)
            check(Self.written(after: before) { Wire.reply(id: id, .success(selected), into: &$0) },
                  Self.reference(id: idJSON, result: .object([JSON.Member("seq", .int(seq)), JSON.Member("selected", .string(tab)),
                                                              JSON.Member("previous", prev), JSON.Member("reselected", .bool(reselected))])),
                  "selected \(k)")

            let commit: Commit? = rng.chance(0.25) ? nil : rng.pick([.select, .reselect, .action])
            let ignored = rng.chance(0.3), consumed = rng.chance(0.5)
            var members = [JSON.Member("seq", .int(seq)), JSON.Member("target", previous.map { .string($0) } ?? .null),
                           JSON.Member("consumed", .bool(consumed)), JSON.Member("commit", commit.map { .string($0.rawValue) } ?? .null)]
            if ignored { members.append(JSON.Member("ignored", .bool(true))) }
            let touch = Reply.touch(seq: seq, target: previous.map(QuotedText.init), consumed: consumed, commit: commit, ignored: ignored)
            check(Self.written(after: before) { Wire.reply(id: id, .success(touch), into: &$0) },
                  Self.reference(id: idJSON, result: .object(members)), "touch \(k)")

            check(Self.written(after: before) { Wire.reply(id: id, .success(.seq(seq)), into: &$0) },
                  Self.reference(id: idJSON, result: .object([JSON.Member("seq", .int(seq))])), "seq \(k)")

            // Journal lines: a request's params as given, and what an outcome records instead.
            let method = rng.pick(["tab.select", "touch", "badge.set", Self.text(&rng)])
            let params: JSON? = rng.chance(0.2) ? nil : .object([JSON.Member("tab", .string(tab)), JSON.Member("n", .int(seq))])
            let paramsBytes = params?.encoded()
            var lineMembers = [JSON.Member("seq", .int(seq)), JSON.Member("method", .string(method))]
            if let params { lineMembers.append(JSON.Member("params", params)) }
            check(Self.written(after: before) { o in
                      if let paramsBytes {
                          paramsBytes.withUnsafeBufferPointer { Persistence.journalLine(seq: seq, method: QuotedText(method), params: $0, into: &o) }
                      } else {
                          Persistence.journalLine(seq: seq, method: QuotedText(method), params: nil, into: &o)
                      }
                  },
                  JSON.object(lineMembers).encoded() + [0x0A], "journal line \(k)")

            let source: Source = rng.chance(0.5) ? .user : .program
            let entry: JournalEntry
            let entryJSON: [JSON.Member]
            switch rng.int(4) {
            case 0:
                entry = .select(tab: QuotedText(tab), source: source)
                entryJSON = [JSON.Member("method", .string("tab.select")),
                             JSON.Member("params", .object([JSON.Member("tab", .string(tab)), JSON.Member("source", .string(source.rawValue))]))]
            case 1:
                entry = .actionTrigger(tab: QuotedText(tab), source: source)
                entryJSON = [JSON.Member("method", .string("action.trigger")),
                             JSON.Member("params", .object([JSON.Member("tab", .string(tab)), JSON.Member("source", .string(source.rawValue))]))]
            case 2:
                let hidden = rng.chance(0.5), reason = rng.pick(HideReason.allCases)
                entry = .setHidden(hidden, reason: reason)
                entryJSON = [JSON.Member("method", .string("bar.set_hidden")),
                             JSON.Member("params", .object([JSON.Member("hidden", .bool(hidden)), JSON.Member("reason", .string(reason.rawValue))]))]
            default:
                entry = .touchHighlight
                entryJSON = [JSON.Member("method", .string("touch.highlight"))]
            }
            check(Self.written(after: before) { Persistence.journalLine(seq: seq, entry, into: &$0) },
                  JSON.object([JSON.Member("seq", .int(seq))] + entryJSON).encoded() + [0x0A], "journal entry \(k)")

            // Events (their params object, and the whole line once).
            let event = BarEvent.tabSelected(seq: seq, tab: QuotedText(tab), previous: previous.map(QuotedText.init), source: source)
            check(Self.written(after: before) { event.write(into: &$0) },
                  JSON.object([JSON.Member("jsonrpc", .string("2.0")), JSON.Member("method", .string("tab.selected")),
                               JSON.Member("params", .object([JSON.Member("seq", .int(seq)), JSON.Member("tab", .string(tab)),
                                                              JSON.Member("previous", prev), JSON.Member("source", .string(source.rawValue))]))]).encoded() + [0x0A],
                  "tab.selected \(k)")
            let line: (String, [JSON.Member]) -> [UInt8] = { method, params in
                JSON.object([JSON.Member("jsonrpc", .string("2.0")), JSON.Member("method", .string(method)),
                             JSON.Member("params", .object([JSON.Member("seq", .int(seq)), JSON.Member("tab", .string(tab))] + params))]).encoded() + [0x0A]
            }
            check(Self.written(after: before) { BarEvent.tabReselected(seq: seq, tab: QuotedText(tab), source: source).write(into: &$0) },
                  line("tab.reselected", [JSON.Member("source", .string(source.rawValue))]), "tab.reselected \(k)")
            let phase = rng.pick(HighlightPhase.allCases)
            check(Self.written(after: before) { BarEvent.tabHighlighted(seq: seq, tab: QuotedText(tab), phase: phase).write(into: &$0) },
                  line("tab.highlighted", [JSON.Member("phase", .string(phase.rawValue))]), "tab.highlighted \(k)")
        }
        #expect(differences == 0, "seed \(Self.seed): \(differences) lines differ")
    }
}
