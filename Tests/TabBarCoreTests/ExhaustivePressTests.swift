import Testing
@testable import TabBarCore

// `click_on: "press"` as exhaustive steps (TestStore, ExhaustiveSupport.swift): the click of a
// touch that would commit plays on its `down`, the commit on `up` is silent, and a touch that
// slides off or is cancelled keeps its click and commits nothing. The built-in bar: home 0,
// nearby 76.25, post 152.5 (center, sound "center", action "compose"), chat 222.5, me 298.75.

/// A highlight's begin that started `sound` (a press).
func pressEvent(_ seq: Int, _ tab: String, sound: String) -> ExpectedEvent {
    ExpectedEvent("tab.highlighted", #"{"seq":\#(seq),"tab":"\#(tab)","phase":"begin","sound":"\#(sound)"}"#)
}

/// The built-in bar with `click_on: "press"`.
func pressBar() -> BarState {
    var bar = BarState.defaultBar
    bar.settings.clickOn = .press
    return bar
}

@Suite struct ExhaustivePressTests {
    @Test func theClickPlaysOnTheDownAndTheCommitOnTheUpIsSilent() {
        let store = TestStore(pressBar())
        store.send(touchLine("down", 260, 20, id: 1), reply: touchReply(1, "chat", sound: "click"),
                   events: [pressEvent(1, "chat", sound: "click")],
                   effects: [.play(name: "click", gain: 1, trigger: .select)], journal: .touchHighlight) {
            $0.seq = 1; $0.highlighted = "chat"
        }
        store.send(touchLine("up", 261, 30, id: 1), reply: touchReply(2, "chat", commit: "select"),
                   events: [highlightEvent(2, "chat", "end"), selectedEvent(2, "chat", previous: "home")],
                   journal: .select(tab: "chat", source: .user)) {
            $0.seq = 2; $0.highlighted = nil; $0.selected = "chat"; $0.previous = "home"
        }
        // Pressing the selected tab plays the reselect sound, on the press too.
        store.send(touchLine("down", 260, 20, id: 2), reply: touchReply(3, "chat", sound: "reselect"),
                   events: [pressEvent(3, "chat", sound: "reselect")],
                   effects: [.play(name: "reselect", gain: 1, trigger: .reselect)]) {
            $0.seq = 3; $0.highlighted = "chat"
        }
        store.send(touchLine("up", 260, 20, id: 2), reply: touchReply(4, "chat", commit: "reselect"),
                   events: [highlightEvent(4, "chat", "end"), reselectedEvent(4, "chat")]) {
            $0.seq = 4; $0.highlighted = nil
        }
        // The center plays its own sound on the press; the trigger on up plays nothing.
        store.send(touchLine("down", 187.5, 0, id: 3), reply: touchReply(5, "post", sound: "center"),
                   events: [pressEvent(5, "post", sound: "center")],
                   effects: [.play(name: "center", gain: 1, trigger: .center)]) {
            $0.seq = 5; $0.highlighted = "post"
        }
        store.send(touchLine("up", 187.5, 0, id: 3), reply: touchReply(6, "post", commit: "action"),
                   events: [highlightEvent(6, "post", "end"), ExpectedEvent("action.triggered", #"{"seq":6,"tab":"post","action":"compose"}"#)],
                   journal: .actionTrigger(tab: "post", source: .user)) {
            $0.seq = 6; $0.highlighted = nil; $0.activeAction = "post"
        }
    }

    /// A press that slides off (an up elsewhere) or is cancelled keeps the click it played and
    /// commits nothing; the cancel plays nothing more.
    @Test func aPressThatSlidesOffOrIsCancelledClicksAndCommitsNothing() {
        let store = TestStore(pressBar())
        store.send(touchLine("down", 330, 20, id: 4), reply: touchReply(1, "me", sound: "click"),
                   events: [pressEvent(1, "me", sound: "click")], effects: [.play(name: "click", gain: 1, trigger: .select)]) {
            $0.seq = 1; $0.highlighted = "me"
        }
        store.send(touchLine("up", 30, 20, id: 4), reply: touchReply(2, "home"), events: [highlightEvent(2, "me", "cancel")],
                   journal: .touchHighlight) {
            $0.seq = 2; $0.highlighted = nil
        }
        store.send(touchLine("down", 100, 20, id: 5), reply: touchReply(3, "nearby", sound: "click"),
                   events: [pressEvent(3, "nearby", sound: "click")], effects: [.play(name: "click", gain: 1, trigger: .select)]) {
            $0.seq = 3; $0.highlighted = "nearby"
        }
        store.send(touchLine("cancel", 100, 20, id: 5), reply: touchReply(4, "nearby"), events: [highlightEvent(4, "nearby", "cancel")]) {
            $0.seq = 4; $0.highlighted = nil
        }
        // Off the bar: nothing is hit, consumed or played.
        store.send(touchLine("down", 100, 200, id: 6), reply: touchReply(4, nil, consumed: false))
    }

    /// A down while a touch is in progress cancels it (its click stays played) and presses anew.
    @Test func aSecondDownCancelsTheFirstAndPressesAgain() {
        let store = TestStore(pressBar())
        store.send(touchLine("down", 330, 20, id: 7), reply: touchReply(1, "me", sound: "click"),
                   events: [pressEvent(1, "me", sound: "click")], effects: [.play(name: "click", gain: 1, trigger: .select)]) {
            $0.seq = 1; $0.highlighted = "me"
        }
        store.send(touchLine("down", 330, 20, id: 8), reply: touchReply(2, "me", sound: "click"),
                   events: [highlightEvent(2, "me", "cancel"), pressEvent(2, "me", sound: "click")],
                   effects: [.play(name: "click", gain: 1, trigger: .select)]) {
            $0.seq = 2; $0.highlighted = "me"
        }
        store.send(touchLine("up", 330, 20, id: 7), reply: touchReply(2, "me", ignored: true))
        store.send(touchLine("up", 330, 20, id: 8), reply: touchReply(3, "me", commit: "select"),
                   events: [highlightEvent(3, "me", "end"), selectedEvent(3, "me", previous: "home")]) {
            $0.seq = 3; $0.highlighted = nil; $0.selected = "me"; $0.previous = "home"
        }
    }

    /// Nothing that would not commit clicks: a disabled item, the center's passed-through
    /// corner, the bar's background; a program's `tab.select` is as before (silent), a user's clicks.
    @Test func onlyAPressThatWouldCommitClicksAndSelectsAreUnaffected() {
        var bar = pressBar()
        bar.items[1].enabled = false
        let store = TestStore(bar)
        store.send(touchLine("down", 100, 20, id: 9), reply: touchReply(0, nil))
        store.send(touchLine("down", 153, -20, id: 10), reply: touchReply(0, nil, consumed: false))
        store.send(req("tab.select", #"{"tab":"chat","source":"program"}"#), reply: selectReply(1, "chat", previous: "home"),
                   events: [selectedEvent(1, "chat", previous: "home", source: "program")]) {
            $0.seq = 1; $0.selected = "chat"; $0.previous = "home"
        }
        store.send(req("tab.select", #"{"tab":"me"}"#), reply: selectReply(2, "me", previous: "chat"),
                   events: [selectedEvent(2, "me", previous: "chat")], effects: [.play(name: "click", gain: 1, trigger: .select)]) {
            $0.seq = 2; $0.selected = "me"; $0.previous = "chat"
        }
        // A front end's own highlight (tab.highlight) is no touch: it plays nothing.
        store.send(req("tab.highlight", #"{"tab":"chat","phase":"begin"}"#), reply: .result(#"{"seq":3}"#),
                   events: [highlightEvent(3, "chat", "begin")]) { $0.seq = 3; $0.highlighted = "chat" }
        // A touch on the item it highlights begins no highlight, so it does not press: its
        // click plays with the commit.
        store.send(touchLine("down", 260, 20, id: 11), reply: touchReply(3, "chat"))
        store.send(touchLine("up", 260, 20, id: 11), reply: touchReply(4, "chat", commit: "select", sound: "click"),
                   events: [highlightEvent(4, "chat", "end"), selectedEvent(4, "chat", previous: "me")],
                   effects: [.play(name: "click", gain: 1, trigger: .select)]) {
            $0.seq = 4; $0.highlighted = nil; $0.selected = "chat"; $0.previous = "me"
        }
    }

    /// The item's own `sound`, the bar's sound map and `none` apply to the press as to the
    /// commit; a silenced press leaves the commit silent too; the quiet profile's gain applies.
    @Test func thePressPlaysTheSoundTheCommitWouldHave() {
        var bar = pressBar()
        bar.items[3].sound = "pop"
        bar.settings.sounds = ["select": "slide", "center": "none"]
        bar.feedback.profile = .quiet
        let store = TestStore(bar)
        store.send(touchLine("down", 260, 20, id: 12), reply: touchReply(1, "chat", sound: "pop"),
                   events: [pressEvent(1, "chat", sound: "pop")], effects: [.play(name: "pop", gain: 0.35, trigger: .select)]) {
            $0.seq = 1; $0.highlighted = "chat"
        }
        store.send(touchLine("up", 260, 20, id: 12), reply: touchReply(2, "chat", commit: "select"),
                   events: [highlightEvent(2, "chat", "end"), selectedEvent(2, "chat", previous: "home")]) {
            $0.seq = 2; $0.highlighted = nil; $0.selected = "chat"; $0.previous = "home"
        }
        store.send(touchLine("down", 330, 20, id: 13), reply: touchReply(3, "me", sound: "slide"),
                   events: [pressEvent(3, "me", sound: "slide")], effects: [.play(name: "slide", gain: 0.35, trigger: .select)]) {
            $0.seq = 3; $0.highlighted = "me"
        }
        store.send(touchLine("cancel", 330, 20, id: 13), reply: touchReply(4, "me"), events: [highlightEvent(4, "me", "cancel")]) {
            $0.seq = 4; $0.highlighted = nil
        }
        // The center's sound is "none" (and quiet keeps no action sounds): no click, on down or up.
        store.send(touchLine("down", 187.5, 0, id: 14), reply: touchReply(5, "post"), events: [highlightEvent(5, "post", "begin")]) {
            $0.seq = 5; $0.highlighted = "post"
        }
        store.send(touchLine("up", 187.5, 0, id: 14), reply: touchReply(6, "post", commit: "action"),
                   events: [highlightEvent(6, "post", "end"), ExpectedEvent("action.triggered", #"{"seq":6,"tab":"post","action":"compose"}"#)]) {
            $0.seq = 6; $0.highlighted = nil; $0.activeAction = "post"
        }
    }

    /// With cues, the highlight's cue names the press's sound and the commit's cues name none.
    @Test func theHighlightCueCarriesThePressSound() {
        var bar = pressBar()
        bar.settings.animation = .pulse
        let store = TestStore(bar)
        store.send(touchLine("down", 260, 20, id: 15), reply: touchReply(1, "chat", sound: "click"),
                   events: [pressEvent(1, "chat", sound: "click"),
                            ExpectedEvent("animation.cue", #"{"seq":1,"tab":"chat","trigger":"highlight","kind":"pulse","descriptor":\#(pulseSelect),"sound":"click"}"#)],
                   effects: [.play(name: "click", gain: 1, trigger: .select)]) {
            $0.seq = 1; $0.highlighted = "chat"
        }
        store.send(touchLine("up", 260, 20, id: 15), reply: touchReply(2, "chat", commit: "select"),
                   events: [highlightEvent(2, "chat", "end"), selectedEvent(2, "chat", previous: "home"),
                            ExpectedEvent("animation.cue", #"{"seq":2,"tab":"chat","trigger":"select","kind":"pulse","descriptor":\#(pulseSelect),"sound":null}"#),
                            ExpectedEvent("animation.cue", #"{"seq":2,"tab":"home","trigger":"deselect","kind":"pulse","descriptor":\#(pulseDeselect),"sound":null}"#)]) {
            $0.seq = 2; $0.highlighted = nil; $0.selected = "chat"; $0.previous = "home"
        }
    }

    /// Under `commit_on: "down"` the commit is on the press already: one click, as without press.
    @Test func commitOnDownClicksOnceWithTheCommit() {
        var bar = pressBar()
        bar.settings.commitOn = .down
        let store = TestStore(bar)
        store.send(touchLine("down", 260, 20, id: 16), reply: touchReply(1, "chat", commit: "select", sound: "click"),
                   events: [highlightEvent(1, "chat", "begin"), selectedEvent(1, "chat", previous: "home")],
                   effects: [.play(name: "click", gain: 1, trigger: .select)]) {
            $0.seq = 1; $0.highlighted = "chat"; $0.selected = "chat"; $0.previous = "home"
        }
        store.send(touchLine("up", 260, 20, id: 16), reply: touchReply(2, "chat"), events: [highlightEvent(2, "chat", "end")]) {
            $0.seq = 2; $0.highlighted = nil
        }
    }

    /// The setting is read when the finger lands: a touch pressed under "press" stays silent on
    /// its up after a switch to "commit", and one that landed under "commit" clicks on its up.
    @Test func theSettingAtTheDownDecidesWhereTheClickIs() {
        let store = TestStore()
        store.send(req("bar.configure", #"{"settings":{"click_on":"press"}}"#), reply: .state(seq: 1), events: [.configured(seq: 1)]) {
            $0.seq = 1; $0.settings.clickOn = .press
        }
        store.send(touchLine("down", 260, 20, id: 17), reply: touchReply(2, "chat", sound: "click"),
                   events: [pressEvent(2, "chat", sound: "click")], effects: [.play(name: "click", gain: 1, trigger: .select)]) {
            $0.seq = 2; $0.highlighted = "chat"
        }
        store.send(req("bar.configure", #"{"settings":{"click_on":"commit"}}"#), reply: .state(seq: 3), events: [.configured(seq: 3)]) {
            $0.seq = 3; $0.settings.clickOn = .commit
        }
        store.send(touchLine("up", 260, 20, id: 17), reply: touchReply(4, "chat", commit: "select"),
                   events: [highlightEvent(4, "chat", "end"), selectedEvent(4, "chat", previous: "home")]) {
            $0.seq = 4; $0.highlighted = nil; $0.selected = "chat"; $0.previous = "home"
        }
        store.send(touchLine("down", 330, 20, id: 18), reply: touchReply(5, "me"), events: [highlightEvent(5, "me", "begin")]) {
            $0.seq = 5; $0.highlighted = "me"
        }
        store.send(req("bar.configure", #"{"settings":{"click_on":"press"}}"#), reply: .state(seq: 6), events: [.configured(seq: 6)]) {
            $0.seq = 6; $0.settings.clickOn = .press
        }
        store.send(touchLine("up", 330, 20, id: 18), reply: touchReply(7, "me", commit: "select", sound: "click"),
                   events: [highlightEvent(7, "me", "end"), selectedEvent(7, "me", previous: "chat")],
                   effects: [.play(name: "click", gain: 1, trigger: .select)]) {
            $0.seq = 7; $0.highlighted = nil; $0.selected = "me"; $0.previous = "chat"
        }
        store.send(req("bar.configure", #"{"settings":{"click_on":"release"}}"#), reply: .failure(code: -32602,
                   data: #"{"kind":"invalid_params","field":"settings.click_on"}"#, says: #"must be one of "commit", "press", not "release""#))
        store.send(req("bar.configure", #"{"settings":{"click_on":true}}"#), reply: .error("invalid_params", field: "settings.click_on"))
    }
}
