@preconcurrency import Glibc
import TabBarCore
@testable import TabBarServer

/// What the in-process server tests share: a fresh directory, a server on it with the
/// null sink and no compaction, and connections over socket pairs (the test holds the
/// other ends, `fds`, in pairs: ours, the peer's).
enum Rigs {
    static func tempDir(_ prefix: String) -> String {
        var t = Array("/tmp/\(prefix).XXXXXX".utf8CString)
        return t.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
    }

    static func server(in dir: String, name: String = "s", sounds: [String] = []) throws -> Server {
        var cfg = ServerConfig(socketPath: "\(dir)/\(name).sock", statePath: "\(dir)/\(name)/state.json", soundDirs: sounds)
        cfg.audio = .null
        cfg.compactEvery = 1 << 30
        return try Server(config: cfg)
    }

    static func connections(_ n: Int) -> (conns: [Connection], fds: [Int32]) {
        var conns: [Connection] = [], fds: [Int32] = []
        for k in 0..<n {
            var sv: [Int32] = [0, 0]
            socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &sv)
            fds += sv
            conns.append(Connection(fd: sv[0], id: UInt64(k + 1), maxLine: 65536))
        }
        return (conns, fds)
    }
}

extension Server {
    /// Feeds one line from `c` as read at `readNs`, as `Transport.read` hands lines on.
    func feed(_ line: String, from c: Connection, readNs: UInt64 = MonotonicClock.nanoseconds()) {
        Array(line.utf8).withUnsafeBufferPointer { received(.line($0), from: c, readNs: readNs) }
    }

    /// Commits and delivers what is staged; false when the journal write refused it.
    @discardableResult
    func commitBatch() -> Bool { deliverStaged() }

    var reducer: Reducer { committer.reducer }
}
