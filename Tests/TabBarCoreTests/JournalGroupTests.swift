import Testing
@testable import TabBarCore
import TabBarTesting

/// The journal's groups (format 2, `JournalGroup`): a journal file is reused, so replay
/// must stop where the new generation ends — even when a crash cut its last write short
/// and the bytes after the cut are the old generation's, of the same shape.
@Suite struct JournalGroupTests {
    /// A generation: the marker group, then one group per select (`{"index":K}`), starting
    /// from a state at `seq`. Returns its bytes, where each group ends, and the state after each.
    /// (Each select must change the selection: a tab, not the center item 2, not the one selected.)
    func generation(from start: Reducer, indices: [Int], marker: Bool = true) -> (bytes: [UInt8], ends: [Int], states: [BarState]) {
        var r = start
        var bytes = marker ? JournalGroup.group(seq: r.state.seq, entries: 0, lines: []) : []
        var ends: [Int] = [], states: [BarState] = []
        for k in indices {
            let before = r.state.seq
            _ = run(&r, "tab.select", #"{"index":\#(k)}"#)
            precondition(r.state.seq == before + 1, "select \(k) changed nothing")
            let line = journalLine(seq: r.state.seq, method: "tab.select", params: .obj(["index": .int(k)]))
            bytes += JournalGroup.group(seq: r.state.seq, entries: 1, lines: line)
            ends.append(bytes.count)
            states.append(r.state)
        }
        return (bytes, ends, states)
    }

    func replay(_ bytes: [UInt8], from start: Reducer, chunk: Int = 1 << 16) -> Persistence.Replayer {
        var replayer = Persistence.Replayer(start)
        var k = 0
        while k < bytes.count {
            replayer.feed(Array(bytes[k..<min(bytes.count, k + chunk)]))
            k += chunk
        }
        replayer.finish()
        return replayer
    }

    func reducer(atSeq seq: UInt64) -> Reducer {
        var r = Reducer()
        r.state.seq = seq
        return r
    }

    @Test func groupsReplayFedInAnyChunks() {
        let start = reducer(atSeq: 0)
        let gen = generation(from: start, indices: [3, 1, 4, 1, 0, 3])
        for size in [1, 2, 7, 64, 100, gen.bytes.count] {
            let r = replay(gen.bytes, from: start, chunk: size)
            #expect(r.bad == nil && r.ended == nil && !r.torn, "chunks of \(size)")
            #expect(r.applied == 6 && r.groups == 7 && r.goodBytes == gen.bytes.count)
            #expect(r.reducer.state == gen.states.last, "chunks of \(size)")
        }
    }

    /// The heart of reuse: a new generation written over an old one of exactly the same
    /// layout (same line lengths, same group lengths), cut at every byte. Replay applies the
    /// new generation's complete groups and nothing else — never an old entry, never a line
    /// stitched from the new one's start and the old one's end, which for many cuts is a
    /// readable entry with a new seq and an old index.
    @Test func aCutWriteOverAnOldGenerationAppliesOnlyCompleteNewGroups() throws {
        let old = generation(from: reducer(atSeq: 10), indices: (0..<40).map { [1, 3, 4, 0][$0 % 4] })
        let snapshot = reducer(atSeq: 50)  // the old generation is in the snapshot
        let new = generation(from: snapshot, indices: (0..<40).map { [4, 3, 1][$0 % 3] })
        try #require(new.bytes.count == old.bytes.count)
        var stitchedEntries = 0
        for cut in 0...new.bytes.count {
            let file = Array(new.bytes[..<cut] + old.bytes[cut...])
            let r = replay(file, from: snapshot)
            // Groups the file holds whole (past the cut, the old bytes may match the new for a while).
            let differs = (cut..<file.count).first { file[$0] != new.bytes[$0] } ?? file.count
            let complete = new.ends.filter { $0 <= differs }.count
            let expected = complete == 0 ? snapshot.state : new.states[complete - 1]
            #expect(r.bad == nil, "cut at \(cut): \(r.bad ?? "")")
            #expect(r.reducer.state == expected, "cut at \(cut)")
            #expect(r.applied == complete, "cut at \(cut)")
            // Would the line the cut falls in read as an entry without the groups' checks?
            let lineStart = (file[..<cut].lastIndex(of: 0x0A) ?? -1) + 1
            if let lineEnd = file[cut...].firstIndex(of: 0x0A), lineStart < cut,
               let json = try? JSON.parse(Array(file[lineStart..<lineEnd])), json["method"] != nil,
               let seq = json["seq"]?.intValue, seq > 50 {
                stitchedEntries += 1
            }
        }
        #expect(stitchedEntries > 100, "the test has to meet stitched entries to mean anything")
    }

    /// A new generation shorter than the old one, ending right where an old group starts:
    /// the old groups check out, but their seqs are lower, so they end the journal.
    @Test func oldGroupsAfterTheNewOnesAreNotReplayed() {
        let old = generation(from: reducer(atSeq: 10), indices: (0..<20).map { [1, 3, 4, 0][$0 % 4] })
        let new = generation(from: reducer(atSeq: 30), indices: [4, 3, 1])
        // Cut the old generation so that its next group starts right after the new one.
        let at = old.ends.first { $0 >= new.bytes.count }!
        let file = new.bytes + Array(old.bytes[at...])
        // Even from an empty state (a snapshot that is older than it should be), no old entry counts.
        let r = replay(file, from: reducer(atSeq: 30))
        #expect(r.bad == nil)
        #expect(r.ended == "a group older than the one before it")
        #expect(r.stopped, "the rest of the file need not be read")
        #expect(!r.endedInGroup)
        #expect(r.goodBytes == new.bytes.count)
        #expect(r.reducer.state == new.states.last)
    }

    /// One byte changed in a group in the middle: its check fails and a good group of a
    /// higher seq follows, so this is damage — `bad`, with the groups before it kept. The same
    /// change in the last group is a write cut short: the journal ends before it.
    @Test func damageIsToldFromACutWrite() throws {
        let start = reducer(atSeq: 0)
        let gen = generation(from: start, indices: [1, 4, 3, 4])
        let target = Array(#""index":4"#.utf8)
        var middle = gen.bytes
        let at = try #require(middle.indices.first { Array(middle[$0..<min(middle.count, $0 + target.count)]) == target })
        middle[at + target.count - 1] = UInt8(ascii: "0")  // still a readable entry: {"index":0}
        #expect(at > gen.ends[0] && at < gen.ends[1])
        let damaged = replay(middle, from: start)
        #expect(damaged.bad?.contains("and a good group after it (seq 3)") == true, "\(damaged.bad ?? "nil")")
        #expect(damaged.reducer.state == gen.states[0])
        #expect(damaged.goodBytes == gen.ends[0])

        var last = gen.bytes
        #expect(last[last.count - 4] == UInt8(ascii: "4"))
        last[last.count - 4] = UInt8(ascii: "0")  // the last entry's index
        let cut = replay(last, from: start)
        #expect(cut.bad == nil)
        #expect(cut.ended == "a group whose check does not match its bytes")
        #expect(cut.endedInGroup)
        #expect(cut.reducer.state == gen.states[2])
    }

    /// A journal written before groups (format 1) and continued in groups (an upgrade on a
    /// full disk, where the start-up snapshot failed) replays whole; and a file that stops in
    /// the middle of a group is torn.
    @Test func formatOneThenGroupsAndATornGroup() {
        var r = Reducer()
        var v1: [UInt8] = []
        for k in [1, 3] {
            _ = run(&r, "tab.select", #"{"index":\#(k)}"#)
            v1 += journalLine(seq: r.state.seq, method: "tab.select", params: .obj(["index": .int(k)]))
        }
        let gen = generation(from: r, indices: [4, 0], marker: false)
        let whole = replay(v1 + gen.bytes, from: Reducer())
        #expect(whole.bad == nil && whole.ended == nil && !whole.torn)
        #expect(whole.applied == 4)
        #expect(whole.reducer.state == gen.states.last)
        let torn = replay(v1 + gen.bytes.dropLast(5), from: Reducer())
        #expect(torn.torn)
        #expect(torn.applied == 3)
        #expect(torn.reducer.state == gen.states[0])
    }

    @Test func anEmptyGroupOnlyOpensAFile() {
        let start = reducer(atSeq: 0)
        let gen = generation(from: start, indices: [1])
        let r = replay(gen.bytes + JournalGroup.group(seq: 7, entries: 0, lines: []), from: start)
        #expect(r.ended == "an empty group after the start of the file")
        #expect(r.reducer.state == gen.states[0])
    }

    @Test func headersRoundTripAndOnlyTheirOwnSpellingIsRead() {
        for h in [JournalGroup.Header(seq: 0, entries: 0, bytes: 0, check: 0),
                  JournalGroup.Header(seq: .max, entries: Int.max, bytes: Int.max, check: .max),
                  JournalGroup.Header(seq: 12345, entries: 3, bytes: 240, check: 0x0123_4567_89ab_cdef)] {
            let bytes = JournalGroup.group(seq: h.seq, entries: h.entries, lines: []).dropLast()
            #expect(bytes.count <= JournalGroup.headerRoom)
            var expected = h
            expected.bytes = 0
            expected.check = [UInt8]().withUnsafeBytes { JournalGroup.check(seq: h.seq, entries: h.entries, body: $0) }
            #expect(Array(bytes).withUnsafeBufferPointer { JournalGroup.parseHeader($0) } == expected)
        }
        for bad in [#"{"journal":2,"seq":01,"entries":1,"bytes":2,"check":"0123456789abcdef"}"#,
                    #"{"journal":2,"seq":1,"entries":1,"bytes":2,"check":"0123456789ABCDEF"}"#,
                    #"{"journal":2,"seq":1,"entries":1,"bytes":2,"check":"0123456789abcde"}"#,
                    #"{"journal":2,"seq":1,"bytes":2,"entries":1,"check":"0123456789abcdef"}"#,
                    #"{"journal":2,"seq":99999999999999999999,"entries":1,"bytes":2,"check":"0123456789abcdef"}"#,
                    #"{"journal":2,"seq":1,"entries":1,"bytes":2,"check":"0123456789abcdef"} "#] {
            #expect(Array(bad.utf8).withUnsafeBufferPointer { JournalGroup.parseHeader($0) } == nil, "\(bad)")
        }
    }

    /// A journal damaged anywhere is told from a whole one: the check changes with any bit
    /// of the body, with its length, and with the header's numbers. (The check fed in
    /// pieces: WritesCheckTests.) The seed is printed on a failure (`TABBARD_TEST_SEED` sets it).
    @Test func theCheckSeesEveryByte() {
        let seed = TestSeed.value(default: 0xC4EC_4)
        var rng = SplitMix64(seed: seed)
        for n in [0, 1, 15, 16, 17, 31, 32, 33, 200] {
            let bytes = (0..<n).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            let whole = bytes.withUnsafeBytes { JournalGroup.check(seq: 5, entries: 2, body: $0) }
            for k in 0..<n {
                var other = bytes
                other[k] ^= 1 << UInt8(rng.int(8))
                #expect(other.withUnsafeBytes { JournalGroup.check(seq: 5, entries: 2, body: $0) } != whole, "seed \(seed): byte \(k) of \(n)")
            }
            #expect((bytes + [0]).withUnsafeBytes { JournalGroup.check(seq: 5, entries: 2, body: $0) } != whole, "seed \(seed): \(n) bytes")
            #expect(bytes.withUnsafeBytes { JournalGroup.check(seq: 6, entries: 2, body: $0) } != whole, "seed \(seed): \(n) bytes")
            #expect(bytes.withUnsafeBytes { JournalGroup.check(seq: 5, entries: 3, body: $0) } != whole, "seed \(seed): \(n) bytes")
        }
    }

    /// The check is the one every journal on disk was written with (values computed by an
    /// independent implementation of `JournalCheck`, which also verified a journal the daemon
    /// wrote): a faster way to compute it must give the same numbers.
    @Test func theCheckIsTheOneJournalsWereWrittenWith() {
        let body = Array(#"{"seq":7,"method":"tab.select","params":{"index":1,"source":"program"}}"#.utf8) + [0x0A]
            + Array(#"{"seq":8,"method":"touch.highlight"}"#.utf8) + [0x0A]
        #expect(body.count == 109)
        #expect(body.withUnsafeBytes { JournalGroup.check(seq: 8, entries: 2, body: $0) } == 0x6430_f9c6_0c47_8e3f)
        #expect([UInt8]().withUnsafeBytes { JournalGroup.check(seq: 0, entries: 0, body: $0) } == 0x0063_ab23_4c52_252e)
        let bytes = (0..<200).map { UInt8($0) }
        #expect(bytes.withUnsafeBytes { JournalGroup.check(seq: .max, entries: 3, body: $0) } == 0xec34_5f78_e1da_ad24)
    }
}
