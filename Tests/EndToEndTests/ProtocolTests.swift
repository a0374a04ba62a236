import Foundation
import Glibc
import Testing
import TabBarCore
import TabBarTesting

/// The real binary on a real socket, driven with raw lines.
@Suite(.serialized) struct ProtocolTests {
    @Test func helloGreetingComesFirst() throws {
        let d = try privateDaemon()
        defer { #expect(d.stop() == 0) }
        let c = try RawClient(path: d.socketPath)
        let h = try #require(c.hello)
        #expect(h["jsonrpc"] == .string("2.0"))
        #expect(h["params"]?["server"] == .string("tabbard"))
        #expect(h["params"]?["protocol"] == .int(1))
        #expect(h["params"]?["max_line"] == .int(65536))
        guard case .array(let features)? = h["params"]?["features"] else { Issue.record("no features"); return }
        #expect(features.contains(.string("tab.select")))
    }

    @Test func pipelinedRepliesArriveInRequestOrder() throws {
        let d = try privateDaemon()
        defer { #expect(d.stop() == 0) }
        let c = try RawClient(path: d.socketPath)
        var batch = ""
        for k in 0..<500 {
            let tab = ["home", "nearby", "chat", "me"][k % 4]
            batch += k % 5 == 0 ? #"{"id":\#(k),"method":"ping"}"# + "\n" : #"{"id":\#(k),"method":"tab.select","params":{"tab":"\#(tab)"}}"# + "\n"
        }
        try c.send(batch)
        for k in 0..<500 {
            let reply = try #require(try c.readJSON())
            #expect(reply["id"] == .int(k))
            #expect(reply["result"] != nil)
        }
    }

    @Test func errorsCarryCodeKindAndASentence() throws {
        let d = try privateDaemon()
        defer { #expect(d.stop() == 0) }
        let c = try RawClient(path: d.socketPath)
        let cases: [(String, Int, String)] = [
            ("this is not json", -32700, "parse_error"),
            (#"[{"id":1,"method":"ping"}]"#, -32600, "batch_unsupported"),
            (#"{"id":2}"#, -32600, "invalid_request"),
            (#"{"id":3,"method":"tab.frobnicate"}"#, -32601, "method_not_found"),
            (#"{"id":4,"method":"tab.select","params":{"tab":7}}"#, -32602, "invalid_params"),
            (#"{"id":5,"method":"tab.select","params":{"tab":"nowhere"}}"#, -32001, "unknown_tab"),
            (#"{"id":6,"method":"tab.select","params":{"tab":"post"}}"#, -32002, "not_selectable"),
            (#"{"id":7,"method":"tab.select","params":{"tab":"chat","if_seq":99}}"#, -32003, "conflict"),
            (#"{"id":8,"method":"sound.play","params":{"name":"trumpet"}}"#, -32004, "unknown_sound"),
        ]
        for (line, code, kind) in cases {
            try c.send(line + "\n")
            let r = try #require(try c.readJSON())
            #expect(r["error"]?["code"] == .int(code), "\(line)")
            #expect(r["error"]?["data"]?["kind"] == .string(kind), "\(line)")
            let message = r["error"]?["message"]?.stringValue ?? ""
            #expect(message.count > 10, "\(line)")
        }
        let invalid = try c.call("tab.select", #"{"tab":7}"#)
        #expect(invalid["error"]?["data"]?["field"] == .string("tab"))
        // The connection is still fine.
        #expect(try c.call("ping")["result"] == .obj([:]))
    }

    @Test func notificationsAreCarriedOutWithoutAReply() throws {
        let d = try privateDaemon()
        defer { #expect(d.stop() == 0) }
        let c = try RawClient(path: d.socketPath)
        try c.send(#"{"jsonrpc":"2.0","method":"tab.select","params":{"tab":"chat"}}"# + "\n")
        try c.send(#"{"method":"tab.select","params":{"tab":"nowhere"}}"# + "\n")  // an error, still silent
        let reply = try c.call("state.get")
        // The first line that came back is the reply to state.get: nothing was sent for the notifications.
        #expect(reply["id"] == .int(1))
        #expect(reply["result"]?["state"]?["selected"] == .string("chat"))
        #expect(reply["result"]?["seq"] == .int(1))
    }

    @Test func overlongLineGetsLineTooLongAndTheConnectionStays() throws {
        let d = try privateDaemon()
        defer { #expect(d.stop() == 0) }
        let c = try RawClient(path: d.socketPath)
        let huge = #"{"id":1,"method":"badge.set","params":{"tab":"chat","text":""# + String(repeating: "x", count: 70_000) + "\"}}\n"
        try c.send(huge)
        let r = try #require(try c.readJSON())
        #expect(r["id"] == .null)
        #expect(r["error"]?["data"]?["kind"] == .string("line_too_long"))
        #expect(r["error"]?["code"] == .int(-32600))
        #expect(try c.call("tab.select", #"{"tab":"me"}"#)["result"]?["selected"] == .string("me"))
    }

    @Test func crlfAndBlankLinesAreAccepted() throws {
        let d = try privateDaemon()
        defer { #expect(d.stop() == 0) }
        let c = try RawClient(path: d.socketPath)
        try c.send("\r\n\n" + #"{"id":"a","method":"ping"}"# + "\r\n\n")
        #expect(try c.readJSON()?["id"] == .string("a"))
    }

    @Test func halfCloseIsAnsweredBeforeClose() throws {
        let d = try privateDaemon()
        defer { #expect(d.stop() == 0) }
        let c = try RawClient(path: d.socketPath)
        try c.send(#"{"id":1,"method":"tab.select","params":{"tab":"chat"}}"# + "\n" + #"{"id":2,"method":"state.get"}"# + "\n" + #"{"id":3,"method":"ping"}"#)
        c.shutdownWrite()
        var ids: [JSON] = []
        while let m = try c.readJSON() { ids.append(m["id"] ?? .null) }
        #expect(ids == [.int(1), .int(2), .int(3)])
    }

    @Test func subscribersGetTheSnapshotThenEveryChangeInSeqOrder() throws {
        let d = try privateDaemon()
        defer { #expect(d.stop() == 0) }
        let sub = try RawClient(path: d.socketPath)
        let snap = try sub.call("subscribe")
        let start = try #require(snap["result"]?["seq"]?.intValue)
        #expect(snap["result"]?["state"]?["selected"] == .string("home"))
        let writer = try RawClient(path: d.socketPath)
        let changes = 400
        var batch = ""
        for k in 0..<changes {
            batch += k % 2 == 0
                ? #"{"id":\#(k),"method":"tab.select","params":{"tab":"\#(["chat", "me", "nearby"][k % 3])"}}"# + "\n"
                : #"{"id":\#(k),"method":"badge.set","params":{"tab":"chat","count":\#(k)}}"# + "\n"
        }
        try writer.send(batch)
        for _ in 0..<changes { _ = try writer.readJSON() }
        var last = start
        var seen = 0
        while seen < changes {
            let e = try #require(try sub.readJSON())
            // (Sound reports are not changes: they come as the audio thread plays, between them.)
            if case .string(let method)? = e["method"], method.hasPrefix("sound.") { continue }
            seen += 1
            let seq = try #require(e["params"]?["seq"]?.intValue, "event \(e.text)")
            #expect(seq == last + 1, "event \(e.text)")
            last = seq
        }
        #expect(last == start + changes)
    }

    @Test func topicsFilterEvents() throws {
        let d = try privateDaemon()
        defer { #expect(d.stop() == 0) }
        let sub = try RawClient(path: d.socketPath)
        _ = try sub.call("subscribe", #"{"topics":["badge"]}"#)
        let w = try RawClient(path: d.socketPath)
        _ = try w.call("tab.select", #"{"tab":"chat"}"#)
        _ = try w.call("badge.set", #"{"tab":"me","dot":true}"#)
        let e = try #require(try sub.readJSON())
        #expect(e["method"] == .string("badge.changed"))
        #expect(e["params"]?["seq"] == .int(2))
    }

    @Test func centerButtonFlow() throws {
        let d = try privateDaemon()
        defer { #expect(d.stop() == 0) }
        let c = try RawClient(path: d.socketPath)
        _ = try c.call("subscribe")
        var events: [JSON] = []
        _ = try c.call("action.trigger", #"{"tab":"post"}"#, events: &events)
        let st = try c.call("state.get", events: &events)
        #expect(st["result"]?["state"]?["active_action"] == .string("post"))
        #expect(st["result"]?["state"]?["selected"] == .string("home"))
        _ = try c.call("tab.select", #"{"tab":"me"}"#, events: &events)
        let after = try c.call("state.get", events: &events)
        #expect(after["result"]?["state"]?["active_action"] == .null)
        let names = events.compactMap { $0["method"]?.stringValue }
        #expect(names.starts(with: ["action.triggered", "tab.selected"]) || names.contains("action.triggered"))
        #expect(events.first { $0["method"] == .string("action.triggered") }?["params"]?["action"] == .string("compose"))
    }

    @Test func soundsAreListedAndPlayedThroughTheNullSink() throws {
        let d = try privateDaemon()
        defer { #expect(d.stop() == 0) }
        let c = try RawClient(path: d.socketPath)
        let list = try c.call("sound.list")
        guard case .array(let sounds)? = list["result"]?["sounds"] else { Issue.record("no sounds"); return }
        let click = try #require(sounds.first { $0["name"] == .string("click") })
        #expect(click["rate"] == .int(48000))
        #expect((click["frames"]?.intValue ?? 0) > 0)
        for name in ["reselect", "center", "action", "badge", "slide"] {
            #expect(sounds.contains { $0["name"] == .string(name) }, "\(name)")
        }
        _ = try c.call("subscribe")
        var events: [JSON] = []
        let played = try c.call("sound.play", #"{"name":"click"}"#, events: &events)
        let voice = try #require(played["result"]?["voice"])
        // The daemon's clock is the harness's: the stream, and the sound in it, move when it advances.
        try d.advance(ms: 50)
        while !events.contains(where: { $0["method"] == .string("sound.played") }) {
            events.append(try #require(try c.readJSON()))
        }
        let e = try #require(events.first { $0["method"] == .string("sound.played") })
        #expect(e["params"]?["voice"] == voice)
        #expect(e["params"]?["name"] == .string("click"))
    }

    @Test func concurrentClientsGetUniqueSeqs() throws {
        let d = try privateDaemon()
        defer { #expect(d.stop() == 0) }
        let clients = 16, each = 50
        // Each client's seqs, written into its own slot when it is done.
        let results = SharedValue([[Int]](repeating: [], count: clients))
        let sock = d.socketPath
        DispatchQueue.concurrentPerform(iterations: clients) { k in
            guard let c = try? RawClient(path: sock) else { return }
            var mine = [Int](repeating: -1, count: each)
            for j in 0..<each {
                let params = j % 2 == 0 ? #"{"tab":"chat","count":\#(k * 1000 + j + 1)}"# : #"{"tab":"me","count":\#(k * 1000 + j + 1)}"#
                if let r = try? c.call("badge.set", params), let seq = r["result"]?["seq"]?.intValue {
                    mine[j] = seq
                }
            }
            let done = mine
            results.withLock { $0[k] = done }
        }
        let seqs = results.load().flatMap { $0.count == each ? $0 : [Int](repeating: -1, count: each) }
        #expect(!seqs.contains(-1))
        #expect(Set(seqs).count == clients * each)
        #expect(seqs.max() == clients * each)
    }

    @Test func aSecondDaemonDoesNotStealALiveSocket() throws {
        let d = try privateDaemon()
        defer { #expect(d.stop() == 0) }
        let r = try runCapturing(Paths.tabbard, ["--socket", d.socketPath, "--state", d.directory + "/other.json", "--audio", "null"])
        #expect(r.status == 1)
        let text = r.stderr
        #expect(text.contains("already listening"))
        // The first daemon still serves.
        #expect(try RawClient(path: d.socketPath).call("ping")["result"] == .obj([:]))
    }
}
