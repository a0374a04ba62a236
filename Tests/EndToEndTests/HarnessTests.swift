import Foundation
import Glibc
import Testing
import TabBarCore
import TabBarClient
import TabBarTesting

/// Issue 15's "done when": virtual time, the capture, determinism — from an outside
/// client's raw lines and through `TabBarTesting`.
@Suite(.serialized) struct HarnessTests {
    /// The harness never reads the developer's own configuration (`~/.config/tabbard/`,
    /// `/etc/tabbard/` for root in CI): the daemon it starts says it looked for none.
    @Test func theHarnessReadsNoConfigurationFile() throws {
        let d = try HeadlessDaemon(binary: Paths.tabbard, sounds: Paths.sounds)
        defer { #expect(d.stop() == 0) }
        _ = try d.state()
        #expect(d.log.contains(#"looked_for="none (--no-config)""#), "\(d.log)")
    }

    /// Under the manual clock with no other client, an expect that cannot be met fails at
    /// once (a round trip, not its 10 s timeout), naming what did arrive; with another client
    /// connected it waits, and takes the event that client causes.
    @Test func aFailingExpectFailsAtOnceNamingWhatArrived() throws {
        let h = try privateDaemon()
        defer { #expect(h.stop() == 0) }
        try h.call("bar.configure", ["items": [["id": "home"], ["id": "chat"]], "selected": "home"])
        try h.call("tab.select", ["tab": "chat"])
        let began = ContinuousClock.now
        do {
            try h.expect(event: "tab.selected", matching: ["tab": "home"])
            Issue.record("expect met an event that never came")
        } catch let e as HarnessError {
            #expect(e.description.contains(#""method":"tab.selected","params":{"seq":2,"tab":"chat""#), "\(e)")
            #expect(e.description.hasPrefix("expected tab.selected with tab=home; arrived instead: "), "\(e)")
        }
        #expect(ContinuousClock.now - began < .milliseconds(100))
        // A typed expect, and its failure.
        #expect(throws: HarnessError.self) { try h.expect(.tabSelected(seq: 9, tab: "home", previous: "chat", source: .user)) }
        #expect(ContinuousClock.now - began < .milliseconds(200))
        // A typed expectNoEvent: the selection of chat has arrived; none of home.
        #expect(throws: HarnessError.self) { try h.expectNoEvent("a selection of chat") { if case .tabSelected(_, "chat", _, _) = $0 { return true } else { return false } } }
        try h.expectNoEvent("a selection of home") { if case .tabSelected(_, "home", _, _) = $0 { return true } else { return false } }
        // An event name the daemon does not have is refused before any wait.
        #expect(throws: HarnessError.self) { try h.expect(event: "tab.select") }

        // Another client connected: expect waits for what it does.
        nonisolated(unsafe) let other = try RawClient(path: h.socketPath)
        let selector = Thread {
            usleep(100_000)
            _ = try? other.call("tab.select", #"{"tab":"home"}"#)
        }
        selector.start()
        let tab = try h.expect("the other client's selection") { event -> String? in
            if case .tabSelected(3, let tab, "chat", .user) = event { return tab }
            return nil
        }
        #expect(tab == "home")
    }

    /// With no `binary:` the harness finds the daemon by itself (here: beside the test bundle
    /// or in the package's .build), and the shipped sounds from its own source location.
    @Test func theHarnessFindsTheDaemonAndTheSounds() throws {
        #expect(try HeadlessDaemon.locateDaemon().hasSuffix("/tabbard"))
        #expect(HeadlessDaemon.shippedSounds == Paths.sounds)
        let h = try HeadlessDaemon()
        defer { #expect(h.stop() == 0) }
        #expect(h.soundsDirectory == Paths.sounds)
        try h.call("sound.play", ["name": "click"])
        try h.expect(event: "sound.played", matching: ["name": "click"])
    }

    /// Raw lines only: a hide-on-push bar stepped through its phases by clock.advance alone.
    @Test func outsideClientStepsAHideOnPushBarByClockAdvance() throws {
        let d = try privateDaemon()
        defer { #expect(d.stop() == 0) }
        let c = try RawClient(path: d.socketPath)
        #expect(c.hello?["params"]?["features"]?.text.contains("\"clock.advance\"") == true)
        #expect(try c.call("clock.get")["result"] == .obj(["now_ms": .int(0), "mode": .string("manual")]))
        _ = try c.call("subscribe", #"{"topics":["bar.visibility"]}"#)
        let example = try String(contentsOfFile: Examples.dir + "/hide-on-push.json", encoding: .utf8)
        _ = try c.call("bar.configure", try JSON.parse(example).text)  // hide_duration_ms 300
        var events: [JSON] = []
        _ = try c.call("nav.push", #"{"hides_bar":true}"#, events: &events)
        #expect(events.map { $0["params"]?["phase"] } == [.string("hiding")])
        events = []
        #expect(try c.call("clock.advance", #"{"ms":299}"#, events: &events)["result"] == .obj(["now_ms": .int(299)]))
        #expect(events.isEmpty, "still sliding at 299 ms: \(events.map(\.text))")
        #expect(try c.call("state.get")["result"]?["state"]?["visibility"]?["phase"] == .string("hiding"))
        _ = try c.call("clock.advance", #"{"ms":1}"#, events: &events)
        #expect(events.map { $0["params"]?["phase"] } == [.string("idle")])
        #expect(events.first?["params"]?["hidden"] == .bool(true))
        // Pop at 400: shows over 300 ms; one advance past the end gives idle at once.
        events = []
        _ = try c.call("clock.advance", #"{"ms":100}"#, events: &events)
        _ = try c.call("nav.pop", "{}", events: &events)
        _ = try c.call("clock.advance", #"{"ms":1000}"#, events: &events)
        #expect(events.map { $0["params"]?["phase"] } == [.string("showing"), .string("idle")])
        #expect(events.last?["params"]?["hidden"] == .bool(false))
        #expect(try c.call("clock.get")["result"]?["now_ms"] == .int(1400))
    }

    @Test func aRealClockRefusesClockAdvance() throws {
        let d = try Daemon()
        defer { #expect(d.stop() == 0) }
        let c = try RawClient(path: d.socket)
        let r = try c.call("clock.advance", #"{"ms":10}"#)
        #expect(r["error"]?["code"] == .int(-32009))
        #expect(r["error"]?["data"]?["kind"] == .string("clock_not_manual"))
        #expect(r["error"]?["message"]?.stringValue?.contains("--clock manual") == true)
        #expect(try c.call("clock.get")["result"]?["mode"] == .string("real"))
        let bad = try Daemon(extraArgs: ["--clock", "manual"])
        defer { #expect(bad.stop() == 0) }
        let b = try RawClient(path: bad.socket)
        #expect(try b.call("clock.advance", #"{"ms":-1}"#)["error"]?["data"]?["field"] == .string("ms"))
        #expect(try b.call("capture.stop")["error"]?["data"]?["kind"] == .string("capture_failed"))
        #expect(try b.call("capture.start", #"{"path":"/nonexistent/dir/x.wav"}"#)["error"]?["data"]?["kind"] == .string("capture_failed"))
    }

    @Test func theConfigFileSetsTheClockAndACaptureNeedsTheNullSink() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("tabbard-cfg-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try #"{"clock":"manual","capture":"\#(dir)/c.wav"}"#.write(toFile: dir + "/cfg.json", atomically: true, encoding: .utf8)
        let d = try Daemon(extraArgs: ["--config", dir + "/cfg.json"])
        let c = try RawClient(path: d.socket)
        #expect(try c.call("clock.get")["result"]?["mode"] == .string("manual"))
        #expect(try c.call("capture.stop")["result"]?["frames"] == .int(32))  // the device's queue at 0 ms
        #expect(d.stop() == 0)
        try #"{"clock":"sometimes"}"#.write(toFile: dir + "/bad.json", atomically: true, encoding: .utf8)
        for args in [["--audio", "alsa", "--capture", dir + "/x.wav"], ["--config", dir + "/bad.json"], ["--clock", "fast"]] {
            let r = try runCapturing(Paths.tabbard, ["--socket", dir + "/s", "--state", dir + "/st.json"] + args)
            let text = r.stderr
            #expect(r.status == 1, "\(args): \(text)")
            #expect(text.contains("clock") || text.contains("--capture"), "\(args): \(text)")
        }
    }

    /// One click captured: Sounds/click.wav sample for sample on each channel, at the
    /// frame sound.played named, silence elsewhere; the silence is as long as the time advanced.
    @Test func aCaptureOfOneClickIsTheClickFileAtItsFrame() throws {
        let h = try HeadlessDaemon(sounds: Paths.sounds)
        try h.advance(ms: 250)
        try h.call("tab.select", .obj(["tab": .string("me")]))
        let played = try h.expect(event: "sound.played", matching: ["name": "click"])
        try h.advance(ms: 100)
        let audio = try h.capturedAudio()
        let click = try WAVFile.read(Paths.sounds + "/click.wav")
        #expect(click.channels == 1 && click.rate == audio.rate)
        let frame = Int64(try #require(played["frame"]?.intValue))
        // The virtual device's queue: a voice started at t starts at t × rate + 32 frames.
        #expect(frame == 250 * 48 + 32)
        #expect(audio.sounds.map(\.frame) == [frame])
        #expect(audio.firstFrame == 0)
        #expect(audio.frames == 350 * 48 + 32)
        let expected = click.samples.flatMap { [$0, $0] }
        let got = Array(audio.samples(frames: frame..<(frame + Int64(click.samples.count))))
        #expect(got.count == expected.count)
        #expect(got == expected, "the click differs from sample \(zip(got, expected).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? -1)")
        #expect(audio.samples(frames: 0..<frame).allSatisfy { $0 == 0 })
        #expect(audio.samples(frames: (frame + Int64(click.samples.count))..<Int64(audio.frames)).allSatisfy { $0 == 0 })
        #expect(h.stop() == 0)
    }

    /// Timers due at the same ms fire in a fixed order — the bar's, then animations by id —
    /// not in the order of a hash table seeded per process.
    @Test func timersDueTogetherFireInKeyOrder() throws {
        let h = try HeadlessDaemon(sounds: Paths.sounds)
        defer { #expect(h.stop() == 0) }
        try h.call("bar.configure", .obj(["settings": .obj(["hide_duration_ms": .int(100)])]))
        var ids: [JSON] = []
        for kind in ["a", "b", "c", "d"] {
            ids.append(try h.call("animation.begin", .obj(["kind": .string(kind), "duration_ms": .int(100)]))["animation"] ?? .null)
        }
        try h.call("nav.push", .obj(["hides_bar": .bool(true)]))
        try h.advance(ms: 100)
        let fired = h.pendingEvents.filter { ["animation.ended", "bar.visibility"].contains($0["method"]?.stringValue ?? "") }
            .filter { $0["method"] == .string("animation.ended") || $0["params"]?["phase"] == .string("idle") }
        #expect(fired.map { $0["method"]?.stringValue ?? "" } == ["bar.visibility", "animation.ended", "animation.ended", "animation.ended", "animation.ended"])
        #expect(fired.dropFirst().map { $0["params"]?["animation"] ?? .null } == ids)
        let seqs = fired.compactMap { $0["params"]?["seq"]?.intValue }
        #expect(seqs == seqs.sorted() && Set(seqs).count == 5)
    }

    /// The same script twice: the same event lines, byte for byte, and the same WAV file.
    @Test func twoRunsOfTheSameScriptAreIdentical() throws {
        func run() throws -> (events: [String], wav: [UInt8]) {
            let dir = FileManager.default.temporaryDirectory.appendingPathComponent("tabbard-det-\(UUID().uuidString.prefix(8))").path
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: dir) }
            let d = try Daemon(extraArgs: ["--clock", "manual", "--capture", dir + "/out.wav"], dir: dir)
            let sub = try RawClient(path: d.socket)
            _ = try sub.call("subscribe")
            let c = try RawClient(path: d.socket)
            let script: [(String, String)] = [
                ("bar.configure", #"{"settings":{"hide_duration_ms":120,"animation":"pulse","sounds":{"visibility":"slide"}}}"#),
                ("nav.push", #"{"hides_bar":true}"#), ("clock.advance", #"{"ms":50}"#), ("nav.pop", "{}"),
                ("tab.select", #"{"tab":"me"}"#), ("tab.select", #"{"tab":"me"}"#), ("clock.advance", #"{"ms":7}"#),
                ("badge.set", #"{"tab":"chat","count":3}"#), ("animation.begin", #"{"kind":"spin","duration_ms":30}"#),
                ("sound.play", #"{"name":"action"}"#), ("sound.play", #"{"name":"action"}"#),
                ("clock.advance", #"{"ms":400}"#), ("tab.select", #"{"tab":"home"}"#), ("clock.advance", #"{"ms":5}"#),
            ]
            for (m, p) in script {
                let r = try c.call(m, p)
                #expect(r["result"] != nil, "\(m) \(p): \(r.text)")
            }
            // Everything published before the ping's reply is in the subscriber's stream by then.
            var seen: [JSON] = []
            _ = try sub.call("ping", events: &seen)
            let events = seen.map(\.text)
            #expect(d.stop() == 0)
            let wav = try [UInt8](Data(contentsOf: URL(fileURLWithPath: dir + "/out.wav")))
            return (events, wav)
        }
        let a = try run(), b = try run()
        #expect(a.events.count > 12)
        #expect(a.events.filter { $0.contains("sound.played") }.count >= 5)
        #expect(a.events == b.events)
        #expect(a.wav.count > 44 + 457 * 48 * 4)
        #expect(a.wav.count == b.wav.count)
        let differ = zip(a.wav, b.wav).enumerated().first { $0.element.0 != $0.element.1 }?.offset
        #expect(differ == nil, "the captures differ from byte \(differ ?? -1) on")
    }
}

/// docs/HARNESS.md's two examples are the tests that run: the doc shows them verbatim.
@Suite struct HarnessDocTests {
    static func block(_ lang: String, in doc: String) -> String? {
        guard let start = doc.range(of: "```\(lang)\n") else { return nil }
        guard let end = doc.range(of: "\n```", range: start.upperBound..<doc.endIndex) else { return nil }
        return String(doc[start.upperBound..<end.lowerBound])
    }

    /// The shell example is the script's (the Swift examples are run as written by make test-examples).
    @Test func theDocShowsTheExamplesThatRun() throws {
        let doc = try String(contentsOfFile: Paths.packageRoot + "/docs/HARNESS.md", encoding: .utf8)
        let script = try String(contentsOfFile: Paths.packageRoot + "/tests/harness/front-end-test.sh", encoding: .utf8)
        let shown = try #require(Self.block("sh", in: doc))
        #expect(script.contains(shown + "\n"), "the shell example in docs/HARNESS.md is not tests/harness/front-end-test.sh's")
        #expect(shown.hasPrefix("# 1. The hide-on-push bar"))
    }
}
