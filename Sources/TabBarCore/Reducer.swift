/// A notification as method and `JSON` params: the server's own events (`sound.played`,
/// `state.resync` …) and tests. The reducer's are typed (`BarEvent`).
public struct Event: Equatable, Sendable {
    public var method: String
    public var params: JSON
    public init(_ method: String, _ params: JSON) {
        self.method = method
        self.params = params
    }
}

/// Something the outside world must do because of a change; data, not code.
public enum Effect: Equatable, Sendable {
    /// Play sound `name` at `gain` (0…1, master volume and profile applied).
    case play(name: String, gain: Double, trigger: SoundTrigger)
    /// Send `Command.timerFired(key)` back at `atMs` (the clock `reduce(_:at:)` is given);
    /// replaces a pending timer with the same key.
    case timer(TimerKey, atMs: Int64)
    /// Forget the pending timer with this key.
    case cancelTimer(TimerKey)
}

/// What caused a sound, for the per-event sound map. Wire strings as the cases.
public enum SoundTrigger: String, Equatable, Sendable {
    case select, reselect, action, center, badge, visibility
    /// A front end's animation (`animation.begin`) of a kind with a bound sound.
    case animation
}

/// Which sound each kind of user event plays (nil: none).
public struct SoundMap: Equatable, Sendable {
    public var select: String? = "click"
    public var reselect: String? = "reselect"
    public var action: String? = "action"
    public var center: String? = "center"
    public var badge: String? = nil
    public var visibility: String? = nil
    /// Gain factor of the `quiet` profile.
    public var quietGain: Double = 0.35
    public init() {}
}

/// What the journal records for a change instead of the request as received (for example
/// a `scroll` that hid the bar is recorded as the `bar.set_hidden` it amounted to): typed,
/// encoded once (`Persistence.journalLine`) and replayed by the decoder that reads requests.
public enum JournalEntry: Equatable, Sendable {
    /// `tab.select {"tab","source"}` (a touch that selected).
    case select(tab: String, source: Source)
    /// `action.trigger {"tab","source"}` (a touch that triggered).
    case actionTrigger(tab: String, source: Source)
    /// `bar.set_hidden {"hidden","reason"}`.
    case setHidden(Bool, reason: HideReason)
    /// `timer.fired`: a replay only counts its seq (timers are not persisted).
    case timerFired(TimerKey)
    /// `touch.highlight`: a touch that only moved the highlight; a replay only counts its seq.
    case touchHighlight

    /// The method name the journal line carries.
    public var method: StaticString {
        switch self {
        case .select: return "tab.select"
        case .actionTrigger: return "action.trigger"
        case .setHidden: return "bar.set_hidden"
        case .timerFired: return "timer.fired"
        case .touchHighlight: return "touch.highlight"
        }
    }
}


/// The pure state machine: State × Command → State', reply, events, effects.
/// Every change increments `seq` by exactly one; a command that changes nothing
/// replies with the current `seq` and publishes nothing.
public struct Reducer: Sendable {
    public var state: BarState
    public var limits: Limits
    public var sounds: SoundMap
    /// When the command being reduced happened: ms on the caller's monotonic clock.
    public private(set) var now: Int64 = 0
    /// The finger on the bar and the touch ids already seen (not persisted).
    var touch = TouchTracker()
    /// Points scrolled in the current direction since the last change (not persisted).
    var scrollTravel: Double = 0

    public init(state: BarState = .defaultBar, limits: Limits = Limits(), sounds: SoundMap = SoundMap()) {
        self.state = state
        self.limits = limits
        self.sounds = sounds
    }

    var seq: UInt64 { get { state.seq } }

    /// Badge display limits with the bar's `max_count` / `max_chars` applied.
    var displayLimits: Limits { get { state.settings.effective(limits) } }

    /// Forgets what only lives while the daemon runs (touch, highlight, animation phases,
    /// front-end animations); called once the state is restored, before serving.
    public mutating func settle() {
        touch = TouchTracker()
        scrollTravel = 0
        state.highlighted = nil
        state.animations = []
        state.visibility.settle()
    }

    /// Applies a state command at time `now` (ms, monotonic; only differences matter).
    public mutating func reduce(_ command: StateCommand, at now: Int64 = 0) -> Outcome {
        var out = Outcome(reply: .success(.none))
        reduce(command, at: now, into: &out)
        return out
    }

    /// `reduce`, into `out` (whatever it held is replaced): the server keeps one outcome and
    /// reuses its arrays' storage from one command to the next.
    public mutating func reduce(_ command: StateCommand, at now: Int64, into out: inout Outcome) {
        out.reset()
        self.now = now
        switch command {
        case let .configure(items, badgeGiven, selected, layout, settings):
            configure(items: items, badgeGiven: badgeGiven, selected: selected, layout: layout, settings: settings, into: &out)
        case let .select(ref, ifSeq, source):
            select(ref, ifSeq: ifSeq, source: source, into: &out)
        case let .actionTrigger(tab, source):
            actionTrigger(tab, source: source, into: &out)
        case let .actionFinish(tab):
            actionFinish(tab, into: &out)
        case let .badgeSet(tab, update):
            setBadge(tab, update, into: &out)
        case let .badgeClear(tab):
            setBadge(tab, BadgeUpdate(value: .remove, hidden: false), clearing: true, into: &out)
        case let .touch(phase, x, y, touchID):
            touch(phase, x: x, y: y, touchID: touchID, into: &out)
        case let .highlight(tab, phase):
            highlight(tab, phase, into: &out)
        case let .setHidden(hidden, reason, animated):
            setHidden(hidden, reason: reason, animated: animated, into: &out)
        case let .navPush(hidesBar):
            navPush(hidesBar: hidesBar, into: &out)
        case .navPop:
            navPop(into: &out)
        case let .scroll(dy):
            scroll(dy: dy, into: &out)
        case let .animationBegin(kind, tab, durationMs):
            animationBegin(kind: kind, tab: tab, durationMs: durationMs, into: &out)
        case let .animationEnd(id, reason):
            animationEnd(id: id, reason: reason, into: &out)
        case let .timerFired(key):
            switch key {
            case .visibility: visibilityTimerFired(into: &out)
            case .animation(let id): animationTimerFired(id, into: &out)
            }
        case let .feedbackSet(profile, volume):
            var f = state.feedback
            if let profile { f.profile = profile }
            if let volume { f.volume = volume }
            if f != state.feedback {
                state.feedback = f
                state.seq += 1
                out.answer(.success(.feedback(seq: seq, f)))
                out.publish(.feedbackChanged(seq: seq, f))
            } else {
                out.answer(.success(.feedback(seq: seq, f)))
            }
        }
    }

    // MARK: Sounds

    /// The sound a trigger plays now: the bar's `settings.sounds`, else the daemon's map;
    /// the committed item `k`'s own `sound` replaces it for that item's commits; `none`
    /// is silence. nil: no sound.
    func sound(_ trigger: SoundTrigger, of k: Int? = nil, kind: String? = nil) -> Effect? {
        let profile = state.feedback.profile
        if profile == .silent { return nil }
        if profile == .quiet && trigger != .select && trigger != .reselect { return nil }
        var name: String?
        switch trigger {
        case .select: name = sounds.select
        case .reselect: name = sounds.reselect
        case .action: name = sounds.action
        case .center: name = sounds.center
        case .badge: name = sounds.badge
        case .visibility: name = sounds.visibility
        case .animation: name = kind.flatMap { state.settings.animationSounds[$0] }
        }
        if !state.settings.sounds.isEmpty, let own = state.settings.sounds[trigger.rawValue] { name = own }
        // An item's own sound replaces the default for its commits; "none" silences it.
        if let k, trigger != .badge, trigger != .visibility, trigger != .animation, let own = state.items[k].sound { name = own }
        guard let name, !name.isEmpty, name != "none" else { return nil }
        let gain = state.feedback.volume * (profile == .quiet ? sounds.quietGain : 1)
        guard gain > 0 else { return nil }
        return .play(name: name, gain: gain, trigger: trigger)
    }

    // MARK: Selection

    func resolve(_ ref: TabRef) -> Result<Int, RPCError> {
        switch ref {
        case .id(let id):
            guard let k = state.index(of: id) else { return .failure(.unknownTab(id)) }
            return .success(k)
        case .index(let i):
            guard i >= 0, i < state.items.count else { return .failure(.unknownIndex(i, count: state.items.count)) }
            return .success(i)
        }
    }

    mutating func select(_ ref: TabRef, ifSeq: Int?, source: Source, into out: inout Outcome) {
        let k: Int
        switch resolve(ref) {
        case .failure(let e): return out.fail(e)
        case .success(let i): k = i
        }
        let kind = state.items[k].kind
        if kind != .tab {
            return out.fail(.notSelectable(state.items[k].id, "it is \(kind == .center ? "the center button" : "an action button"); use action.trigger"))
        }
        if !state.items[k].enabled { return out.fail(.notSelectable(state.items[k].id, "it is disabled")) }
        if let ifSeq, ifSeq < 0 || UInt64(ifSeq) != state.seq { return out.fail(.conflict(expected: ifSeq, current: state.seq)) }
        state.seq += 1
        let (reselected, previous) = commitTab(k, source: source, into: &out)
        out.answer(.success(.selected(seq: seq, tab: state.items[k].id, previous: previous, reselected: reselected)))
    }

    /// Selects (or reselects) tab `k` as part of the change being made (its seq already
    /// counted): exactly one commit event, its cues and sound; the active action and the
    /// scroll hide reason are cleared. Returns whether it was a reselect, and the previous
    /// tab's text (what the reply to a select names). `click` false: no sound (a touch's
    /// click that played on its press, `click_on: "press"`).
    @discardableResult
    mutating func commitTab(_ k: Int, source: Source, click: Bool = true, into out: inout Outcome) -> (reselected: Bool, previous: String?) {
        let old = state.selected.flatMap { state.index(of: $0) }
        // (Ids are unique on a bar: the selected item is `k` exactly when its index is.)
        let reselected = old == k
        let sound = moveSelection(to: k, reselected: reselected, source: source)
        let effects = click ? sound : nil
        if reselected {
            out.publish(.tabReselected(seq: seq, tab: state.items[k].id, source: source))
            cue(.reselect, k, sound: effects, into: &out)
        } else {
            out.publish(.tabSelected(seq: seq, tab: state.items[k].id, previous: previous(reselected, old), source: source))
            cue(.select, k, from: old, sound: effects, into: &out)
            if let old { cue(.deselect, old, into: &out) }
        }
        out.play(effects)
        withdrawScrollReason(into: &out)
        return (reselected, previous(reselected, old))
    }

    /// The tab a commit moved the selection from, as its reply and event name it (read after
    /// the commit's change; `old`: where the selection was found before it): the tab at
    /// `old`, if it is still on the bar, else `state.previous`.
    func previous(_ reselected: Bool, _ old: Int?) -> String? {
        if !reselected, let old { return state.items[old].id }
        return state.previous
    }

    /// What a commit of tab `k` does to the selection: the active action is cleared and `k`
    /// becomes selected (its predecessor `previous`) unless it already was (`reselected`).
    /// Returns the sound a user's commit plays.
    mutating func moveSelection(to k: Int, reselected: Bool, source: Source) -> Effect? {
        let click = source == .user ? commitSound(k) : nil
        state.activeAction = nil
        if !reselected {
            state.previous = state.selected
            state.selected = state.items[k].id
        }
        return click
    }

    // MARK: Actions

    mutating func actionTrigger(_ tab: String, source: Source, into out: inout Outcome) {
        guard let k = state.index(of: tab) else { return out.fail(.unknownTab(tab)) }
        guard state.items[k].kind != .tab else {
            return out.fail(.invalidParams("tab", "Item \"\(tab)\" is a tab, not an action or center button; use tab.select."))
        }
        guard state.items[k].enabled else { return out.fail(.notSelectable(tab, "it is disabled")) }
        state.seq += 1
        out.answer(.success(.seq(seq)))
        commitAction(k, source: source, into: &out)
    }

    /// Triggers action or center item `k` as part of the change being made: it becomes the
    /// active action; selection is unchanged; one `action.triggered` event and its sound
    /// (`click` false: none, it played on the press).
    mutating func commitAction(_ k: Int, source: Source, click: Bool = true, into out: inout Outcome) {
        state.activeAction = state.items[k].id
        out.publish(.actionTriggered(seq: seq, tab: state.items[k].id, action: state.items[k].action))
        if source == .user && click { out.play(commitSound(k)) }
    }

    mutating func actionFinish(_ tab: String, into out: inout Outcome) {
        guard state.index(of: tab) != nil else { return out.fail(.unknownTab(tab)) }
        guard state.activeAction == tab else { return out.reset(.success(.seq(seq))) }
        state.seq += 1
        state.activeAction = nil
        out.answer(.success(.seq(seq)))
        out.publish(.actionFinished(seq: seq, tab: tab))
    }
}
