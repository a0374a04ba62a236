import Testing
@testable import TabBarCore

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
                   reply: .result(#"{"seq":2,"target":"chat","consumed":true,"commit":"select"}"#),
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
                   reply: .result(#"{"seq":4,"target":"chat","consumed":true,"commit":"reselect"}"#),
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
                   reply: .result(#"{"seq":3,"target":"chat","consumed":true,"commit":"select"}"#),
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
