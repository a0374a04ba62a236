import Foundation
import Glibc
import Testing
import TabBarCore

/// Log lines a peer can cause at will are rate-limited (LogLimit.swift): a client that
/// connects in a loop can neither flood the journal nor block the daemon on a stderr
/// pipe that nobody reads.
@Suite struct LogFloodTests {
    static let refusal = "Refused a client: max_clients reached"

    /// Connects and reads the one refusal line, then EOF.
    static func refused(_ socket: String) throws {
        let c = try RawClient(path: socket, readHello: false)
        guard let line = try c.readLine(timeout: 30), line.contains("max_clients = 1") else { throw TestFailure("no refusal") }
    }

    /// 1,500 refused clients against a daemon whose stderr is a 64 KiB pipe that nobody
    /// reads (a test harness that forgot it, a wedged log reader): every one gets its
    /// refusal, the client that is in keeps being served, and stderr holds at most a
    /// burst of refusal lines. (Without the limit, line ~770 fills the pipe and the
    /// daemon stops dead in write(2).)
    @Test func refusedClientsCannotBlockTheDaemonOnAnUnreadStderr() throws {
        let dir = try makeTempDir("tabbard-logflood")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Data(#"{"max_clients":1}"#.utf8).write(to: URL(fileURLWithPath: dir + "/config.json"))
        let p = Process()
        p.executableURL = URL(fileURLWithPath: Paths.tabbard)
        p.arguments = ["--socket", dir + "/sock", "--state", dir + "/state.json", "--audio", "null", "--sounds", Paths.sounds,
                       "--config", dir + "/config.json"]
        let unread = Pipe()
        p.standardError = unread
        try p.run()
        defer { if p.isRunning { kill(p.processIdentifier, SIGKILL); p.waitUntilExit() } }
        var held: RawClient?
        try waitUntil("the daemon to listen") {
            held = try? RawClient(path: dir + "/sock")
            return held != nil
        }
        let client = try #require(held)
        for k in 0..<1500 {
            do { try Self.refused(dir + "/sock") } catch { throw TestFailure("refused client \(k): \(error)") }
        }
        #expect(try client.call("ping")["result"] == .obj([:]))
        #expect(try client.call("tab.select", #"{"tab":"chat"}"#)["result"]?["selected"] == .string("chat"))
        kill(p.processIdentifier, SIGTERM)
        p.waitUntilExit()
        #expect(p.terminationStatus == 0)
        let log = String(decoding: unread.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let lines = log.split(separator: "\n").filter { $0.contains(Self.refusal) }
        #expect(lines.count <= 10, "\(lines.count) refusal lines")
        #expect(log.contains("Stopped"), "the daemon stopped cleanly: \(log.suffix(500))")
    }

    /// 50 refusals in a row: the first ten are logged, the rest counted, and once the
    /// 10 s interval is over one line says how many were suppressed; then refusals are
    /// logged again.
    @Test func suppressedLinesAreCountedWhenTheLimitLifts() throws {
        let d = try startDaemon(config: #"{"max_clients":1}"#)
        defer { #expect(d.stop() == 0) }
        let held = try RawClient(path: d.socket)
        for _ in 0..<50 { try Self.refused(d.socket) }
        try waitUntil("the count of suppressed lines", timeout: 60) { d.stderrSoFar().contains("Suppressed ") }
        func refusals(_ log: String) -> Int { log.split(separator: "\n").filter { $0.contains("warning: " + Self.refusal) }.count }
        let log = d.stderrSoFar()
        let suppressed = log.split(separator: "\n").filter { $0.contains("Suppressed ") && $0.contains(Self.refusal) }
            .compactMap { line in line.split(separator: " ").first { $0.hasPrefix("suppressed=") }.flatMap { Int($0.dropFirst(11)) } }
        #expect(!suppressed.isEmpty, "\(log)")
        // Every refusal is either a line or in a count (ten a window, so at least 40 counted
        // when all 50 came within one window, as they do unless the machine stalls for 10 s).
        #expect(refusals(log) + suppressed.reduce(0, +) == 50, "\(log)")
        #expect(refusals(log) <= 10 * suppressed.count + 10, "\(log)")
        // Logged again after the count.
        try Self.refused(d.socket)
        try waitUntil("a refusal logged again") { refusals(d.stderrSoFar()) == refusals(log) + 1 }
        #expect(try held.call("ping")["result"] == .obj([:]))
    }
}
