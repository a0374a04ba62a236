import Foundation
import Glibc
import Testing
import TabBarCore

/// The journal is written once per read chunk (group commit); these pin down that
/// pipelined changes are still durable before acknowledged, and that a failed write
/// refuses exactly the changes of its group, whose events and sounds never go out.
@Suite(.serialized) struct GroupCommitTests {
    @Test func pipelinedChangesAreAllDurableBeforeTheirReplies() throws {
        let d = try Daemon()
        let c = try RawClient(path: d.socket)
        var lines = ""
        for k in 1...50 {
            lines += #"{"jsonrpc":"2.0","id":\#(k),"method":"badge.set","params":{"tab":"chat","count":\#(k)}}"# + "\n"
        }
        try c.send(lines)  // one write: the daemon reads them as one chunk (or a few)
        var seqs: [Int] = []
        for k in 1...50 {
            let r = try #require(try c.readJSON())
            #expect(r["id"] == .int(k))
            seqs.append(r["result"]?["seq"]?.intValue ?? -1)
        }
        #expect(seqs == Array(1...50))
        // stats.get shows the grouping: 50 entries, fewer writes (one per loop turn).
        let journal = try c.call("stats.get")["result"]?["journal"]
        #expect(journal?["appends"] == .int(50))
        let writes = journal?["writes"]?.intValue ?? 0
        #expect(writes >= 1 && writes < 50, "\(writes) journal writes for 50 changes sent in one write")
        d.kill9()
        let again = try Daemon(dir: d.dir)
        defer { #expect(again.stop() == 0) }
        let st = try RawClient(path: again.socket).call("state.get")["result"]
        #expect(st?["seq"] == .int(50))
        guard case .array(let items)? = st?["state"]?["items"] else { Issue.record("no items"); return }
        #expect(items[3]["badge"]?["value"] == .int(50))
    }

    @Test func aFailedJournalWriteRefusesItsGroupAndSendsNoEvents() throws {
        let d = try Daemon()
        defer { d.stop() }
        // Nothing has been journaled yet, so the daemon opens the journal at the first
        // change: make that the full device.
        let journal = d.state + ".journal"
        unlink(journal)
        let linked = symlink("/dev/full", journal)
        #expect(linked == 0, "symlink(/dev/full, \(journal)): \(String(cString: strerror(errno)))")

        let watcher = try RawClient(path: d.socket)
        _ = try watcher.call("subscribe")
        let c = try RawClient(path: d.socket)
        try c.send(#"{"jsonrpc":"2.0","id":1,"method":"tab.select","params":{"tab":"me"}}"# + "\n"
                   + #"{"jsonrpc":"2.0","id":2,"method":"badge.set","params":{"tab":"chat","count":3}}"# + "\n"
                   + #"{"jsonrpc":"2.0","id":3,"method":"ping"}"# + "\n"
                   + #"{"jsonrpc":"2.0","id":4,"method":"state.get"}"# + "\n")
        var replies: [JSON] = []
        for _ in 1...4 { replies.append(try #require(try c.readJSON())) }
        #expect(replies.map { $0["id"] } == [.int(1), .int(2), .int(3), .int(4)])
        #expect(replies[0]["error"]?["data"]?["kind"] == .string("storage_failed"))
        #expect(replies[1]["error"]?["data"]?["kind"] == .string("storage_failed"))
        #expect(replies[2]["result"] == .obj([:]))
        let st = replies[3]["result"]
        #expect(st?["seq"] == .int(0))
        #expect(st?["state"]?["selected"] == .string("home"))
        // The refused changes were never announced: the watcher's next line is its own reply
        // (an event of the group would have been queued to it before the group's answers).
        try watcher.send(#"{"jsonrpc":"2.0","id":99,"method":"ping"}"# + "\n")
        #expect(try watcher.readJSON()?["id"] == .int(99))
        let stats = try c.call("stats.get")["result"]
        #expect(stats?["seq"] == .int(0))
    }
}
