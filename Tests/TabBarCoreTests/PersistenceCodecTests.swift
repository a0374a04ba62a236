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
            Persistence.journalLine(seq: r.state.seq, method: method, params: p, into: &journal)
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
