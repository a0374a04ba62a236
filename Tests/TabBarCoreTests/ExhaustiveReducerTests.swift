import Testing
@testable import TabBarCore

// Exhaustive reducer tests, as The Composable Architecture's TestStore does them: each step
// states its reply, every event, every effect (sounds, timers) and the whole state after it;
// anything not stated fails. They speak request lines, BarState values, JSON and Effect only
// (ExhaustiveSupport.swift holds the one place that calls the reducer).
//
// The built-in bar: home 0, nearby 1, post 2 (center, sound "center", action "compose"), chat 3,
// me 4; 375 × 49, center 70 × 70 raised 21, so the tabs are 76.25 wide: home x 0, nearby 76.25,
// post 152.5, chat 222.5, me 298.75.

/// A request line with id 1.
func req(_ method: String, _ params: String = "{}") -> String {
    #"{"jsonrpc":"2.0","id":1,"method":"\#(method)","params":\#(params)"# + "}"
}

let pulseSelect = #"{"target":"item","property":"transform.scale","from":0.7,"to":1.3,"duration_ms":200,"timing":"ease_in_ease_out","autoreverse":true,"repeat":0}"#
let pulseDeselect = #"{"target":"item","property":"transform.scale","from":1.3,"to":0.7,"duration_ms":200,"timing":"ease_in_ease_out","autoreverse":true,"repeat":0}"#
func barSlide(from: Double, to: Double, ms: Int) -> String {
    #"{"target":"bar","property":"translation.y","from":\#(from),"to":\#(to),"duration_ms":\#(ms),"timing":"ease_in_ease_out","autoreverse":false,"repeat":0}"#
}
func visibilityEvent(_ seq: Int, hidden: Bool, phase: String, reasons: [String], ms: Int, stack: [Bool] = []) -> ExpectedEvent {
    ExpectedEvent("bar.visibility", #"{"seq":\#(seq),"hidden":\#(hidden),"phase":"\#(phase)","reasons":[\#(reasons.map { "\"\($0)\"" }.joined(separator: ","))],"duration_ms":\#(ms),"nav_stack":[\#(stack.map(String.init).joined(separator: ","))]}"#)
}
func visibilityJSON(hidden: Bool, phase: String, reasons: [String], stack: [Bool] = [], hold: Bool = false) -> String {
    #"{"hidden":\#(hidden),"reasons":[\#(reasons.map { "\"\($0)\"" }.joined(separator: ","))],"phase":"\#(phase)","nav_stack":[\#(stack.map(String.init).joined(separator: ","))],"push_hold":\#(hold)}"#
}

@Suite struct ExhaustiveSelectionTests {
    @Test func plainSelectReselectAndProgram() {
        let store = TestStore()
        store.send(req("tab.select", #"{"tab":"chat"}"#),
                   reply: .result(#"{"seq":1,"selected":"chat","previous":"home","reselected":false}"#),
                   events: [ExpectedEvent("tab.selected", #"{"seq":1,"tab":"chat","previous":"home","source":"user"}"#)],
                   effects: [.play(name: "click", gain: 1, trigger: .select)]) {
            $0.seq = 1; $0.selected = "chat"; $0.previous = "home"
        }
        store.send(req("tab.select", #"{"index":3}"#),
                   reply: .result(#"{"seq":2,"selected":"chat","previous":"home","reselected":true}"#),
                   events: [ExpectedEvent("tab.reselected", #"{"seq":2,"tab":"chat","source":"user"}"#)],
                   effects: [.play(name: "reselect", gain: 1, trigger: .reselect)]) { $0.seq = 2 }
        store.send(req("tab.select", #"{"index":4,"source":"program","if_seq":2}"#),
                   reply: .result(#"{"seq":3,"selected":"me","previous":"chat","reselected":false}"#),
                   events: [ExpectedEvent("tab.selected", #"{"seq":3,"tab":"me","previous":"chat","source":"program"}"#)]) {
            $0.seq = 3; $0.selected = "me"; $0.previous = "chat"
        }
    }

    @Test func refusedSelectsChangeNothing() {
        var bar = BarState.defaultBar
        bar.items[1].enabled = false
        let store = TestStore(bar)
        store.send(req("tab.select", #"{"tab":"nope"}"#), reply: .error("unknown_tab"))
        store.send(req("tab.select", #"{"index":5}"#), reply: .error("unknown_tab"))
        store.send(req("tab.select", #"{"tab":"post"}"#), reply: .error("not_selectable"))
        store.send(req("tab.select", #"{"tab":"nearby"}"#), reply: .error("not_selectable"))
        store.send(req("tab.select", #"{"tab":"chat","if_seq":7}"#), reply: .error("conflict"))
        store.send(req("tab.select", #"{"tab":"chat","index":3}"#), reply: .error("invalid_params", field: "index"))
        store.send(req("tab.select", #"{"tabb":"chat"}"#), reply: .error("invalid_params", field: "tabb"))
        store.send(req("tab.select", #"{"tab":"chat","source":"robot"}"#), reply: .error("invalid_params", field: "source"))
        store.send(req("tab.selekt"), reply: .error("method_not_found"))
        store.send("{not json", reply: .error("parse_error"))
    }

    @Test func itemSoundAndPulseCuesWithTheirSounds() {
        var bar = BarState.defaultBar
        bar.settings.animation = .pulse
        bar.items[3].sound = "pop"
        let store = TestStore(bar)
        store.send(req("tab.select", #"{"tab":"chat"}"#),
                   reply: .result(#"{"seq":1,"selected":"chat","previous":"home","reselected":false}"#),
                   events: [ExpectedEvent("tab.selected", #"{"seq":1,"tab":"chat","previous":"home","source":"user"}"#),
                            ExpectedEvent("animation.cue", #"{"seq":1,"tab":"chat","trigger":"select","kind":"pulse","descriptor":\#(pulseSelect),"sound":"pop"}"#),
                            ExpectedEvent("animation.cue", #"{"seq":1,"tab":"home","trigger":"deselect","kind":"pulse","descriptor":\#(pulseDeselect),"sound":null}"#)],
                   effects: [.play(name: "pop", gain: 1, trigger: .select)]) {
            $0.seq = 1; $0.selected = "chat"; $0.previous = "home"
        }
        store.send(req("tab.select", #"{"tab":"chat","source":"program"}"#),
                   reply: .result(#"{"seq":2,"selected":"chat","previous":"home","reselected":true}"#),
                   events: [ExpectedEvent("tab.reselected", #"{"seq":2,"tab":"chat","source":"program"}"#),
                            ExpectedEvent("animation.cue", #"{"seq":2,"tab":"chat","trigger":"reselect","kind":"pulse","descriptor":\#(pulseSelect),"sound":null}"#)]) {
            $0.seq = 2
        }
    }

    @Test func crossfadeOnSelectAndDeselectBounceOnReselect() {
        var bar = BarState.defaultBar
        bar.items[3].animation = .crossfade
        bar.items[0].animation = .bounce
        let store = TestStore(bar)
        let fade = #"{"target":"icon","transition":"crossfade","property":"bounds.size","from":{"w":25,"h":23},"to":{"w":37.5,"h":34.5},"from_icon":"bubble","to_icon":"bubble.fill","duration_ms":250,"timing":"ease_in_ease_out","autoreverse":false,"repeat":0}"#
        let unfade = #"{"target":"icon","transition":"crossfade","property":"bounds.size","from":{"w":37.5,"h":34.5},"to":{"w":25,"h":23},"from_icon":"bubble.fill","to_icon":"bubble","duration_ms":250,"timing":"ease_in_ease_out","autoreverse":false,"repeat":0}"#
        let bounce = #"{"target":"item","property":"transform.scale","keyframes":[1,1.4,0.9,1.15,0.95,1.02,1],"key_times":[0,0.1667,0.3333,0.5,0.6667,0.8333,1],"duration_ms":600,"timing":"ease_in_ease_out","autoreverse":false,"repeat":0}"#
        let unbounce = #"{"target":"item","property":"transform.scale","keyframes":[1,1.02,0.95,1.15,0.9,1.4,1],"key_times":[0,0.1667,0.3333,0.5,0.6667,0.8333,1],"duration_ms":600,"timing":"ease_in_ease_out","autoreverse":false,"repeat":0}"#
        store.send(req("tab.select", #"{"tab":"chat"}"#),
                   reply: .result(#"{"seq":1,"selected":"chat","previous":"home","reselected":false}"#),
                   events: [ExpectedEvent("tab.selected", #"{"seq":1,"tab":"chat","previous":"home","source":"user"}"#),
                            ExpectedEvent("animation.cue", #"{"seq":1,"tab":"chat","trigger":"select","kind":"crossfade","descriptor":\#(fade),"sound":"click"}"#),
                            ExpectedEvent("animation.cue", #"{"seq":1,"tab":"home","trigger":"deselect","kind":"bounce","descriptor":\#(unbounce),"sound":null}"#)],
                   effects: [.play(name: "click", gain: 1, trigger: .select)]) {
            $0.seq = 1; $0.selected = "chat"; $0.previous = "home"
        }
        store.send(req("tab.select", #"{"tab":"home"}"#),
                   reply: .result(#"{"seq":2,"selected":"home","previous":"chat","reselected":false}"#),
                   events: [ExpectedEvent("tab.selected", #"{"seq":2,"tab":"home","previous":"chat","source":"user"}"#),
                            ExpectedEvent("animation.cue", #"{"seq":2,"tab":"home","trigger":"select","kind":"bounce","descriptor":\#(bounce),"sound":"click"}"#),
                            ExpectedEvent("animation.cue", #"{"seq":2,"tab":"chat","trigger":"deselect","kind":"crossfade","descriptor":\#(unfade),"sound":null}"#)],
                   effects: [.play(name: "click", gain: 1, trigger: .select)]) {
            $0.seq = 2; $0.selected = "home"; $0.previous = "chat"
        }
        store.send(req("tab.select", #"{"tab":"home"}"#),
                   reply: .result(#"{"seq":3,"selected":"home","previous":"chat","reselected":true}"#),
                   events: [ExpectedEvent("tab.reselected", #"{"seq":3,"tab":"home","source":"user"}"#),
                            ExpectedEvent("animation.cue", #"{"seq":3,"tab":"home","trigger":"reselect","kind":"bounce","descriptor":\#(bounce),"sound":"reselect"}"#)],
                   effects: [.play(name: "reselect", gain: 1, trigger: .reselect)]) { $0.seq = 3 }
    }

    @Test func slideMovesTheIndicatorBetweenCentres() {
        var bar = BarState.defaultBar
        bar.settings.animation = .slide
        let store = TestStore(bar)
        store.send(req("tab.select", #"{"tab":"chat"}"#),
                   reply: .result(#"{"seq":1,"selected":"chat","previous":"home","reselected":false}"#),
                   events: [ExpectedEvent("tab.selected", #"{"seq":1,"tab":"chat","previous":"home","source":"user"}"#),
                            ExpectedEvent("animation.cue", #"{"seq":1,"tab":"chat","trigger":"select","kind":"slide","descriptor":{"target":"indicator","property":"position.x","from":38.125,"to":260.625,"duration_ms":500,"timing":"ease_in_ease_out","autoreverse":false,"repeat":0},"sound":"click"}"#)],
                   effects: [.play(name: "click", gain: 1, trigger: .select)]) {
            $0.seq = 1; $0.selected = "chat"; $0.previous = "home"
        }
    }

    @Test func selectWithdrawsTheScrollReasonAndShowsTheBar() {
        var bar = BarState.defaultBar
        bar.visibility = Visibility(reasons: [.scroll])
        bar.activeAction = "post"
        let store = TestStore(bar)
        store.send(req("tab.select", #"{"tab":"chat"}"#), at: 1000,
                   reply: .result(#"{"seq":1,"selected":"chat","previous":"home","reselected":false}"#),
                   events: [ExpectedEvent("tab.selected", #"{"seq":1,"tab":"chat","previous":"home","source":"user"}"#),
                            visibilityEvent(1, hidden: false, phase: "showing", reasons: [], ms: 500),
                            ExpectedEvent("animation.cue", #"{"seq":1,"tab":null,"trigger":"visibility","kind":"slide","descriptor":\#(barSlide(from: 49, to: 0, ms: 500)),"sound":null}"#)],
                   effects: [.play(name: "click", gain: 1, trigger: .select), .timer(.visibility, atMs: 1500)]) {
            $0.seq = 1; $0.selected = "chat"; $0.previous = "home"; $0.activeAction = nil
            $0.visibility.reasons = []; $0.visibility.phase = .showing
            $0.visibility.phaseStartMs = 1000; $0.visibility.phaseDurationMs = 500; $0.visibility.phaseFrom = 1
        }
        store.fire(.visibility, reply: .result(#"{"seq":2}"#),
                   events: [visibilityEvent(2, hidden: false, phase: "idle", reasons: [], ms: 0)]) {
            $0.seq = 2; $0.visibility = Visibility()
        }
    }
}

@Suite struct ExhaustiveActionTests {
    @Test func centerTriggerFinishAndSelectClearing() {
        let store = TestStore()
        store.send(req("action.trigger", #"{"tab":"post"}"#), reply: .result(#"{"seq":1}"#),
                   events: [ExpectedEvent("action.triggered", #"{"seq":1,"tab":"post","action":"compose"}"#)],
                   effects: [.play(name: "center", gain: 1, trigger: .center)]) { $0.seq = 1; $0.activeAction = "post" }
        store.send(req("action.finish", #"{"tab":"post"}"#), reply: .result(#"{"seq":2}"#),
                   events: [ExpectedEvent("action.finished", #"{"seq":2,"tab":"post"}"#)]) { $0.seq = 2; $0.activeAction = nil }
        store.send(req("action.finish", #"{"tab":"post"}"#), reply: .result(#"{"seq":2}"#))
        store.send(req("action.trigger", #"{"tab":"post","source":"program"}"#), reply: .result(#"{"seq":3}"#),
                   events: [ExpectedEvent("action.triggered", #"{"seq":3,"tab":"post","action":"compose"}"#)]) {
            $0.seq = 3; $0.activeAction = "post"
        }
        store.send(req("tab.select", #"{"tab":"home","source":"program"}"#),
                   reply: .result(#"{"seq":4,"selected":"home","previous":null,"reselected":true}"#),
                   events: [ExpectedEvent("tab.reselected", #"{"seq":4,"tab":"home","source":"program"}"#)]) {
            $0.seq = 4; $0.activeAction = nil
        }
        store.send(req("action.trigger", #"{"tab":"home"}"#), reply: .error("invalid_params", field: "tab"))
        store.send(req("action.trigger", #"{"tab":"nope"}"#), reply: .error("unknown_tab"))
        store.send(req("action.finish", #"{"tab":"nope"}"#), reply: .error("unknown_tab"))
    }

    @Test func actionItemsPlayTheActionSoundAndDisabledOnesRefuse() {
        let bar = BarState(items: [Item(id: "home"), Item(id: "rec", kind: .action, action: "record_video"),
                                   Item(id: "off", kind: .action, enabled: false)], selected: "home")
        let store = TestStore(bar)
        store.send(req("action.trigger", #"{"tab":"rec"}"#), reply: .result(#"{"seq":1}"#),
                   events: [ExpectedEvent("action.triggered", #"{"seq":1,"tab":"rec","action":"record_video"}"#)],
                   effects: [.play(name: "action", gain: 1, trigger: .action)]) { $0.seq = 1; $0.activeAction = "rec" }
        store.send(req("action.trigger", #"{"tab":"off"}"#), reply: .error("not_selectable"))
    }
}

@Suite struct ExhaustiveBadgeTests {
    @Test func countsDotsTextsAndRemoval() {
        let store = TestStore()
        let big = #"{"kind":"count","value":120,"display":"99+"}"#
        store.send(req("badge.set", #"{"tab":"chat","count":120}"#), reply: .result(#"{"seq":1,"badge":\#(big)}"#),
                   events: [ExpectedEvent("badge.changed", #"{"seq":1,"tab":"chat","badge":\#(big)}"#)]) {
            $0.seq = 1; $0.items[3].badge = .count(120)
        }
        store.send(req("badge.set", #"{"tab":"chat","count":120}"#), reply: .result(#"{"seq":1,"badge":\#(big)}"#))
        store.send(req("badge.set", #"{"tab":"chat","count":0}"#), reply: .result(#"{"seq":2,"badge":null}"#),
                   events: [ExpectedEvent("badge.changed", #"{"seq":2,"tab":"chat","badge":null}"#)]) {
            $0.seq = 2; $0.items[3].badge = nil
        }
        let cut = #"{"kind":"text","value":"a text much too long","display":"a text much too…"}"#
        store.send(req("badge.set", #"{"tab":"me","text":"a text much too long"}"#), reply: .result(#"{"seq":3,"badge":\#(cut)}"#),
                   events: [ExpectedEvent("badge.changed", #"{"seq":3,"tab":"me","badge":\#(cut)}"#)]) {
            $0.seq = 3; $0.items[4].badge = .text("a text much too long")
        }
        store.send(req("badge.clear", #"{"tab":"me"}"#), reply: .result(#"{"seq":4}"#),
                   events: [ExpectedEvent("badge.changed", #"{"seq":4,"tab":"me","badge":null}"#)]) {
            $0.seq = 4; $0.items[4].badge = nil
        }
        store.send(req("badge.clear", #"{"tab":"me"}"#), reply: .result(#"{"seq":4}"#))
        store.send(req("badge.set", #"{"tab":"me","count":1,"dot":true}"#), reply: .error("invalid_params"))
        store.send(req("badge.set", #"{"tab":"me","text":""}"#), reply: .error("invalid_params", field: "text"))
        store.send(req("badge.set", #"{"tab":"me","dot":false}"#), reply: .error("invalid_params", field: "dot"))
        store.send(req("badge.set", #"{"tab":"zz","dot":true}"#), reply: .error("unknown_tab"))
    }

    @Test func hiddenBadgesKeepTheirValue() {
        let store = TestStore()
        let dot = #"{"kind":"dot","display":""}"#
        store.send(req("badge.set", #"{"tab":"me","dot":true,"hidden":true}"#),
                   reply: .result(#"{"seq":1,"badge":null,"hidden_badge":\#(dot)}"#),
                   events: [ExpectedEvent("badge.changed", #"{"seq":1,"tab":"me","badge":null,"hidden_badge":\#(dot)}"#)]) {
            $0.seq = 1; $0.items[4].badge = .dot; $0.items[4].badgeHidden = true
        }
        store.send(req("badge.set", #"{"tab":"me","hidden":false}"#), reply: .result(#"{"seq":2,"badge":\#(dot)}"#),
                   events: [ExpectedEvent("badge.changed", #"{"seq":2,"tab":"me","badge":\#(dot)}"#)]) {
            $0.seq = 2; $0.items[4].badgeHidden = false
        }
        // Hiding nothing changes nothing.
        store.send(req("badge.set", #"{"tab":"chat","hidden":true}"#), reply: .result(#"{"seq":2,"badge":null}"#))
    }

    @Test func badgeCuesAndSoundsAndCenterItemsIgnored() {
        var bar = BarState.defaultBar
        bar.settings.animation = .pulse
        var sounds = SoundMap()
        sounds.badge = "badge"
        let store = TestStore(bar, sounds: sounds)
        store.send(req("badge.set", #"{"tab":"chat","count":3}"#),
                   reply: .result(#"{"seq":1,"badge":{"kind":"count","value":3,"display":"3"}}"#),
                   events: [ExpectedEvent("badge.changed", #"{"seq":1,"tab":"chat","badge":{"kind":"count","value":3,"display":"3"}}"#),
                            ExpectedEvent("animation.cue", #"{"seq":1,"tab":"chat","trigger":"badge","kind":"pulse","descriptor":{"target":"badge","property":"transform.scale","from":0.7,"to":1.3,"duration_ms":200,"timing":"ease_in_ease_out","autoreverse":true,"repeat":0},"sound":"badge"}"#)],
                   effects: [.play(name: "badge", gain: 1, trigger: .badge)]) { $0.seq = 1; $0.items[3].badge = .count(3) }
        store.send(req("badge.set", #"{"tab":"post","count":3}"#), reply: .result(#"{"seq":1,"badge":null,"ignored":true}"#))
    }
}

@Suite struct ExhaustiveFeedbackTests {
    @Test func quietKeepsOnlySelectionClicksAndSilentNone() {
        let store = TestStore()
        store.send(req("feedback.set", #"{"profile":"quiet","volume":0.5}"#),
                   reply: .result(#"{"seq":1,"feedback":{"profile":"quiet","volume":0.5}}"#),
                   events: [ExpectedEvent("feedback.changed", #"{"seq":1,"feedback":{"profile":"quiet","volume":0.5}}"#)]) {
            $0.seq = 1; $0.feedback = Feedback(profile: .quiet, volume: 0.5)
        }
        store.send(req("feedback.set", #"{"profile":"quiet"}"#), reply: .result(#"{"seq":1,"feedback":{"profile":"quiet","volume":0.5}}"#))
        store.send(req("tab.select", #"{"tab":"chat"}"#),
                   reply: .result(#"{"seq":2,"selected":"chat","previous":"home","reselected":false}"#),
                   events: [ExpectedEvent("tab.selected", #"{"seq":2,"tab":"chat","previous":"home","source":"user"}"#)],
                   effects: [.play(name: "click", gain: 0.5 * 0.35, trigger: .select)]) {
            $0.seq = 2; $0.selected = "chat"; $0.previous = "home"
        }
        store.send(req("action.trigger", #"{"tab":"post"}"#), reply: .result(#"{"seq":3}"#),
                   events: [ExpectedEvent("action.triggered", #"{"seq":3,"tab":"post","action":"compose"}"#)]) {
            $0.seq = 3; $0.activeAction = "post"
        }
        store.send(req("feedback.set", #"{"profile":"silent"}"#), reply: .result(#"{"seq":4,"feedback":{"profile":"silent","volume":0.5}}"#),
                   events: [ExpectedEvent("feedback.changed", #"{"seq":4,"feedback":{"profile":"silent","volume":0.5}}"#)]) {
            $0.seq = 4; $0.feedback.profile = .silent
        }
        store.send(req("tab.select", #"{"tab":"chat"}"#),
                   reply: .result(#"{"seq":5,"selected":"chat","previous":"home","reselected":true}"#),
                   events: [ExpectedEvent("tab.reselected", #"{"seq":5,"tab":"chat","source":"user"}"#)]) {
            $0.seq = 5; $0.activeAction = nil
        }
        store.send(req("feedback.set", #"{"volume":2}"#), reply: .error("invalid_params", field: "volume"))
        store.send(req("feedback.set"), reply: .error("invalid_params"))
    }
}

@Suite struct ExhaustiveConfigureTests {
    @Test func aNewBarInFull() {
        let store = TestStore()
        let state = #"{"items":[{"id":"a","title":"A","kind":"tab","enabled":true,"badge":null,"presentation":{"title":"A","icon":null,"morphed":false},"frame":{"x":0,"y":0,"w":187.5,"h":49}},{"id":"b","title":"b","kind":"tab","enabled":true,"badge":null,"presentation":{"title":"b","icon":null,"morphed":false},"frame":{"x":187.5,"y":0,"w":187.5,"h":49}}],"selected":"b","previous":null,"highlighted":null,"active_action":null,"visibility":{"hidden":false,"reasons":[],"phase":"idle","nav_stack":[],"push_hold":false},"layout":{"width":375,"height":49,"safe_bottom":0,"center":{"width":70,"height":70,"raise":21,"shape":"circle"},"rtl":false},"feedback":{"profile":"full","volume":1},"settings":{"commit_on":"up","click_on":"commit","center_corners":"pass_through","animation":"none","action_badges":false,"scroll_threshold":24,"hide_duration_ms":500,"max_count":99,"max_chars":16,"sounds":{}},"animations":[]}"#
        store.send(req("bar.configure", #"{"items":[{"id":"a","title":"A"},{"id":"b"}],"selected":"b"}"#),
                   reply: .result(#"{"seq":1,"state":\#(state)}"#),
                   events: [ExpectedEvent("bar.configured", #"{"seq":1,"state":\#(state)}"#)]) {
            $0.seq = 1; $0.items = [Item(id: "a", title: "A"), Item(id: "b")]; $0.selected = "b"; $0.previous = nil
        }
    }

    @Test func fallbackSelectionKeptBadgesAndNoChange() {
        var bar = BarState.defaultBar
        bar.selected = "chat"
        bar.previous = "home"
        bar.items[4].badge = .count(3)
        bar.items[0].badge = .dot
        let store = TestStore(bar)
        // chat (index 3) goes: the nearest selectable neighbour is me (index 2 now); home's badge is removed.
        store.send(req("bar.configure", #"{"items":[{"id":"home","badge":null},{"id":"nearby"},{"id":"me"}]}"#),
                   reply: .state(seq: 1), events: [.configured(seq: 1)]) {
            $0.seq = 1; $0.items = [Item(id: "home"), Item(id: "nearby"), Item(id: "me", badge: .count(3))]
            $0.selected = "me"; $0.previous = nil
        }
        store.send(req("bar.configure", #"{"layout":{"width":375}}"#), reply: .state(seq: 1))
        store.send(req("bar.configure", #"{"layout":{"width":300,"rtl":true},"settings":{"commit_on":"down","animation":"bounce"}}"#),
                   reply: .state(seq: 2), events: [.configured(seq: 2)]) {
            $0.seq = 2; $0.layout.width = 300; $0.layout.rtl = true; $0.settings.commitOn = .down; $0.settings.animation = .bounce
        }
    }

    @Test func invalidBarsKeepThePreviousOne() {
        let store = TestStore()
        store.send(req("bar.configure", #"{"items":[{"id":"a"},{"id":"a"}]}"#), reply: .error("invalid_params", field: "items[1].id"))
        store.send(req("bar.configure", #"{"items":[{"id":"a"},{"id":"c","kind":"center"}]}"#), reply: .error("invalid_params", field: "items[1].kind"))
        store.send(req("bar.configure", #"{"items":[{"id":"a","kind":"center"},{"id":"b","kind":"center"},{"id":"c"}]}"#),
                   reply: .error("invalid_params", field: "items[1].kind"))
        store.send(req("bar.configure", #"{"items":[{"id":"a","enabled":false},{"id":"r","kind":"action"}]}"#), reply: .error("invalid_params", field: "items"))
        store.send(req("bar.configure", #"{"items":[]}"#), reply: .error("invalid_params", field: "items"))
        store.send(req("bar.configure", #"{"items":[{"id":"a"},{"id":"b"},{"id":"c"},{"id":"d"},{"id":"e"},{"id":"f"}]}"#), reply: .error("limit_exceeded"))
        store.send(req("bar.configure", #"{"items":[{"id":"a"},{"id":"b"}],"selected":"c"}"#), reply: .error("unknown_tab"))
        store.send(req("bar.configure", #"{"layout":{"safe_bottom":50}}"#), reply: .error("invalid_params", field: "layout.safe_bottom"))
        store.send(req("bar.configure", #"{"settings":{"commit_on":"sideways"}}"#), reply: .error("invalid_params", field: "settings.commit_on"))
        store.send(req("bar.configure"), reply: .error("invalid_params", field: "items"))
    }
}

@Suite struct ExhaustiveTouchTests {
    @Test func tapOnATabCommitsOnUpAndAReplayIsIgnored() {
        let store = TestStore()
        store.send(req("touch", #"{"phase":"down","x":260,"y":20,"touch_id":1}"#),
                   reply: .result(#"{"seq":1,"target":"chat","consumed":true,"commit":null}"#),
                   events: [ExpectedEvent("tab.highlighted", #"{"seq":1,"tab":"chat","phase":"begin"}"#)]) {
            $0.seq = 1; $0.highlighted = "chat"
        }
        store.send(req("touch", #"{"phase":"up","x":261,"y":30,"touch_id":1}"#),
                   reply: .result(#"{"seq":2,"target":"chat","consumed":true,"commit":"select","sound":"click"}"#),
                   events: [ExpectedEvent("tab.highlighted", #"{"seq":2,"tab":"chat","phase":"end"}"#),
                            ExpectedEvent("tab.selected", #"{"seq":2,"tab":"chat","previous":"home","source":"user"}"#)],
                   effects: [.play(name: "click", gain: 1, trigger: .select)]) {
            $0.seq = 2; $0.highlighted = nil; $0.selected = "chat"; $0.previous = "home"
        }
        store.send(req("touch", #"{"phase":"down","x":260,"y":20,"touch_id":1}"#),
                   reply: .result(#"{"seq":2,"target":"chat","consumed":true,"commit":null,"ignored":true}"#))
        store.send(req("touch", #"{"phase":"up","x":260,"y":20}"#),
                   reply: .result(#"{"seq":2,"target":"chat","consumed":true,"commit":null,"ignored":true}"#))
    }

    @Test func upElsewhereCancelsAndADownCancelsTheOldTouch() {
        let store = TestStore()
        store.send(req("touch", #"{"phase":"down","x":330,"y":20,"touch_id":2}"#),
                   reply: .result(#"{"seq":1,"target":"me","consumed":true,"commit":null}"#),
                   events: [ExpectedEvent("tab.highlighted", #"{"seq":1,"tab":"me","phase":"begin"}"#)]) { $0.seq = 1; $0.highlighted = "me" }
        store.send(req("touch", #"{"phase":"down","x":100,"y":20,"touch_id":3}"#),
                   reply: .result(#"{"seq":2,"target":"nearby","consumed":true,"commit":null}"#),
                   events: [ExpectedEvent("tab.highlighted", #"{"seq":2,"tab":"me","phase":"cancel"}"#),
                            ExpectedEvent("tab.highlighted", #"{"seq":2,"tab":"nearby","phase":"begin"}"#)]) {
            $0.seq = 2; $0.highlighted = "nearby"
        }
        store.send(req("touch", #"{"phase":"up","x":30,"y":20,"touch_id":3}"#),
                   reply: .result(#"{"seq":3,"target":"home","consumed":true,"commit":null}"#),
                   events: [ExpectedEvent("tab.highlighted", #"{"seq":3,"tab":"nearby","phase":"cancel"}"#)]) {
            $0.seq = 3; $0.highlighted = nil
        }
    }

    @Test func commitOnDownAndTheCenterCircle() {
        var bar = BarState.defaultBar
        bar.settings.commitOn = .down
        let store = TestStore(bar)
        store.send(req("touch", #"{"phase":"down","x":187.5,"y":0,"touch_id":4}"#),
                   reply: .result(#"{"seq":1,"target":"post","consumed":true,"commit":"action","sound":"center"}"#),
                   events: [ExpectedEvent("tab.highlighted", #"{"seq":1,"tab":"post","phase":"begin"}"#),
                            ExpectedEvent("action.triggered", #"{"seq":1,"tab":"post","action":"compose"}"#)],
                   effects: [.play(name: "center", gain: 1, trigger: .center)]) {
            $0.seq = 1; $0.highlighted = "post"; $0.activeAction = "post"
        }
        store.send(req("touch", #"{"phase":"up","x":187.5,"y":0,"touch_id":4}"#),
                   reply: .result(#"{"seq":2,"target":"post","consumed":true,"commit":null}"#),
                   events: [ExpectedEvent("tab.highlighted", #"{"seq":2,"tab":"post","phase":"end"}"#)]) {
            $0.seq = 2; $0.highlighted = nil
        }
        // The box's corner above the bar: outside the circle, passed through.
        store.send(req("touch", #"{"phase":"down","x":153,"y":-20,"touch_id":5}"#),
                   reply: .result(#"{"seq":2,"target":null,"consumed":false,"commit":null}"#))
    }

    @Test func theBarHidingCancelsTheTouch() {
        let store = TestStore()
        store.send(req("touch", #"{"phase":"down","x":260,"y":20,"touch_id":6}"#),
                   reply: .result(#"{"seq":1,"target":"chat","consumed":true,"commit":null}"#),
                   events: [ExpectedEvent("tab.highlighted", #"{"seq":1,"tab":"chat","phase":"begin"}"#)]) { $0.seq = 1; $0.highlighted = "chat" }
        store.send(req("nav.push", #"{"hides_bar":true}"#),
                   reply: .result(#"{"seq":2,"visibility":\#(visibilityJSON(hidden: true, phase: "hiding", reasons: ["push"], stack: [true]))}"#),
                   events: [visibilityEvent(2, hidden: true, phase: "hiding", reasons: ["push"], ms: 500, stack: [true]),
                            ExpectedEvent("animation.cue", #"{"seq":2,"tab":null,"trigger":"visibility","kind":"slide","descriptor":\#(barSlide(from: 0, to: 49, ms: 500)),"sound":null}"#),
                            ExpectedEvent("tab.highlighted", #"{"seq":2,"tab":"chat","phase":"cancel"}"#)],
                   effects: [.timer(.visibility, atMs: 500)]) {
            $0.seq = 2; $0.highlighted = nil
            $0.visibility.reasons = [.push]; $0.visibility.navStack = [true]; $0.visibility.phase = .hiding
            $0.visibility.phaseStartMs = 0; $0.visibility.phaseDurationMs = 500; $0.visibility.phaseFrom = 0
        }
        store.fire(.visibility, reply: .result(#"{"seq":3}"#),
                   events: [visibilityEvent(3, hidden: true, phase: "idle", reasons: ["push"], ms: 0, stack: [true])]) {
            $0.seq = 3; $0.visibility.phase = .idle; $0.visibility.phaseStartMs = 0; $0.visibility.phaseDurationMs = 0; $0.visibility.phaseFrom = 1
        }
        store.send(req("touch", #"{"phase":"up","x":260,"y":20,"touch_id":6}"#),
                   reply: .result(#"{"seq":3,"target":null,"consumed":false,"commit":null,"ignored":true}"#))
    }

    @Test func highlightsFromAFrontEndThatHitTestsItself() {
        var bar = BarState.defaultBar
        bar.items[1].enabled = false
        bar.items[4].animation = .pulse
        let store = TestStore(bar)
        store.send(req("tab.highlight", #"{"tab":"chat","phase":"begin"}"#), reply: .result(#"{"seq":1}"#),
                   events: [ExpectedEvent("tab.highlighted", #"{"seq":1,"tab":"chat","phase":"begin"}"#)]) { $0.seq = 1; $0.highlighted = "chat" }
        store.send(req("tab.highlight", #"{"tab":"chat","phase":"begin"}"#), reply: .result(#"{"seq":1}"#))
        store.send(req("tab.highlight", #"{"tab":"me","phase":"begin"}"#), reply: .result(#"{"seq":2}"#),
                   events: [ExpectedEvent("tab.highlighted", #"{"seq":2,"tab":"chat","phase":"cancel"}"#),
                            ExpectedEvent("tab.highlighted", #"{"seq":2,"tab":"me","phase":"begin"}"#),
                            ExpectedEvent("animation.cue", #"{"seq":2,"tab":"me","trigger":"highlight","kind":"pulse","descriptor":\#(pulseSelect),"sound":null}"#)]) {
            $0.seq = 2; $0.highlighted = "me"
        }
        store.send(req("tab.highlight", #"{"tab":"chat","phase":"end"}"#), reply: .result(#"{"seq":2}"#))
        store.send(req("tab.highlight", #"{"tab":"me","phase":"end"}"#), reply: .result(#"{"seq":3}"#),
                   events: [ExpectedEvent("tab.highlighted", #"{"seq":3,"tab":"me","phase":"end"}"#)]) { $0.seq = 3; $0.highlighted = nil }
        store.send(req("tab.highlight", #"{"tab":"nearby","phase":"begin"}"#), reply: .error("not_selectable"))
        store.send(req("tab.highlight", #"{"tab":"nope","phase":"begin"}"#), reply: .error("unknown_tab"))
        store.send(req("tab.highlight", #"{"tab":"me","phase":"up"}"#), reply: .error("invalid_params", field: "phase"))
    }
}

@Suite struct ExhaustiveVisibilityTests {
    @Test func aPopHalfWayRetargetsTheSlide() {
        let store = TestStore()
        store.send(req("nav.push", #"{"hides_bar":true}"#),
                   reply: .result(#"{"seq":1,"visibility":\#(visibilityJSON(hidden: true, phase: "hiding", reasons: ["push"], stack: [true]))}"#),
                   events: [visibilityEvent(1, hidden: true, phase: "hiding", reasons: ["push"], ms: 500, stack: [true]),
                            ExpectedEvent("animation.cue", #"{"seq":1,"tab":null,"trigger":"visibility","kind":"slide","descriptor":\#(barSlide(from: 0, to: 49, ms: 500)),"sound":null}"#)],
                   effects: [.timer(.visibility, atMs: 500)]) {
            $0.seq = 1; $0.visibility.reasons = [.push]; $0.visibility.navStack = [true]; $0.visibility.phase = .hiding
            $0.visibility.phaseStartMs = 0; $0.visibility.phaseDurationMs = 500; $0.visibility.phaseFrom = 0
        }
        // 200 ms in (0.4 hidden), popped: showing for 200 ms from there.
        store.send(req("nav.pop"), at: 200,
                   reply: .result(#"{"seq":2,"visibility":\#(visibilityJSON(hidden: false, phase: "showing", reasons: []))}"#),
                   events: [visibilityEvent(2, hidden: false, phase: "showing", reasons: [], ms: 200),
                            ExpectedEvent("animation.cue", #"{"seq":2,"tab":null,"trigger":"visibility","kind":"slide","descriptor":\#(barSlide(from: 19.6, to: 0, ms: 200)),"sound":null}"#)],
                   effects: [.timer(.visibility, atMs: 400)]) {
            $0.seq = 2; $0.visibility.reasons = []; $0.visibility.navStack = []; $0.visibility.phase = .showing
            $0.visibility.phaseStartMs = 200; $0.visibility.phaseDurationMs = 200; $0.visibility.phaseFrom = 0.4
        }
        store.fire(.visibility, reply: .result(#"{"seq":3}"#), events: [visibilityEvent(3, hidden: false, phase: "idle", reasons: [], ms: 0)]) {
            $0.seq = 3; $0.visibility = Visibility()
        }
        store.send(req("nav.pop"), reply: .result(#"{"seq":3,"visibility":\#(visibilityJSON(hidden: false, phase: "idle", reasons: []))}"#))
        store.send(req("nav.push", #"{"hides_bar":false}"#),
                   reply: .result(#"{"seq":4,"visibility":\#(visibilityJSON(hidden: false, phase: "idle", reasons: [], stack: [false]))}"#),
                   events: [visibilityEvent(4, hidden: false, phase: "idle", reasons: [], ms: 0, stack: [false])]) {
            $0.seq = 4; $0.visibility.navStack = [false]
        }
    }

    @Test func reasonsExplicitAndPushHoldWithoutAnimation() {
        var sounds = SoundMap()
        sounds.visibility = "slide"
        let store = TestStore(sounds: sounds)
        store.send(req("bar.set_hidden", #"{"hidden":true}"#),
                   reply: .result(#"{"seq":1,"visibility":\#(visibilityJSON(hidden: true, phase: "idle", reasons: ["explicit"]))}"#),
                   events: [visibilityEvent(1, hidden: true, phase: "idle", reasons: ["explicit"], ms: 0)],
                   effects: [.play(name: "slide", gain: 1, trigger: .visibility)]) {
            $0.seq = 1; $0.visibility.reasons = [.explicit]; $0.visibility.phaseFrom = 1
        }
        store.send(req("bar.set_hidden", #"{"hidden":true,"reason":"push"}"#),
                   reply: .result(#"{"seq":2,"visibility":\#(visibilityJSON(hidden: true, phase: "idle", reasons: ["explicit", "push"], hold: true))}"#),
                   events: [visibilityEvent(2, hidden: true, phase: "idle", reasons: ["explicit", "push"], ms: 0)]) {
            $0.seq = 2; $0.visibility.reasons = [.explicit, .push]; $0.visibility.pushHold = true
        }
        store.send(req("bar.set_hidden", #"{"hidden":false}"#),
                   reply: .result(#"{"seq":3,"visibility":\#(visibilityJSON(hidden: true, phase: "idle", reasons: ["push"], hold: true))}"#),
                   events: [visibilityEvent(3, hidden: true, phase: "idle", reasons: ["push"], ms: 0)]) {
            $0.seq = 3; $0.visibility.reasons = [.push]
        }
        store.send(req("bar.set_hidden", #"{"hidden":false}"#),
                   reply: .result(#"{"seq":3,"visibility":\#(visibilityJSON(hidden: true, phase: "idle", reasons: ["push"], hold: true))}"#))
        store.send(req("bar.set_hidden", #"{"hidden":false,"reason":"push","animated":true}"#), at: 1000,
                   reply: .result(#"{"seq":4,"visibility":\#(visibilityJSON(hidden: false, phase: "showing", reasons: []))}"#),
                   events: [visibilityEvent(4, hidden: false, phase: "showing", reasons: [], ms: 500),
                            ExpectedEvent("animation.cue", #"{"seq":4,"tab":null,"trigger":"visibility","kind":"slide","descriptor":\#(barSlide(from: 49, to: 0, ms: 500)),"sound":"slide"}"#)],
                   effects: [.timer(.visibility, atMs: 1500), .play(name: "slide", gain: 1, trigger: .visibility)]) {
            $0.seq = 4; $0.visibility.reasons = []; $0.visibility.pushHold = false; $0.visibility.phase = .showing
            $0.visibility.phaseStartMs = 1000; $0.visibility.phaseDurationMs = 500; $0.visibility.phaseFrom = 1
        }
        // A change that does not flip the bar reports the running phase and what is left of it.
        store.send(req("nav.push", #"{"hides_bar":false}"#), at: 1100,
                   reply: .result(#"{"seq":5,"visibility":\#(visibilityJSON(hidden: false, phase: "showing", reasons: [], stack: [false]))}"#),
                   events: [visibilityEvent(5, hidden: false, phase: "showing", reasons: [], ms: 400, stack: [false])]) {
            $0.seq = 5; $0.visibility.navStack = [false]
        }
        // A flip without animation while one runs: straight to idle, the timer cancelled.
        store.send(req("bar.set_hidden", #"{"hidden":true}"#), at: 1200,
                   reply: .result(#"{"seq":6,"visibility":\#(visibilityJSON(hidden: true, phase: "idle", reasons: ["explicit"], stack: [false]))}"#),
                   events: [visibilityEvent(6, hidden: true, phase: "idle", reasons: ["explicit"], ms: 0, stack: [false])],
                   effects: [.cancelTimer(.visibility), .play(name: "slide", gain: 1, trigger: .visibility)]) {
            $0.seq = 6; $0.visibility.reasons = [.explicit]; $0.visibility.phase = .idle
            $0.visibility.phaseStartMs = 0; $0.visibility.phaseDurationMs = 0; $0.visibility.phaseFrom = 1
        }
        store.send(req("bar.set_hidden", #"{"hidden":"yes"}"#), reply: .error("invalid_params", field: "hidden"))
    }

    @Test func scrollingAThresholdHidesAndBackShows() {
        let store = TestStore()
        let shown = visibilityJSON(hidden: false, phase: "idle", reasons: [])
        store.send(req("scroll", #"{"dy":10}"#), reply: .result(#"{"seq":0,"visibility":\#(shown)}"#))
        store.send(req("scroll", #"{"dy":14}"#),
                   reply: .result(#"{"seq":1,"visibility":\#(visibilityJSON(hidden: true, phase: "hiding", reasons: ["scroll"]))}"#),
                   events: [visibilityEvent(1, hidden: true, phase: "hiding", reasons: ["scroll"], ms: 500),
                            ExpectedEvent("animation.cue", #"{"seq":1,"tab":null,"trigger":"visibility","kind":"slide","descriptor":\#(barSlide(from: 0, to: 49, ms: 500)),"sound":null}"#)],
                   effects: [.timer(.visibility, atMs: 500)]) {
            $0.seq = 1; $0.visibility.reasons = [.scroll]; $0.visibility.phase = .hiding
            $0.visibility.phaseStartMs = 0; $0.visibility.phaseDurationMs = 500; $0.visibility.phaseFrom = 0
        }
        store.fire(.visibility, reply: .result(#"{"seq":2}"#), events: [visibilityEvent(2, hidden: true, phase: "idle", reasons: ["scroll"], ms: 0)]) {
            $0.seq = 2; $0.visibility.phase = .idle; $0.visibility.phaseStartMs = 0; $0.visibility.phaseDurationMs = 0; $0.visibility.phaseFrom = 1
        }
        store.send(req("scroll", #"{"dy":100}"#), at: 600, reply: .result(#"{"seq":2,"visibility":\#(visibilityJSON(hidden: true, phase: "idle", reasons: ["scroll"]))}"#))
        store.send(req("scroll", #"{"dy":-30}"#), at: 600,
                   reply: .result(#"{"seq":3,"visibility":\#(visibilityJSON(hidden: false, phase: "showing", reasons: []))}"#),
                   events: [visibilityEvent(3, hidden: false, phase: "showing", reasons: [], ms: 500),
                            ExpectedEvent("animation.cue", #"{"seq":3,"tab":null,"trigger":"visibility","kind":"slide","descriptor":\#(barSlide(from: 49, to: 0, ms: 500)),"sound":null}"#)],
                   effects: [.timer(.visibility, atMs: 1100)]) {
            $0.seq = 3; $0.visibility.reasons = []; $0.visibility.phase = .showing
            $0.visibility.phaseStartMs = 600; $0.visibility.phaseDurationMs = 500; $0.visibility.phaseFrom = 1
        }
        store.skipPendingTimers()
    }
}

@Suite struct ExhaustiveAnimationTests {
    @Test func beginEndAndTheTimerThatEndsOneNobodyEnds() {
        var bar = BarState.defaultBar
        bar.settings.animationSounds = ["spin": "slide"]
        let store = TestStore(bar)
        store.send(req("animation.begin", #"{"kind":"spin","tab":"chat","duration_ms":300}"#),
                   reply: .result(#"{"seq":1,"animation":1}"#),
                   events: [ExpectedEvent("animation.began", #"{"seq":1,"animation":1,"kind":"spin","tab":"chat","duration_ms":300}"#)],
                   effects: [.play(name: "slide", gain: 1, trigger: .animation), .timer(.animation(1), atMs: 300)]) {
            $0.seq = 1; $0.animations = [ActiveAnimation(id: 1, kind: "spin", tab: "chat", durationMs: 300, startMs: 0)]
        }
        store.send(req("animation.end", #"{"animation":1,"reason":"cancelled"}"#), at: 100, reply: .result(#"{"seq":2}"#),
                   events: [ExpectedEvent("animation.ended", #"{"seq":2,"animation":1,"reason":"cancelled"}"#)],
                   effects: [.cancelTimer(.animation(1))]) { $0.seq = 2; $0.animations = [] }
        store.send(req("animation.end", #"{"animation":1}"#), reply: .result(#"{"seq":2}"#))
        store.send(req("animation.end", #"{"animation":99}"#), reply: .error("invalid_params", field: "animation"))
        store.send(req("animation.begin", #"{"kind":"fade","duration_ms":50}"#), at: 100,
                   reply: .result(#"{"seq":3,"animation":3}"#),
                   events: [ExpectedEvent("animation.began", #"{"seq":3,"animation":3,"kind":"fade","tab":null,"duration_ms":50}"#)],
                   effects: [.timer(.animation(3), atMs: 150)]) {
            $0.seq = 3; $0.animations = [ActiveAnimation(id: 3, kind: "fade", tab: nil, durationMs: 50, startMs: 100)]
        }
        store.fire(.animation(3), reply: .result(#"{"seq":4}"#),
                   events: [ExpectedEvent("animation.ended", #"{"seq":4,"animation":3,"reason":"finished"}"#)]) {
            $0.seq = 4; $0.animations = []
        }
        store.send(req("animation.begin", #"{"kind":"fade","tab":"nope","duration_ms":50}"#), at: 200, reply: .error("unknown_tab"))
        store.send(req("animation.begin", #"{"kind":"","duration_ms":50}"#), reply: .error("invalid_params", field: "kind"))
        store.send(req("animation.begin", #"{"kind":"fade","duration_ms":600001}"#), reply: .error("invalid_params", field: "duration_ms"))
    }
}

// Exhaustive steps (TestStore: every state change, event and effect) for the edges of the
// touch and select path that its cost work touched: the committed item's own sound is read
// where it lives (not passed along), a badge never plays it, a commit's previous tab is named
// after the commit, and a touch whose item moves or changes between its down and up.
// (The built-in bar: home 0, nearby 76.25, post 152.5 (center), chat 222.5, me 298.75.)

@Suite struct HitsTouchTests {
    static let downOnChat = req("touch", #"{"phase":"down","x":260,"y":20}"#)

    @Test func aTouchPlaysTheItemsOwnSoundForSelectAndReselectButABadgeNever() {
        var bar = BarState.defaultBar
        bar.items[3].sound = "pop"
        var sounds = SoundMap()
        sounds.badge = "badge"
        let store = TestStore(bar, sounds: sounds)
        store.send(Self.downOnChat, reply: .result(#"{"seq":1,"target":"chat","consumed":true,"commit":null}"#),
                   events: [ExpectedEvent("tab.highlighted", #"{"seq":1,"tab":"chat","phase":"begin"}"#)]) {
            $0.seq = 1; $0.highlighted = "chat"
        }
        store.send(req("touch", #"{"phase":"up","x":260,"y":20}"#),
                   reply: .result(#"{"seq":2,"target":"chat","consumed":true,"commit":"select","sound":"pop"}"#),
                   events: [ExpectedEvent("tab.highlighted", #"{"seq":2,"tab":"chat","phase":"end"}"#),
                            ExpectedEvent("tab.selected", #"{"seq":2,"tab":"chat","previous":"home","source":"user"}"#)],
                   effects: [.play(name: "pop", gain: 1, trigger: .select)]) {
            $0.seq = 2; $0.highlighted = nil; $0.selected = "chat"; $0.previous = "home"
        }
        store.send(Self.downOnChat, reply: .result(#"{"seq":3,"target":"chat","consumed":true,"commit":null}"#),
                   events: [ExpectedEvent("tab.highlighted", #"{"seq":3,"tab":"chat","phase":"begin"}"#)]) {
            $0.seq = 3; $0.highlighted = "chat"
        }
        store.send(req("touch", #"{"phase":"up","x":230,"y":40}"#),
                   reply: .result(#"{"seq":4,"target":"chat","consumed":true,"commit":"reselect","sound":"pop"}"#),
                   events: [ExpectedEvent("tab.highlighted", #"{"seq":4,"tab":"chat","phase":"end"}"#),
                            ExpectedEvent("tab.reselected", #"{"seq":4,"tab":"chat","source":"user"}"#)],
                   effects: [.play(name: "pop", gain: 1, trigger: .reselect)]) {
            $0.seq = 4; $0.highlighted = nil
        }
        // The badge's sound is the daemon's, never the item's.
        store.send(req("badge.set", #"{"tab":"chat","count":3}"#),
                   reply: .result(#"{"seq":5,"badge":{"kind":"count","value":3,"display":"3"}}"#),
                   events: [ExpectedEvent("badge.changed", #"{"seq":5,"tab":"chat","badge":{"kind":"count","value":3,"display":"3"}}"#)],
                   effects: [.play(name: "badge", gain: 1, trigger: .badge)]) {
            $0.seq = 5; $0.items[3].badge = .count(3)
        }
        // A program's select plays nothing, its own sound neither; the previous tab is the one it left.
        store.send(req("tab.select", #"{"tab":"me","source":"program"}"#),
                   reply: .result(#"{"seq":6,"selected":"me","previous":"chat","reselected":false}"#),
                   events: [ExpectedEvent("tab.selected", #"{"seq":6,"tab":"me","previous":"chat","source":"program"}"#)]) {
            $0.seq = 6; $0.selected = "me"; $0.previous = "chat"
        }
    }

    @Test func anActionsOwnSoundNoneSilencesItsTouch() {
        var bar = BarState.defaultBar
        bar.items[2].sound = "none"
        let store = TestStore(bar)
        store.send(req("touch", #"{"phase":"down","x":187.5,"y":0}"#),
                   reply: .result(#"{"seq":1,"target":"post","consumed":true,"commit":null}"#),
                   events: [ExpectedEvent("tab.highlighted", #"{"seq":1,"tab":"post","phase":"begin"}"#)]) {
            $0.seq = 1; $0.highlighted = "post"
        }
        store.send(req("touch", #"{"phase":"up","x":187.5,"y":0}"#),
                   reply: .result(#"{"seq":2,"target":"post","consumed":true,"commit":"action"}"#),
                   events: [ExpectedEvent("tab.highlighted", #"{"seq":2,"tab":"post","phase":"end"}"#),
                            ExpectedEvent("action.triggered", #"{"seq":2,"tab":"post","action":"compose"}"#)]) {
            $0.seq = 2; $0.highlighted = nil; $0.activeAction = "post"
        }
    }

    @Test func aTouchFollowsItsItemWhenTheBarIsReorderedBetweenDownAndUp() {
        let store = TestStore()
        store.send(Self.downOnChat, reply: .result(#"{"seq":1,"target":"chat","consumed":true,"commit":null}"#),
                   events: [ExpectedEvent("tab.highlighted", #"{"seq":1,"tab":"chat","phase":"begin"}"#)]) {
            $0.seq = 1; $0.highlighted = "chat"
        }
        // chat moves to the front (x 0 to 125): the up at x 30 is on it and commits it.
        store.send(req("bar.configure", #"{"items":[{"id":"chat"},{"id":"home"},{"id":"me"}]}"#),
                   reply: .state(seq: 2), events: [.configured(seq: 2)]) {
            $0.seq = 2; $0.items = [Item(id: "chat"), Item(id: "home"), Item(id: "me")]
        }
        store.send(req("touch", #"{"phase":"up","x":30,"y":20}"#),
                   reply: .result(#"{"seq":3,"target":"chat","consumed":true,"commit":"select","sound":"click"}"#),
                   events: [ExpectedEvent("tab.highlighted", #"{"seq":3,"tab":"chat","phase":"end"}"#),
                            ExpectedEvent("tab.selected", #"{"seq":3,"tab":"chat","previous":"home","source":"user"}"#)],
                   effects: [.play(name: "click", gain: 1, trigger: .select)]) {
            $0.seq = 3; $0.highlighted = nil; $0.selected = "chat"; $0.previous = "home"
        }
    }

    @Test func anUpWhereTheTouchsItemNoLongerIsCancelsIt() {
        let store = TestStore()
        store.send(Self.downOnChat, reply: .result(#"{"seq":1,"target":"chat","consumed":true,"commit":null}"#),
                   events: [ExpectedEvent("tab.highlighted", #"{"seq":1,"tab":"chat","phase":"begin"}"#)]) {
            $0.seq = 1; $0.highlighted = "chat"
        }
        // me takes chat's index (3 of 4 tabs, x 281.25 on); the up at chat's old place (x 300) is on me.
        store.send(req("bar.configure", #"{"items":[{"id":"home"},{"id":"nearby"},{"id":"chat"},{"id":"me"}]}"#),
                   reply: .state(seq: 2), events: [.configured(seq: 2)]) {
            $0.seq = 2; $0.items = [Item(id: "home"), Item(id: "nearby"), Item(id: "chat"), Item(id: "me")]
        }
        store.send(req("touch", #"{"phase":"up","x":300,"y":20}"#),
                   reply: .result(#"{"seq":3,"target":"me","consumed":true,"commit":null}"#),
                   events: [ExpectedEvent("tab.highlighted", #"{"seq":3,"tab":"chat","phase":"cancel"}"#)]) {
            $0.seq = 3; $0.highlighted = nil
        }
        // The touch is over: another up is a stray.
        store.send(req("touch", #"{"phase":"up","x":200,"y":20}"#),
                   reply: .result(#"{"seq":3,"target":"chat","consumed":true,"commit":null,"ignored":true}"#))
    }

    @Test func aTouchWhoseItemIsDisabledBeforeItsUpEndsThere() {
        let store = TestStore()
        store.send(Self.downOnChat, reply: .result(#"{"seq":1,"target":"chat","consumed":true,"commit":null}"#),
                   events: [ExpectedEvent("tab.highlighted", #"{"seq":1,"tab":"chat","phase":"begin"}"#)]) {
            $0.seq = 1; $0.highlighted = "chat"
        }
        store.send(req("bar.configure", #"{"items":[{"id":"home"},{"id":"chat","enabled":false}]}"#),
                   reply: .state(seq: 2), events: [.configured(seq: 2)]) {
            $0.seq = 2; $0.items = [Item(id: "home"), Item(id: "chat", enabled: false)]; $0.highlighted = nil
        }
        store.send(req("touch", #"{"phase":"up","x":30,"y":20}"#),
                   reply: .result(#"{"seq":2,"target":"home","consumed":true,"commit":null,"ignored":true}"#))
    }
}
