@preconcurrency import Glibc
import Testing
import TabBarCore
@testable import TabBarServer

/// One server in a temporary directory and a client connection to feed it lines, in process.
final class LineRig {
    let dir: String
    let server: Server
    let client: Connection
    var fds: [Int32] = []

    init() throws {
        dir = Rigs.tempDir("tabbard-lines")
        server = try Rigs.server(in: dir, name: "server")
        let conns: [Connection]
        (conns, fds) = Rigs.connections(1)
        client = conns[0]
    }

    deinit {
        for fd in fds { close(fd) }
        server.store.syncNow()
        _ = system("rm -rf '\(dir)'")
    }

    /// Feeds `line`, commits the group, and returns what the client was sent.
    @discardableResult
    func check(_ line: String) -> String {
        server.feed(line, from: client)
        server.commitBatch()
        let reply = String(decoding: client.out.bytes, as: UTF8.self)
        client.out.removeAll()
        return reply
    }
}
