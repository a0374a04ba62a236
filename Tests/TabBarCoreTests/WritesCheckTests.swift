import Testing
@testable import TabBarCore

/// The group check is part of the journal's format: a journal written before must still
/// replay, so its values are pinned (computed by the code that wrote the first grouped
/// journals), whole and fed in pieces of every size.
@Suite struct WritesCheckTests {
    static let line = #"{"seq":100001,"method":"tab.select","params":{"index":1,"source":"program"}}"# + "\n"
    static let cases: [(bytes: [UInt8], seq: UInt64, entries: Int, check: UInt64)] = [
        ([], 0, 0, 0x0063_ab23_4c52_252e),
        (Array(line.utf8), 100_001, 1, 0x7690_d94a_5973_9863),
        (Array((String(repeating: line, count: 3) + "x").utf8), 100_003, 3, 0x39be_5318_98e2_226a),
    ]

    @Test func theCheckOfKnownBytesIsWhatTheJournalHolds() {
        for c in Self.cases {
            #expect(c.bytes.withUnsafeBytes { JournalGroup.check(seq: c.seq, entries: c.entries, body: $0) } == c.check)
            for piece in 1...40 {
                var k = JournalCheck(seq: c.seq, entries: c.entries)
                var i = 0
                while i < c.bytes.count {
                    let j = min(c.bytes.count, i + piece)
                    c.bytes[i..<j].withUnsafeBytes { k.update($0) }
                    i = j
                }
                #expect(k.value == c.check, "pieces of \(piece)")
            }
        }
    }

    /// A group's header carries that check, as the old code wrote it, and reads back.
    @Test func aGroupOfKnownBytesHasTheHeaderItHad() {
        let lines = Array(String(repeating: Self.line, count: 3).utf8)
        let group = JournalGroup.group(seq: 100_001, entries: 3, lines: lines)
        let header = Array(group.prefix(while: { $0 != 0x0A }))
        #expect(String(decoding: header, as: UTF8.self)
                == #"{"journal":2,"seq":100001,"entries":3,"bytes":231,"check":"198b967a4d774476"}"#)
        #expect(header.withUnsafeBufferPointer { JournalGroup.parseHeader($0) }
                == JournalGroup.Header(seq: 100_001, entries: 3, bytes: 231, check: 0x198b_967a_4d77_4476))
    }
}
