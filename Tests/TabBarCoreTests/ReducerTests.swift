import Testing
@testable import TabBarCore

/// Runs a request through the dispatch table and the reducer, as the server does.
func run(_ r: inout Reducer, _ method: String, _ params: String = "{}") -> Outcome {
    let json = try! JSON.parse(params)
    switch Methods.command(for: Request(id: .int(1), method: method, params: json), limits: r.limits) {
    case .failure(let e): return Outcome(reply: .failure(e))
    case .success(.state(let cmd)): return r.reduce(cmd)
    case .success(.server(.stateGet)): return Outcome(reply: .success(.state(seq: r.state.seq, r.state, r.limits)))
    case .success(.server): fatalError("\(method) is the server's")
    }
}

/// Typed events compare with their `JSON` view (what subscribers read).
func == (a: [BarEvent], b: [Event]) -> Bool {
    a.map { Event($0.method, $0.params) } == b
}

extension Outcome {
    var error: RPCError? { if case .failure(let e) = reply { return e }; return nil }
    var value: JSON? { if case .success(let v) = reply { return v.json }; return nil }
    var eventNames: [String] { events.map(\.method) }
}

@Suite struct SelectionTests {
    @Test func selectByIdChangesSelectionAndClicks() {
        var r = Reducer()
        let o = run(&r, "tab.select", #"{"tab":"chat"}"#)
        #expect(o.value == .obj(["seq": .int(1), "selected": .string("chat"), "previous": .string("home"), "reselected": .bool(false)]))
        #expect(o.events == [Event("tab.selected", .obj(["seq": .int(1), "tab": .string("chat"), "previous": .string("home"), "source": .string("user")]))])
        #expect(o.effects == [.play(name: "click", gain: 1, trigger: .select)])
        #expect(r.state.selected == "chat")
        #expect(r.state.previous == "home")
    }

    @Test func selectByIndex() {
        var r = Reducer()
        let o = run(&r, "tab.select", #"{"index":4}"#)
        #expect(o.value?["selected"] == .string("me"))
    }

    @Test func reselectIsItsOwnEventAndSound() {
        var r = Reducer()
        let o = run(&r, "tab.select", #"{"tab":"home"}"#)
        #expect(o.value?["reselected"] == .bool(true))
        #expect(o.eventNames == ["tab.reselected"])
        #expect(o.effects == [.play(name: "reselect", gain: 1, trigger: .reselect)])
        #expect(r.state.seq == 1)
    }

    @Test func programSelectionsDoNotClick() {
        var r = Reducer()
        let o = run(&r, "tab.select", #"{"tab":"chat","source":"program"}"#)
        #expect(o.effects.isEmpty)
        #expect(o.events.first?.params["source"] == .string("program"))
    }

    @Test func itemSoundOverridesTheDefault() {
        var r = Reducer()
        r.state.items[3].sound = "pop"
        #expect(run(&r, "tab.select", #"{"tab":"chat"}"#).effects == [.play(name: "pop", gain: 1, trigger: .select)])
    }

    @Test func unknownTabAndIndex() {
        var r = Reducer()
        #expect(run(&r, "tab.select", #"{"tab":"nope"}"#).error?.kind == "unknown_tab")
        let e = run(&r, "tab.select", #"{"index":9}"#).error
        #expect(e?.kind == "unknown_tab")
        #expect(e?.code == -32001)
        #expect(run(&r, "tab.select", #"{"index":-1}"#).error?.kind == "unknown_tab")
        #expect(r.state.seq == 0)
    }

    @Test func centerAndDisabledItemsAreNotSelectable() {
        var r = Reducer()
        let e = run(&r, "tab.select", #"{"tab":"post"}"#).error
        #expect(e?.kind == "not_selectable")
        #expect(e?.code == -32002)
        r.state.items[1].enabled = false
        #expect(run(&r, "tab.select", #"{"tab":"nearby"}"#).error?.message.contains("disabled") == true)
        #expect(r.state.selected == "home")
    }

    @Test func ifSeqConflict() {
        var r = Reducer()
        _ = run(&r, "tab.select", #"{"tab":"chat"}"#)
        let e = run(&r, "tab.select", #"{"tab":"me","if_seq":0}"#).error
        #expect(e?.kind == "conflict")
        #expect(e?.code == -32003)
        #expect(e?.extra == [JSON.Member("seq", .int(1))])
        #expect(run(&r, "tab.select", #"{"tab":"me","if_seq":1}"#).value?["seq"] == .int(2))
    }

    @Test func paramsAreChecked() {
        var r = Reducer()
        #expect(run(&r, "tab.select", "{}").error?.field == "tab")
        #expect(run(&r, "tab.select", #"{"tab":"a","index":1}"#).error?.field == "index")
        #expect(run(&r, "tab.select", #"{"tab":5}"#).error?.field == "tab")
        #expect(run(&r, "tab.select", #"{"index":1.5}"#).error?.field == "index")
        #expect(run(&r, "tab.select", #"{"tab":"chat","source":"robot"}"#).error?.field == "source")
        let unknown = run(&r, "tab.select", #"{"tab":"chat","tabb":1}"#).error
        #expect(unknown?.kind == "invalid_params")
        #expect(unknown?.field == "tabb")
        #expect(unknown?.code == -32602)
    }

    @Test func unknownMethod() {
        var r = Reducer()
        let e = run(&r, "tab.selekt", "{}").error
        #expect(e?.kind == "method_not_found")
        #expect(e?.code == -32601)
    }
}

@Suite struct ActionTests {
    @Test func centerButtonTriggersWithoutSelecting() {
        var r = Reducer()
        let o = run(&r, "action.trigger", #"{"tab":"post"}"#)
        #expect(o.value == .obj(["seq": .int(1)]))
        #expect(o.events == [Event("action.triggered", .obj(["seq": .int(1), "tab": .string("post"), "action": .string("compose")]))])
        #expect(o.effects == [.play(name: "center", gain: 1, trigger: .center)])
        #expect(r.state.activeAction == "post")
        #expect(r.state.selected == "home")
    }

    @Test func finishClearsTheActiveAction() {
        var r = Reducer()
        _ = run(&r, "action.trigger", #"{"tab":"post"}"#)
        let o = run(&r, "action.finish", #"{"tab":"post"}"#)
        #expect(o.eventNames == ["action.finished"])
        #expect(r.state.activeAction == nil)
        // Finishing again changes nothing.
        let again = run(&r, "action.finish", #"{"tab":"post"}"#)
        #expect(again.events.isEmpty)
        #expect(again.value?["seq"] == .int(2))
    }

    @Test func selectingATabClearsTheActiveAction() {
        var r = Reducer()
        _ = run(&r, "action.trigger", #"{"tab":"post"}"#)
        _ = run(&r, "tab.select", #"{"tab":"me"}"#)
        #expect(r.state.activeAction == nil)
    }

    @Test func tabsCannotBeTriggered() {
        var r = Reducer()
        #expect(run(&r, "action.trigger", #"{"tab":"chat"}"#).error?.field == "tab")
        #expect(run(&r, "action.trigger", #"{"tab":"zzz"}"#).error?.kind == "unknown_tab")
        #expect(run(&r, "action.finish", #"{"tab":"zzz"}"#).error?.kind == "unknown_tab")
    }
}

@Suite struct BadgeTests {
    @Test(arguments: [
        (#"{"tab":"chat","count":5}"#, "5"),
        (#"{"tab":"chat","count":99}"#, "99"),
        (#"{"tab":"chat","count":100}"#, "99+"),
        (#"{"tab":"chat","dot":true}"#, ""),
        (#"{"tab":"chat","text":"new"}"#, "new"),
        (#"{"tab":"chat","text":"a very long badge text"}"#, "a very long bad…"),
    ])
    func displayRules(_ params: String, _ display: String) {
        var r = Reducer()
        let o = run(&r, "badge.set", params)
        #expect(o.value?["badge"]?["display"] == .string(display))
        #expect(o.events.first?.method == "badge.changed")
        #expect(o.events.first?.params["badge"]?["display"] == .string(display))
    }

    @Test func zeroOrNegativeCountMeansNoBadge() {
        var r = Reducer()
        _ = run(&r, "badge.set", #"{"tab":"chat","count":3}"#)
        let o = run(&r, "badge.set", #"{"tab":"chat","count":0}"#)
        #expect(o.value?["badge"] == .null)
        #expect(r.state.items[3].badge == nil)
        #expect(o.events.first?.params["badge"] == .null)
        let neg = run(&r, "badge.set", #"{"tab":"chat","count":-4}"#)
        #expect(neg.events.isEmpty)
    }

    @Test func sameBadgeTwiceIsOneChange() {
        var r = Reducer()
        _ = run(&r, "badge.set", #"{"tab":"chat","count":3}"#)
        let o = run(&r, "badge.set", #"{"tab":"chat","count":3}"#)
        #expect(o.events.isEmpty)
        #expect(r.state.seq == 1)
    }

    @Test func clear() {
        var r = Reducer()
        _ = run(&r, "badge.set", #"{"tab":"chat","dot":true}"#)
        let o = run(&r, "badge.clear", #"{"tab":"chat"}"#)
        #expect(o.value == .obj(["seq": .int(2)]))
        #expect(o.events == [Event("badge.changed", .obj(["seq": .int(2), "tab": .string("chat"), "badge": .null]))])
    }

    @Test func badParams() {
        var r = Reducer()
        #expect(run(&r, "badge.set", #"{"tab":"chat"}"#).error?.kind == "invalid_params")
        #expect(run(&r, "badge.set", #"{"tab":"chat","count":1,"dot":true}"#).error?.field == "dot")
        #expect(run(&r, "badge.set", #"{"tab":"chat","dot":false}"#).error?.field == "dot")
        #expect(run(&r, "badge.set", #"{"tab":"chat","text":""}"#).error?.field == "text")
        #expect(run(&r, "badge.set", #"{"tab":"chat","count":"3"}"#).error?.field == "count")
        #expect(run(&r, "badge.set", #"{"tab":"x","count":3}"#).error?.kind == "unknown_tab")
        #expect(run(&r, "badge.clear", #"{"tab":"x"}"#).error?.kind == "unknown_tab")
    }
}

@Suite struct ConfigureTests {
    let fiveWithCenter = #"{"items":[{"id":"a"},{"id":"b"},{"id":"c","kind":"center"},{"id":"d"},{"id":"e"}],"layout":{"width":375,"height":49,"center":{"width":70,"height":70,"raise":21,"shape":"circle"}}}"#

    @Test func configureReplacesTheBarAndComputesFrames() {
        var r = Reducer()
        let o = run(&r, "bar.configure", fiveWithCenter)
        #expect(o.error == nil)
        #expect(o.eventNames == ["bar.configured"])
        #expect(r.state.selected == "a")
        let items = o.value?["state"]?["items"]
        guard case .array(let list)? = items else { Issue.record("no items"); return }
        #expect(list[2]["frame"] == .obj(["x": .double(152.5), "y": .double(-21), "w": .double(70), "h": .double(70)]))
        #expect(list[0]["frame"] == .obj(["x": .double(0), "y": .double(0), "w": .double(76.25), "h": .double(49)]))
        #expect(list[4]["frame"]?["x"] == .double(298.75))
    }

    @Test func selectionFallsBackToANeighbourWhenItsItemIsRemoved() {
        var r = Reducer()
        _ = run(&r, "tab.select", #"{"tab":"chat"}"#)
        _ = run(&r, "bar.configure", #"{"items":[{"id":"home"},{"id":"nearby"},{"id":"post","kind":"center"},{"id":"x"},{"id":"me"}]}"#)
        #expect(r.state.selected == "x")
    }

    @Test func badgesOfKeptItemsSurvive() {
        var r = Reducer()
        _ = run(&r, "badge.set", #"{"tab":"chat","count":7}"#)
        _ = run(&r, "bar.configure", #"{"items":[{"id":"home"},{"id":"chat"},{"id":"me"}]}"#)
        #expect(r.state.item("chat")?.badge == .count(7))
        _ = run(&r, "bar.configure", #"{"items":[{"id":"home"},{"id":"chat","badge":null},{"id":"me"}]}"#)
        #expect(r.state.item("chat")?.badge == nil)
    }

    @Test(arguments: [
        (#"{"items":[{"id":"a"},{"id":"a"}]}"#, "invalid_params", "items[1].id"),
        (#"{"items":[{"id":"a","kind":"center"},{"id":"b"},{"id":"c"}]}"#, "invalid_params", "items[0].kind"),
        (#"{"items":[{"id":"a"},{"id":"b","kind":"center"}]}"#, "invalid_params", "items[1].kind"),
        (#"{"items":[{"id":"a"},{"id":"b","kind":"center"},{"id":"c","kind":"center"}]}"#, "invalid_params", "items[2].kind"),
        (#"{"items":[{"id":"a","kind":"action"}]}"#, "invalid_params", "items"),
        (#"{"items":[]}"#, "invalid_params", "items"),
        (#"{"items":[{"id":"a"},{"id":"b"},{"id":"c"},{"id":"d"},{"id":"e"},{"id":"f"}]}"#, "limit_exceeded", ""),
        (#"{"items":[{"id":""}]}"#, "invalid_params", "items[0].id"),
        (#"{"items":[{"id":"a","kind":"button"}]}"#, "invalid_params", "items[0].kind"),
        (#"{"items":[{"id":"a","colour":"red"}]}"#, "invalid_params", "items[0].colour"),
        (#"{"items":[{"id":"a"}],"selected":"b"}"#, "unknown_tab", ""),
        (#"{"items":[{"id":"a"}],"layout":{"width":-3}}"#, "invalid_params", "layout.width"),
        (#"{}"#, "invalid_params", "items"),
    ])
    func invalidConfigurationsKeepThePreviousBar(_ params: String, _ kind: String, _ field: String) {
        var r = Reducer()
        let before = r.state
        let e = run(&r, "bar.configure", params).error
        #expect(e?.kind == kind)
        if !field.isEmpty { #expect(e?.field == field) }
        #expect(r.state == before)
    }

    @Test func layoutOnlyUpdate() {
        var r = Reducer()
        let o = run(&r, "bar.configure", #"{"layout":{"width":400}}"#)
        #expect(o.error == nil)
        #expect(r.state.layout.width == 400)
        #expect(r.state.items.count == 5)
    }

    @Test func identicalConfigurationIsNotAChange() {
        var r = Reducer()
        let o = run(&r, "bar.configure", #"{"layout":{"width":375}}"#)
        #expect(o.events.isEmpty)
        #expect(r.state.seq == 0)
    }
}

@Suite struct FeedbackAndSeqTests {
    @Test func silentProfilePlaysNothingQuietOnlyClicks() {
        var r = Reducer()
        _ = run(&r, "feedback.set", #"{"profile":"silent"}"#)
        #expect(run(&r, "tab.select", #"{"tab":"chat"}"#).effects.isEmpty)
        _ = run(&r, "feedback.set", #"{"profile":"quiet","volume":0.5}"#)
        let click = run(&r, "tab.select", #"{"tab":"me"}"#).effects
        #expect(click == [.play(name: "click", gain: 0.5 * r.sounds.quietGain, trigger: .select)])
        #expect(run(&r, "action.trigger", #"{"tab":"post"}"#).effects.isEmpty)
    }

    @Test func feedbackParams() {
        var r = Reducer()
        #expect(run(&r, "feedback.set", #"{"volume":2}"#).error?.field == "volume")
        #expect(run(&r, "feedback.set", "{}").error?.kind == "invalid_params")
    }

    @Test func everyChangeIncrementsSeqByExactlyOne() {
        var r = Reducer()
        let script: [(String, String)] = [
            ("tab.select", #"{"tab":"chat"}"#), ("badge.set", #"{"tab":"me","count":2}"#),
            ("action.trigger", #"{"tab":"post"}"#), ("action.finish", #"{"tab":"post"}"#),
            ("tab.select", #"{"tab":"chat"}"#), ("badge.clear", #"{"tab":"me"}"#),
            ("feedback.set", #"{"volume":0.3}"#), ("bar.configure", #"{"layout":{"height":60}}"#),
        ]
        for (k, (m, p)) in script.enumerated() {
            let o = run(&r, m, p)
            #expect(o.value?["seq"] == .int(k + 1), "\(m)")
            for e in o.events { #expect(e.params["seq"] == .int(k + 1)) }
        }
        // Reads and failures do not change it.
        _ = run(&r, "state.get")
        _ = run(&r, "tab.select", #"{"tab":"nope"}"#)
        #expect(r.state.seq == UInt64(script.count))
    }

    @Test func stateRoundTripsThroughItsWireForm() throws {
        var r = Reducer()
        _ = run(&r, "badge.set", #"{"tab":"chat","text":"new"}"#)
        _ = run(&r, "tab.select", #"{"tab":"me"}"#)
        r.state.items[0].morph = Morph(title: "Top", icon: "arrow.up")
        let wire = r.state.json()
        let back = try BarState.decode(try JSON.parse(wire.text), seq: r.state.seq, limits: Limits())
        #expect(back == r.state)
    }

    @Test func morphedPresentationWhileSelected() {
        let item = Item(id: "home", title: "Home", icon: "house", morph: Morph(title: "Top", icon: "arrow.up"))
        #expect(item.presentation(selected: true) == ("Top", "arrow.up", true))
        #expect(item.presentation(selected: false) == ("Home", "house", false))
    }
}
