import Testing
@testable import TabBarCore

/// A timer the reducer asked for fires at `at` (what the server's loop does).
func fire(_ r: inout Reducer, _ key: TimerKey, at now: Int64) -> Outcome {
    r.reduce(.timerFired(key), at: now)
}

extension Outcome {
    var visibility: JSON? { value?["visibility"] }
    /// The `bar.visibility` events as (phase, duration_ms).
    var phases: [(String, Int)] {
        events("bar.visibility").map { ($0["phase"]?.stringValue ?? "?", $0["duration_ms"]?.intValue ?? -1) }
    }
}

@Suite struct VisibilityReasonTests {
    @Test func reasonsCombineAndTheBarShowsOnlyWhenNoneHolds() {
        var r = issueReducer()
        _ = run(&r, "bar.set_hidden", #"{"hidden":true,"animated":false}"#)
        _ = run(&r, "nav.push", #"{"hides_bar":true}"#)
        #expect(r.state.visibility.reasons == [.explicit, .push])
        let show = run(&r, "bar.set_hidden", #"{"hidden":false,"animated":false}"#)
        #expect(show.visibility?["hidden"] == .bool(true))
        #expect(show.visibility?["reasons"] == .array([.string("push")]))
        let pop = run(&r, "nav.pop")
        #expect(pop.visibility?["hidden"] == .bool(false))
        #expect(pop.visibility?["reasons"] == .array([]))
    }

    @Test func pushThenExplicitShowKeepsTheBarHidden() {
        var r = issueReducer()
        let push = run(&r, "nav.push", #"{"hides_bar":true}"#)
        #expect(push.visibility?["hidden"] == .bool(true))
        let show = run(&r, "bar.set_hidden", #"{"hidden":false}"#)
        #expect(show.visibility?["hidden"] == .bool(true))
        #expect(show.events.isEmpty)
        #expect(r.state.visibility.hidden)
        #expect(run(&r, "touch", #"{"phase":"down","x":20,"y":30}"#).value?["target"] == .null)
    }

    @Test func aHidingScreenHidesTheBarForEverythingAboveIt() {
        var r = issueReducer()
        _ = run(&r, "nav.push", #"{"hides_bar":false}"#)
        #expect(!r.state.visibility.hidden)
        _ = run(&r, "nav.push", #"{"hides_bar":true}"#)
        _ = run(&r, "nav.push", #"{"hides_bar":false}"#)
        #expect(r.state.visibility.hidden)
        #expect(r.state.visibility.navStack == [false, true, false])
        _ = run(&r, "nav.pop")
        #expect(r.state.visibility.hidden)
        _ = run(&r, "nav.pop")
        #expect(!r.state.visibility.hidden)
        _ = run(&r, "nav.pop")
        // Popping an empty stack changes nothing.
        let seq = r.state.seq
        #expect(run(&r, "nav.pop").events.isEmpty)
        #expect(r.state.seq == seq)
    }

    @Test func pushReasonCanBeSetDirectly() {
        var r = issueReducer()
        _ = run(&r, "bar.set_hidden", #"{"hidden":true,"reason":"push","animated":false}"#)
        #expect(r.state.visibility.reasons == [.push])
        _ = run(&r, "nav.push", #"{"hides_bar":true}"#)
        _ = run(&r, "nav.pop")
        #expect(r.state.visibility.reasons == [.push])
        _ = run(&r, "bar.set_hidden", #"{"hidden":false,"reason":"push","animated":false}"#)
        #expect(!r.state.visibility.hidden)
    }

    @Test func scrollHidesAfterTheThresholdAndShowsOnScrollingBack() {
        var r = issueReducer(settings: #"{"scroll_threshold":30}"#)
        #expect(run(&r, "scroll", #"{"dy":10}"#).events.isEmpty)
        #expect(run(&r, "scroll", #"{"dy":15}"#).events.isEmpty)
        let hide = run(&r, "scroll", #"{"dy":6}"#)
        #expect(hide.visibility?["reasons"] == .array([.string("scroll")]))
        #expect(hide.journal == .setHidden(true, reason: .scroll))
        // More scrolling down changes nothing; a short way up neither.
        #expect(run(&r, "scroll", #"{"dy":100}"#).events.isEmpty)
        #expect(run(&r, "scroll", #"{"dy":-29}"#).events.isEmpty)
        // Changing direction starts counting again.
        #expect(run(&r, "scroll", #"{"dy":5}"#).events.isEmpty)
        #expect(run(&r, "scroll", #"{"dy":-20}"#).events.isEmpty)
        let show = run(&r, "scroll", #"{"dy":-10}"#)
        #expect(show.visibility?["hidden"] == .bool(false))
    }

    @Test func selectingATabClearsTheScrollReason() {
        var r = issueReducer(settings: #"{"scroll_threshold":10,"hide_duration_ms":0}"#)
        _ = run(&r, "scroll", #"{"dy":50}"#)
        _ = run(&r, "bar.set_hidden", #"{"hidden":true,"animated":false}"#)
        let sel = run(&r, "tab.select", #"{"tab":"chat","source":"program"}"#)
        #expect(sel.eventNames == ["tab.selected", "bar.visibility"])
        #expect(sel.events.map { $0.params["seq"] } == [sel.value?["seq"], sel.value?["seq"]])
        #expect(r.state.visibility.reasons == [.explicit])
        _ = run(&r, "bar.set_hidden", #"{"hidden":false,"animated":false}"#)
        // A select with nothing to clear emits no visibility event.
        #expect(run(&r, "tab.select", #"{"tab":"me"}"#).eventNames == ["tab.selected"])
    }

    @Test func visibilityParamsAreChecked() {
        var r = issueReducer()
        #expect(run(&r, "bar.set_hidden", "{}").error?.field == "hidden")
        #expect(run(&r, "bar.set_hidden", #"{"hidden":true,"reason":"boredom"}"#).error?.field == "reason")
        #expect(run(&r, "nav.push", "{}").error?.field == "hides_bar")
        #expect(run(&r, "scroll", #"{"dy":"down"}"#).error?.field == "dy")
        #expect(run(&r, "nav.pop", #"{"x":1}"#).error?.field == "x")
    }
}

@Suite struct VisibilityPhaseTests {
    @Test func animatedHideGoesThroughHidingThenIdle() {
        var r = issueReducer(settings: #"{"hide_duration_ms":300}"#)
        let hide = run(&r, "bar.set_hidden", #"{"hidden":true,"animated":true}"#, at: 1000)
        #expect(hide.phases.map(\.0) == ["hiding"])
        #expect(hide.phases.map(\.1) == [300])
        #expect(hide.effects == [.timer(.visibility, atMs: 1300)])
        #expect(hide.events("bar.visibility")[0] == .obj([
            "seq": .int(2), "hidden": .bool(true), "phase": .string("hiding"), "reasons": .array([.string("explicit")]),
            "duration_ms": .int(300), "nav_stack": .array([])]))
        #expect(r.state.visibility.phase == .hiding)
        // The bar's slide cue goes with it.
        #expect(hide.events("animation.cue") == [.obj([
            "seq": .int(2), "tab": .null, "trigger": .string("visibility"), "kind": .string("slide"),
            "descriptor": AnimationDescriptor.slide(target: "bar", property: "translation.y", from: 0, to: 49, durationMs: 300),
            "sound": .null])])
        // A timer that fires early (it should not, but clocks jitter) waits for the end.
        #expect(fire(&r, .visibility, at: 1200).effects == [.timer(.visibility, atMs: 1300)])
        let idle = fire(&r, .visibility, at: 1300)
        #expect(idle.phases.map(\.0) == ["idle"])
        #expect(idle.phases.map(\.1) == [0])
        #expect(idle.value?["seq"] == .int(3))
        #expect(idle.journal == .timerFired(.visibility))
        #expect(r.state.visibility.phase == .idle)
        #expect(r.state.visibility.hidden)
        // A stale timer changes nothing.
        #expect(fire(&r, .visibility, at: 1400).events.isEmpty)
        #expect(r.state.seq == 3)
    }

    @Test func notAnimatedIsOneIdleEvent() {
        var r = issueReducer(settings: #"{"hide_duration_ms":300}"#)
        let hide = run(&r, "bar.set_hidden", #"{"hidden":true,"animated":false}"#, at: 0)
        #expect(hide.phases.map(\.0) == ["idle"])
        #expect(hide.effects.isEmpty)
        #expect(hide.events("animation.cue").isEmpty)
        // bar.set_hidden is not animated unless asked; push, pop and scroll are.
        #expect(run(&r, "bar.set_hidden", #"{"hidden":false}"#, at: 10).phases.map(\.0) == ["idle"])
        #expect(run(&r, "nav.push", #"{"hides_bar":true}"#, at: 20).phases.map(\.0) == ["hiding"])
    }

    @Test func retargetMidAnimationReversesFromWhereItIs() {
        var r = issueReducer(settings: #"{"hide_duration_ms":500}"#)
        _ = run(&r, "nav.push", #"{"hides_bar":true}"#, at: 0)
        // 200 ms into a 500 ms hide the bar is 40 % hidden; showing takes it back in 200 ms.
        let pop = run(&r, "nav.pop", at: 200)
        #expect(pop.phases.map(\.0) == ["showing"])
        #expect(pop.phases.map(\.1) == [200])
        #expect(pop.effects == [.timer(.visibility, atMs: 400)])
        #expect(pop.events("animation.cue").first?["descriptor"]?["from"] == .double(0.4 * 49))
        #expect(pop.events("animation.cue").first?["descriptor"]?["to"] == .int(0))
        // The first hide's timer is no longer the end: firing at 500 is too late to matter,
        // firing at the new end returns to idle, once.
        let idle = fire(&r, .visibility, at: 400)
        #expect(idle.phases.map(\.0) == ["idle"])
        #expect(!r.state.visibility.hidden)
        #expect(fire(&r, .visibility, at: 500).events.isEmpty)
    }

    @Test func aChangeThatDoesNotFlipKeepsThePhaseRunning() {
        var r = issueReducer(settings: #"{"hide_duration_ms":500}"#)
        _ = run(&r, "bar.set_hidden", #"{"hidden":true,"animated":true}"#, at: 0)
        let push = run(&r, "nav.push", #"{"hides_bar":true}"#, at: 100)
        #expect(push.phases.map(\.0) == ["hiding"])
        #expect(push.phases.map(\.1) == [400])
        #expect(push.effects.isEmpty)
        #expect(r.state.visibility.reasons == [.explicit, .push])
    }

    @Test func unanimatedChangeDuringAnAnimationStopsItsTimer() {
        var r = issueReducer(settings: #"{"hide_duration_ms":500}"#)
        _ = run(&r, "bar.set_hidden", #"{"hidden":true,"animated":true}"#, at: 0)
        let show = run(&r, "bar.set_hidden", #"{"hidden":false,"animated":false}"#, at: 100)
        #expect(show.phases.map(\.0) == ["idle"])
        #expect(show.effects == [.cancelTimer(.visibility)])
    }

    @Test func zeroDurationIsNeverAnimated() {
        var r = issueReducer(settings: #"{"hide_duration_ms":0}"#)
        let push = run(&r, "nav.push", #"{"hides_bar":true}"#, at: 0)
        #expect(push.phases.map(\.0) == ["idle"])
    }

    @Test func visibilitySoundIsItsOwnAndOptional() {
        var r = issueReducer(settings: #"{"hide_duration_ms":0}"#)
        #expect(run(&r, "nav.push", #"{"hides_bar":true}"#).effects.isEmpty)
        _ = run(&r, "bar.configure", #"{"settings":{"sounds":{"visibility":"slide"}}}"#)
        #expect(run(&r, "nav.pop").effects == [.play(name: "slide", gain: 1, trigger: .visibility)])
    }

    @Test func settleAfterRestartEndsPhasesAndTouches() {
        var r = issueReducer(settings: #"{"hide_duration_ms":500}"#)
        _ = run(&r, "touch", #"{"phase":"down","x":250,"y":20}"#)
        _ = run(&r, "bar.set_hidden", #"{"hidden":true,"animated":true}"#, at: 0)
        _ = run(&r, "animation.begin", #"{"kind":"bounce","duration_ms":100}"#)
        r.settle()
        #expect(r.state.visibility.phase == .idle)
        #expect(r.state.visibility.hidden)
        #expect(r.state.animations.isEmpty)
        #expect(r.state.highlighted == nil)
    }

    @Test func visibilityRoundTripsThroughTheSnapshot() throws {
        var r = issueReducer()
        _ = run(&r, "nav.push", #"{"hides_bar":false}"#)
        _ = run(&r, "nav.push", #"{"hides_bar":true}"#)
        _ = run(&r, "bar.set_hidden", #"{"hidden":true,"reason":"scroll","animated":false}"#)
        r.settle()
        let back = try BarState.decode(try JSON.parse(r.state.json().text), seq: r.state.seq, limits: Limits())
        #expect(back.visibility.reasons == [.push, .scroll])
        #expect(back.visibility.navStack == [false, true])
        var restored = Reducer(state: back)
        _ = run(&restored, "nav.pop")
        _ = run(&restored, "bar.set_hidden", #"{"hidden":false,"reason":"scroll"}"#)
        #expect(!restored.state.visibility.hidden)
    }
}
