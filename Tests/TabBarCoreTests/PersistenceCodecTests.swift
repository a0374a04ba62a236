import Testing
@testable import TabBarCore

/// The snapshot and journal codecs (`Persistence`): what a restart restores.
@Suite struct PersistenceCodecTests {
    /// Through a snapshot: encode, decode, settle — as the daemon restarts.
    func restart(_ r: Reducer) throws -> Reducer {
        let state = try Persistence.decodeSnapshot(Persistence.snapshot(r.state, limits: r.limits), limits: r.limits)
        var again = Reducer(state: state, limits: r.limits)
        again.settle()
        return again
    }

    @Test func aSnapshotRestoresTheState() throws {
        var r = Reducer()
        _ = run(&r, "tab.select", #"{"tab":"chat"}"#)
        _ = run(&r, "badge.set", #"{"tab":"me","text":"new"}"#)
        _ = run(&r, "feedback.set", #"{"profile":"quiet","volume":0.5}"#)
        #expect(try restart(r).state == Persistence.restored(r.state))
    }

    /// Found by the fuzzer: a bar hidden with `bar.set_hidden {"reason":"push"}` while a
    /// pushed screen also hides it lost the direct hold in a snapshot, so after a restart
    /// popping the screen showed the bar.
    @Test func aDirectPushHoldUnderAHidingScreenSurvivesARestart() throws {
        var r = Reducer()
        _ = run(&r, "bar.set_hidden", #"{"hidden":true,"reason":"push","animated":false}"#)
        _ = run(&r, "nav.push", #"{"hides_bar":true}"#)
        var again = try restart(r)
        #expect(again.state == Persistence.restored(r.state))
        _ = run(&again, "nav.pop")
        _ = run(&r, "nav.pop")
        #expect(r.state.visibility.hidden)
        #expect(again.state.visibility.hidden)
        #expect(again.state.visibility.reasons == [.push])
    }

    @Test func theJournalReplaysFedInAnyChunks() throws {
        var r = Reducer()
        var journal: [UInt8] = []
        for (method, params) in [("tab.select", #"{"tab":"chat"}"#), ("badge.set", #"{"tab":"me","count":120}"#),
                                 ("tab.select", #"{"index":4}"#), ("badge.clear", #"{"tab":"me"}"#)] {
            let p = try JSON.parse(params)
            _ = run(&r, method, params)
            journal += journalLine(seq: r.state.seq, method: method, params: p)
        }
        for size in [1, 2, 7, 64, journal.count] {
            var replayer = Persistence.Replayer(Reducer())
            var k = 0
            while k < journal.count {
                replayer.feed(Array(journal[k..<min(journal.count, k + size)]))
                k += size
            }
            #expect(replayer.bad == nil)
            #expect(!replayer.torn)
            #expect(replayer.applied == 4)
            #expect(replayer.reducer.state == r.state, "chunks of \(size)")
        }
    }

    @Test func aBadLineKeepsTheGoodPrefixAndItsLength() {
        let good = Array(#"{"seq":1,"method":"tab.select","params":{"tab":"chat"}}"#.utf8) + [0x0A]
        var replayer = Persistence.Replayer(Reducer())
        replayer.feed(good + Array("garbage\n".utf8) + good)
        #expect(replayer.bad != nil)
        #expect(replayer.good == 1)
        #expect(replayer.goodBytes == good.count)
        #expect(replayer.reducer.state.selected == "chat")
    }

    @Test func aTornTailIsReportedNotApplied() {
        var replayer = Persistence.Replayer(Reducer())
        replayer.feed(Array(#"{"seq":1,"method":"tab.select","params":{"tab":"chat"}}"#.utf8) + [0x0A] + Array(#"{"seq":2,"meth"#.utf8))
        #expect(replayer.bad == nil)
        #expect(replayer.torn)
        #expect(replayer.applied == 1)
    }
}

extension PersistenceCodecTests {
    /// Runs a request as the daemon does: reduce, then journal the change as the outcome says.
    func runJournaled(_ r: inout Reducer, _ journal: inout [UInt8], _ method: String, _ params: String) throws {
        let json = try JSON.parse(params)
        guard case .success(.state(let cmd)) = Methods.command(for: Request(id: .int(1), method: method, params: json), limits: r.limits) else {
            Issue.record("\(method) \(params) does not decode")
            return
        }
        let before = r.state.seq
        let out = r.reduce(cmd, at: 1000)
        if r.state.seq != before {
            journal += journalLine(seq: r.state.seq, entry: out.journal, method: method, params: json)
        }
    }

    /// Found by the fuzzer: touches were journaled as received, and a touch-up commits only
    /// after its touch-down (a transient tracker). A snapshot taken between the two (a
    /// compaction) made the replayed up commit nothing: the acknowledged selection was lost.
    @Test(arguments: ["up", "down"])
    func aTouchCommitSurvivesASnapshotBetweenDownAndUp(commitOn: String) throws {
        var r = Reducer()
        var journal: [UInt8] = []
        try runJournaled(&r, &journal, "bar.configure", #"{"settings":{"commit_on":"\#(commitOn)"}}"#)
        // "chat" is the fourth item: x 222.5…298.75 at the default layout.
        try runJournaled(&r, &journal, "touch", #"{"phase":"down","x":250,"y":10,"touch_id":1}"#)
        let snapshot = Persistence.snapshot(r.state, limits: r.limits)
        let offset = journal.count
        try runJournaled(&r, &journal, "touch", #"{"phase":"up","x":250,"y":10,"touch_id":1}"#)
        try runJournaled(&r, &journal, "touch", #"{"phase":"down","x":10,"y":10,"touch_id":2}"#)
        #expect(r.state.selected == (commitOn == "down" ? "home" : "chat"))
        let base = try Persistence.decodeSnapshot(snapshot, limits: r.limits)
        for (from, start) in [("the snapshot", base), ("the start", BarState.defaultBar)] {
            var replayer = Persistence.Replayer(Reducer(state: start))
            replayer.feed(from == "the snapshot" ? Array(journal[offset...]) : journal)
            #expect(Persistence.restored(replayer.reducer.state) == Persistence.restored(r.state), "replayed from \(from)")
        }
    }
}

extension PersistenceCodecTests {
    /// `click_on` is kept as the bar's other settings are: in the snapshot and in the journal
    /// line of the `bar.configure` that set it; a pressed touch replays as the select it made.
    @Test func clickOnPressIsKeptAndAPressedTouchReplaysItsCommit() throws {
        var r = Reducer()
        var journal: [UInt8] = []
        try runJournaled(&r, &journal, "bar.configure", #"{"settings":{"click_on":"press"}}"#)
        let snapshot = Persistence.snapshot(r.state, limits: r.limits)
        let offset = journal.count
        try runJournaled(&r, &journal, "touch", #"{"phase":"down","x":250,"y":10,"touch_id":1}"#)
        try runJournaled(&r, &journal, "touch", #"{"phase":"up","x":250,"y":10,"touch_id":1}"#)
        #expect(r.state.selected == "chat" && r.state.settings.clickOn == .press)
        let base = try Persistence.decodeSnapshot(snapshot, limits: r.limits)
        #expect(base.settings.clickOn == .press)
        for (from, start) in [("the snapshot", base), ("the start", BarState.defaultBar)] {
            var replayer = Persistence.Replayer(Reducer(state: start))
            replayer.feed(from == "the snapshot" ? Array(journal[offset...]) : journal)
            #expect(Persistence.restored(replayer.reducer.state) == Persistence.restored(r.state), "replayed from \(from)")
        }
    }
}

/// Found by the fuzzer: a touch whose up (or a new down elsewhere) only ended a finger
/// sequence whose highlight `tab.highlight` had already moved counted a `seq` and
/// published nothing — a gap in every subscriber's seqs.
@Suite struct TouchSeqTests {
    @Test func aTouchThatChangesNothingVisibleCountsNoSeq() throws {
        var r = Reducer()
        _ = run(&r, "touch", #"{"phase":"down","x":30,"y":5}"#, at: 0)
        _ = run(&r, "tab.highlight", #"{"tab":"chat","phase":"begin"}"#, at: 0)
        let seq = r.state.seq
        let up = run(&r, "touch", #"{"phase":"up","x":340,"y":5}"#, at: 0)
        #expect(up.events == [])
        #expect(r.state.seq == seq)
        #expect(up.value?["seq"] == .int(Int(seq)))
        // A down on an item already highlighted by tab.highlight: no new event, no seq.
        let down = run(&r, "touch", #"{"phase":"down","x":250,"y":5}"#, at: 0)
        #expect(down.events == [])
        #expect(r.state.seq == seq)
        // And the finger is still tracked: its up on the same item commits.
        let commit = run(&r, "touch", #"{"phase":"up","x":250,"y":5}"#, at: 0)
        #expect(commit.value?["commit"] == .string("select"))
        #expect(r.state.seq == seq + 1)
        #expect(r.state.selected == "chat")
    }
}
