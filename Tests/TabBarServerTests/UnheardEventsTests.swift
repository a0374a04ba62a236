@preconcurrency import Glibc
import Testing
import TabBarCore
@testable import TabBarServer

/// Events while nobody subscribed: `stats.get` counts them as if they had been heard, a
/// refused group's not at all, and a client that subscribes gets the events of every change
/// after its `subscribe` reply.
@Suite(.serialized) struct UnheardEventsTests {
    /// `TurnCommitTests`' rig: clients `a` and `b`, and `sub` (not subscribed here unless asked).
    typealias Rig = TurnCommitTests.Rig

    /// Changes of several methods, one group: 6 events (a touch's down highlights; its up
    /// ends the highlight and selects).
    static func changes(_ r: Rig) {
        r.send(#"{"jsonrpc":"2.0","id":1,"method":"tab.select","params":{"tab":"chat"}}"#, from: r.a)
        r.send(#"{"jsonrpc":"2.0","id":2,"method":"badge.set","params":{"tab":"me","count":4}}"#, from: r.a)
        r.send(#"{"jsonrpc":"2.0","id":3,"method":"touch","params":{"phase":"down","x":30,"y":20}}"#, from: r.a)
        r.send(#"{"jsonrpc":"2.0","id":4,"method":"touch","params":{"phase":"up","x":30,"y":20}}"#, from: r.a)
        r.send(#"{"jsonrpc":"2.0","id":5,"method":"feedback.set","params":{"volume":0.5}}"#, from: r.a)
    }

    @Test func eventsNobodyReadsAreCountedAsPublishedOnes() throws {
        let deaf = try Rig(subscribed: false)
        Self.changes(deaf)
        deaf.server.commitBatch()

        let heard = try Rig()
        Self.changes(heard)
        heard.server.commitBatch()

        let published = heard.lines(heard.sub).compactMap { $0["method"]?.stringValue }
        #expect(published == ["tab.selected", "badge.changed", "tab.highlighted", "tab.highlighted", "tab.selected", "feedback.changed"])
        #expect(heard.server.stats.events == published.count)
        #expect(deaf.server.stats.events == published.count)
        #expect(deaf.lines(deaf.a) == heard.lines(heard.a), "the replies differ")
        #expect(deaf.server.reducer.state == heard.server.reducer.state)
    }

    @Test func aRefusedGroupsEventsAreNotCounted() throws {
        let r = try Rig(subscribed: false)
        r.server.store.syncNow()
        unlink(r.server.store.journalPath)
        #expect(symlink("/dev/full", r.server.store.journalPath) == 0)
        r.server.store.closeJournalForTests()
        Self.changes(r)
        #expect(!r.server.commitBatch())
        #expect(r.server.stats.events == 0)
    }

    /// A change staged while nobody listened, then a `subscribe` in the same turn (which
    /// commits the group first), then a change: the new subscriber gets the second one's event.
    @Test func aSubscriberGetsEveryChangeAfterItsSubscribeReply() throws {
        let r = try Rig(subscribed: false)
        r.send(#"{"jsonrpc":"2.0","id":1,"method":"tab.select","params":{"tab":"chat"}}"#, from: r.a)
        r.send(#"{"jsonrpc":"2.0","id":9,"method":"subscribe"}"#, from: r.sub)
        r.send(#"{"jsonrpc":"2.0","id":2,"method":"tab.select","params":{"tab":"me"}}"#, from: r.a)
        r.server.commitBatch()
        let got = r.lines(r.sub)
        #expect(got.count == 2)
        #expect(got.first?["result"]?["seq"] == .int(1))
        #expect(got.last?["method"] == .string("tab.selected"))
        #expect(got.last?["params"]?["seq"] == .int(2))
        #expect(got.last?["params"]?["previous"] == .string("chat"))
        #expect(r.server.stats.events == 2)
    }
}
