@preconcurrency import Glibc
import Foundation
import Testing
import TabBarCore
@testable import TabBarServer

/// A group's answers are staged in runs, one per stretch of answers to one connection
/// (`Batch.Run`): the connection is counted once per run, not once per answer. These check
/// the edges of that: a connection dropped while its answers are staged, and runs that
/// come back to a connection.
@Suite(.serialized) struct ServerGroupRunsTests {
    static func select(_ id: Int, _ tab: String) -> String {
        #"{"jsonrpc":"2.0","id":\#(id),"method":"tab.select","params":{"tab":"\#(tab)"}}"#
    }

    static let turn = MonotonicClock.nanoseconds()

    /// Feeds `line` as read at `readNs` (one loop turn's reads share the turn's time: `readFrom`).
    static func send(_ server: Server, _ line: String, from c: Connection, readNs: UInt64 = turn) {
        server.work.lineReadNs = readNs
        Array(line.utf8).withUnsafeBufferPointer { server.handle(.line($0), from: c) }
    }

    static func ids(_ c: Connection) -> [JSON?] {
        String(decoding: c.out.bytes, as: UTF8.self).split(separator: "\n").map { (try? JSON.parse(String($0)))?["id"] }
    }

    /// A client that hangs up while its changes are staged: the group keeps its connection
    /// alive until it is closed (nothing is written to it), and everyone else is answered.
    @Test func aConnectionDroppedInAnOpenGroupIsKeptUntilTheGroupCloses() throws {
        let dir = Rigs.tempDir("tabbard-runs")
        defer { _ = system("rm -rf '\(dir)'") }
        let server = try Rigs.server(in: dir)
        var (conns, fds) = Rigs.connections(2)
        let other = conns[1]
        weak var gone: Connection?
        do {
            let leaving = conns.removeFirst()
            gone = leaving
            server.clients.add(leaving)
            Self.send(server, Self.select(1, "chat"), from: leaving)
            Self.send(server, Self.select(2, "me"), from: other)
            Self.send(server, Self.select(3, "nearby"), from: leaving)
            server.drop(leaving)  // (closes its descriptor: not ours to close again)
            fds.removeFirst()
        }
        defer { for fd in fds { close(fd) } }
        #expect(gone != nil, "the open group holds the dropped connection")
        #expect(gone?.closed == true)
        #expect(server.commitBatch())
        #expect(gone == nil, "freed once its group is closed")
        #expect(Self.ids(other) == [.int(2)])
        #expect(server.reducer.state.selected == "nearby")
        server.store.syncNow()
    }

    /// Runs that come back to a connection (a, a, b, a): each answer is queued on its own
    /// connection, in order.
    @Test func runsThatComeBackToAConnectionAnswerInOrder() throws {
        let dir = Rigs.tempDir("tabbard-runs")
        defer { _ = system("rm -rf '\(dir)'") }
        let server = try Rigs.server(in: dir)
        let (conns, fds) = Rigs.connections(2)
        defer { for fd in fds { close(fd) } }
        let (a, b) = (conns[0], conns[1])
        Self.send(server, Self.select(1, "chat"), from: a)
        Self.send(server, Self.select(2, "me"), from: a)
        Self.send(server, Self.select(3, "nearby"), from: b)
        Self.send(server, Self.select(4, "home"), from: a)
        #expect(server.batch.runs.count == 3)
        #expect(server.commitBatch())
        #expect(server.batch.runs.isEmpty)
        #expect(Self.ids(a) == [.int(1), .int(2), .int(4)])
        #expect(Self.ids(b) == [.int(3)])
        server.store.syncNow()
    }

    /// Lines of one connection read at two times (two reads framed in one group, as when a
    /// paused client is resumed): two runs, each answer's latency from its own read.
    @Test func aRunKeepsTheReadTimeOfItsLines() throws {
        let dir = Rigs.tempDir("tabbard-runs")
        defer { _ = system("rm -rf '\(dir)'") }
        let server = try Rigs.server(in: dir)
        let (conns, fds) = Rigs.connections(1)
        defer { for fd in fds { close(fd) } }
        let now = MonotonicClock.nanoseconds()
        for (id, tab, readNs) in [(1, "chat", now - 300_000_000), (2, "me", now - 300_000_000), (3, "nearby", now)] {
            server.work.lineReadNs = readNs
            Array(Self.select(id, tab).utf8).withUnsafeBufferPointer { server.handle(.line($0), from: conns[0]) }
        }
        #expect(server.batch.runs.count == 2)
        #expect(server.commitBatch())
        #expect(Self.ids(conns[0]) == [.int(1), .int(2), .int(3)])
        #expect(server.stats.handling.count == 3)
        #expect(server.stats.handling.max >= 300_000_000, "the first two were read 300 ms before")
        #expect(server.stats.handling.max < 10_000_000_000)
        server.store.syncNow()
    }

    /// A group's effects run once its write succeeded, from one group to the next (their
    /// list is handed back and reused); a refused group's effects never run.
    @Test func aGroupsEffectsRunOnlyOnceItIsWritten() throws {
        let sounds = try #require(ProcessInfo.processInfo.environment["TABBARD_SOUNDS_DIR"], "run as the Makefile does")
        let dir = Rigs.tempDir("tabbard-runs")
        defer { _ = system("rm -rf '\(dir)'") }
        let server = try Rigs.server(in: dir, sounds: [sounds])
        let (conns, fds) = Rigs.connections(1)
        defer { for fd in fds { close(fd) } }
        var id = 0
        func taps(_ n: Int) {
            server.work.lineReadNs = MonotonicClock.nanoseconds()
            for k in 0..<n {
                for phase in ["down", "up"] {
                    id += 1
                    let line = #"{"jsonrpc":"2.0","id":\#(id),"method":"touch","params":{"phase":"\#(phase)","x":\#(k % 2 == 0 ? 112.5 : 37.5),"y":20}}"#
                    Array(line.utf8).withUnsafeBufferPointer { server.handle(.line($0), from: conns[0]) }
                }
            }
        }
        let played = server.stats.soundsPlayed
        taps(2)
        #expect(server.stats.soundsPlayed == played, "nothing runs before the write")
        #expect(server.commitBatch())
        #expect(server.stats.soundsPlayed - played == 2)
        taps(3)
        #expect(server.commitBatch())
        #expect(server.stats.soundsPlayed - played == 5, "the next group's effects run too")

        server.store.syncNow()
        unlink(server.store.journalPath)
        #expect(symlink("/dev/full", server.store.journalPath) == 0)
        server.store.closeJournalForTests()
        taps(2)
        #expect(!server.commitBatch())
        #expect(server.stats.soundsPlayed - played == 5, "a refused group's clicks are not played")
    }
}
