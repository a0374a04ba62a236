import Testing
@testable import TabBarCore

/// Runs a request at time `now` (ms), as the server does.
func run(_ r: inout Reducer, _ method: String, _ params: String = "{}", at now: Int64) -> Outcome {
    let json = try! JSON.parse(params)
    switch Methods.command(for: Request(id: .int(1), method: method, params: json), limits: r.limits) {
    case .failure(let e): return Outcome(reply: .failure(e))
    case .success(.state(let cmd)): return r.reduce(cmd, at: now)
    case .success(.server(.stateGet)): return Outcome(reply: .success(.state(seq: r.state.seq, r.state, r.limits)))
    case .success(.server): fatalError("\(method) is the server's")
    }
}

/// The bar of the issue: 375×49, a 70-point circular center button raised 21 points.
let issueBar = #"{"items":[{"id":"home"},{"id":"nearby"},{"id":"post","kind":"center","action":"compose"},{"id":"chat"},{"id":"me"}],"selected":"home","layout":{"width":375,"height":49,"safe_bottom":0,"center":{"width":70,"height":70,"raise":21,"shape":"circle"}}}"#

func issueReducer(settings: String? = nil) -> Reducer {
    var r = Reducer(state: BarState(items: []))
    let params = settings.map { String(issueBar.dropLast()) + #","settings":"# + $0 + "}" } ?? issueBar
    let o = run(&r, "bar.configure", params)
    precondition(o.error == nil, "\(o.error!)")
    return r
}

extension Outcome {
    /// The events of one method, e.g. every `tab.highlighted`.
    func events(_ method: String) -> [JSON] { events.filter { $0.method == method }.map(\.params) }
}

/// A tap: down then up at the same point.
func tap(_ r: inout Reducer, _ x: Double, _ y: Double, id: Int? = nil) -> (down: Outcome, up: Outcome) {
    let idPart = id.map { #","touch_id":\#($0)"# } ?? ""
    let down = run(&r, "touch", #"{"phase":"down","x":\#(x),"y":\#(y)\#(idPart)}"#)
    let up = run(&r, "touch", #"{"phase":"up","x":\#(x),"y":\#(y)\#(idPart)}"#)
    return (down, up)
}

@Suite struct HitTestTests {
    @Test(arguments: [
        (187.5, 0.0, "post"), (20, 30, "home"), (370, 30, "me"), (100, 10, "nearby"), (300, 48, "me"),
        (187.5, -20, "post"), (160, 30, "post"),
    ])
    func issueTapsHitTheirItems(_ x: Double, _ y: Double, _ id: String) {
        var r = issueReducer()
        let o = run(&r, "touch", #"{"phase":"down","x":\#(x),"y":\#(y)}"#)
        #expect(o.value?["target"] == .string(id))
        #expect(o.value?["consumed"] == .bool(true))
    }

    @Test func tapInTheCirclesCornerPassesThroughByDefault() {
        var r = issueReducer()
        let o = run(&r, "touch", #"{"phase":"down","x":221.5,"y":-20}"#)
        #expect(o.value?["target"] == .null)
        #expect(o.value?["consumed"] == .bool(false))
        #expect(o.events.isEmpty)
        #expect(r.state.seq == 1)
    }

    @Test func cornerIsSwallowedWhenTheBarSaysSo() {
        var r = issueReducer(settings: #"{"center_corners":"swallow"}"#)
        let o = run(&r, "touch", #"{"phase":"down","x":221.5,"y":-20}"#)
        #expect(o.value?["target"] == .null)
        #expect(o.value?["consumed"] == .bool(true))
        #expect(o.events.isEmpty)
    }

    @Test func theBarsOwnBackgroundSwallowsWhatHitsNoItem() {
        // The row under the circle's lower corner and the safe area are the bar, not content.
        var r = issueReducer()
        let corner = run(&r, "touch", #"{"phase":"down","x":153,"y":48}"#)
        #expect(corner.value?["target"] == .null)
        #expect(corner.value?["consumed"] == .bool(true))
        _ = run(&r, "bar.configure", #"{"layout":{"height":83,"safe_bottom":34}}"#)
        let safe = run(&r, "touch", #"{"phase":"down","x":20,"y":60}"#)
        #expect(safe.value?["target"] == .null)
        #expect(safe.value?["consumed"] == .bool(true))
        #expect(safe.events.isEmpty)
    }

    @Test func aboveTheBarOutsideTheCenterIsNothing() {
        var r = issueReducer()
        #expect(run(&r, "touch", #"{"phase":"down","x":20,"y":-5}"#).value?["consumed"] == .bool(false))
        #expect(run(&r, "touch", #"{"phase":"down","x":20,"y":49}"#).value?["target"] == .null)
    }

    @Test func aHiddenBarHitsNothingAtAll() {
        var r = issueReducer()
        _ = run(&r, "bar.set_hidden", #"{"hidden":true,"animated":false}"#)
        for (x, y) in [(187.5, 0.0), (20, 30), (370, 30)] {
            let (down, up) = tap(&r, x, y)
            #expect(down.value?["target"] == .null)
            #expect(down.value?["consumed"] == .bool(false))
            #expect(down.events.isEmpty && up.events.isEmpty)
        }
        #expect(r.state.selected == "home")
    }

    @Test func aDisabledItemIsConsumedAndDoesNothing() {
        var r = issueReducer()
        r.state.items[3].enabled = false
        let (down, up) = tap(&r, 250, 20)
        #expect(down.value?["target"] == .null)
        #expect(down.value?["consumed"] == .bool(true))
        #expect(down.events.isEmpty && up.events.isEmpty)
        #expect(r.state.selected == "home")
    }

    @Test func rightToLeftMirrorsTheHits() {
        var r = issueReducer()
        _ = run(&r, "bar.configure", #"{"layout":{"rtl":true}}"#)
        #expect(run(&r, "touch", #"{"phase":"down","x":20,"y":30}"#).value?["target"] == .string("me"))
        #expect(run(&r, "touch", #"{"phase":"down","x":370,"y":30}"#).value?["target"] == .string("home"))
    }

    @Test func rectCenterIsHitInItsCorners() {
        var r = issueReducer()
        _ = run(&r, "bar.configure", #"{"layout":{"center":{"shape":"rect"}}}"#)
        #expect(run(&r, "touch", #"{"phase":"down","x":221.5,"y":-20}"#).value?["target"] == .string("post"))
    }

    @Test func stateCarriesEveryFrame() {
        let r = issueReducer()
        guard case .array(let items)? = r.state.json()["items"] else { Issue.record("no items"); return }
        #expect(items.map { $0["frame"]?["x"] } == [.int(0), .double(76.25), .double(152.5), .double(222.5), .double(298.75)])
        #expect(items[2]["frame"] == .obj(["x": .double(152.5), "y": .int(-21), "w": .int(70), "h": .int(70)]))
    }
}

@Suite struct TouchSemanticsTests {
    @Test func downHighlightsUpInsideCommitsOnce() {
        var r = issueReducer()
        let down = run(&r, "touch", #"{"phase":"down","x":250,"y":20}"#)
        #expect(down.events == [Event("tab.highlighted", .obj(["seq": .int(2), "tab": .string("chat"), "phase": .string("begin")]))])
        #expect(down.value?["commit"] == .null)
        #expect(r.state.highlighted == "chat")
        #expect(r.state.selected == "home")
        let up = run(&r, "touch", #"{"phase":"up","x":255,"y":25}"#)
        #expect(up.eventNames == ["tab.highlighted", "tab.selected"])
        #expect(up.events[0].params["phase"] == .string("end"))
        #expect(up.events[1].params == .obj(["seq": .int(3), "tab": .string("chat"), "previous": .string("home"), "source": .string("user")]))
        #expect(up.effects == [.play(name: "click", gain: 1, trigger: .select)])
        #expect(up.value?["commit"] == .string("select"))
        #expect(r.state.selected == "chat")
        #expect(r.state.highlighted == nil)
        #expect(r.state.seq == 3)
    }

    @Test func upElsewhereCancelsTheHighlightWithoutCommitting() {
        var r = issueReducer()
        _ = run(&r, "touch", #"{"phase":"down","x":250,"y":20}"#)
        let up = run(&r, "touch", #"{"phase":"up","x":20,"y":20}"#)
        #expect(up.events == [Event("tab.highlighted", .obj(["seq": .int(3), "tab": .string("chat"), "phase": .string("cancel")]))])
        #expect(up.effects.isEmpty)
        #expect(r.state.selected == "home")
        #expect(r.state.highlighted == nil)
    }

    @Test func upOffTheBarCancels() {
        var r = issueReducer()
        _ = run(&r, "touch", #"{"phase":"down","x":250,"y":20}"#)
        let up = run(&r, "touch", #"{"phase":"up","x":250,"y":-80}"#)
        #expect(up.events.first?.params["phase"] == .string("cancel"))
        #expect(r.state.selected == "home")
    }

    @Test func cancelAfterDownLeavesNoHighlight() {
        var r = issueReducer()
        _ = run(&r, "touch", #"{"phase":"down","x":250,"y":20}"#)
        let c = run(&r, "touch", #"{"phase":"cancel","x":250,"y":20}"#)
        #expect(c.events == [Event("tab.highlighted", .obj(["seq": .int(3), "tab": .string("chat"), "phase": .string("cancel")]))])
        #expect(r.state.highlighted == nil)
        #expect(r.state.selected == "home")
        // A later up belongs to no touch: nothing happens.
        let up = run(&r, "touch", #"{"phase":"up","x":250,"y":20}"#)
        #expect(up.events.isEmpty)
        #expect(up.value?["ignored"] == .bool(true))
        #expect(r.state.selected == "home")
    }

    @Test func tapOnTheSelectedTabIsAReselect() {
        var r = issueReducer()
        let (_, up) = tap(&r, 20, 30)
        #expect(up.eventNames == ["tab.highlighted", "tab.reselected"])
        #expect(up.value?["commit"] == .string("reselect"))
        #expect(up.effects == [.play(name: "reselect", gain: 1, trigger: .reselect)])
    }

    @Test func tapOnTheCenterTriggersItsActionAndKeepsTheSelection() {
        var r = issueReducer()
        let (_, up) = tap(&r, 187.5, 0)
        #expect(up.events(("action.triggered")) == [.obj(["seq": .int(3), "tab": .string("post"), "action": .string("compose")])])
        #expect(up.value?["commit"] == .string("action"))
        #expect(up.effects == [.play(name: "center", gain: 1, trigger: .center)])
        #expect(r.state.selected == "home")
        #expect(r.state.activeAction == "post")
    }

    @Test(arguments: [(20.0, 30.0), (250, 20), (187.5, 0)])
    func everyCommitProducesExactlyOneCommitEvent(_ x: Double, _ y: Double) {
        for commitOn in ["down", "up"] {
            var r = issueReducer(settings: #"{"commit_on":"\#(commitOn)"}"#)
            let (down, up) = tap(&r, x, y)
            let commits = (down.events + up.events).filter { ["tab.selected", "tab.reselected", "action.triggered"].contains($0.method) }
            #expect(commits.count == 1, "commit_on \(commitOn)")
            #expect(r.state.highlighted == nil)
        }
    }

    @Test func commitOnDownSelectsAtOnceAndUpOnlyEndsTheHighlight() {
        var r = issueReducer(settings: #"{"commit_on":"down"}"#)
        let down = run(&r, "touch", #"{"phase":"down","x":250,"y":20}"#)
        #expect(down.eventNames == ["tab.highlighted", "tab.selected"])
        #expect(down.value?["commit"] == .string("select"))
        #expect(r.state.selected == "chat")
        // Sliding off and lifting does not undo a commit made on down.
        let up = run(&r, "touch", #"{"phase":"up","x":20,"y":20}"#)
        #expect(up.eventNames == ["tab.highlighted"])
        #expect(up.events[0].params["phase"] == .string("cancel"))
        #expect(r.state.selected == "chat")
    }

    @Test func replayedTouchSequenceIsIgnored() {
        var r = issueReducer()
        let first = tap(&r, 250, 20, id: 41)
        #expect(first.up.value?["commit"] == .string("select"))
        let seq = r.state.seq
        // The same sequence again (a front end resending after a reconnect).
        let again = tap(&r, 250, 20, id: 41)
        #expect(again.down.value?["ignored"] == .bool(true))
        #expect(again.up.value?["ignored"] == .bool(true))
        #expect(again.down.events.isEmpty && again.up.events.isEmpty)
        #expect(again.up.effects.isEmpty)
        #expect(r.state.seq == seq)
        // A repeated up alone is ignored too; a new id works.
        #expect(run(&r, "touch", #"{"phase":"up","x":250,"y":20,"touch_id":41}"#).events.isEmpty)
        #expect(tap(&r, 250, 20, id: 42).up.value?["commit"] == .string("reselect"))
    }

    @Test func upWithAnotherIdDoesNotEndTheTouch() {
        var r = issueReducer()
        _ = run(&r, "touch", #"{"phase":"down","x":250,"y":20,"touch_id":7}"#)
        #expect(run(&r, "touch", #"{"phase":"up","x":250,"y":20,"touch_id":8}"#).value?["ignored"] == .bool(true))
        #expect(r.state.highlighted == "chat")
        #expect(run(&r, "touch", #"{"phase":"up","x":250,"y":20,"touch_id":7}"#).value?["commit"] == .string("select"))
    }

    @Test func aNewDownCancelsTheTouchInProgress() {
        var r = issueReducer()
        _ = run(&r, "touch", #"{"phase":"down","x":250,"y":20}"#)
        let second = run(&r, "touch", #"{"phase":"down","x":100,"y":20}"#)
        #expect(second.events.map { $0.params["phase"] } == [.string("cancel"), .string("begin")])
        #expect(second.events.map { $0.params["tab"] } == [.string("chat"), .string("nearby")])
        #expect(r.state.highlighted == "nearby")
    }

    @Test func downOnNothingEndsATouchInProgress() {
        var r = issueReducer()
        _ = run(&r, "touch", #"{"phase":"down","x":250,"y":20}"#)
        let o = run(&r, "touch", #"{"phase":"down","x":250,"y":-60}"#)
        #expect(o.events.first?.params["phase"] == .string("cancel"))
        #expect(r.state.highlighted == nil)
    }

    @Test func hidingTheBarCancelsATouch() {
        var r = issueReducer()
        _ = run(&r, "touch", #"{"phase":"down","x":250,"y":20}"#)
        let hide = run(&r, "bar.set_hidden", #"{"hidden":true,"animated":false}"#)
        #expect(hide.eventNames == ["bar.visibility", "tab.highlighted"])
        #expect(r.state.highlighted == nil)
        _ = run(&r, "bar.set_hidden", #"{"hidden":false,"animated":false}"#)
        #expect(run(&r, "touch", #"{"phase":"up","x":250,"y":20}"#).events.isEmpty)
        #expect(r.state.selected == "home")
    }

    @Test func touchParamsAreChecked() {
        var r = issueReducer()
        #expect(run(&r, "touch", #"{"phase":"move","x":1,"y":1}"#).error?.field == "phase")
        #expect(run(&r, "touch", #"{"phase":"down","y":1}"#).error?.field == "x")
        #expect(run(&r, "touch", #"{"phase":"down","x":1,"y":"2"}"#).error?.field == "y")
        #expect(run(&r, "touch", #"{"phase":"down","x":1,"y":2,"touch_id":-1}"#).error?.field == "touch_id")
        #expect(run(&r, "touch", #"{"x":1,"y":2}"#).error?.field == "phase")
    }
}

@Suite struct HighlightTests {
    @Test func beginEndAndCancel() {
        var r = issueReducer()
        let b = run(&r, "tab.highlight", #"{"tab":"me","phase":"begin"}"#)
        #expect(b.value == .obj(["seq": .int(2)]))
        #expect(b.events == [Event("tab.highlighted", .obj(["seq": .int(2), "tab": .string("me"), "phase": .string("begin")]))])
        #expect(r.state.highlighted == "me")
        // Beginning another cancels the first.
        let other = run(&r, "tab.highlight", #"{"tab":"chat","phase":"begin"}"#)
        #expect(other.events.map { $0.params["phase"] } == [.string("cancel"), .string("begin")])
        let e = run(&r, "tab.highlight", #"{"tab":"chat","phase":"end"}"#)
        #expect(e.events.first?.params["phase"] == .string("end"))
        #expect(r.state.highlighted == nil)
        // Ending what is not highlighted changes nothing.
        #expect(run(&r, "tab.highlight", #"{"tab":"chat","phase":"cancel"}"#).events.isEmpty)
        #expect(r.state.selected == "home")
    }

    @Test func errors() {
        var r = issueReducer()
        #expect(run(&r, "tab.highlight", #"{"tab":"zz","phase":"begin"}"#).error?.kind == "unknown_tab")
        #expect(run(&r, "tab.highlight", #"{"tab":"me","phase":"hold"}"#).error?.field == "phase")
        r.state.items[4].enabled = false
        #expect(run(&r, "tab.highlight", #"{"tab":"me","phase":"begin"}"#).error?.kind == "not_selectable")
    }
}
