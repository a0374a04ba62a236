@preconcurrency import Glibc
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

    static func send(_ server: Server, _ line: String, from c: Connection) {
        server.work.lineReadNs = MonotonicClock.nanoseconds()
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
            server.clients.byFD[leaving.fd] = leaving
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
}
