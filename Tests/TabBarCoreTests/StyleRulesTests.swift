import Testing
@testable import TabBarCore

@Suite struct CompleteBadgeTests {
    @Test func maxCountAndMaxCharsAreBarSettings() {
        var r = issueReducer(settings: #"{"max_count":9,"max_chars":4}"#)
        #expect(run(&r, "badge.set", #"{"tab":"chat","count":9}"#).value?["badge"]?["display"] == .string("9"))
        let o = run(&r, "badge.set", #"{"tab":"chat","count":10}"#)
        #expect(o.value?["badge"]?["display"] == .string("9+"))
        #expect(o.events.first?.params["badge"]?["display"] == .string("9+"))
        #expect(run(&r, "badge.set", #"{"tab":"me","text":"hello"}"#).value?["badge"]?["display"] == .string("hel…"))
        #expect(run(&r, "badge.set", #"{"tab":"me","text":"ciao"}"#).value?["badge"]?["display"] == .string("ciao"))
        #expect(r.state.json()["settings"]?["max_count"] == .int(9))
        // The state shows the same display.
        guard case .array(let items)? = r.state.json()["items"] else { Issue.record("no items"); return }
        #expect(items[3]["badge"]?["display"] == .string("9+"))
    }

    @Test func defaultsAre99AndSixteenCharacters() {
        var r = issueReducer()
        #expect(run(&r, "badge.set", #"{"tab":"chat","count":100}"#).value?["badge"]?["display"] == .string("99+"))
        #expect(r.state.json()["settings"]?["max_count"] == .int(99))
        #expect(r.state.json()["settings"]?["max_chars"] == .int(16))
        #expect(run(&r, "badge.set", #"{"tab":"chat","text":"0123456789abcdefg"}"#).value?["badge"]?["display"] == .string("0123456789abcde…"))
    }

    @Test func hiddenBadgeKeepsItsValueAndComesBack() {
        var r = issueReducer()
        _ = run(&r, "badge.set", #"{"tab":"chat","count":120}"#)
        let hide = run(&r, "badge.set", #"{"tab":"chat","hidden":true}"#)
        let kept = JSON.obj(["kind": .string("count"), "value": .int(120), "display": .string("99+")])
        #expect(hide.value == .obj(["seq": .int(3), "badge": .null, "hidden_badge": kept]))
        #expect(hide.events == [Event("badge.changed", .obj(["seq": .int(3), "tab": .string("chat"), "badge": .null, "hidden_badge": kept]))])
        guard case .array(let items)? = r.state.json()["items"] else { Issue.record("no items"); return }
        #expect(items[3]["badge"] == .null)
        #expect(items[3]["hidden_badge"] == kept)
        // Counting on while hidden is kept too; showing brings the latest value.
        _ = run(&r, "badge.set", #"{"tab":"chat","count":121,"hidden":true}"#)
        let show = run(&r, "badge.set", #"{"tab":"chat","hidden":false}"#)
        #expect(show.value?["badge"]?["value"] == .int(121))
        #expect(show.events.first?.params["badge"]?["display"] == .string("99+"))
        #expect(show.events.first?.params["hidden_badge"] == nil)
        // Hiding twice is one change; clearing forgets the value.
        _ = run(&r, "badge.set", #"{"tab":"chat","hidden":true}"#)
        #expect(run(&r, "badge.set", #"{"tab":"chat","hidden":true}"#).events.isEmpty)
        _ = run(&r, "badge.clear", #"{"tab":"chat"}"#)
        #expect(run(&r, "badge.set", #"{"tab":"chat","hidden":false}"#).value?["badge"] == .null)
        #expect(r.state.items[3].badge == nil)
    }

    @Test func hiddenBadgeSurvivesASnapshotAndAReconfigure() throws {
        var r = issueReducer()
        _ = run(&r, "badge.set", #"{"tab":"chat","text":"new","hidden":true}"#)
        let back = try BarState.decode(try JSON.parse(r.state.json().text), seq: r.state.seq, limits: Limits())
        #expect(back.items[3].badge == .text("new"))
        #expect(back.items[3].badgeHidden)
        _ = run(&r, "bar.configure", #"{"items":[{"id":"home"},{"id":"chat"}]}"#)
        #expect(r.state.item("chat")?.badgeHidden == true)
        #expect(r.state.item("chat")?.badge == .text("new"))
    }

    @Test func badgesOnActionItemsAreIgnoredUnlessEnabled() {
        var r = issueReducer()
        let o = run(&r, "badge.set", #"{"tab":"post","count":3}"#)
        #expect(o.value == .obj(["seq": .int(1), "badge": .null, "ignored": .bool(true)]))
        #expect(o.events.isEmpty)
        #expect(r.state.item("post")?.badge == nil)
        // A configuration that gives one is ignored the same way.
        _ = run(&r, "bar.configure", #"{"items":[{"id":"a"},{"id":"rec","kind":"action","badge":{"kind":"dot"}},{"id":"b"}]}"#)
        #expect(r.state.item("rec")?.badge == nil)
        // Enabled, they work like any badge.
        _ = run(&r, "bar.configure", #"{"settings":{"action_badges":true}}"#)
        let on = run(&r, "badge.set", #"{"tab":"rec","dot":true}"#)
        #expect(on.eventNames == ["badge.changed"])
        #expect(r.state.item("rec")?.badge == .dot)
        // Turning them off again drops them.
        _ = run(&r, "bar.configure", #"{"settings":{"action_badges":false}}"#)
        #expect(r.state.item("rec")?.badge == nil)
    }

    @Test func badgeSoundIsOptInAndHasItsOwnName() {
        var r = issueReducer()
        #expect(run(&r, "badge.set", #"{"tab":"chat","count":1}"#).effects.isEmpty)
        _ = run(&r, "bar.configure", #"{"settings":{"sounds":{"badge":"badge"}}}"#)
        #expect(run(&r, "badge.set", #"{"tab":"chat","count":2}"#).effects == [.play(name: "badge", gain: 1, trigger: .badge)])
        // A badge change nobody sees plays nothing.
        #expect(run(&r, "badge.set", #"{"tab":"chat","count":3,"hidden":true}"#).effects.isEmpty)
    }
}

@Suite struct StyleConfigurationTests {
    @Test func twoTabsAndThreeOperationButtons() {
        var r = Reducer(state: BarState(items: []))
        let o = run(&r, "bar.configure", #"{"items":[{"id":"feed"},{"id":"video","kind":"action","action":"record_video"},{"id":"photo","kind":"action","action":"take_photo"},{"id":"audio","kind":"action","action":"record_audio"},{"id":"profile"}]}"#)
        #expect(o.error == nil)
        #expect(r.state.selected == "feed")
        for (id, action) in [("video", "record_video"), ("photo", "take_photo"), ("audio", "record_audio")] {
            let t = run(&r, "action.trigger", #"{"tab":"\#(id)"}"#)
            #expect(t.events.first?.params["action"] == .string(action))
            #expect(t.effects == [.play(name: "action", gain: 1, trigger: .action)])
        }
        #expect(r.state.selected == "feed")
        #expect(run(&r, "tab.select", #"{"tab":"photo"}"#).error?.kind == "not_selectable")
    }

    @Test(arguments: [
        (#"{"items":[{"id":"a"},{"id":"b"},{"id":"a"}]}"#, "invalid_params", "Duplicate item id \"a\""),
        (#"{"items":[{"id":"x","kind":"action"},{"id":"y","kind":"action"}]}"#, "invalid_params", "no selectable tab"),
        (#"{"items":[{"id":"x","enabled":false},{"id":"y","kind":"action"}]}"#, "invalid_params", "no selectable tab"),
        (#"{"items":[{"id":"a"},{"id":"b"},{"id":"c"},{"id":"d"},{"id":"e"},{"id":"f"}]}"#, "limit_exceeded", "max_items"),
        (#"{"settings":{"commit_on":"hover"}}"#, "invalid_params", "commit_on"),
        (#"{"settings":{"scroll_threshold":-1}}"#, "invalid_params", "scroll_threshold"),
        (#"{"settings":{"colour":"red"}}"#, "invalid_params", "settings.colour"),
        (#"{"items":[{"id":"a","badge":{"kind":"dot"},"hidden_badge":{"kind":"dot"}}]}"#, "invalid_params", "hidden_badge"),
    ])
    func disagreeingConfigurationsAreRejectedAndThePreviousBarStays(_ params: String, _ kind: String, _ says: String) {
        var r = issueReducer()
        let before = r.state
        let e = run(&r, "bar.configure", params).error
        #expect(e?.kind == kind)
        #expect(e?.message.contains(says) == true || e?.field?.contains(says) == true, "\(String(describing: e))")
        #expect(r.state == before)
    }

    @Test func maxItemsIsConfigurable() {
        var limits = Limits()
        limits.maxItems = 7
        var r = Reducer(state: BarState(items: []), limits: limits)
        #expect(run(&r, "bar.configure", #"{"items":[{"id":"a"},{"id":"b"},{"id":"c"},{"id":"d"},{"id":"e"},{"id":"f"},{"id":"g"}]}"#).error == nil)
        #expect(run(&r, "bar.configure", #"{"items":[{"id":"a"},{"id":"b"},{"id":"c"},{"id":"d"},{"id":"e"},{"id":"f"},{"id":"g"},{"id":"h"}]}"#).error?.kind == "limit_exceeded")
    }

    @Test func removingTheSelectedItemFallsBackToANeighbour() {
        var r = issueReducer()
        _ = run(&r, "tab.select", #"{"tab":"me"}"#)
        _ = run(&r, "bar.configure", #"{"items":[{"id":"home"},{"id":"nearby"},{"id":"post","kind":"center"},{"id":"chat"},{"id":"you"}]}"#)
        #expect(r.state.selected == "you")
        _ = run(&r, "bar.configure", #"{"items":[{"id":"home"},{"id":"nearby"},{"id":"chat"}]}"#)
        #expect(r.state.selected == "chat")
        // Disabling it counts as removal.
        _ = run(&r, "bar.configure", #"{"items":[{"id":"home"},{"id":"nearby"},{"id":"chat","enabled":false}]}"#)
        #expect(r.state.selected == "nearby")
    }

    @Test func settingsArePartialAndShownInTheState() {
        var r = issueReducer(settings: #"{"commit_on":"down","hide_duration_ms":120}"#)
        _ = run(&r, "bar.configure", #"{"settings":{"scroll_threshold":12}}"#)
        let s = r.state.json()["settings"]
        #expect(s == .obj(["commit_on": .string("down"), "center_corners": .string("pass_through"), "animation": .string("none"),
                           "action_badges": .bool(false), "scroll_threshold": .int(12), "hide_duration_ms": .int(120),
                           "max_count": .int(99), "max_chars": .int(16), "sounds": .obj([:])]))
        // Settings alone are a configuration change with its event.
        #expect(run(&r, "bar.configure", #"{"settings":{"center_corners":"swallow"}}"#).eventNames == ["bar.configured"])
    }

    @Test func settingsRoundTripThroughTheSnapshot() throws {
        let r = issueReducer(settings: #"{"commit_on":"down","animation":"bounce","max_count":999,"sounds":{"select":"none","animations":{"bounce":"click"}}}"#)
        let back = try BarState.decode(try JSON.parse(r.state.json().text), seq: r.state.seq, limits: Limits())
        #expect(back == r.state)
    }
}

@Suite struct MorphAndSoundRuleTests {
    @Test func morphingFirstTabShowsItsMorphWhileSelectedAndATapIsAReselect() {
        var r = Reducer(state: BarState(items: []))
        _ = run(&r, "bar.configure", #"{"items":[{"id":"home","title":"Home","icon":"house","morph":{"title":"Top","icon":"arrow.up"}},{"id":"chat"}],"layout":{"width":200}}"#)
        func presentation() -> JSON? {
            guard case .array(let items)? = r.state.json()["items"] else { return nil }
            return items[0]["presentation"]
        }
        #expect(presentation() == .obj(["title": .string("Top"), "icon": .string("arrow.up"), "morphed": .bool(true)]))
        let (_, up) = tap(&r, 10, 10)
        #expect(up.value?["commit"] == .string("reselect"))
        #expect(up.eventNames == ["tab.highlighted", "tab.reselected"])
        _ = run(&r, "tab.select", #"{"tab":"chat"}"#)
        #expect(presentation() == .obj(["title": .string("Home"), "icon": .string("house"), "morphed": .bool(false)]))
        // While not morphed, tapping it is a select.
        #expect(tap(&r, 10, 10).up.value?["commit"] == .string("select"))
    }

    @Test func userSelectsClickProgramAndRestoredChangesDoNot() {
        var r = issueReducer()
        #expect(run(&r, "tab.select", #"{"tab":"chat"}"#).effects.count == 1)
        #expect(run(&r, "tab.select", #"{"tab":"me","source":"program"}"#).effects.isEmpty)
        #expect(run(&r, "action.trigger", #"{"tab":"post","source":"program"}"#).effects.isEmpty)
    }

    @Test func eachTriggerMapsToItsOwnSoundOrNone() {
        var r = issueReducer(settings: #"{"sounds":{"select":"slide","reselect":"none","center":"action"}}"#)
        #expect(tap(&r, 250, 20).up.effects == [.play(name: "slide", gain: 1, trigger: .select)])
        #expect(tap(&r, 250, 20).up.effects.isEmpty)
        #expect(tap(&r, 187.5, 0).up.effects == [.play(name: "action", gain: 1, trigger: .center)])
        // Back to the daemon's map.
        _ = run(&r, "bar.configure", #"{"settings":{"sounds":{"select":null,"reselect":null}}}"#)
        #expect(tap(&r, 20, 20).up.effects == [.play(name: "click", gain: 1, trigger: .select)])
        #expect(tap(&r, 20, 20).up.effects == [.play(name: "reselect", gain: 1, trigger: .reselect)])
    }
}
