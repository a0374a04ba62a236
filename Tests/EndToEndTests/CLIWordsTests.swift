import Foundation
import Glibc
import Testing
import TabBarCore
import TabBarTesting

/// tabbarctl in a person's words, against the real daemon: reset, monitor --follow,
/// unknown topics, and the hint that depends on where tabbarctl is installed.
@Suite(.serialized) struct CLIWordsTests {
    static func writeConfig(_ dir: String) throws -> String {
        let path = dir + "/config.json"
        try #"{"bar":{"items":[{"id":"inbox"},{"id":"post","kind":"center"},{"id":"sent"}],"selected":"inbox"}}"#
            .write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test func resetGoesBackToTheConfiguredBarAndStaysThereAfterARestart() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("tabbard-reset-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let config = try Self.writeConfig(dir)
        var d = try Daemon(extraArgs: ["--config", config], dir: dir)
        #expect(try tabbarctl(["select", "sent"], socket: d.socket).0 == 0)
        let other = dir + "/other.json"
        try #"{"items":[{"id":"x"},{"id":"y"}],"selected":"y"}"#.write(toFile: other, atomically: true, encoding: .utf8)
        #expect(try tabbarctl(["configure", other], socket: d.socket).0 == 0)

        let (status, text, err) = try tabbarctl(["reset"], socket: d.socket)
        #expect(status == 0, "\(err)")
        #expect(text.hasPrefix("seq 3 · selected inbox"), "\(text)")
        #expect(text.contains("sent") && !text.contains(" x "))
        #expect(d.stop() == 0)

        // The journal holds the bar itself, not "initial": a restart replays it.
        d = try Daemon(extraArgs: ["--config", config], dir: dir)
        defer { #expect(d.stop() == 0) }
        let state = try JSON.parse(try tabbarctl(["--json", "state"], socket: d.socket).1)
        #expect(state["seq"] == .int(3))
        #expect(state["state"]?["selected"] == .string("inbox"))
        guard case .array(let items)? = state["state"]?["items"] else { Issue.record("no items"); return }
        #expect(items.map { $0["id"]?.stringValue ?? "" } == ["inbox", "post", "sent"])
    }

    @Test func resetWithoutAConfigGoesBackToTheBuiltInBar() throws {
        let d = try Daemon()
        defer { #expect(d.stop() == 0) }
        let file = d.dir + "/one.json"
        try #"{"items":[{"id":"solo"}]}"#.write(toFile: file, atomically: true, encoding: .utf8)
        #expect(try tabbarctl(["configure", file], socket: d.socket).0 == 0)
        let (status, text, _) = try tabbarctl(["reset"], socket: d.socket)
        #expect(status == 0)
        for id in ["home", "nearby", "post", "chat", "me"] { #expect(text.contains(" \(id) "), "\(text)") }
        // bar.configure's other uses are unchanged: "initial" is only valid alone and true.
        let (bad, _, badErr) = try tabbarctl(["call", "bar.configure", #"{"initial":false}"#], socket: d.socket)
        #expect(bad == 2)
        #expect(badErr.contains("invalid_params"))
    }

    @Test func monitorFollowReconnectsAfterARestartAndSaysSo() throws {
        var d = try Daemon()
        let dir = d.dir
        let piped = try Piped(Paths.tabbarctl, ["--socket", d.socket, "monitor", "--follow"])
        let monitor = piped.process
        defer { if monitor.isRunning { kill(monitor.processIdentifier, SIGINT); monitor.waitUntilExit() } }
        let lines = LineReader(piped.stdout)
        let notices = LineReader(piped.stderr)
        #expect(try #require(lines.next()).contains("subscribed"))

        #expect(d.stop() == 0)
        #expect(lines.next() == "server.stopping")
        #expect(try #require(notices.next()).contains("tabbard is stopping; waiting for it to come back"))
        #expect(monitor.isRunning)

        d = try Daemon(dir: dir)
        defer { #expect(d.stop() == 0) }
        #expect(try #require(notices.next(timeout: 30)).contains("reconnected to tabbard"))
        #expect(try #require(lines.next()).contains("subscribed"))
        #expect(try tabbarctl(["select", "chat"], socket: d.socket).0 == 0)
        #expect(try #require(lines.next()).contains("tab.selected chat"))
    }

    @Test func anUnknownTopicIsAUsageError() throws {
        let d = try Daemon()
        let (status, _, err) = try tabbarctl(["monitor", "--topics", "tab,sonud"], socket: d.socket)
        #expect(status == 1)
        #expect(err.contains(#"there is no topic "sonud""#))
        #expect(d.stop() == 0)
    }

    /// Copies an executable through a close-on-exec descriptor, so that no child process
    /// started meanwhile by another test inherits it open for writing.
    static func copyExecutable(_ from: String, to: String) throws {
        let bytes = try Data(contentsOf: URL(fileURLWithPath: from))
        let fd = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o755)
        guard fd >= 0 else { throw TestFailure("cannot create \(to): errno \(errno)") }
        defer { close(fd) }
        try bytes.withUnsafeBytes { raw in
            var off = 0
            while off < raw.count {
                let n = write(fd, raw.baseAddress! + off, raw.count - off)
                guard n > 0 else { throw TestFailure("cannot write \(to): errno \(errno)") }
                off += n
            }
        }
    }

    @Test func theHintToStartTheDaemonFitsWhereTabbarctlIsInstalled() throws {
        let missing = "/nonexistent-\(UUID().uuidString.prefix(8))/socket"
        // From the build tree: `make run`.
        let (_, _, fromTree) = try tabbarctl(["ping"], socket: missing)
        #expect(fromTree.contains("start it with `make run`"), "\(fromTree)")
        // The same binary installed elsewhere: systemctl, never make run.
        let bin = FileManager.default.temporaryDirectory.appendingPathComponent("tabbarctl-installed-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: bin) }
        try Self.copyExecutable(Paths.tabbarctl, to: bin + "/tabbarctl")
        var env = ProcessInfo.processInfo.environment
        env["XDG_RUNTIME_DIR"] = bin
        env["TABBARD_SOCKET"] = nil
        // Another test's fork may still hold a just-written executable open for a moment
        // (ETXTBSY, "Text file busy"): retry, within a deadline, as Go's os/exec does.
        let deadline = Date().addingTimeInterval(30)
        var result: (status: Int32, stdout: String, stderr: String)
        while true {
            do { result = try runCapturing(bin + "/tabbarctl", ["--instance", "mail", "ping"], environment: env); break } catch {
                guard "\(error)".contains("Text file busy"), Date() < deadline else { throw error }
                usleep(20_000)
            }
        }
        let text = result.stderr
        #expect(result.status == 1)
        #expect(text.contains("cannot connect to \(bin)/tabbard/mail.socket"), "\(text)")
        #expect(text.contains("systemctl --user start tabbard@mail.socket"), "\(text)")
        #expect(!text.contains("make run"))
    }
}
