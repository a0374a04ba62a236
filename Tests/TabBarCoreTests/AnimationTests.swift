import Testing
@testable import TabBarCore

@Suite struct AnimationCueTests {
    @Test func builtInDescriptorsAreExactlyTheIssues() throws {
        #expect(AnimationDescriptor.pulse() == (try JSON.parse(#"{"target":"item","property":"transform.scale","from":0.7,"to":1.3,"duration_ms":200,"timing":"ease_in_ease_out","autoreverse":true,"repeat":0}"#)))
        #expect(AnimationDescriptor.bounce() == (try JSON.parse(#"{"target":"item","property":"transform.scale","keyframes":[1,1.4,0.9,1.15,0.95,1.02,1],"key_times":[0,0.1667,0.3333,0.5,0.6667,0.8333,1],"duration_ms":600,"timing":"ease_in_ease_out","autoreverse":false,"repeat":0}"#)))
        #expect(AnimationDescriptor.crossfade(fromIcon: "house", toIcon: "house.fill") == (try JSON.parse(#"{"target":"icon","transition":"crossfade","property":"bounds.size","from":{"w":25,"h":23},"to":{"w":37.5,"h":34.5},"from_icon":"house","to_icon":"house.fill","duration_ms":250,"timing":"ease_in_ease_out","autoreverse":false,"repeat":0}"#)))
        #expect(AnimationDescriptor.slide(target: "bar", property: "translation.y", from: 0, to: 49)["duration_ms"] == .int(500))
    }

    @Test func noCuesUnlessTheBarOrItemChoosesAStyle() {
        var r = issueReducer()
        #expect(run(&r, "tab.select", #"{"tab":"chat"}"#).events("animation.cue").isEmpty)
    }

    @Test func selectCuesTheNewItemAndDeselectsTheOldOneAndTheClickStartsWithIt() {
        var r = issueReducer(settings: #"{"animation":"pulse"}"#)
        let o = run(&r, "tab.select", #"{"tab":"chat"}"#)
        #expect(o.eventNames == ["tab.selected", "animation.cue", "animation.cue"])
        #expect(o.events[1].params == .obj([
            "seq": .int(2), "tab": .string("chat"), "trigger": .string("select"), "kind": .string("pulse"),
            "descriptor": AnimationDescriptor.pulse(), "sound": .string("click")]))
        #expect(o.events[2].params["tab"] == .string("home"))
        #expect(o.events[2].params["trigger"] == .string("deselect"))
        #expect(o.events[2].params["descriptor"] == AnimationDescriptor.pulse(reversed: true))
        #expect(o.events[2].params["sound"] == .null)
        // Same change, same loop turn: the click is an effect of the very outcome that carries the cue.
        #expect(o.effects == [.play(name: "click", gain: 1, trigger: .select)])
    }

    @Test func reselectHighlightAndBadgeCue() {
        var r = issueReducer(settings: #"{"animation":"bounce"}"#)
        let re = run(&r, "tab.select", #"{"tab":"home"}"#)
        #expect(re.events("animation.cue").map { $0["trigger"] } == [.string("reselect")])
        #expect(re.events("animation.cue").first?["sound"] == .string("reselect"))
        let hl = run(&r, "tab.highlight", #"{"tab":"me","phase":"begin"}"#)
        #expect(hl.events("animation.cue").map { $0["trigger"] } == [.string("highlight")])
        #expect(hl.events("animation.cue").first?["descriptor"] == AnimationDescriptor.bounce())
        let b = run(&r, "badge.set", #"{"tab":"chat","count":2}"#)
        #expect(b.events("animation.cue").map { $0["trigger"] } == [.string("badge")])
        #expect(b.events("animation.cue").first?["descriptor"]?["target"] == .string("badge"))
        // Removing a badge has nothing to animate.
        #expect(run(&r, "badge.clear", #"{"tab":"chat"}"#).events("animation.cue").isEmpty)
    }

    @Test func perItemStyleOverridesTheBars() {
        var r = Reducer(state: BarState(items: []))
        _ = run(&r, "bar.configure", #"{"items":[{"id":"a","icon":"a","selected_icon":"a.fill","animation":"crossfade"},{"id":"b","animation":"none"},{"id":"c"}],"settings":{"animation":"pulse"}}"#)
        // a is selected first: selecting c pulses c (the bar's style) and cross-fades a back (its own).
        let toC = run(&r, "tab.select", #"{"tab":"c"}"#).events("animation.cue")
        #expect(toC.map { $0["kind"] } == [.string("pulse"), .string("crossfade")])
        #expect(toC.map { $0["trigger"] } == [.string("select"), .string("deselect")])
        let cues = run(&r, "tab.select", #"{"tab":"a"}"#).events("animation.cue")
        #expect(cues.map { $0["kind"] } == [.string("crossfade"), .string("pulse")])
        #expect(cues[0]["descriptor"] == AnimationDescriptor.crossfade(fromIcon: "a", toIcon: "a.fill"))
        // b chose none: selecting it cues only the deselect of a.
        let toB = run(&r, "tab.select", #"{"tab":"b"}"#).events("animation.cue")
        #expect(toB.map { $0["tab"] } == [.string("a")])
        #expect(toB[0]["descriptor"] == AnimationDescriptor.crossfade(fromIcon: "a.fill", toIcon: "a", reversed: true))
    }

    @Test func slideMovesTheIndicatorBetweenItemCentres() {
        var r = issueReducer(settings: #"{"animation":"slide"}"#)
        let cues = run(&r, "tab.select", #"{"tab":"me"}"#).events("animation.cue")
        #expect(cues.count == 1)
        #expect(cues[0]["descriptor"] == AnimationDescriptor.slide(target: "indicator", property: "position.x", from: 38.125, to: 336.875))
    }

    @Test func unknownStyleIsRejected() {
        var r = issueReducer()
        #expect(run(&r, "bar.configure", #"{"settings":{"animation":"wobble"}}"#).error?.field == "settings.animation")
        #expect(run(&r, "bar.configure", #"{"items":[{"id":"a","animation":"wobble"}]}"#).error?.field == "items[0].animation")
    }
}

@Suite struct FrontEndAnimationTests {
    @Test func beginAndEnd() {
        var r = issueReducer()
        let b = run(&r, "animation.begin", #"{"kind":"bounce","tab":"chat","duration_ms":600}"#, at: 50)
        #expect(b.value == .obj(["seq": .int(2), "animation": .int(2)]))
        #expect(b.events == [Event("animation.began", .obj(["seq": .int(2), "animation": .int(2), "kind": .string("bounce"),
                                                             "tab": .string("chat"), "duration_ms": .int(600)]))])
        #expect(b.effects == [.timer(.animation(2), atMs: 650)])
        #expect(r.state.animations.map(\.id) == [2])
        let e = run(&r, "animation.end", #"{"animation":2,"reason":"cancelled"}"#)
        #expect(e.events == [Event("animation.ended", .obj(["seq": .int(3), "animation": .int(2), "reason": .string("cancelled")]))])
        #expect(e.effects == [.cancelTimer(.animation(2))])
        #expect(r.state.animations.isEmpty)
        // Ending it again is harmless; an id never given is an error.
        #expect(run(&r, "animation.end", #"{"animation":2}"#).events.isEmpty)
        #expect(run(&r, "animation.end", #"{"animation":99}"#).error?.field == "animation")
    }

    @Test func anAnimationNobodyEndsEndsWhenItsDurationPasses() {
        var r = issueReducer()
        _ = run(&r, "animation.begin", #"{"kind":"spin","duration_ms":300}"#, at: 0)
        let fired = fire(&r, .animation(2), at: 300)
        #expect(fired.events == [Event("animation.ended", .obj(["seq": .int(3), "animation": .int(2), "reason": .string("finished")]))])
        #expect(fired.journal == .timerFired(.animation(2)))
        #expect(fire(&r, .animation(2), at: 301).events.isEmpty)
    }

    @Test func soundsCanBeBoundToAnimationKinds() {
        var r = issueReducer(settings: #"{"sounds":{"animations":{"confetti":"badge"}}}"#)
        let b = run(&r, "animation.begin", #"{"kind":"confetti","duration_ms":100}"#)
        #expect(b.effects.first == .play(name: "badge", gain: 1, trigger: .animation))
        #expect(run(&r, "animation.begin", #"{"kind":"spin","duration_ms":100}"#).effects.count == 1)  // the timer only
        #expect(r.state.json()["settings"]?["sounds"] == .obj(["animations": .obj(["confetti": .string("badge")])]))
    }

    @Test func paramsAndLimits() {
        var r = issueReducer()
        #expect(run(&r, "animation.begin", #"{"kind":"x"}"#).error?.field == "duration_ms")
        #expect(run(&r, "animation.begin", #"{"kind":"","duration_ms":1}"#).error?.field == "kind")
        #expect(run(&r, "animation.begin", #"{"kind":"x","duration_ms":-1}"#).error?.field == "duration_ms")
        #expect(run(&r, "animation.begin", #"{"kind":"x","tab":"zz","duration_ms":1}"#).error?.kind == "unknown_tab")
        for _ in 0..<Reducer.maxAnimations { _ = run(&r, "animation.begin", #"{"kind":"x","duration_ms":1}"#) }
        #expect(run(&r, "animation.begin", #"{"kind":"x","duration_ms":1}"#).error?.kind == "limit_exceeded")
    }
}
