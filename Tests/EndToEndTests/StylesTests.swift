import Foundation
import Glibc
import Testing
import TabBarCore
import TabBarTesting

extension RawClient {
    /// Reads until a message satisfies `match` (events before it are returned too); fails after `timeout` s.
    func waitFor(_ what: String, timeout: Double = 5, _ match: (JSON) -> Bool) throws -> (JSON, [JSON]) {
        let deadline = Date().addingTimeInterval(timeout)
        var seen: [JSON] = []
        while true {
            let left = deadline.timeIntervalSinceNow
            if left <= 0 { throw TestFailure("timed out waiting for \(what); saw \(seen.map(\.text))") }
            guard let m = try readJSON(timeout: left) else { throw TestFailure("connection closed waiting for \(what)") }
            if match(m) { return (m, seen) }
            seen.append(m)
        }
    }

    /// Sends one raw line and returns the reply with that id (events before it are skipped).
    func rawCall(_ line: String, id: Int) throws -> JSON {
        try send(line + "\n")
        return try waitFor("the reply to id \(id)") { $0["id"] == .int(id) }.0
    }
}

func isEvent(_ method: String, _ check: @escaping (JSON) -> Bool = { _ in true }) -> (JSON) -> Bool {
    { $0["method"] == .string(method) && check($0["params"] ?? .null) }
}

/// The example configurations shipped in `examples/`.
enum Examples {
    static let dir = Paths.packageRoot + "/examples"
    static var files: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []).filter { $0.hasSuffix(".json") }.sorted()
    }
}

@Suite(.serialized) struct StylesTests {
    /// The issue's outside client: raw lines only, written from the contract.
    @Test func outsideClientGetsTheIssuesHitsAndNothingWhileHidden() throws {
        let d = try privateDaemon()
        defer { #expect(d.stop() == 0) }
        let sub = try RawClient(path: d.socketPath)
        try sub.send(#"{"jsonrpc":"2.0","id":1,"method":"subscribe"}"# + "\n")
        _ = try sub.waitFor("subscribe reply") { $0["id"] == .int(1) }
        let c = try RawClient(path: d.socketPath)
        let configured = try c.rawCall(#"{"jsonrpc":"2.0","id":1,"method":"bar.configure","params":{"items":[{"id":"home"},{"id":"nearby"},{"id":"post","kind":"center","action":"compose"},{"id":"chat"},{"id":"me"}],"selected":"home","layout":{"width":375,"height":49,"safe_bottom":0,"center":{"width":70,"height":70,"raise":21,"shape":"circle"}},"settings":{"hide_duration_ms":0}}}"#, id: 1)
        #expect(configured["result"]?["state"]?["items"] != nil)

        var id = 1
        func touch(_ phase: String, _ x: Double, _ y: Double, _ touchID: Int) throws -> JSON {
            id += 1
            let line = #"{"jsonrpc":"2.0","id":\#(id),"method":"touch","params":{"phase":"\#(phase)","x":\#(x),"y":\#(y),"touch_id":\#(touchID)}}"#
            return try c.rawCall(line, id: id)["result"] ?? .null
        }
        func tap(_ x: Double, _ y: Double, _ touchID: Int) throws -> (JSON, JSON) {
            (try touch("down", x, y, touchID), try touch("up", x, y, touchID))
        }

        let post = try tap(187.5, 0, 1)
        #expect(post.0["target"] == .string("post"))
        #expect(post.1["commit"] == .string("action"))
        let (triggered, _) = try sub.waitFor("action.triggered", isEvent("action.triggered"))
        #expect(triggered["params"]?["tab"] == .string("post"))
        #expect(triggered["params"]?["action"] == .string("compose"))

        let home = try tap(20, 30, 2)
        #expect(home.0["target"] == .string("home"))
        #expect(home.1["commit"] == .string("reselect"))
        _ = try sub.waitFor("tab.reselected home", isEvent("tab.reselected") { $0["tab"] == .string("home") })

        let me = try tap(370, 30, 3)
        #expect(me.0["target"] == .string("me"))
        #expect(me.1["commit"] == .string("select"))
        let (selected, _) = try sub.waitFor("tab.selected me", isEvent("tab.selected"))
        #expect(selected["params"]?["tab"] == .string("me"))
        #expect(selected["params"]?["previous"] == .string("home"))
        #expect(selected["params"]?["source"] == .string("user"))

        let corner = try tap(221.5, -20, 4)
        #expect(corner.0["target"] == .null)
        #expect(corner.0["consumed"] == .bool(false))
        #expect(corner.1["commit"] == .null)

        // Hidden: nothing at all.
        id += 1
        let hide = try c.rawCall(#"{"jsonrpc":"2.0","id":\#(id),"method":"bar.set_hidden","params":{"hidden":true,"animated":true}}"#, id: id)
        #expect(hide["result"]?["visibility"]?["hidden"] == .bool(true))
        for (k, (x, y)) in [(187.5, 0.0), (20, 30), (370, 30), (221.5, -20)].enumerated() {
            let (down, up) = try tap(x, y, 10 + k)
            #expect(down["target"] == .null && up["target"] == .null)
            #expect(down["consumed"] == .bool(false))
        }

        // Push, then an explicit show: the pushed screen still hides the bar.
        id += 1
        _ = try c.rawCall(#"{"jsonrpc":"2.0","id":\#(id),"method":"bar.set_hidden","params":{"hidden":false}}"#, id: id)
        id += 1
        let push = try c.rawCall(#"{"jsonrpc":"2.0","id":\#(id),"method":"nav.push","params":{"hides_bar":true}}"#, id: id)
        #expect(push["result"]?["visibility"]?["hidden"] == .bool(true))
        id += 1
        let show = try c.rawCall(#"{"jsonrpc":"2.0","id":\#(id),"method":"bar.set_hidden","params":{"hidden":false,"reason":"explicit"}}"#, id: id)
        #expect(show["result"]?["visibility"]?["hidden"] == .bool(true))
        #expect(show["result"]?["visibility"]?["reasons"] == .array([.string("push")]))
        #expect(try tap(370, 30, 20).0["target"] == .null)
        id += 1
        let st = try c.rawCall(#"{"jsonrpc":"2.0","id":\#(id),"method":"state.get"}"#, id: id)
        #expect(st["result"]?["state"]?["selected"] == .string("me"))
        #expect(st["result"]?["state"]?["visibility"]?["hidden"] == .bool(true))
    }

    @Test func replayedTouchLinesAreIgnored() throws {
        let d = try Daemon()
        defer { #expect(d.stop() == 0) }
        let c = try RawClient(path: d.socket)
        let lines = [#"{"id":1,"method":"touch","params":{"phase":"down","x":300,"y":20,"touch_id":77}}"#,
                     #"{"id":2,"method":"touch","params":{"phase":"up","x":300,"y":20,"touch_id":77}}"#]
        try c.send(lines.joined(separator: "\n") + "\n")
        _ = try c.waitFor("reply 2") { $0["id"] == .int(2) }
        let seq = try c.call("state.get")["result"]?["seq"]
        // The front end reconnects and sends the same sequence again.
        let again = try RawClient(path: d.socket)
        try again.send(lines.joined(separator: "\n") + "\n")
        let (up, _) = try again.waitFor("reply 2") { $0["id"] == .int(2) }
        #expect(up["result"]?["ignored"] == .bool(true))
        #expect(try again.call("state.get")["result"]?["seq"] == seq)
    }

    /// On virtual time (`TabBarTesting`): the hide ends exactly at its duration, a pop
    /// turns it around from where it got to, and nothing fires early.
    @Test func animatedVisibilityEndsWithAnIdleEventFromTheDaemonsTimer() throws {
        let h = try HeadlessDaemon(sounds: Paths.sounds)
        defer { #expect(h.stop() == 0) }
        try h.call("bar.configure", .obj(["settings": .obj(["hide_duration_ms": .int(150)])]))
        let push = try h.call("nav.push", .obj(["hides_bar": .bool(true)]))
        #expect(push["visibility"]?["phase"] == .string("hiding"))
        let hiding = try h.expect(event: "bar.visibility", matching: ["phase": "hiding", "duration_ms": "150"])
        try h.advance(ms: 149)
        try h.expectNoEvent("bar.visibility", matching: ["phase": "idle"])
        try h.advance(ms: 1)
        let idle = try h.expect(event: "bar.visibility", matching: ["phase": "idle", "hidden": "true"])
        #expect(idle["seq"]?.intValue == (hiding["seq"]?.intValue ?? 0) + 1)

        // Pop: shows over the whole duration, then idle.
        try h.call("nav.pop")
        try h.expect(event: "bar.visibility", matching: ["phase": "showing", "duration_ms": "150"])
        try h.advance(ms: 150)
        try h.expect(event: "bar.visibility", matching: ["phase": "idle", "hidden": "false"])
        // Retarget: a pop 60 ms into a hide shows for the 60 ms the hide ran, never queued.
        try h.call("nav.push", .obj(["hides_bar": .bool(true)]))
        try h.advance(ms: 60)
        try h.call("nav.pop")
        try h.expect(event: "bar.visibility", matching: ["phase": "hiding"])
        try h.expect(event: "bar.visibility", matching: ["phase": "showing", "duration_ms": "60"])
        try h.advance(ms: 59)
        try h.expectNoEvent("bar.visibility", matching: ["phase": "idle"])
        try h.advance(ms: 1)
        try h.expect(event: "bar.visibility", matching: ["phase": "idle", "hidden": "false"])
        try h.expectNoEvent("bar.visibility")
        #expect(try h.state()["visibility"]?["hidden"] == .bool(false))
    }

    @Test func frontEndAnimationsEndWhenTheirTimeIsUp() throws {
        let h = try HeadlessDaemon(sounds: Paths.sounds)
        defer { #expect(h.stop() == 0) }
        let begun = try h.call("animation.begin", .obj(["kind": .string("spin"), "tab": .string("chat"), "duration_ms": .int(80)]))
        let id = try #require(begun["animation"])
        try h.expect(event: "animation.began", matching: ["animation": id.text])
        try h.advance(ms: 79)
        try h.expectNoEvent("animation.ended")
        #expect(try h.state()["animations"]?.text.contains("\"spin\"") == true)
        try h.advance(ms: 1)
        try h.expect(event: "animation.ended", matching: ["animation": id.text, "reason": "finished"])
        #expect(try h.state()["animations"] == .array([]))
    }

    /// The sound rules, heard: a user select clicks, a program select does not, and the
    /// bar's visibility sound starts with the slide — each at the frame of its time.
    @Test func userSelectsClickProgramSelectsDoNotAndTheSlideSoundsOnPush() throws {
        let h = try HeadlessDaemon(sounds: Paths.sounds)
        defer { #expect(h.stop() == 0) }
        try h.call("bar.configure", .obj(["settings": .obj(["sounds": .obj(["visibility": .string("slide")])])]))
        try h.call("tab.select", .obj(["tab": .string("chat"), "source": .string("program")]))
        try h.advance(ms: 100)
        try h.call("tab.select", .obj(["tab": .string("me")]))
        try h.advance(ms: 100)
        try h.call("nav.push", .obj(["hides_bar": .bool(true)]))
        try h.advance(ms: 600)
        let audio = try h.capturedAudio()
        #expect(audio.sounds.map(\.name) == ["click", "slide"])
        let clickAt: Int64 = 100 * 48 + 32, slideAt: Int64 = 200 * 48 + 32  // each at its ms × 48 + the device's 32
        #expect(audio.sounds.map(\.frame) == [clickAt, slideAt])
        let before = audio.samples(frames: 0..<clickAt)
        #expect(before.count == Int(clickAt) * 2 && before.allSatisfy { $0 == 0 }, "the program select made no sound")
    }

    @Test func visibilityAndTimersSurviveSIGKILL() throws {
        let d = try Daemon()
        let sub = try RawClient(path: d.socket)
        _ = try sub.call("subscribe", #"{"topics":["bar.visibility","animation.ended"]}"#)
        let c = try RawClient(path: d.socket)
        _ = try c.call("bar.configure", #"{"settings":{"hide_duration_ms":20,"scroll_threshold":10}}"#)
        _ = try c.call("nav.push", #"{"hides_bar":false}"#)
        _ = try c.call("nav.push", #"{"hides_bar":true}"#)
        _ = try c.call("scroll", #"{"dy":6}"#)
        _ = try c.call("scroll", #"{"dy":6}"#)  // the second crosses the threshold
        _ = try c.call("animation.begin", #"{"kind":"x","duration_ms":10}"#)
        _ = try c.call("tab.select", #"{"tab":"me"}"#)  // a user select: clears the scroll reason, clicks
        // Both timers fire and their changes are journaled. The hide phase's end is the idle
        // phase of a hidden bar: the first nav.push (which hides nothing) already says
        // "idle", and taking that for the timer's let a loaded machine journal the timer
        // after `before` was read (seq 8 vs 7).
        var idle = false, ended = false
        while !(idle && ended) {
            let (m, _) = try sub.waitFor("idle and animation.ended") { $0["method"] != nil }
            if m["method"] == .string("animation.ended") { ended = true }
            if m["params"]?["phase"] == .string("idle") && m["params"]?["hidden"] == .bool(true) { idle = true }
        }
        let before = try c.call("state.get")["result"]
        d.kill9()
        let again = try Daemon(dir: d.dir)
        defer { #expect(again.stop() == 0) }
        let client = try RawClient(path: again.socket)
        let after = try client.call("state.get")["result"]
        #expect(after?["seq"] == before?["seq"])
        // Replaying the journal restored a user select and more, and played nothing.
        #expect(try client.call("stats.get")["result"]?["sounds_played"] == .int(0))
        let v = after?["state"]?["visibility"]
        #expect(v?["reasons"] == .array([.string("push")]))
        #expect(v?["nav_stack"] == .array([.bool(false), .bool(true)]))
        #expect(v?["phase"] == .string("idle"))
        #expect(after?["state"]?["selected"] == .string("me"))
        #expect(after?["state"]?["settings"]?["hide_duration_ms"] == .int(20))
        #expect(after?["state"]?["animations"] == .array([]))
    }

    @Test func everyExampleLoadsWithTabbarctlConfigure() throws {
        let files = Examples.files
        #expect(files.count >= 7)
        let d = try Daemon()
        defer { #expect(d.stop() == 0) }
        for f in files {
            let (status, out, err) = try tabbarctl(["configure", Examples.dir + "/" + f], socket: d.socket)
            #expect(status == 0, "\(f): \(err)")
            #expect(out.hasPrefix("seq "), "\(f): \(out)")
            let st = try RawClient(path: d.socket).call("state.get")["result"]?["state"]
            let want = try JSON.parse(String(contentsOfFile: Examples.dir + "/" + f, encoding: .utf8))
            #expect(st?["selected"] == want["selected"], "\(f)")
            guard case .array(let items)? = st?["items"], case .array(let wanted)? = want["items"] else { Issue.record("\(f): no items"); continue }
            #expect(items.map { $0["id"] } == wanted.map { $0["id"] }, "\(f)")
        }
    }

    @Test(arguments: Examples.files)
    func exampleServesAsTheDaemonsInitialBar(_ file: String) throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("tabbard-ex-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let bar = try String(contentsOfFile: Examples.dir + "/" + file, encoding: .utf8)
        try #"{"bar":\#(bar)}"#.write(toFile: dir + "/tabbard.json", atomically: true, encoding: .utf8)
        let d = try Daemon(extraArgs: ["--config", dir + "/tabbard.json"], dir: dir)
        defer { #expect(d.stop() == 0) }
        let st = try RawClient(path: d.socket).call("state.get")["result"]?["state"]
        let want = try JSON.parse(bar)
        #expect(st?["selected"] == want["selected"])
        if let s = want["settings"], case .object(let members) = s {
            for m in members where m.key != "sounds" { #expect(st?["settings"]?[m.key] == m.value, "\(file): settings.\(m.key)") }
        }
    }

    @Test func tabbarctlDrivesTouchesAndVisibility() throws {
        let d = try Daemon()
        defer { #expect(d.stop() == 0) }
        let s = d.socket
        #expect(try tabbarctl(["configure", Examples.dir + "/two-tabs-three-actions.json"], socket: s).0 == 0)
        let down = try tabbarctl(["touch", "down", "150", "20", "--id", "5"], socket: s)
        #expect(down.1.hasPrefix("touch down at 150,20 → photo (consumed)"), "\(down)")
        let up = try tabbarctl(["touch", "up", "150", "20", "--id", "5"], socket: s)
        #expect(up.1.contains("→ photo (consumed), action"), "\(up)")
        let replay = try tabbarctl(["touch", "down", "150", "20", "--id", "5"], socket: s)
        #expect(replay.1.contains("ignored"), "\(replay)")
        #expect(try tabbarctl(["push", "--hides-bar"], socket: s).1.hasPrefix("bar hidden (push)"))
        #expect(try tabbarctl(["show"], socket: s).1.hasPrefix("bar hidden (push)"))
        #expect(try tabbarctl(["pop"], socket: s).1.hasPrefix("bar visible"))
        #expect(try tabbarctl(["scroll", "100"], socket: s).1.hasPrefix("bar hidden (scroll)"))
        #expect(try tabbarctl(["scroll", "--", "-100"], socket: s).1.hasPrefix("bar visible"))
        #expect(try tabbarctl(["hide", "--reason", "explicit"], socket: s).1.hasPrefix("bar hidden (explicit)"))
        let json = try tabbarctl(["--json", "show"], socket: s)
        #expect(try JSON.parse(json.1)["visibility"]?["reasons"] == .array([]))
        let bad = try tabbarctl(["hide", "--reason", "nap"], socket: s)
        #expect(bad.0 == 2)
        #expect(bad.2.contains("reason"))
    }
}
