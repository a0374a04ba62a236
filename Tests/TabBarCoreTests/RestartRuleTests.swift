import Testing
@testable import TabBarCore

// Named examples of the reducer's rules outside the request path: a restart (`settle`) and
// the snapshot. (The request path's rules: ExhaustiveReducerTests.swift, ExhaustiveRulesTests.swift.)

@Suite struct RestartRuleTests {
    /// What was in flight when the daemon stopped is over after a restart: the slide is at its
    /// end, the animations and the touch are gone; the reasons stay.
    @Test func aRestartEndsPhasesAnimationsAndTouches() {
        var r = Reducer()
        _ = run(&r, "touch", #"{"phase":"down","x":250,"y":20}"#)
        _ = run(&r, "bar.set_hidden", #"{"hidden":true,"animated":true}"#)
        _ = run(&r, "animation.begin", #"{"kind":"bounce","duration_ms":100}"#)
        r.settle()
        #expect(r.state.visibility.phase == .idle)
        #expect(r.state.visibility.hidden)
        #expect(r.state.animations.isEmpty)
        #expect(r.state.highlighted == nil)
    }

    /// The snapshot (the state's wire form) gives back the same state: badges (hidden ones
    /// too), morphs, settings, the reasons and the screen stack, which go on working.
    @Test func theSnapshotRestoresTheState() throws {
        var r = Reducer()
        _ = run(&r, "badge.set", #"{"tab":"chat","text":"new","hidden":true}"#)
        _ = run(&r, "badge.set", #"{"tab":"me","count":3}"#)
        _ = run(&r, "tab.select", #"{"tab":"me"}"#)
        _ = run(&r, "bar.configure", #"{"settings":{"commit_on":"down","animation":"bounce","max_count":999,"sounds":{"select":"none","animations":{"bounce":"click"}}}}"#)
        _ = run(&r, "nav.push", #"{"hides_bar":false}"#)
        _ = run(&r, "nav.push", #"{"hides_bar":true}"#)
        _ = run(&r, "bar.set_hidden", #"{"hidden":true,"reason":"scroll","animated":false}"#)
        r.state.items[0].morph = Morph(title: "Top", icon: "arrow.up")
        r.settle()
        let back = try BarState.decode(try JSON.parse(r.state.json().text), seq: r.state.seq, limits: Limits())
        #expect(back == r.state)
        var restored = Reducer(state: back)
        _ = run(&restored, "nav.pop")
        _ = run(&restored, "bar.set_hidden", #"{"hidden":false,"reason":"scroll"}"#)
        #expect(!restored.state.visibility.hidden)
    }
}
