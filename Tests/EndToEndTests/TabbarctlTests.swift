import Foundation
import Glibc
import Testing
import TabBarCore
import TabBarTesting

/// tabbarctl against the real daemon, as a person at a terminal uses it.
@Suite(.serialized) struct TabbarctlTests {
    @Test func selectPrintsTheNewStateWhileMonitorShowsTheEvent() throws {
        let d = try privateDaemon()
        defer { #expect(d.stop() == 0) }
        // Terminal 3: monitor (reads its first line to know the subscription is live).
        let piped = try Piped(Paths.tabbarctl, ["--socket", d.socketPath, "monitor"])
        let monitor = piped.process
        let reader = LineReader(piped.stdout)
        let first = try #require(reader.next())
        #expect(first.contains("subscribed"))

        // Terminal 2: select.
        let (status, text, err) = try tabbarctl(["select", "chat"], socket: d.socketPath)
        #expect(status == 0, "\(err)")
        #expect(text.contains("selected chat (previous home)"))
        #expect(text.contains("chat") && text.contains("selected"))

        let event = try #require(reader.next())
        #expect(event.contains("tab.selected chat"))
        #expect(event.contains("seq 1"))

        kill(monitor.processIdentifier, SIGINT)
        monitor.waitUntilExit()
        #expect(monitor.terminationStatus == 0)
    }

    @Test func monitorJSONPrintsEventsAsReceived() throws {
        let d = try privateDaemon()
        defer { #expect(d.stop() == 0) }
        let piped = try Piped(Paths.tabbarctl, ["--socket", d.socketPath, "monitor", "--json", "--topics", "badge"])
        let monitor = piped.process
        let reader = LineReader(piped.stdout)
        _ = try #require(reader.next())
        #expect(try tabbarctl(["badge", "chat", "120"], socket: d.socketPath).0 == 0)
        let line = try #require(reader.next())
        let e = try JSON.parse(line)
        #expect(e["method"] == .string("badge.changed"))
        #expect(e["params"]?["badge"]?["display"] == .string("99+"))
        // The daemon stopping ends the monitor with status 0.
        #expect(d.stop() == 0)
        monitor.waitUntilExit()
        #expect(monitor.terminationStatus == 0)
    }

    @Test func exitCodesAndOneLineErrors() throws {
        let d = try privateDaemon()
        defer { #expect(d.stop() == 0) }
        let daemonError = try tabbarctl(["select", "post"], socket: d.socketPath)
        #expect(daemonError.0 == 2)
        #expect(daemonError.2.contains("not_selectable"))
        #expect(daemonError.2.split(separator: "\n").count == 1)

        let usage = try tabbarctl(["badge", "chat"], socket: d.socketPath)
        #expect(usage.0 == 1)

        let noDaemon = try tabbarctl(["state"], socket: d.directory + "/nobody-here")
        #expect(noDaemon.0 == 1)
        #expect(noDaemon.2.contains("nobody-here"))

        let raw = try tabbarctl(["call", "badge.set", #"{"tab":"me","dot":true}"#], socket: d.socketPath)
        #expect(raw.0 == 0)
        let result = try JSON.parse(raw.1.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(result["badge"]?["kind"] == .string("dot"))
    }

    @Test func badgeActionPlayAndSounds() throws {
        let d = try privateDaemon()
        defer { #expect(d.stop() == 0) }
        #expect(try tabbarctl(["badge", "chat", "--text", "new"], socket: d.socketPath).0 == 0)
        #expect(try tabbarctl(["action", "post"], socket: d.socketPath).0 == 0)
        #expect(try tabbarctl(["play", "click"], socket: d.socketPath).0 == 0)
        let sounds = try tabbarctl(["sounds"], socket: d.socketPath)
        #expect(sounds.1.contains("click"))
        #expect(sounds.1.contains("48000"))
        let st = try RawClient(path: d.socketPath).call("state.get")["result"]?["state"]
        #expect(st?["active_action"] == .string("post"))
        guard case .array(let items)? = st?["items"] else { Issue.record("no items"); return }
        #expect(items[3]["badge"]?["display"] == .string("new"))
        #expect(try tabbarctl(["badge", "chat", "--clear"], socket: d.socketPath).0 == 0)
        #expect(try tabbarctl(["action", "post", "--finish"], socket: d.socketPath).0 == 0)
        let after = try RawClient(path: d.socketPath).call("state.get")["result"]?["state"]
        #expect(after?["active_action"] == .null)
    }

    @Test func everySubcommandHasHelp() throws {
        for cmd in ["state", "select", "badge", "action", "play", "sounds", "monitor", "call"] {
            let (status, text, _) = try tabbarctl([cmd, "--help"], socket: "/nonexistent")
            #expect(status == 0, "\(cmd)")
            #expect(text.lowercased().contains("usage"), "\(cmd)")
        }
    }
}

/// Reads lines from a pipe with a deadline (the pipe's writer flushes per line).
final class LineReader {
    let handle: FileHandle
    var buffer: [UInt8] = []
    init(_ handle: FileHandle) { self.handle = handle }

    func next(timeout: Double = 10) -> String? {
        try? readBufferedLine(fd: handle.fileDescriptor, buffer: &buffer, timeout: timeout)
    }
}
