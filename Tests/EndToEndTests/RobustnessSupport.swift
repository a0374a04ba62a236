import Foundation
import Glibc
import Testing
import TabBarCore

/// A fresh temporary directory.
func makeTempDir(_ prefix: String) throws -> String {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString.prefix(8))").path
    try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    return dir
}

/// Starts a daemon in a new directory with `config` (JSON text) as its `--config`.
func startDaemon(config: String? = nil, dir existing: String? = nil, extraArgs: [String] = [], prefix: String = "tabbard-robust") throws -> Daemon {
    let dir = try existing ?? makeTempDir(prefix)
    var args = extraArgs
    if let config {
        let path = dir + "/config.json"
        try Data(config.utf8).write(to: URL(fileURLWithPath: path))
        args += ["--config", path]
    }
    return try Daemon(extraArgs: args, dir: dir)
}

/// Polls `condition` every 5 ms until it holds or `timeout` seconds pass.
func waitUntil(_ what: String, timeout: Double = 10, _ condition: () throws -> Bool) throws {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if try condition() { return }
        usleep(5_000)
    }
    throw TestFailure("timed out after \(timeout) s waiting for \(what)")
}

/// Resident memory of a process in KiB (`VmRSS` in /proc/PID/status).
func residentKB(_ pid: Int32) -> Int {
    guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return -1 }
    for line in text.split(separator: "\n") where line.hasPrefix("VmRSS:") {
        return Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]) ?? -1
    }
    return -1
}

/// A bare connected socket (blocking), for tests that need many or odd connections.
func connectSocket(_ path: String) throws -> Int32 {
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    var addr = sockaddr_un()
    addr.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &addr.sun_path) { raw in
        for (k, b) in path.utf8.enumerated() { raw[k] = b }
    }
    let r = withUnsafePointer(to: &addr) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
    }
    if r != 0 {
        let e = errno
        close(fd)
        throw TestFailure("connect \(path): \(String(cString: strerror(e)))")
    }
    return fd
}

/// Everything a socket says until EOF (or `timeout`), as lines.
func readUntilEOF(_ fd: Int32, timeout: Double = 10) throws -> [String] {
    var data: [UInt8] = []
    let deadline = Date().addingTimeInterval(timeout)
    var chunk = [UInt8](repeating: 0, count: 65536)
    while true {
        let left = deadline.timeIntervalSinceNow
        if left <= 0 { throw TestFailure("no EOF within \(timeout) s; got \(String(decoding: data, as: UTF8.self))") }
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        if poll(&p, 1, Int32(left * 1000) + 1) == 0 { continue }
        let n = read(fd, &chunk, chunk.count)
        if n == 0 { break }
        if n < 0 {
            if errno == EINTR { continue }
            if errno == ECONNRESET { break }
            throw TestFailure("read: \(String(cString: strerror(errno)))")
        }
        data.append(contentsOf: chunk[..<n])
    }
    return String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: true).map(String.init)
}

extension RawClient {
    /// Reads the next line and fails unless it is exactly `expected`.
    func expectLine(_ expected: String, _ comment: String = "", sourceLocation: SourceLocation = #_sourceLocation) throws {
        let got = try readLine()
        #expect(got == expected, "\(comment)", sourceLocation: sourceLocation)
    }

    /// Reads until EOF (or a reset); fails on timeout. Returns the lines read.
    func readToEOF(timeout: Double = 10) throws -> [String] {
        var lines: [String] = []
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let left = deadline.timeIntervalSinceNow
            if left <= 0 { throw TestFailure("no EOF within \(timeout) s") }
            do {
                guard let l = try readLine(timeout: left) else { return lines }
                lines.append(l)
            } catch let e as TestFailure where e.description.contains("Connection reset") {
                return lines
            }
        }
    }
}

/// A daemon with a subscriber and a witness client, to prove that whatever a
/// hostile client does, nobody else notices: after the hostile input, a
/// sentinel change made by the witness must be the subscriber's very next
/// message, carrying exactly the next `seq`; and the daemon still takes new
/// connections.
final class Arena {
    let daemon: Daemon
    let subscriber: RawClient
    let witness: RawClient
    /// The `seq` only the sentinels move.
    private(set) var seq: Int
    private var sentinel = 1000

    init(config: String? = nil) throws {
        daemon = try startDaemon(config: config)
        subscriber = try RawClient(path: daemon.socket)
        let snap = try subscriber.call("subscribe")
        guard let s = snap["result"]?["seq"]?.intValue else { throw TestFailure("subscribe: \(snap.text)") }
        seq = s
        witness = try RawClient(path: daemon.socket)
    }

    var socket: String { daemon.socket }

    /// `stats.get` through the witness.
    func stats() throws -> JSON {
        guard let r = try witness.call("stats.get")["result"] else { throw TestFailure("stats.get failed") }
        return r
    }

    /// Waits until the daemon has exactly `n` clients (the subscriber and the witness are 2).
    func waitForClients(_ n: Int, timeout: Double = 10) throws {
        try waitUntil("\(n) clients", timeout: timeout) { try stats()["clients"]?.intValue == n }
    }

    /// The proof that nothing leaked: see the type's comment.
    func expectUntouched(_ comment: String = "", newClient: Bool = true, sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(daemon.process.isRunning, "the daemon died: \(comment)", sourceLocation: sourceLocation)
        sentinel += 1
        let reply = try witness.call("badge.set", #"{"tab":"chat","count":\#(sentinel)}"#)
        seq += 1
        #expect(reply["result"]?["seq"] == .int(seq), "another change happened: \(comment)", sourceLocation: sourceLocation)
        let event = #"{"jsonrpc":"2.0","method":"badge.changed","params":{"seq":\#(seq),"tab":"chat","badge":{"kind":"count","value":\#(sentinel),"display":"99+"}}}"#
        let next = try subscriber.readLine()
        #expect(next == event, "the subscriber saw something else first: \(comment)", sourceLocation: sourceLocation)
        guard newClient else { return }
        let fresh = try RawClient(path: daemon.socket)
        #expect(try fresh.call("ping")["result"] == .obj([:]), "a new client is not served: \(comment)", sourceLocation: sourceLocation)
        fresh.close()
    }

    func stop(sourceLocation: SourceLocation = #_sourceLocation) {
        subscriber.close()
        witness.close()
        #expect(daemon.stop() == 0, sourceLocation: sourceLocation)
    }
}
