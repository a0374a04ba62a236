import Foundation
import Testing
import TabBarCore
@testable import TabBarServer

/// A method the envelope does not find in the table by its bytes — its name written with
/// escapes — is found by its decoded name (`Server.handle`'s fallback: a `Request` holds a
/// known method by its index only), and what it journals names it as the table does.
@Suite(.serialized) struct RequestValuesTests {
    @Test func aMethodNamedWithEscapesIsTheSameMethodAndJournalsItsOwnName() throws {
        let r = try TurnCommitTests.Rig(subscribed: false)
        r.send(#"{"jsonrpc":"2.0","id":1,"method":"badge\u002eset","params":{"tab":"me","count":4}}"#, from: r.a)
        r.send(#"{"jsonrpc":"2.0","id":2,"method":"badge.set","params":{"tab":"me","count":5}}"#, from: r.a)
        r.send(#"{"jsonrpc":"2.0","id":3,"method":"no\u002esuch"}"#, from: r.a)
        r.server.endTurn(now: MonotonicClock.nanoseconds())
        let replies = r.lines(r.a).filter { $0["id"] != nil }
        #expect(replies.count == 3)
        #expect(replies.first?["result"]?["seq"] != nil)
        #expect(replies.dropFirst().first?["result"]?["seq"] != nil)
        #expect(replies.last?["error"]?["message"]?.stringValue == #"There is no method "no.such". See docs/PROTOCOL.md for the list."#)
        let journal = try String(contentsOfFile: r.server.store.journalPath, encoding: .utf8)
        #expect(journal.contains(#""method":"badge.set","params":{"tab":"me","count":4}"#))
        #expect(journal.contains(#""method":"badge.set","params":{"tab":"me","count":5}"#))
        #expect(!journal.contains(#"\u002e"#))
    }
}
