@preconcurrency import Glibc
import Testing
import TabBarCore
@testable import TabBarServer

/// Group commit across clients: the changes several clients make in one loop turn are
/// journaled with one `write` before any of their replies or events can leave, and a
/// failed write refuses each of them on its own connection, in order.
@Suite(.serialized) struct TurnCommitTests {
    final class Rig {
        let dir: String
        let server: Server
        let a: Connection, b: Connection, sub: Connection
        var fds: [Int32] = []

        init(subscribed: Bool = true) throws {
            dir = Rigs.tempDir("tabbard-turn")
            server = try Rigs.server(in: dir)
            let conns: [Connection]
            (conns, fds) = Rigs.connections(3)
            (a, b, sub) = (conns[0], conns[1], conns[2])
            if subscribed {
                server.transport.subscribe(sub, topics: nil)
            }
        }

        deinit {
            for fd in fds { close(fd) }
            server.store.syncNow()
            _ = system("rm -rf '\(dir)'")
        }

        /// Feeds `line` as read at `readNs` (now unless given), as `readFrom` stamps a read.
        func send(_ line: String, from c: Connection, readNs: UInt64? = nil) {
            server.feed(line, from: c, readNs: readNs ?? MonotonicClock.nanoseconds())
        }

        /// What `c`'s peer has been sent: what reached its socket, then what is still queued.
        func lines(_ c: Connection) -> [JSON] {
            var bytes: [UInt8] = []
            if let k = fds.firstIndex(of: c.fd) {
                var buf = [UInt8](repeating: 0, count: 1 << 16)
                while case let n = recv(fds[k + 1], &buf, buf.count, Int32(MSG_DONTWAIT)), n > 0 { bytes += buf[0..<n] }
            }
            bytes += c.out.bytes[c.sent...]
            return String(decoding: bytes, as: UTF8.self).split(separator: "\n").map { (try? JSON.parse(String($0))) ?? .null }
        }
    }

    static func select(_ id: Int, _ tab: String) -> String {
        #"{"jsonrpc":"2.0","id":\#(id),"method":"tab.select","params":{"tab":"\#(tab)"}}"#
    }

    @Test func oneTurnOfSeveralClientsIsOneWrite() throws {
        let r = try Rig()
        r.send(Self.select(1, "chat"), from: r.a)                                                          // plain path
        r.send(#"{"jsonrpc":"2.0","id":2,"method":"badge.set","params":{"tab":"me","count":4}}"#, from: r.b)  // general path
        r.send(Self.select(3, "nearby"), from: r.a)
        // Staged, not written: nothing may leave yet.
        #expect(r.server.committer.hasStaged)
        #expect(r.server.store.writes == 0)
        r.server.endTurn(now: MonotonicClock.nanoseconds())
        #expect(!r.server.committer.hasStaged)
        #expect(r.server.store.writes == 1)
        #expect(r.server.store.appends == 3)
        #expect(r.lines(r.a).map { $0["result"]?["seq"] } == [.int(1), .int(3)])
        #expect(r.lines(r.b).map { $0["result"]?["seq"] } == [.int(2)])
        // The subscriber's events were flushed to its socket with the replies' turn.
        var buf = [UInt8](repeating: 0, count: 4096)
        let n = recv(r.fds[5], &buf, buf.count, Int32(MSG_DONTWAIT))
        #expect(String(decoding: buf[0..<max(0, n)], as: UTF8.self).split(separator: "\n").count == 3)
    }

    /// A subscriber that makes changes itself reads each change's event before its reply,
    /// in the order of the changes, when the group is published.
    @Test func aSubscribersOwnChangesComeEventThenReplyInOrder() throws {
        let r = try Rig()
        r.send(Self.select(1, "chat"), from: r.sub)
        r.send(#"{"jsonrpc":"2.0","id":2,"method":"badge.set","params":{"tab":"home","count":3}}"#, from: r.a)
        r.send(Self.select(3, "me"), from: r.sub)
        #expect(r.sub.out.bytes.isEmpty && r.a.out.bytes.isEmpty, "nothing before the group's write")
        r.server.commitBatch()
        let sub = r.lines(r.sub).map { $0["method"]?.stringValue ?? "reply \($0["id"]?.intValue ?? -1)" }
        #expect(sub == ["tab.selected", "reply 1", "badge.changed", "tab.selected", "reply 3"])
        #expect(r.lines(r.a).map { $0["id"] } == [.int(2)])
    }

    /// A client that hangs up while its changes are staged: its changes count, nothing is
    /// written to it, and everyone else is answered in order.
    @Test func aClientThatHangsUpWithStagedChangesLeavesTheOthersAnswered() throws {
        let r = try Rig()
        r.send(Self.select(1, "chat"), from: r.a)
        r.send(Self.select(2, "me"), from: r.b)
        r.send(Self.select(3, "nearby"), from: r.a)
        let fd = r.a.fd
        r.server.transport.drop(r.a)  // (closes its descriptor: not the rig's to close again)
        r.fds.removeAll { $0 == fd }
        #expect(r.server.commitBatch())
        #expect(r.lines(r.b).map { $0["id"] } == [.int(2)])
        #expect(r.server.reducer.state.selected == "nearby")
    }

    @Test func aFailedWriteRefusesEachClientsChangesOnItsOwnConnection() throws {
        let r = try Rig()
        r.send(Self.select(1, "chat"), from: r.a)
        r.server.commitBatch()
        for c in [r.a, r.b, r.sub] { c.out.removeAll() }
        r.server.store.syncNow()
        unlink(r.server.store.journalPath)
        #expect(symlink("/dev/full", r.server.store.journalPath) == 0)
        r.server.store.closeJournalForTests()

        r.send(Self.select(10, "me"), from: r.a)
        r.send(#"{"jsonrpc":"2.0","id":20,"method":"badge.set","params":{"tab":"home","count":1}}"#, from: r.b)
        r.send(Self.select(11, "nearby"), from: r.a)
        r.send(#"{"jsonrpc":"2.0","id":21,"method":"tab.select","params":{"index":0,"source":"user"}}"#, from: r.b)
        #expect(r.server.reducer.state.seq == 5)
        #expect(!r.server.commitBatch())

        let kinds = { (c: Connection) in r.lines(c).map { [$0["id"], $0["error"]?["data"]?["kind"]] } }
        #expect(kinds(r.a) == [[.int(10), .string("storage_failed")], [.int(11), .string("storage_failed")]])
        #expect(kinds(r.b) == [[.int(20), .string("storage_failed")], [.int(21), .string("storage_failed")]])
        #expect(r.sub.out.bytes.isEmpty, "events of refused changes went out")
        #expect(r.server.reducer.state.seq == 1)
        #expect(r.server.reducer.state.selected == "chat")
        #expect(r.server.reducer.state.items.allSatisfy { $0.badge == nil })
    }

    /// With nobody subscribed a group's events are not staged, only counted: `stats.get`'s
    /// `events` counts them once the group is written, as it counts published ones, and
    /// never those of a refused group; a client that subscribes then gets the next change's event.
    @Test func eventsNobodyListensToAreCountedOnceTheirGroupIsWritten() throws {
        let r = try Rig(subscribed: false)
        r.send(Self.select(1, "chat"), from: r.a)
        r.send(#"{"jsonrpc":"2.0","id":2,"method":"badge.set","params":{"tab":"me","count":4}}"#, from: r.b)
        #expect(r.server.stats.events == 0, "counted before the write")
        #expect(r.server.commitBatch())
        #expect(r.server.stats.events == 2)

        r.send(Self.select(3, "me"), from: r.a)
        r.send(#"{"jsonrpc":"2.0","id":4,"method":"subscribe"}"#, from: r.sub)
        #expect(r.server.stats.events == 3, "the change before the subscription was not committed first")
        r.send(Self.select(5, "nearby"), from: r.a)
        #expect(r.server.commitBatch())
        #expect(r.server.stats.events == 4)
        #expect(r.lines(r.sub).map { $0["method"]?.stringValue ?? "reply" } == ["reply", "tab.selected"])

        r.server.store.syncNow()
        unlink(r.server.store.journalPath)
        #expect(symlink("/dev/full", r.server.store.journalPath) == 0)
        r.server.store.closeJournalForTests()
        r.server.transport.unsubscribe(r.sub)
        r.send(Self.select(6, "chat"), from: r.a)
        #expect(!r.server.commitBatch())
        #expect(r.server.stats.events == 4, "a refused change's event was counted")
    }

    /// A request is stepped at the time its line was read (no clock read per request), a
    /// timer at the time it fires: an animation begun by a line read 3 s ago ends 3 s
    /// earlier than one begun by a line read now.
    @Test func aRequestIsSteppedAtTheTimeItsLineWasRead() throws {
        let r = try Rig()
        let now = MonotonicClock.nanoseconds()
        let begin = #"{"jsonrpc":"2.0","id":1,"method":"animation.begin","params":{"kind":"bounce","duration_ms":60000}}"#
        r.send(begin, from: r.a, readNs: now - 3_000_000_000)
        r.send(begin.replacingOccurrences(of: #""id":1"#, with: #""id":2"#), from: r.a, readNs: now)
        #expect(r.server.commitBatch())
        let due = r.server.timers.due.values.sorted()
        #expect(due.count == 2)
        #expect(due.count == 2 && due[1] - due[0] >= 2_999 && due[1] - due[0] <= 3_001, "\(due)")
        #expect(due.first.map { $0 == Int64((now - 3_000_000_000) / 1_000_000) + 60_000 } == true)
    }

    /// `stats.get`'s request latency ends where the reply is queued: for a change, after its
    /// group's journal write (not when it was staged), for an accepted change and a refused one alike.
    @Test func aChangesLatencyEndsWhenItsReplyIsQueued() throws {
        let r = try Rig()
        let wait = { (ns: UInt64) in let t = MonotonicClock.nanoseconds(); while MonotonicClock.nanoseconds() - t < ns {} }
        r.send(Self.select(1, "chat"), from: r.a)
        wait(200_000_000)  // the group waits for its write
        r.server.commitBatch()
        #expect(r.server.stats.handling.count == 1)
        #expect(r.server.stats.handling.max >= 200_000_000, "the latency was taken when the change was staged")

        r.server.store.syncNow()
        unlink(r.server.store.journalPath)
        #expect(symlink("/dev/full", r.server.store.journalPath) == 0)
        r.server.store.closeJournalForTests()
        r.server.stats.handling = LatencyRing()
        r.send(Self.select(2, "me"), from: r.b)
        wait(200_000_000)
        #expect(!r.server.commitBatch())
        #expect(r.server.stats.handling.count == 1, "a refused change has a latency too")
        #expect(r.server.stats.handling.max >= 200_000_000)
    }
}
