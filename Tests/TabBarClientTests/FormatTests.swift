import Testing
import TabBarCore
@testable import tabbarctl

@Suite struct FormatTests {
    /// A state as the daemon encodes it (through TabBarCore), with every mark in use.
    static var sampleState: JSON {
        var state = BarState.defaultBar
        state.seq = 12
        state.items[0].morph = Morph(title: "Top", icon: "arrow.up")
        state.items[1].badge = .count(120)
        state.items[3].badge = .dot
        state.items[4].enabled = false
        state.items[4].badge = .text("new")
        state.previous = "chat"
        state.highlighted = "nearby"
        state.activeAction = "post"
        state.visibility = Visibility(reasons: [.push, .scroll], phase: .hiding)
        state.feedback = Feedback(profile: .quiet, volume: 0.8)
        return .obj(["seq": .int(12), "state": state.json()])
    }

    @Test func stateIsATable() {
        #expect(Format.state(Self.sampleState) == [
            "seq 12 · selected home (previous chat)",
            "  #  id      title   kind    badge  marks",
            "  0  home    Home    tab     -      selected morphed→\"Top\"",
            "  1  nearby  Nearby  tab     99+    highlighted",
            "  2  post    Post    center  -      active-action",
            "  3  chat    Chat    tab     •",
            "  4  me      Me      tab     new    disabled",
            "visibility: hidden (push, scroll), phase hiding",
            "feedback: quiet, volume 0.8",
        ])
    }

    @Test func anEmptyBarSaysHowToFillIt() {
        let result = JSON.obj(["seq": .int(0), "state": BarState(items: []).json()])
        #expect(Format.state(result) == [
            "seq 0 · nothing selected",
            "  (no items; configure the bar with `tabbarctl configure FILE`)",
            "visibility: visible, phase idle",
            "feedback: full, volume 1",
        ])
    }

    @Test func summaryOfASnapshot() {
        #expect(Monitor.snapshotLine(Self.sampleState)
                == "seq 12 subscribed: 5 items (home nearby post chat me), selected home, hidden (push, scroll), phase hiding, feedback quiet, volume 0.8")
    }

    @Test func selectOutcomes() throws {
        #expect(Format.select(try JSON.parse(#"{"seq":7,"selected":"chat","previous":"home","reselected":false}"#))
                == "selected chat (previous home), seq 7")
        #expect(Format.select(try JSON.parse(#"{"seq":8,"selected":"home","previous":"chat","reselected":true}"#))
                == "reselected home, seq 8")
        #expect(Format.select(try JSON.parse(#"{"seq":1,"selected":"home","previous":null,"reselected":false}"#))
                == "selected home (previous none), seq 1")
    }

    @Test func otherResults() throws {
        #expect(Format.badgeResult(tab: "chat", try JSON.parse(#"{"seq":13,"badge":{"kind":"count","value":120,"display":"99+"}}"#), cleared: false)
                == "badge chat → 99+, seq 13")
        #expect(Format.badgeResult(tab: "chat", try JSON.parse(#"{"seq":13,"badge":{"kind":"dot","display":""}}"#), cleared: false)
                == "badge chat → •, seq 13")
        #expect(Format.badgeResult(tab: "chat", try JSON.parse(#"{"seq":13,"badge":null}"#), cleared: false)
                == "badge chat → none, seq 13")
        #expect(Format.badgeResult(tab: "chat", try JSON.parse(#"{"seq":14}"#), cleared: true) == "badge chat cleared, seq 14")
        #expect(Format.visibilityResult(try JSON.parse(#"{"seq":15,"visibility":{"hidden":true,"reasons":["push"],"phase":"hiding"}}"#))
                == "bar hidden (push), phase hiding, seq 15")
        #expect(Format.touch(phase: "down", x: 187.5, y: -10, try JSON.parse(#"{"seq":16,"target":"post","consumed":true}"#))
                == "touch down at 187.5,-10 → post (consumed), seq 16")
        #expect(Format.touch(phase: "up", x: 1, y: 500, try JSON.parse(#"{"seq":17,"target":null,"consumed":false}"#))
                == "touch up at 1,500 → no item, seq 17")
    }

    @Test func soundsTable() throws {
        let result = try JSON.parse(#"{"sounds":[{"name":"click","frames":2400,"rate":48000,"channels":1,"source":"/usr/share/tabbard/sounds/click.wav"},{"name":"center","frames":7200,"rate":48000,"channels":2,"source":"builtin"}]}"#)
        #expect(Format.sounds(result) == [
            "name    frames  rate   channels  ms   source",
            "click   2400    48000  1         50   /usr/share/tabbard/sounds/click.wav",
            "center  7200    48000  2         150  builtin",
        ])
        #expect(Format.sounds(try JSON.parse(#"{"sounds":[]}"#)) == ["(no sounds are loaded)"])
    }

    @Test func statsAreFlattened() throws {
        #expect(Format.flat(try JSON.parse(#"{"clients":2,"latency_us":{"p50":41,"p99":120.5},"uptime":"3s","x":[1,2]}"#)) == [
            "clients: 2", "latency_us.p50: 41", "latency_us.p99: 120.5", "uptime: 3s", "x: [1,2]",
        ])
    }

    @Test func fixedDecimals() {
        #expect(Format.fixed(50) == "50")
        #expect(Format.fixed(0.1234, digits: 3) == "0.123")
        #expect(Format.fixed(-2.25, digits: 1) == "-2.3")
        #expect(Format.fixed(1.05, digits: 2) == "1.05")
        #expect(Format.fixed(-0.01, digits: 1) == "0")
    }

    func event(_ text: String) throws -> String { Format.event(try JSON.parse(text)) }

    @Test func everyEventKindHasALine() throws {
        #expect(try event(#"{"jsonrpc":"2.0","method":"tab.selected","params":{"seq":12,"tab":"chat","previous":"home","source":"user"}}"#)
                == "seq 12 tab.selected chat (previous home, user)")
        #expect(try event(#"{"method":"tab.selected","params":{"seq":2,"tab":"chat","previous":null,"source":"program"}}"#)
                == "seq 2 tab.selected chat (previous none, program)")
        #expect(try event(#"{"method":"tab.reselected","params":{"seq":13,"tab":"home","source":"user"}}"#)
                == "seq 13 tab.reselected home (user)")
        #expect(try event(#"{"method":"tab.highlighted","params":{"seq":14,"tab":"chat","phase":"begin"}}"#)
                == "seq 14 tab.highlighted chat begin")
        #expect(try event(#"{"method":"action.triggered","params":{"seq":15,"tab":"post","action":"compose"}}"#)
                == "seq 15 action.triggered post (action compose)")
        #expect(try event(#"{"method":"action.triggered","params":{"seq":15,"tab":"rec"}}"#)
                == "seq 15 action.triggered rec")
        #expect(try event(#"{"method":"action.finished","params":{"seq":16,"tab":"post"}}"#)
                == "seq 16 action.finished post")
        #expect(try event(#"{"method":"badge.changed","params":{"seq":13,"tab":"chat","badge":{"kind":"count","value":100,"display":"99+"}}}"#)
                == "seq 13 badge.changed chat → 99+")
        #expect(try event(#"{"method":"badge.changed","params":{"seq":14,"tab":"chat","badge":null}}"#)
                == "seq 14 badge.changed chat → none")
        #expect(try event(#"{"method":"badge.changed","params":{"seq":14,"tab":"me","badge":{"kind":"dot","display":""}}}"#)
                == "seq 14 badge.changed me → •")
        let configured = JSON.obj(["jsonrpc": .string("2.0"), "method": .string("bar.configured"),
                                   "params": .obj(["seq": .int(20), "state": BarState.defaultBar.json()])])
        #expect(Format.event(configured)
                == "seq 20 bar.configured 5 items (home nearby post chat me), selected home, visible, phase idle, feedback full, volume 1")
        #expect(try event(#"{"method":"state.resync","params":{"seq":40,"state":{"items":[],"selected":null}}}"#)
                == "seq 40 state.resync 0 items, selected none")
        #expect(try event(#"{"method":"bar.visibility","params":{"seq":21,"hidden":true,"phase":"hiding","reasons":["scroll"],"duration_ms":250}}"#)
                == "seq 21 bar.visibility hidden (scroll), phase hiding, 250 ms")
        #expect(try event(#"{"method":"bar.visibility","params":{"seq":22,"hidden":false,"phase":"showing","reasons":[],"duration_ms":0}}"#)
                == "seq 22 bar.visibility visible, phase showing, 0 ms")
        #expect(try event(#"{"method":"animation.cue","params":{"seq":23,"tab":"chat","trigger":"select","kind":"bounce","descriptor":{"scale":1.2}}}"#)
                == #"seq 23 animation.cue chat select: bounce {"scale":1.2}"#)
        #expect(try event(#"{"method":"animation.ended","params":{"seq":24,"animation":7,"reason":"finished"}}"#)
                == "seq 24 animation.ended 7 (finished)")
        #expect(try event(#"{"method":"sound.played","params":{"voice":3,"name":"click"}}"#)
                == "sound.played click (voice 3)")
        #expect(try event(#"{"method":"server.stopping","params":{}}"#) == "server.stopping")
        #expect(try event(#"{"method":"future.thing","params":{"seq":30,"a":1}}"#) == #"seq 30 future.thing {"a":1}"#)
        #expect(try event(#"{"jsonrpc":"2.0","id":null,"result":{}}"#) == #"{"jsonrpc":"2.0","id":null,"result":{}}"#)
    }
}
