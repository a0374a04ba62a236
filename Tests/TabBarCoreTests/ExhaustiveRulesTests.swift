import Testing
@testable import TabBarCore

// The rules the reducer's earlier partial suites (ReducerTests, TouchTests, VisibilityTests,
// AnimationTests, StyleRulesTests) asserted and ExhaustiveReducerTests.swift did not, as
// exhaustive steps: each states its reply, every event, every effect and the whole state
// after it (TestStore, ExhaustiveSupport.swift). The built-in bar: home 0, nearby 76.25,
// post 152.5 (center, 70 × 70 raised 21), chat 222.5, me 298.75; 375 × 49.

/// A touch line.
func touchLine(_ phase: String, _ x: Double, _ y: Double, id: Int? = nil) -> String {
    req("touch", #"{"phase":"\#(phase)","x":\#(x),"y":\#(y)\#(id.map { #","touch_id":\#($0)"# } ?? "")}"#)
}

/// A touch's reply.
func touchReply(_ seq: Int, _ target: String?, consumed: Bool = true, commit: String? = nil, sound: String? = nil, ignored: Bool = false) -> ExpectedReply {
    let t = target.map { "\"\($0)\"" } ?? "null", c = commit.map { "\"\($0)\"" } ?? "null"
    return .result(#"{"seq":\#(seq),"target":\#(t),"consumed":\#(consumed),"commit":\#(c)\#(sound.map { #","sound":"\#($0)""# } ?? "")\#(ignored ? #","ignored":true"# : "")}"#)
}

func highlightEvent(_ seq: Int, _ tab: String, _ phase: String) -> ExpectedEvent {
    ExpectedEvent("tab.highlighted", #"{"seq":\#(seq),"tab":"\#(tab)","phase":"\#(phase)"}"#)
}

func selectedEvent(_ seq: Int, _ tab: String, previous: String?, source: String = "user") -> ExpectedEvent {
    ExpectedEvent("tab.selected", #"{"seq":\#(seq),"tab":"\#(tab)","previous":\#(previous.map { "\"\($0)\"" } ?? "null"),"source":"\#(source)"}"#)
}

func reselectedEvent(_ seq: Int, _ tab: String, source: String = "user") -> ExpectedEvent {
    ExpectedEvent("tab.reselected", #"{"seq":\#(seq),"tab":"\#(tab)","source":"\#(source)"}"#)
}

func selectReply(_ seq: Int, _ tab: String, previous: String?, reselected: Bool = false) -> ExpectedReply {
    .result(#"{"seq":\#(seq),"selected":"\#(tab)","previous":\#(previous.map { "\"\($0)\"" } ?? "null"),"reselected":\#(reselected)}"#)
}

func badgeJSON(count: Int, display: String) -> String { #"{"kind":"count","value":\#(count),"display":"\#(display)"}"# }

@Suite struct ExhaustiveErrorTests {
    /// Each refusal is the contract's error: its code, its data (kind, field, and the seq a
    /// conflict was checked against), and nothing changes.
    @Test func refusalsCarryTheirCodeAndData() {
        var bar = BarState.defaultBar
        bar.items[1].enabled = false
        let store = TestStore(bar)
        store.send(req("tab.select", #"{"index":9}"#), reply: .failure(code: -32001, data: #"{"kind":"unknown_tab","index":9}"#))
        store.send(req("tab.select", #"{"index":-1}"#), reply: .failure(code: -32001, data: #"{"kind":"unknown_tab","index":-1}"#))
        store.send(req("tab.select", #"{"tab":"post"}"#), reply: .failure(code: -32002, data: #"{"kind":"not_selectable","tab":"post"}"#, says: "center button"))
        store.send(req("tab.select", #"{"tab":"nearby"}"#), reply: .failure(code: -32002, data: #"{"kind":"not_selectable","tab":"nearby"}"#, says: "disabled"))
        store.send(req("tab.select", #"{"tab":"chat"}"#), reply: selectReply(1, "chat", previous: "home"),
                   events: [selectedEvent(1, "chat", previous: "home")], effects: [.play(name: "click", gain: 1, trigger: .select)]) {
            $0.seq = 1; $0.selected = "chat"; $0.previous = "home"
        }
        store.send(req("tab.select", #"{"tab":"me","if_seq":0}"#), reply: .failure(code: -32003, data: #"{"kind":"conflict","seq":1}"#))
        store.send(req("tab.select"), reply: .failure(code: -32602, data: #"{"kind":"invalid_params","field":"tab"}"#))
        store.send(req("tab.select", #"{"tab":5}"#), reply: .error("invalid_params", field: "tab"))
        store.send(req("tab.select", #"{"index":1.5}"#), reply: .error("invalid_params", field: "index"))
        store.send(req("tab.select", #"{"tab":"chat","tabb":1}"#), reply: .failure(code: -32602, data: #"{"kind":"invalid_params","field":"tabb"}"#))
        store.send(req("tab.selekt"), reply: .failure(code: -32601, data: #"{"kind":"method_not_found","method":"tab.selekt"}"#))
        store.send(req("badge.set", #"{"tab":"chat"}"#), reply: .error("invalid_params"))
        store.send(req("badge.set", #"{"tab":"chat","count":"3"}"#), reply: .error("invalid_params", field: "count"))
        store.send(req("badge.clear", #"{"tab":"x"}"#), reply: .error("unknown_tab"))
        store.send(req("touch", #"{"phase":"move","x":1,"y":1}"#), reply: .error("invalid_params", field: "phase"))
        store.send(req("touch", #"{"phase":"down","y":1}"#), reply: .error("invalid_params", field: "x"))
        store.send(req("touch", #"{"phase":"down","x":1,"y":"2"}"#), reply: .error("invalid_params", field: "y"))
        store.send(req("touch", #"{"phase":"down","x":1,"y":2,"touch_id":-1}"#), reply: .error("invalid_params", field: "touch_id"))
        store.send(req("touch", #"{"x":1,"y":2}"#), reply: .error("invalid_params", field: "phase"))
        store.send(req("bar.set_hidden"), reply: .error("invalid_params", field: "hidden"))
        store.send(req("bar.set_hidden", #"{"hidden":true,"reason":"boredom"}"#), reply: .error("invalid_params", field: "reason"))
        store.send(req("nav.push"), reply: .error("invalid_params", field: "hides_bar"))
        store.send(req("scroll", #"{"dy":"down"}"#), reply: .error("invalid_params", field: "dy"))
        store.send(req("nav.pop", #"{"x":1}"#), reply: .error("invalid_params", field: "x"))
        store.send(req("animation.begin", #"{"kind":"x"}"#), reply: .error("invalid_params", field: "duration_ms"))
        store.send(req("animation.begin", #"{"kind":"x","duration_ms":-1}"#), reply: .error("invalid_params", field: "duration_ms"))
    }
}

@Suite struct ExhaustiveBadgeRuleTests {
    @Test func theEdgesOfACountAndANegativeOne() {
        let store = TestStore()
        store.send(req("badge.set", #"{"tab":"chat","count":99}"#), reply: .result(#"{"seq":1,"badge":\#(badgeJSON(count: 99, display: "99"))}"#),
                   events: [ExpectedEvent("badge.changed", #"{"seq":1,"tab":"chat","badge":\#(badgeJSON(count: 99, display: "99"))}"#)]) {
            $0.seq = 1; $0.items[3].badge = .count(99)
        }
        store.send(req("badge.set", #"{"tab":"chat","count":100}"#), reply: .result(#"{"seq":2,"badge":\#(badgeJSON(count: 100, display: "99+"))}"#),
                   events: [ExpectedEvent("badge.changed", #"{"seq":2,"tab":"chat","badge":\#(badgeJSON(count: 100, display: "99+"))}"#)]) {
            $0.seq = 2; $0.items[3].badge = .count(100)
        }
        store.send(req("badge.set", #"{"tab":"chat","count":-4}"#), reply: .result(#"{"seq":3,"badge":null}"#),
                   events: [ExpectedEvent("badge.changed", #"{"seq":3,"tab":"chat","badge":null}"#)]) {
            $0.seq = 3; $0.items[3].badge = nil
        }
        store.send(req("badge.set", #"{"tab":"chat","count":-4}"#), reply: .result(#"{"seq":3,"badge":null}"#))
    }

    @Test func maxCountAndMaxCharsAreBarSettings() {
        var bar = BarState.defaultBar
        bar.settings.maxCount = 9
        bar.settings.maxChars = 4
        let store = TestStore(bar)
        store.send(req("badge.set", #"{"tab":"chat","count":9}"#), reply: .result(#"{"seq":1,"badge":\#(badgeJSON(count: 9, display: "9"))}"#),
                   events: [ExpectedEvent("badge.changed", #"{"seq":1,"tab":"chat","badge":\#(badgeJSON(count: 9, display: "9"))}"#)]) {
            $0.seq = 1; $0.items[3].badge = .count(9)
        }
        store.send(req("badge.set", #"{"tab":"chat","count":10}"#), reply: .result(#"{"seq":2,"badge":\#(badgeJSON(count: 10, display: "9+"))}"#),
                   events: [ExpectedEvent("badge.changed", #"{"seq":2,"tab":"chat","badge":\#(badgeJSON(count: 10, display: "9+"))}"#)]) {
            $0.seq = 2; $0.items[3].badge = .count(10)
        }
        let hello = #"{"kind":"text","value":"hello","display":"hel…"}"#
        store.send(req("badge.set", #"{"tab":"me","text":"hello"}"#), reply: .result(#"{"seq":3,"badge":\#(hello)}"#),
                   events: [ExpectedEvent("badge.changed", #"{"seq":3,"tab":"me","badge":\#(hello)}"#)]) {
            $0.seq = 3; $0.items[4].badge = .text("hello")
        }
        let ciao = #"{"kind":"text","value":"ciao","display":"ciao"}"#
        store.send(req("badge.set", #"{"tab":"me","text":"ciao"}"#), reply: .result(#"{"seq":4,"badge":\#(ciao)}"#),
                   events: [ExpectedEvent("badge.changed", #"{"seq":4,"tab":"me","badge":\#(ciao)}"#)]) {
            $0.seq = 4; $0.items[4].badge = .text("ciao")
        }
    }

    /// A hidden badge keeps counting; showing it brings the latest value; hiding twice is one
    /// change; clearing forgets it; a reconfiguration keeps it hidden.
    @Test func aHiddenBadgeCountsOnAndComesBackWithItsLatestValue() {
        let store = TestStore()
        store.send(req("badge.set", #"{"tab":"chat","count":120}"#), reply: .result(#"{"seq":1,"badge":\#(badgeJSON(count: 120, display: "99+"))}"#),
                   events: [ExpectedEvent("badge.changed", #"{"seq":1,"tab":"chat","badge":\#(badgeJSON(count: 120, display: "99+"))}"#)]) {
            $0.seq = 1; $0.items[3].badge = .count(120)
        }
        store.send(req("badge.set", #"{"tab":"chat","hidden":true}"#),
                   reply: .result(#"{"seq":2,"badge":null,"hidden_badge":\#(badgeJSON(count: 120, display: "99+"))}"#),
                   events: [ExpectedEvent("badge.changed", #"{"seq":2,"tab":"chat","badge":null,"hidden_badge":\#(badgeJSON(count: 120, display: "99+"))}"#)]) {
            $0.seq = 2; $0.items[3].badgeHidden = true
        }
        store.send(req("badge.set", #"{"tab":"chat","count":121,"hidden":true}"#),
                   reply: .result(#"{"seq":3,"badge":null,"hidden_badge":\#(badgeJSON(count: 121, display: "99+"))}"#),
                   events: [ExpectedEvent("badge.changed", #"{"seq":3,"tab":"chat","badge":null,"hidden_badge":\#(badgeJSON(count: 121, display: "99+"))}"#)]) {
            $0.seq = 3; $0.items[3].badge = .count(121)
        }
        store.send(req("badge.set", #"{"tab":"chat","hidden":false}"#), reply: .result(#"{"seq":4,"badge":\#(badgeJSON(count: 121, display: "99+"))}"#),
                   events: [ExpectedEvent("badge.changed", #"{"seq":4,"tab":"chat","badge":\#(badgeJSON(count: 121, display: "99+"))}"#)]) {
            $0.seq = 4; $0.items[3].badgeHidden = false
        }
        store.send(req("badge.set", #"{"tab":"chat","hidden":true}"#),
                   reply: .result(#"{"seq":5,"badge":null,"hidden_badge":\#(badgeJSON(count: 121, display: "99+"))}"#),
                   events: [ExpectedEvent("badge.changed", #"{"seq":5,"tab":"chat","badge":null,"hidden_badge":\#(badgeJSON(count: 121, display: "99+"))}"#)]) {
            $0.seq = 5; $0.items[3].badgeHidden = true
        }
        store.send(req("badge.set", #"{"tab":"chat","hidden":true}"#),
                   reply: .result(#"{"seq":5,"badge":null,"hidden_badge":\#(badgeJSON(count: 121, display: "99+"))}"#))
        // A reconfiguration keeps the hidden badge.
        store.send(req("bar.configure", #"{"items":[{"id":"home"},{"id":"chat"}]}"#), reply: .state(seq: 6), events: [.configured(seq: 6)]) {
            var chat = Item(id: "chat")
            chat.badge = .count(121)
            chat.badgeHidden = true
            $0.seq = 6; $0.items = [Item(id: "home"), chat]
        }
        store.send(req("badge.clear", #"{"tab":"chat"}"#), reply: .result(#"{"seq":7}"#),
                   events: [ExpectedEvent("badge.changed", #"{"seq":7,"tab":"chat","badge":null}"#)]) {
            $0.seq = 7; $0.items[1].badge = nil; $0.items[1].badgeHidden = false
        }
        store.send(req("badge.set", #"{"tab":"chat","hidden":false}"#), reply: .result(#"{"seq":7,"badge":null}"#))
    }

    @Test func actionItemsTakeBadgesOnlyWhenTheBarSaysSo() {
        let store = TestStore()
        store.send(req("badge.set", #"{"tab":"post","count":3}"#), reply: .result(#"{"seq":0,"badge":null,"ignored":true}"#))
        // A configuration that gives one is ignored the same way.
        store.send(req("bar.configure", #"{"items":[{"id":"a"},{"id":"rec","kind":"action","badge":{"kind":"dot"}},{"id":"b"}]}"#),
                   reply: .state(seq: 1), events: [.configured(seq: 1)]) {
            $0.seq = 1; $0.items = [Item(id: "a"), Item(id: "rec", kind: .action), Item(id: "b")]; $0.selected = "a"
        }
        store.send(req("bar.configure", #"{"settings":{"action_badges":true}}"#), reply: .state(seq: 2), events: [.configured(seq: 2)]) {
            $0.seq = 2; $0.settings.actionBadges = true
        }
        store.send(req("badge.set", #"{"tab":"rec","dot":true}"#), reply: .result(#"{"seq":3,"badge":{"kind":"dot","display":""}}"#),
                   events: [ExpectedEvent("badge.changed", #"{"seq":3,"tab":"rec","badge":{"kind":"dot","display":""}}"#)]) {
            $0.seq = 3; $0.items[1].badge = .dot
        }
        // Turned off again, they are dropped.
        store.send(req("bar.configure", #"{"settings":{"action_badges":false}}"#), reply: .state(seq: 4), events: [.configured(seq: 4)]) {
            $0.seq = 4; $0.settings.actionBadges = false; $0.items[1].badge = nil
        }
    }

    @Test func theBarsBadgeSoundIsOptInAndAHiddenChangePlaysNothing() {
        let store = TestStore()
        store.send(req("badge.set", #"{"tab":"chat","count":1}"#), reply: .result(#"{"seq":1,"badge":\#(badgeJSON(count: 1, display: "1"))}"#),
                   events: [ExpectedEvent("badge.changed", #"{"seq":1,"tab":"chat","badge":\#(badgeJSON(count: 1, display: "1"))}"#)]) {
            $0.seq = 1; $0.items[3].badge = .count(1)
        }
        store.send(req("bar.configure", #"{"settings":{"sounds":{"badge":"badge"}}}"#), reply: .state(seq: 2), events: [.configured(seq: 2)]) {
            $0.seq = 2; $0.settings.sounds = ["badge": "badge"]
        }
        store.send(req("badge.set", #"{"tab":"chat","count":2}"#), reply: .result(#"{"seq":3,"badge":\#(badgeJSON(count: 2, display: "2"))}"#),
                   events: [ExpectedEvent("badge.changed", #"{"seq":3,"tab":"chat","badge":\#(badgeJSON(count: 2, display: "2"))}"#)],
                   effects: [.play(name: "badge", gain: 1, trigger: .badge)]) {
            $0.seq = 3; $0.items[3].badge = .count(2)
        }
        store.send(req("badge.set", #"{"tab":"chat","count":3,"hidden":true}"#),
                   reply: .result(#"{"seq":4,"badge":null,"hidden_badge":\#(badgeJSON(count: 3, display: "3"))}"#),
                   events: [ExpectedEvent("badge.changed", #"{"seq":4,"tab":"chat","badge":null,"hidden_badge":\#(badgeJSON(count: 3, display: "3"))}"#)]) {
            $0.seq = 4; $0.items[3].badge = .count(3); $0.items[3].badgeHidden = true
        }
    }

    @Test func removingABadgeHasNothingToAnimate() {
        var bar = BarState.defaultBar
        bar.settings.animation = .pulse
        let store = TestStore(bar)
        store.send(req("badge.set", #"{"tab":"chat","count":2}"#), reply: .result(#"{"seq":1,"badge":\#(badgeJSON(count: 2, display: "2"))}"#),
                   events: [ExpectedEvent("badge.changed", #"{"seq":1,"tab":"chat","badge":\#(badgeJSON(count: 2, display: "2"))}"#),
                            ExpectedEvent("animation.cue", #"{"seq":1,"tab":"chat","trigger":"badge","kind":"pulse","descriptor":{"target":"badge","property":"transform.scale","from":0.7,"to":1.3,"duration_ms":200,"timing":"ease_in_ease_out","autoreverse":true,"repeat":0},"sound":null}"#)]) {
            $0.seq = 1; $0.items[3].badge = .count(2)
        }
        store.send(req("badge.clear", #"{"tab":"chat"}"#), reply: .result(#"{"seq":2}"#),
                   events: [ExpectedEvent("badge.changed", #"{"seq":2,"tab":"chat","badge":null}"#)]) {
            $0.seq = 2; $0.items[3].badge = nil
        }
    }
}

@Suite struct ExhaustiveConfigureRuleTests {
    @Test func moreBarsThatDisagreeAreRefusedAndThePreviousOneStays() {
        let store = TestStore()
        store.send(req("bar.configure", #"{"items":[{"id":"a"},{"id":"b"},{"id":"a"}]}"#),
                   reply: .failure(code: -32602, data: #"{"kind":"invalid_params","field":"items[2].id"}"#, says: #"Duplicate item id "a""#))
        store.send(req("bar.configure", #"{"items":[{"id":"x","kind":"action"},{"id":"y","kind":"action"}]}"#),
                   reply: .failure(code: -32602, data: #"{"kind":"invalid_params","field":"items"}"#, says: "no selectable tab"))
        store.send(req("bar.configure", #"{"items":[{"id":"a","kind":"center"},{"id":"b"},{"id":"c"}]}"#), reply: .error("invalid_params", field: "items[0].kind"))
        store.send(req("bar.configure", #"{"items":[{"id":""}]}"#), reply: .error("invalid_params", field: "items[0].id"))
        store.send(req("bar.configure", #"{"items":[{"id":"a","kind":"button"}]}"#), reply: .error("invalid_params", field: "items[0].kind"))
        store.send(req("bar.configure", #"{"items":[{"id":"a","colour":"red"}]}"#), reply: .error("invalid_params", field: "items[0].colour"))
        store.send(req("bar.configure", #"{"items":[{"id":"a","kind":"action"}]}"#), reply: .error("invalid_params", field: "items"))
        store.send(req("bar.configure", #"{"items":[{"id":"a","badge":{"kind":"dot"},"hidden_badge":{"kind":"dot"}}]}"#), reply: .error("invalid_params"))
        store.send(req("bar.configure", #"{"items":[{"id":"a","animation":"wobble"}]}"#), reply: .error("invalid_params", field: "items[0].animation"))
        store.send(req("bar.configure", #"{"layout":{"width":-3}}"#), reply: .error("invalid_params", field: "layout.width"))
        store.send(req("bar.configure", #"{"settings":{"scroll_threshold":-1}}"#), reply: .error("invalid_params", field: "settings.scroll_threshold"))
        store.send(req("bar.configure", #"{"settings":{"colour":"red"}}"#), reply: .error("invalid_params", field: "settings.colour"))
        store.send(req("bar.configure", #"{"settings":{"animation":"wobble"}}"#), reply: .error("invalid_params", field: "settings.animation"))
    }

    @Test func maxItemsIsTheDaemonsLimit() {
        var limits = Limits()
        limits.maxItems = 7
        let store = TestStore(limits: limits)
        let seven = (0..<7).map { Item(id: "i\($0)") }
        store.send(req("bar.configure", #"{"items":[\#(seven.map { #"{"id":"\#($0.id)"}"# }.joined(separator: ","))]}"#),
                   reply: .state(seq: 1), events: [.configured(seq: 1)]) {
            $0.seq = 1; $0.items = seven; $0.selected = "i0"
        }
        store.send(req("bar.configure", #"{"items":[\#((0..<8).map { #"{"id":"j\#($0)"}"# }.joined(separator: ","))]}"#),
                   reply: .error("limit_exceeded"))
    }

    /// The selected item removed (or disabled) hands the selection to its nearest selectable neighbour.
    @Test func removingOrDisablingTheSelectedItemFallsBackToANeighbour() {
        var bar = BarState.defaultBar
        bar.selected = "me"
        let store = TestStore(bar)
        store.send(req("bar.configure", #"{"items":[{"id":"home"},{"id":"nearby"},{"id":"post","kind":"center"},{"id":"chat"},{"id":"you"}]}"#),
                   reply: .state(seq: 1), events: [.configured(seq: 1)]) {
            $0.seq = 1; $0.selected = "you"
            $0.items = [Item(id: "home"), Item(id: "nearby"), Item(id: "post", kind: .center), Item(id: "chat"), Item(id: "you")]
        }
        store.send(req("bar.configure", #"{"items":[{"id":"home"},{"id":"nearby"},{"id":"chat"}]}"#),
                   reply: .state(seq: 2), events: [.configured(seq: 2)]) {
            $0.seq = 2; $0.selected = "chat"; $0.items = [Item(id: "home"), Item(id: "nearby"), Item(id: "chat")]
        }
        store.send(req("bar.configure", #"{"items":[{"id":"home"},{"id":"nearby"},{"id":"chat","enabled":false}]}"#),
                   reply: .state(seq: 3), events: [.configured(seq: 3)]) {
            $0.seq = 3; $0.selected = "nearby"; $0.items[2].enabled = false
        }
    }

    /// The built-in bar as `state.get` gives it: every item's frame (the center raised above
    /// the bar), its presentation, the settings in full.
    @Test func theBuiltInBarAsAClientReadsIt() {
        let store = TestStore()
        func item(_ id: String, _ title: String, _ icon: String, selectedIcon: String?, kind: String = "tab", x: Double, frame: String? = nil,
                  selected: Bool = false, extra: String = "") -> String {
            let shown = selected ? (selectedIcon ?? icon) : icon
            return #"{"id":"\#(id)","title":"\#(title)","kind":"\#(kind)","enabled":true,"badge":null,"icon":"\#(icon)"\#(selectedIcon.map { #","selected_icon":"\#($0)""# } ?? "")\#(extra),"presentation":{"title":"\#(title)","icon":"\#(shown)","morphed":false},"frame":\#(frame ?? #"{"x":\#(x),"y":0,"w":76.25,"h":49}"#)}"#
        }
        let items = [item("home", "Home", "house", selectedIcon: "house.fill", x: 0, selected: true),
                     item("nearby", "Nearby", "location", selectedIcon: "location.fill", x: 76.25),
                     item("post", "Post", "plus", selectedIcon: nil, kind: "center", x: 152.5, frame: #"{"x":152.5,"y":-21,"w":70,"h":70}"#,
                          extra: #","sound":"center","action":"compose""#),
                     item("chat", "Chat", "bubble", selectedIcon: "bubble.fill", x: 222.5),
                     item("me", "Me", "person", selectedIcon: "person.fill", x: 298.75)]
        let state = #"{"items":[\#(items.joined(separator: ","))],"selected":"home","previous":null,"highlighted":null,"active_action":null,"visibility":\#(visibilityJSON(hidden: false, phase: "idle", reasons: [])),"layout":{"width":375,"height":49,"safe_bottom":0,"center":{"width":70,"height":70,"raise":21,"shape":"circle"},"rtl":false},"feedback":{"profile":"full","volume":1},"settings":{"commit_on":"up","click_on":"commit","center_corners":"pass_through","animation":"none","action_badges":false,"scroll_threshold":24,"hide_duration_ms":500,"max_count":99,"max_chars":16,"sounds":{}},"animations":[]}"#
        store.send(req("state.get"), reply: .result(#"{"seq":0,"state":\#(state)}"#))
    }

    /// Settings are given in part and shown in full, the animation kinds' sounds among them;
    /// settings alone are a configuration change.
    @Test func settingsArePartialAndShownInTheState() {
        var bar = BarState(items: [Item(id: "a"), Item(id: "b")], selected: "a")
        bar.settings.commitOn = .down
        bar.settings.hideDurationMs = 120
        let store = TestStore(bar)
        store.send(req("bar.configure", #"{"settings":{"scroll_threshold":12,"sounds":{"animations":{"confetti":"badge"}}}}"#),
                   reply: .state(seq: 1), events: [.configured(seq: 1)]) {
            $0.seq = 1; $0.settings.scrollThreshold = 12; $0.settings.animationSounds = ["confetti": "badge"]
        }
        let items = #"[{"id":"a","title":"a","kind":"tab","enabled":true,"badge":null,"presentation":{"title":"a","icon":null,"morphed":false},"frame":{"x":0,"y":0,"w":187.5,"h":49}},{"id":"b","title":"b","kind":"tab","enabled":true,"badge":null,"presentation":{"title":"b","icon":null,"morphed":false},"frame":{"x":187.5,"y":0,"w":187.5,"h":49}}]"#
        let settings = #"{"commit_on":"down","click_on":"commit","center_corners":"pass_through","animation":"none","action_badges":false,"scroll_threshold":12,"hide_duration_ms":120,"max_count":99,"max_chars":16,"sounds":{"animations":{"confetti":"badge"}}}"#
        store.send(req("state.get"), reply: .result(#"{"seq":1,"state":{"items":\#(items),"selected":"a","previous":null,"highlighted":null,"active_action":null,"visibility":\#(visibilityJSON(hidden: false, phase: "idle", reasons: [])),"layout":{"width":375,"height":49,"safe_bottom":0,"center":{"width":70,"height":70,"raise":21,"shape":"circle"},"rtl":false},"feedback":{"profile":"full","volume":1},"settings":\#(settings),"animations":[]}}"#))
        store.send(req("bar.configure", #"{"settings":{"center_corners":"swallow"}}"#), reply: .state(seq: 2), events: [.configured(seq: 2)]) {
            $0.seq = 2; $0.settings.centerCorners = .swallow
        }
    }

    /// A morphing first tab shows its morph while selected, and a tap on it then is a reselect.
    @Test func aMorphingTabShowsItsMorphWhileSelected() {
        var bar = BarState(items: [Item(id: "home", title: "Home", icon: "house", morph: Morph(title: "Top", icon: "arrow.up")), Item(id: "chat")],
                           selected: "home")
        bar.layout.width = 200
        let store = TestStore(bar)
        func state(seq: Int, morphed: Bool, selected: String, previous: String?) -> ExpectedReply {
            let presentation = morphed ? #"{"title":"Top","icon":"arrow.up","morphed":true}"# : #"{"title":"Home","icon":"house","morphed":false}"#
            let items = #"[{"id":"home","title":"Home","kind":"tab","enabled":true,"badge":null,"icon":"house","morph":{"title":"Top","icon":"arrow.up"},"presentation":\#(presentation),"frame":{"x":0,"y":0,"w":100,"h":49}},{"id":"chat","title":"chat","kind":"tab","enabled":true,"badge":null,"presentation":{"title":"chat","icon":null,"morphed":false},"frame":{"x":100,"y":0,"w":100,"h":49}}]"#
            return .result(#"{"seq":\#(seq),"state":{"items":\#(items),"selected":"\#(selected)","previous":\#(previous.map { "\"\($0)\"" } ?? "null"),"highlighted":null,"active_action":null,"visibility":\#(visibilityJSON(hidden: false, phase: "idle", reasons: [])),"layout":{"width":200,"height":49,"safe_bottom":0,"center":{"width":70,"height":70,"raise":21,"shape":"circle"},"rtl":false},"feedback":{"profile":"full","volume":1},"settings":{"commit_on":"up","click_on":"commit","center_corners":"pass_through","animation":"none","action_badges":false,"scroll_threshold":24,"hide_duration_ms":500,"max_count":99,"max_chars":16,"sounds":{}},"animations":[]}}"#)
        }
        store.send(req("state.get"), reply: state(seq: 0, morphed: true, selected: "home", previous: nil))
        store.send(touchLine("down", 10, 10), reply: touchReply(1, "home"), events: [highlightEvent(1, "home", "begin")]) {
            $0.seq = 1; $0.highlighted = "home"
        }
        store.send(touchLine("up", 10, 10), reply: touchReply(2, "home", commit: "reselect", sound: "reselect"),
                   events: [highlightEvent(2, "home", "end"), reselectedEvent(2, "home")],
                   effects: [.play(name: "reselect", gain: 1, trigger: .reselect)]) { $0.seq = 2; $0.highlighted = nil }
        store.send(req("tab.select", #"{"tab":"chat"}"#), reply: selectReply(3, "chat", previous: "home"),
                   events: [selectedEvent(3, "chat", previous: "home")], effects: [.play(name: "click", gain: 1, trigger: .select)]) {
            $0.seq = 3; $0.selected = "chat"; $0.previous = "home"
        }
        store.send(req("state.get"), reply: state(seq: 3, morphed: false, selected: "chat", previous: "home"))
        // Not morphed, a tap on it is a select.
        store.send(touchLine("down", 10, 10), reply: touchReply(4, "home"), events: [highlightEvent(4, "home", "begin")]) {
            $0.seq = 4; $0.highlighted = "home"
        }
        store.send(touchLine("up", 10, 10), reply: touchReply(5, "home", commit: "select", sound: "click"),
                   events: [highlightEvent(5, "home", "end"), selectedEvent(5, "home", previous: "chat")],
                   effects: [.play(name: "click", gain: 1, trigger: .select)]) {
            $0.seq = 5; $0.highlighted = nil; $0.selected = "home"; $0.previous = "chat"
        }
    }

    /// The bar's own sound per trigger, "none" silencing one; null gives it back to the daemon's map.
    @Test func eachTriggerMapsToTheBarsSoundOrNone() {
        var bar = BarState.defaultBar
        bar.settings.sounds = ["select": "slide", "reselect": "none", "center": "action"]
        bar.items[2].sound = nil  // (an item's own sound wins over the bar's: HitsTouch tests)
        let store = TestStore(bar)
        var seq = 0
        /// A tap at (x, y) on `tab`: the down highlights it, the up commits (events and effects of the up given).
        func tap(_ x: Double, _ y: Double, _ tab: String, commit: String, _ events: [ExpectedEvent], _ effects: [Effect],
                 sourceLocation: SourceLocation = #_sourceLocation, _ update: @escaping (inout BarState) -> Void) {
            seq += 1
            let down = seq
            store.send(touchLine("down", x, y), reply: touchReply(down, tab), events: [highlightEvent(down, tab, "begin")],
                       sourceLocation: sourceLocation) { $0.seq = UInt64(down); $0.highlighted = tab }
            seq += 1
            let up = seq
            store.send(touchLine("up", x, y), reply: touchReply(up, tab, commit: commit, sound: effects.lazy.compactMap { if case let .play(name, _, _) = $0 { name } else { nil } }.first), events: [highlightEvent(up, tab, "end")] + events,
                       effects: effects, sourceLocation: sourceLocation) { $0.seq = UInt64(up); $0.highlighted = nil; update(&$0) }
        }
        tap(250, 20, "chat", commit: "select", [selectedEvent(2, "chat", previous: "home")], [.play(name: "slide", gain: 1, trigger: .select)]) {
            $0.selected = "chat"; $0.previous = "home"
        }
        tap(250, 20, "chat", commit: "reselect", [reselectedEvent(4, "chat")], []) { _ in }
        tap(187.5, 0, "post", commit: "action", [ExpectedEvent("action.triggered", #"{"seq":6,"tab":"post","action":"compose"}"#)],
            [.play(name: "action", gain: 1, trigger: .center)]) { $0.activeAction = "post" }
        store.send(req("bar.configure", #"{"settings":{"sounds":{"select":null,"reselect":null}}}"#), reply: .state(seq: 7), events: [.configured(seq: 7)]) {
            $0.seq = 7; $0.settings.sounds = ["center": "action"]
        }
        seq = 7
        tap(20, 20, "home", commit: "select", [selectedEvent(9, "home", previous: "chat")], [.play(name: "click", gain: 1, trigger: .select)]) {
            $0.selected = "home"; $0.previous = "chat"; $0.activeAction = nil
        }
        tap(20, 20, "home", commit: "reselect", [reselectedEvent(11, "home")], [.play(name: "reselect", gain: 1, trigger: .reselect)]) { _ in }
    }
}

@Suite struct ExhaustiveHitTests {
    /// A down and a cancel at each point: the item hit, highlighted and let go.
    func hits(_ store: TestStore, from first: Int, _ points: [(Double, Double, String)], sourceLocation: SourceLocation = #_sourceLocation) {
        var seq = first
        for (x, y, tab) in points {
            seq += 1
            let down = seq
            store.send(touchLine("down", x, y), reply: touchReply(down, tab), events: [highlightEvent(down, tab, "begin")],
                       sourceLocation: sourceLocation) { $0.seq = UInt64(down); $0.highlighted = tab }
            seq += 1
            let cancel = seq
            store.send(touchLine("cancel", x, y), reply: touchReply(cancel, tab), events: [highlightEvent(cancel, tab, "cancel")],
                       sourceLocation: sourceLocation) { $0.seq = UInt64(cancel); $0.highlighted = nil }
        }
    }

    @Test func theIssuesTapsHitTheirItems() {
        let store = TestStore()
        hits(store, from: 0, [(187.5, 0, "post"), (20, 30, "home"), (370, 30, "me"), (100, 10, "nearby"), (300, 48, "me"),
                              (187.5, -20, "post"), (160, 30, "post")])
    }

    @Test func rightToLeftMirrorsTheHitsAndARectCenterIsHitInItsCorners() {
        var bar = BarState.defaultBar
        bar.layout.rtl = true
        bar.layout.center.shape = .rect
        let store = TestStore(bar)
        hits(store, from: 0, [(20, 30, "me"), (370, 30, "home"), (221.5, -20, "post")])
    }

    @Test func whatHitsNoItem() {
        let store = TestStore()
        // Above the bar outside the center, and below it: nothing, passed through.
        store.send(touchLine("down", 20, -5), reply: touchReply(0, nil, consumed: false))
        store.send(touchLine("down", 20, 49), reply: touchReply(0, nil, consumed: false))
        // The circle's corner above the bar passes through; the row under its lower corner is the bar's.
        store.send(touchLine("down", 221.5, -20), reply: touchReply(0, nil, consumed: false))
        store.send(touchLine("down", 153, 48), reply: touchReply(0, nil))
        // The safe area is the bar's too.
        store.send(req("bar.configure", #"{"layout":{"height":83,"safe_bottom":34}}"#), reply: .state(seq: 1), events: [.configured(seq: 1)]) {
            $0.seq = 1; $0.layout.height = 83; $0.layout.safeBottom = 34
        }
        store.send(touchLine("down", 20, 60), reply: touchReply(1, nil))
        // The bar may swallow the circle's corners.
        store.send(req("bar.configure", #"{"settings":{"center_corners":"swallow"}}"#), reply: .state(seq: 2), events: [.configured(seq: 2)]) {
            $0.seq = 2; $0.settings.centerCorners = .swallow
        }
        store.send(touchLine("down", 221.5, -20), reply: touchReply(2, nil))
    }

    @Test func aHiddenBarHitsNothingAndADisabledItemIsConsumedAndDoesNothing() {
        let store = TestStore()
        store.send(req("bar.set_hidden", #"{"hidden":true}"#),
                   reply: .result(#"{"seq":1,"visibility":\#(visibilityJSON(hidden: true, phase: "idle", reasons: ["explicit"]))}"#),
                   events: [visibilityEvent(1, hidden: true, phase: "idle", reasons: ["explicit"], ms: 0)]) {
            $0.seq = 1; $0.visibility.reasons = [.explicit]; $0.visibility.phaseFrom = 1
        }
        for (x, y) in [(187.5, 0.0), (20, 30), (370, 30)] {
            store.send(touchLine("down", x, y), reply: touchReply(1, nil, consumed: false))
            store.send(touchLine("up", x, y), reply: touchReply(1, nil, consumed: false, ignored: true))
        }
        store.send(req("bar.set_hidden", #"{"hidden":false}"#),
                   reply: .result(#"{"seq":2,"visibility":\#(visibilityJSON(hidden: false, phase: "idle", reasons: []))}"#),
                   events: [visibilityEvent(2, hidden: false, phase: "idle", reasons: [], ms: 0)]) {
            $0.seq = 2; $0.visibility.reasons = []; $0.visibility.phaseFrom = 0
        }
        store.send(req("bar.configure", #"{"items":[{"id":"home"},{"id":"nearby"},{"id":"post","kind":"center"},{"id":"chat","enabled":false},{"id":"me"}]}"#),
                   reply: .state(seq: 3), events: [.configured(seq: 3)]) {
            $0.seq = 3
            $0.items = [Item(id: "home"), Item(id: "nearby"), Item(id: "post", kind: .center), Item(id: "chat", enabled: false), Item(id: "me")]
        }
        store.send(touchLine("down", 250, 20), reply: touchReply(3, nil))
        store.send(touchLine("up", 250, 20), reply: touchReply(3, nil, ignored: true))
    }
}

@Suite struct ExhaustiveTouchRuleTests {
    @Test func aCancelEndsTheTouchAndALaterUpBelongsToNone() {
        let store = TestStore()
        store.send(touchLine("down", 250, 20), reply: touchReply(1, "chat"), events: [highlightEvent(1, "chat", "begin")]) {
            $0.seq = 1; $0.highlighted = "chat"
        }
        store.send(touchLine("cancel", 250, 20), reply: touchReply(2, "chat"), events: [highlightEvent(2, "chat", "cancel")]) {
            $0.seq = 2; $0.highlighted = nil
        }
        store.send(touchLine("up", 250, 20), reply: touchReply(2, "chat", ignored: true))
        // An up off the bar cancels; a down on nothing ends the touch in progress.
        store.send(touchLine("down", 250, 20), reply: touchReply(3, "chat"), events: [highlightEvent(3, "chat", "begin")]) {
            $0.seq = 3; $0.highlighted = "chat"
        }
        store.send(touchLine("up", 250, -80), reply: touchReply(4, nil, consumed: false), events: [highlightEvent(4, "chat", "cancel")]) {
            $0.seq = 4; $0.highlighted = nil
        }
        store.send(touchLine("down", 250, 20), reply: touchReply(5, "chat"), events: [highlightEvent(5, "chat", "begin")]) {
            $0.seq = 5; $0.highlighted = "chat"
        }
        store.send(touchLine("down", 250, -60), reply: touchReply(6, nil, consumed: false), events: [highlightEvent(6, "chat", "cancel")]) {
            $0.seq = 6; $0.highlighted = nil
        }
    }

    @Test func anUpWithAnotherIdDoesNotEndTheTouchAndANewIdIsANewTouch() {
        let store = TestStore()
        store.send(touchLine("down", 250, 20, id: 7), reply: touchReply(1, "chat"), events: [highlightEvent(1, "chat", "begin")]) {
            $0.seq = 1; $0.highlighted = "chat"
        }
        store.send(touchLine("up", 250, 20, id: 8), reply: touchReply(1, "chat", ignored: true))
        store.send(touchLine("up", 250, 20, id: 7), reply: touchReply(2, "chat", commit: "select", sound: "click"),
                   events: [highlightEvent(2, "chat", "end"), selectedEvent(2, "chat", previous: "home")],
                   effects: [.play(name: "click", gain: 1, trigger: .select)]) {
            $0.seq = 2; $0.highlighted = nil; $0.selected = "chat"; $0.previous = "home"
        }
        // The same sequence again (a front end resending after a reconnect) is ignored; a new id is a new touch.
        store.send(touchLine("down", 250, 20, id: 7), reply: touchReply(2, "chat", ignored: true))
        store.send(touchLine("up", 250, 20, id: 7), reply: touchReply(2, "chat", ignored: true))
        store.send(touchLine("down", 250, 20, id: 9), reply: touchReply(3, "chat"), events: [highlightEvent(3, "chat", "begin")]) {
            $0.seq = 3; $0.highlighted = "chat"
        }
        store.send(touchLine("up", 250, 20, id: 9), reply: touchReply(4, "chat", commit: "reselect", sound: "reselect"),
                   events: [highlightEvent(4, "chat", "end"), reselectedEvent(4, "chat")],
                   effects: [.play(name: "reselect", gain: 1, trigger: .reselect)]) { $0.seq = 4; $0.highlighted = nil }
    }

    @Test func theCenterCommitsOnUpWithItsSound() {
        let store = TestStore()
        store.send(touchLine("down", 187.5, 0), reply: touchReply(1, "post"), events: [highlightEvent(1, "post", "begin")]) {
            $0.seq = 1; $0.highlighted = "post"
        }
        store.send(touchLine("up", 187.5, 0), reply: touchReply(2, "post", commit: "action", sound: "center"),
                   events: [highlightEvent(2, "post", "end"), ExpectedEvent("action.triggered", #"{"seq":2,"tab":"post","action":"compose"}"#)],
                   effects: [.play(name: "center", gain: 1, trigger: .center)]) {
            $0.seq = 2; $0.highlighted = nil; $0.activeAction = "post"
        }
    }

    /// Committed on down, a reselect is one commit too; sliding off and lifting does not undo a select.
    @Test func commitOnDownReselectsAndSlidingOffUndoesNothing() {
        var bar = BarState.defaultBar
        bar.settings.commitOn = .down
        let store = TestStore(bar)
        store.send(touchLine("down", 20, 30), reply: touchReply(1, "home", commit: "reselect", sound: "reselect"),
                   events: [highlightEvent(1, "home", "begin"), reselectedEvent(1, "home")],
                   effects: [.play(name: "reselect", gain: 1, trigger: .reselect)]) { $0.seq = 1; $0.highlighted = "home" }
        store.send(touchLine("up", 20, 30), reply: touchReply(2, "home"), events: [highlightEvent(2, "home", "end")]) {
            $0.seq = 2; $0.highlighted = nil
        }
        store.send(touchLine("down", 250, 20), reply: touchReply(3, "chat", commit: "select", sound: "click"),
                   events: [highlightEvent(3, "chat", "begin"), selectedEvent(3, "chat", previous: "home")],
                   effects: [.play(name: "click", gain: 1, trigger: .select)]) {
            $0.seq = 3; $0.highlighted = "chat"; $0.selected = "chat"; $0.previous = "home"
        }
        store.send(touchLine("up", 20, 20), reply: touchReply(4, "home"), events: [highlightEvent(4, "chat", "cancel")]) {
            $0.seq = 4; $0.highlighted = nil
        }
    }

    @Test func cancellingAHighlightThatIsNotThereChangesNothing() {
        let store = TestStore()
        store.send(req("tab.highlight", #"{"tab":"chat","phase":"cancel"}"#), reply: .result(#"{"seq":0}"#))
        store.send(req("tab.highlight", #"{"tab":"me","phase":"begin"}"#), reply: .result(#"{"seq":1}"#),
                   events: [highlightEvent(1, "me", "begin")]) { $0.seq = 1; $0.highlighted = "me" }
        store.send(req("tab.highlight", #"{"tab":"chat","phase":"cancel"}"#), reply: .result(#"{"seq":1}"#))
        store.send(req("tab.highlight", #"{"tab":"me","phase":"cancel"}"#), reply: .result(#"{"seq":2}"#),
                   events: [highlightEvent(2, "me", "cancel")]) { $0.seq = 2; $0.highlighted = nil }
    }
}

@Suite struct ExhaustiveVisibilityRuleTests {
    /// Explicit and push combine; the bar shows only when no reason holds (and a pop shows it animated).
    @Test func reasonsCombineAndTheBarShowsOnlyWhenNoneHolds() {
        let store = TestStore()
        store.send(req("bar.set_hidden", #"{"hidden":true}"#),
                   reply: .result(#"{"seq":1,"visibility":\#(visibilityJSON(hidden: true, phase: "idle", reasons: ["explicit"]))}"#),
                   events: [visibilityEvent(1, hidden: true, phase: "idle", reasons: ["explicit"], ms: 0)]) {
            $0.seq = 1; $0.visibility.reasons = [.explicit]; $0.visibility.phaseFrom = 1
        }
        store.send(req("nav.push", #"{"hides_bar":true}"#),
                   reply: .result(#"{"seq":2,"visibility":\#(visibilityJSON(hidden: true, phase: "idle", reasons: ["explicit", "push"], stack: [true]))}"#),
                   events: [visibilityEvent(2, hidden: true, phase: "idle", reasons: ["explicit", "push"], ms: 0, stack: [true])]) {
            $0.seq = 2; $0.visibility.reasons = [.explicit, .push]; $0.visibility.navStack = [true]
        }
        store.send(req("bar.set_hidden", #"{"hidden":false}"#),
                   reply: .result(#"{"seq":3,"visibility":\#(visibilityJSON(hidden: true, phase: "idle", reasons: ["push"], stack: [true]))}"#),
                   events: [visibilityEvent(3, hidden: true, phase: "idle", reasons: ["push"], ms: 0, stack: [true])]) {
            $0.seq = 3; $0.visibility.reasons = [.push]
        }
        // An explicit show while a push holds the bar: still hidden, nothing changes; a touch hits nothing.
        store.send(req("bar.set_hidden", #"{"hidden":false}"#),
                   reply: .result(#"{"seq":3,"visibility":\#(visibilityJSON(hidden: true, phase: "idle", reasons: ["push"], stack: [true]))}"#))
        store.send(touchLine("down", 20, 30), reply: touchReply(3, nil, consumed: false))
        store.send(req("nav.pop"), reply: .result(#"{"seq":4,"visibility":\#(visibilityJSON(hidden: false, phase: "showing", reasons: []))}"#),
                   events: [visibilityEvent(4, hidden: false, phase: "showing", reasons: [], ms: 500),
                            ExpectedEvent("animation.cue", #"{"seq":4,"tab":null,"trigger":"visibility","kind":"slide","descriptor":\#(barSlide(from: 49, to: 0, ms: 500)),"sound":null}"#)],
                   effects: [.timer(.visibility, atMs: 500)]) {
            $0.seq = 4; $0.visibility.reasons = []; $0.visibility.navStack = []; $0.visibility.phase = .showing
            $0.visibility.phaseStartMs = 0; $0.visibility.phaseDurationMs = 500; $0.visibility.phaseFrom = 1
        }
        store.fire(.visibility, reply: .result(#"{"seq":5}"#), events: [visibilityEvent(5, hidden: false, phase: "idle", reasons: [], ms: 0)],
                   journal: .timerFired(.visibility)) {
            $0.seq = 5; $0.visibility = Visibility()
        }
    }

    /// A screen that hides the bar hides it for every screen above it; a duration of 0 is
    /// never animated; the bar's own visibility sound plays with each flip.
    @Test func aHidingScreenHidesTheBarForEverythingAboveIt() {
        var bar = BarState.defaultBar
        bar.settings.hideDurationMs = 0
        let store = TestStore(bar)
        let steps: [(line: String, hidden: Bool, stack: [Bool])] = [
            (req("nav.push", #"{"hides_bar":false}"#), false, [false]),
            (req("nav.push", #"{"hides_bar":true}"#), true, [false, true]),
            (req("nav.push", #"{"hides_bar":false}"#), true, [false, true, false]),
            (req("nav.pop"), true, [false, true]),
            (req("nav.pop"), false, [false]),
            (req("nav.pop"), false, []),
        ]
        for (k, step) in steps.enumerated() {
            let seq = k + 1, reasons = step.hidden ? ["push"] : []
            store.send(step.line, reply: .result(#"{"seq":\#(seq),"visibility":\#(visibilityJSON(hidden: step.hidden, phase: "idle", reasons: reasons, stack: step.stack))}"#),
                       events: [visibilityEvent(seq, hidden: step.hidden, phase: "idle", reasons: reasons, ms: 0, stack: step.stack)]) {
                $0.seq = UInt64(seq); $0.visibility.reasons = step.hidden ? [.push] : []; $0.visibility.navStack = step.stack
                $0.visibility.phaseFrom = step.hidden ? 1 : 0
            }
        }
        // Popping an empty stack changes nothing.
        store.send(req("nav.pop"), reply: .result(#"{"seq":6,"visibility":\#(visibilityJSON(hidden: false, phase: "idle", reasons: []))}"#))
        store.send(req("bar.configure", #"{"settings":{"sounds":{"visibility":"slide"}}}"#), reply: .state(seq: 7), events: [.configured(seq: 7)]) {
            $0.seq = 7; $0.settings.sounds = ["visibility": "slide"]
        }
        store.send(req("nav.push", #"{"hides_bar":true}"#),
                   reply: .result(#"{"seq":8,"visibility":\#(visibilityJSON(hidden: true, phase: "idle", reasons: ["push"], stack: [true]))}"#),
                   events: [visibilityEvent(8, hidden: true, phase: "idle", reasons: ["push"], ms: 0, stack: [true])],
                   effects: [.play(name: "slide", gain: 1, trigger: .visibility)]) {
            $0.seq = 8; $0.visibility.reasons = [.push]; $0.visibility.navStack = [true]; $0.visibility.phaseFrom = 1
        }
    }

    /// The push reason set directly holds the bar over pushes and pops until it is withdrawn directly.
    @Test func thePushReasonSetDirectlyHoldsUntilWithdrawn() {
        let store = TestStore()
        let held = { (seq: Int, stack: [Bool]) -> ExpectedReply in
            .result(#"{"seq":\#(seq),"visibility":\#(visibilityJSON(hidden: true, phase: "idle", reasons: ["push"], stack: stack, hold: true))}"#)
        }
        store.send(req("bar.set_hidden", #"{"hidden":true,"reason":"push","animated":false}"#), reply: held(1, []),
                   events: [visibilityEvent(1, hidden: true, phase: "idle", reasons: ["push"], ms: 0)]) {
            $0.seq = 1; $0.visibility.reasons = [.push]; $0.visibility.pushHold = true; $0.visibility.phaseFrom = 1
        }
        store.send(req("nav.push", #"{"hides_bar":true}"#), reply: held(2, [true]),
                   events: [visibilityEvent(2, hidden: true, phase: "idle", reasons: ["push"], ms: 0, stack: [true])]) {
            $0.seq = 2; $0.visibility.navStack = [true]
        }
        store.send(req("nav.pop"), reply: held(3, []), events: [visibilityEvent(3, hidden: true, phase: "idle", reasons: ["push"], ms: 0)]) {
            $0.seq = 3; $0.visibility.navStack = []
        }
        store.send(req("bar.set_hidden", #"{"hidden":false,"reason":"push","animated":false}"#),
                   reply: .result(#"{"seq":4,"visibility":\#(visibilityJSON(hidden: false, phase: "idle", reasons: []))}"#),
                   events: [visibilityEvent(4, hidden: false, phase: "idle", reasons: [], ms: 0)]) {
            $0.seq = 4; $0.visibility.reasons = []; $0.visibility.pushHold = false; $0.visibility.phaseFrom = 0
        }
    }

    /// Scrolling adds up to the threshold in one direction; turning starts counting again.
    @Test func scrollingCountsToItsThresholdInOneDirection() {
        var bar = BarState.defaultBar
        bar.settings.scrollThreshold = 30
        let store = TestStore(bar)
        let shown = visibilityJSON(hidden: false, phase: "idle", reasons: [])
        store.send(req("scroll", #"{"dy":10}"#), reply: .result(#"{"seq":0,"visibility":\#(shown)}"#))
        store.send(req("scroll", #"{"dy":15}"#), reply: .result(#"{"seq":0,"visibility":\#(shown)}"#))
        store.send(req("scroll", #"{"dy":6}"#),
                   reply: .result(#"{"seq":1,"visibility":\#(visibilityJSON(hidden: true, phase: "hiding", reasons: ["scroll"]))}"#),
                   events: [visibilityEvent(1, hidden: true, phase: "hiding", reasons: ["scroll"], ms: 500),
                            ExpectedEvent("animation.cue", #"{"seq":1,"tab":null,"trigger":"visibility","kind":"slide","descriptor":\#(barSlide(from: 0, to: 49, ms: 500)),"sound":null}"#)],
                   effects: [.timer(.visibility, atMs: 500)], journal: .setHidden(true, reason: .scroll)) {
            $0.seq = 1; $0.visibility.reasons = [.scroll]; $0.visibility.phase = .hiding
            $0.visibility.phaseStartMs = 0; $0.visibility.phaseDurationMs = 500; $0.visibility.phaseFrom = 0
        }
        store.fire(.visibility, reply: .result(#"{"seq":2}"#), events: [visibilityEvent(2, hidden: true, phase: "idle", reasons: ["scroll"], ms: 0)]) {
            $0.seq = 2; $0.visibility.phase = .idle; $0.visibility.phaseStartMs = 0; $0.visibility.phaseDurationMs = 0; $0.visibility.phaseFrom = 1
        }
        let hidden = visibilityJSON(hidden: true, phase: "idle", reasons: ["scroll"])
        for dy in [100, -29, 5, -20] {
            store.send(req("scroll", #"{"dy":\#(dy)}"#), reply: .result(#"{"seq":2,"visibility":\#(hidden)}"#))
        }
        store.send(req("scroll", #"{"dy":-10}"#),
                   reply: .result(#"{"seq":3,"visibility":\#(visibilityJSON(hidden: false, phase: "showing", reasons: []))}"#),
                   events: [visibilityEvent(3, hidden: false, phase: "showing", reasons: [], ms: 500),
                            ExpectedEvent("animation.cue", #"{"seq":3,"tab":null,"trigger":"visibility","kind":"slide","descriptor":\#(barSlide(from: 49, to: 0, ms: 500)),"sound":null}"#)],
                   effects: [.timer(.visibility, atMs: 1000)]) {
            $0.seq = 3; $0.visibility.reasons = []; $0.visibility.phase = .showing
            $0.visibility.phaseStartMs = 500; $0.visibility.phaseDurationMs = 500; $0.visibility.phaseFrom = 1
        }
        store.skipPendingTimers()
    }

    /// A select withdraws only the scroll reason: the bar stays hidden for another, in the same change.
    @Test func aSelectWithdrawsOnlyTheScrollReason() {
        var bar = BarState.defaultBar
        bar.settings.scrollThreshold = 10
        bar.settings.hideDurationMs = 0
        let store = TestStore(bar)
        store.send(req("scroll", #"{"dy":50}"#),
                   reply: .result(#"{"seq":1,"visibility":\#(visibilityJSON(hidden: true, phase: "idle", reasons: ["scroll"]))}"#),
                   events: [visibilityEvent(1, hidden: true, phase: "idle", reasons: ["scroll"], ms: 0)]) {
            $0.seq = 1; $0.visibility.reasons = [.scroll]; $0.visibility.phaseFrom = 1
        }
        store.send(req("bar.set_hidden", #"{"hidden":true}"#),
                   reply: .result(#"{"seq":2,"visibility":\#(visibilityJSON(hidden: true, phase: "idle", reasons: ["explicit", "scroll"]))}"#),
                   events: [visibilityEvent(2, hidden: true, phase: "idle", reasons: ["explicit", "scroll"], ms: 0)]) {
            $0.seq = 2; $0.visibility.reasons = [.explicit, .scroll]
        }
        store.send(req("tab.select", #"{"tab":"chat","source":"program"}"#), reply: selectReply(3, "chat", previous: "home"),
                   events: [selectedEvent(3, "chat", previous: "home", source: "program"),
                            visibilityEvent(3, hidden: true, phase: "idle", reasons: ["explicit"], ms: 0)]) {
            $0.seq = 3; $0.selected = "chat"; $0.previous = "home"; $0.visibility.reasons = [.explicit]
        }
    }

    /// A timer that fires early waits for the end of its phase; a stale one changes nothing.
    @Test func anEarlyTimerWaitsAndAStaleOneChangesNothing() {
        var bar = BarState.defaultBar
        bar.settings.hideDurationMs = 300
        let store = TestStore(bar)
        store.send(req("bar.set_hidden", #"{"hidden":true,"animated":true}"#), at: 1000,
                   reply: .result(#"{"seq":1,"visibility":\#(visibilityJSON(hidden: true, phase: "hiding", reasons: ["explicit"]))}"#),
                   events: [visibilityEvent(1, hidden: true, phase: "hiding", reasons: ["explicit"], ms: 300),
                            ExpectedEvent("animation.cue", #"{"seq":1,"tab":null,"trigger":"visibility","kind":"slide","descriptor":\#(barSlide(from: 0, to: 49, ms: 300)),"sound":null}"#)],
                   effects: [.timer(.visibility, atMs: 1300)]) {
            $0.seq = 1; $0.visibility.reasons = [.explicit]; $0.visibility.phase = .hiding
            $0.visibility.phaseStartMs = 1000; $0.visibility.phaseDurationMs = 300; $0.visibility.phaseFrom = 0
        }
        store.fireOffSchedule(.visibility, at: 1200, effects: [.timer(.visibility, atMs: 1300)])
        store.fire(.visibility, reply: .result(#"{"seq":2}"#), events: [visibilityEvent(2, hidden: true, phase: "idle", reasons: ["explicit"], ms: 0)],
                   journal: .timerFired(.visibility)) {
            $0.seq = 2; $0.visibility.phase = .idle; $0.visibility.phaseStartMs = 0; $0.visibility.phaseDurationMs = 0; $0.visibility.phaseFrom = 1
        }
        store.fireOffSchedule(.visibility, at: 1400)
    }
}

@Suite struct ExhaustiveAnimationRuleTests {
    /// An item's own style wins over the bar's, `none` included.
    @Test func anItemsStyleOverridesTheBars() {
        var bar = BarState(items: [Item(id: "a", icon: "a", selectedIcon: "a.fill", animation: .crossfade),
                                   Item(id: "b", animation: AnimationStyle.none), Item(id: "c")], selected: "a")
        bar.settings.animation = .pulse
        let store = TestStore(bar)
        func fade(_ from: String, _ to: String, growing: Bool) -> String {
            let small = #"{"w":25,"h":23}"#, big = #"{"w":37.5,"h":34.5}"#
            return #"{"target":"icon","transition":"crossfade","property":"bounds.size","from":\#(growing ? small : big),"to":\#(growing ? big : small),"from_icon":"\#(from)","to_icon":"\#(to)","duration_ms":250,"timing":"ease_in_ease_out","autoreverse":false,"repeat":0}"#
        }
        store.send(req("tab.select", #"{"tab":"c"}"#), reply: selectReply(1, "c", previous: "a"),
                   events: [selectedEvent(1, "c", previous: "a"),
                            ExpectedEvent("animation.cue", #"{"seq":1,"tab":"c","trigger":"select","kind":"pulse","descriptor":\#(pulseSelect),"sound":"click"}"#),
                            ExpectedEvent("animation.cue", #"{"seq":1,"tab":"a","trigger":"deselect","kind":"crossfade","descriptor":\#(fade("a.fill", "a", growing: false)),"sound":null}"#)],
                   effects: [.play(name: "click", gain: 1, trigger: .select)]) { $0.seq = 1; $0.selected = "c"; $0.previous = "a" }
        store.send(req("tab.select", #"{"tab":"a"}"#), reply: selectReply(2, "a", previous: "c"),
                   events: [selectedEvent(2, "a", previous: "c"),
                            ExpectedEvent("animation.cue", #"{"seq":2,"tab":"a","trigger":"select","kind":"crossfade","descriptor":\#(fade("a", "a.fill", growing: true)),"sound":"click"}"#),
                            ExpectedEvent("animation.cue", #"{"seq":2,"tab":"c","trigger":"deselect","kind":"pulse","descriptor":\#(pulseDeselect),"sound":null}"#)],
                   effects: [.play(name: "click", gain: 1, trigger: .select)]) { $0.seq = 2; $0.selected = "a"; $0.previous = "c" }
        store.send(req("tab.select", #"{"tab":"b"}"#), reply: selectReply(3, "b", previous: "a"),
                   events: [selectedEvent(3, "b", previous: "a"),
                            ExpectedEvent("animation.cue", #"{"seq":3,"tab":"a","trigger":"deselect","kind":"crossfade","descriptor":\#(fade("a.fill", "a", growing: false)),"sound":null}"#)],
                   effects: [.play(name: "click", gain: 1, trigger: .select)]) { $0.seq = 3; $0.selected = "b"; $0.previous = "a" }
    }

    /// An animation nobody ends ends when its time passes (a journal entry, as a restart
    /// replays it); its timer fired again changes nothing; at most `maxAnimations` run.
    @Test func theTimerEndsAnAnimationOnceAndTheirNumberIsLimited() {
        let store = TestStore()
        store.send(req("animation.begin", #"{"kind":"spin","duration_ms":300}"#), reply: .result(#"{"seq":1,"animation":1}"#),
                   events: [ExpectedEvent("animation.began", #"{"seq":1,"animation":1,"kind":"spin","tab":null,"duration_ms":300}"#)],
                   effects: [.timer(.animation(1), atMs: 300)]) {
            $0.seq = 1; $0.animations = [ActiveAnimation(id: 1, kind: "spin", tab: nil, durationMs: 300, startMs: 0)]
        }
        store.fire(.animation(1), reply: .result(#"{"seq":2}"#),
                   events: [ExpectedEvent("animation.ended", #"{"seq":2,"animation":1,"reason":"finished"}"#)],
                   journal: .timerFired(.animation(1))) { $0.seq = 2; $0.animations = [] }
        store.fireOffSchedule(.animation(1), at: 301)
        for k in 0..<Reducer.maxAnimations {
            let seq = 3 + k
            store.send(req("animation.begin", #"{"kind":"x","duration_ms":1000}"#), reply: .result(#"{"seq":\#(seq),"animation":\#(seq)}"#),
                       events: [ExpectedEvent("animation.began", #"{"seq":\#(seq),"animation":\#(seq),"kind":"x","tab":null,"duration_ms":1000}"#)],
                       effects: [.timer(.animation(seq), atMs: 1301)]) {
                $0.seq = UInt64(seq); $0.animations.append(ActiveAnimation(id: seq, kind: "x", tab: nil, durationMs: 1000, startMs: 301))
            }
        }
        store.send(req("animation.begin", #"{"kind":"x","duration_ms":1000}"#), reply: .error("limit_exceeded"))
        store.skipPendingTimers()
    }
}
