/// A notification for subscribers. `params` already carries `seq` where the contract has one.
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

/// What the journal records for a change instead of the request as received
/// (for example a `scroll` that hid the bar is recorded as the `bar.set_hidden` it amounted to).
public struct JournalEntry: Equatable, Sendable {
    public var method: String
    public var params: JSON?
    public init(_ method: String, _ params: JSON?) {
        self.method = method
        self.params = params
    }
}

/// The result of one command: the reply, the events to publish, the effects to run.
public struct Outcome: Equatable, Sendable {
    public var reply: Result<JSON, RPCError>
    public var events: [Event]
    public var effects: [Effect]
    /// When the change is to be journaled differently from its request (nil: as received).
    public var journal: JournalEntry?

    public init(reply: Result<JSON, RPCError>, events: [Event] = [], effects: [Effect] = [], journal: JournalEntry? = nil) {
        self.reply = reply
        self.events = events
        self.effects = effects
        self.journal = journal
    }

    static func fail(_ e: RPCError) -> Outcome { Outcome(reply: .failure(e)) }
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

    var seqJSON: JSON { .int(state.seq) }

    /// Badge display limits with the bar's `max_count` / `max_chars` applied.
    var displayLimits: Limits { state.settings.effective(limits) }

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
    /// Non-state commands are the server's and answer `internal_error`.
    public mutating func reduce(_ command: Command, at now: Int64 = 0) -> Outcome {
        self.now = now
        switch command {
        case .stateGet:
            return Outcome(reply: .success(.obj(["seq": seqJSON, "state": state.json(limits: limits)])))
        case let .configure(items, badgeGiven, selected, layout, settings):
            return configure(items: items, badgeGiven: badgeGiven, selected: selected, layout: layout, settings: settings)
        case let .select(ref, ifSeq, source):
            return select(ref, ifSeq: ifSeq, source: source)
        case let .actionTrigger(tab, source):
            return actionTrigger(tab, source: source)
        case let .actionFinish(tab):
            return actionFinish(tab)
        case let .badgeSet(tab, update):
            return setBadge(tab, update)
        case let .badgeClear(tab):
            return setBadge(tab, BadgeUpdate(value: .remove, hidden: false), clearing: true)
        case let .touch(phase, x, y, touchID):
            return touch(phase, x: x, y: y, touchID: touchID)
        case let .highlight(tab, phase):
            return highlight(tab, phase)
        case let .setHidden(hidden, reason, animated):
            return setHidden(hidden, reason: reason, animated: animated)
        case let .navPush(hidesBar):
            return navPush(hidesBar: hidesBar)
        case .navPop:
            return navPop()
        case let .scroll(dy):
            return scroll(dy: dy)
        case let .animationBegin(kind, tab, durationMs):
            return animationBegin(kind: kind, tab: tab, durationMs: durationMs)
        case let .animationEnd(id, reason):
            return animationEnd(id: id, reason: reason)
        case let .timerFired(key):
            switch key {
            case .visibility: return visibilityTimerFired()
            case .animation(let id): return animationTimerFired(id)
            }
        case let .feedbackSet(profile, volume):
            var f = state.feedback
            if let profile { f.profile = profile }
            if let volume { f.volume = volume }
            if f != state.feedback {
                state.feedback = f
                state.seq += 1
                return Outcome(reply: .success(.obj(["seq": seqJSON, "feedback": f.json])),
                               events: [Event("feedback.changed", .obj(["seq": seqJSON, "feedback": f.json]))])
            }
            return Outcome(reply: .success(.obj(["seq": seqJSON, "feedback": f.json])))
        default:
            return .fail(.internalError("command \(command) is not a state command"))
        }
    }

    // MARK: Sounds

    /// The sound a trigger plays now: the bar's `settings.sounds`, else the daemon's map;
    /// an item's own sound replaces it for that item's commits; `none` is silence.
    func sound(_ trigger: SoundTrigger, item: Item?, kind: String? = nil) -> [Effect] {
        let profile = state.feedback.profile
        if profile == .silent { return [] }
        if profile == .quiet && trigger != .select && trigger != .reselect { return [] }
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
        if let own = state.settings.sounds[trigger.rawValue] { name = own }
        // An item's own sound replaces the default for its commits; "none" silences it.
        if let own = item?.sound, trigger != .badge, trigger != .visibility, trigger != .animation { name = own }
        guard let name, name != "none", !name.isEmpty else { return [] }
        let gain = state.feedback.volume * (profile == .quiet ? sounds.quietGain : 1)
        guard gain > 0 else { return [] }
        return [.play(name: name, gain: gain, trigger: trigger)]
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

    mutating func select(_ ref: TabRef, ifSeq: Int?, source: Source) -> Outcome {
        let k: Int
        switch resolve(ref) {
        case .failure(let e): return .fail(e)
        case .success(let i): k = i
        }
        let item = state.items[k]
        if item.kind != .tab {
            return .fail(.notSelectable(item.id, "it is \(item.kind == .center ? "the center button" : "an action button"); use action.trigger"))
        }
        if !item.enabled { return .fail(.notSelectable(item.id, "it is disabled")) }
        if let ifSeq, ifSeq < 0 || UInt64(ifSeq) != state.seq { return .fail(.conflict(expected: ifSeq, current: state.seq)) }
        state.seq += 1
        var out = Outcome(reply: .success(.null))
        let reselected = commitTab(k, source: source, into: &out)
        out.reply = .success(.obj(["seq": seqJSON, "selected": .string(item.id), "previous": .optional(state.previous),
                                   "reselected": .bool(reselected)]))
        return out
    }

    /// Selects (or reselects) tab `k` as part of the change being made (its seq already
    /// counted): exactly one commit event, its cues and sound; the active action and the
    /// scroll hide reason are cleared. Returns whether it was a reselect.
    mutating func commitTab(_ k: Int, source: Source, into out: inout Outcome) -> Bool {
        let id = state.items[k].id
        let src = JSON.string(source.rawValue)
        let old = state.selected.flatMap { state.index(of: $0) }
        let (reselected, effects) = moveSelection(to: k, source: source)
        if reselected {
            out.events.append(Event("tab.reselected", .obj(["seq": seqJSON, "tab": .string(id), "source": src])))
            cue(.reselect, k, sound: effects, into: &out)
        } else {
            out.events.append(Event("tab.selected", .obj(["seq": seqJSON, "tab": .string(id), "previous": .optional(state.previous), "source": src])))
            cue(.select, k, from: old, sound: effects, into: &out)
            if let old { cue(.deselect, old, into: &out) }
        }
        out.effects += effects
        withdrawScrollReason(into: &out)
        return reselected
    }

    /// What a commit of tab `k` does to the selection: the active action is cleared and `k`
    /// becomes selected (its predecessor `previous`) unless it already was (a reselect).
    /// Returns whether it was a reselect, and the sound a user's commit plays.
    mutating func moveSelection(to k: Int, source: Source) -> (reselected: Bool, effects: [Effect]) {
        let reselected = state.selected == state.items[k].id
        return (reselected, moveSelection(to: k, source: source, reselected: reselected))
    }

    /// `moveSelection` when the caller knows whether `k` is the selected tab.
    @inline(__always)
    mutating func moveSelection(to k: Int, source: Source, reselected: Bool) -> [Effect] {
        if state.activeAction != nil { state.activeAction = nil }
        if !reselected {
            state.previous = state.selected
            state.selected = state.items[k].id
        }
        guard source == .user else { return [] }
        return sound(reselected ? .reselect : .select, item: state.items[k])
    }

    // MARK: The allocation-free select

    /// The tab that the `tab.select` `fast` reads in `line` (no `if_seq`) commits, when the
    /// commit is *plain*: a selectable tab, no `animation.cue` (neither the new nor the old
    /// tab has an animation style) and no scroll hide reason to withdraw. Then its whole
    /// outcome is the seq, selection and previous tab it leads to — reply, event and journal
    /// line are `PlainPlan`'s bytes, no `Outcome` is needed — and `commitPlainSelect(k)`
    /// makes it. nil: take `reduce`. (The server decides from a `PlainSelectIndex`; this is
    /// the reference it is checked against, and what journal replay uses.)
    public func plainSelectTarget(_ fast: FastSelect, _ line: UnsafeBufferPointer<UInt8>) -> Int? {
        var k = fast.index
        if let tab = fast.tab {
            let name = UnsafeBufferPointer(rebasing: line[tab])
            guard let i = state.items.firstIndex(where: { $0.id.utf8.count == name.count && $0.id.utf8.elementsEqual(name) }) else { return nil }
            k = i
        } else {
            guard k >= 0, k < state.items.count else { return nil }
        }
        guard state.items[k].kind == .tab, state.items[k].enabled,
              !state.visibility.reasons.contains(.scroll) else { return nil }
        if state.settings.animation != .none || state.items.contains(where: { $0.animation != nil }) {
            // Some item has an animation style: cue-free only if neither tab involved has one.
            guard (state.items[k].animation ?? state.settings.animation) == .none else { return nil }
            if state.selected != state.items[k].id, let current = state.selected, let old = state.index(of: current),
               (state.items[old].animation ?? state.settings.animation) != .none {
                return nil
            }
        }
        return k
    }

    /// Commits tab `k` as `reduce(.select(...))` would, for a `k` from `plainSelectTarget`:
    /// the same state, seq and effects. Returns the effects.
    public mutating func commitPlainSelect(_ k: Int, source: Source) -> [Effect] {
        commitPlainSelect(k, source: source, reselected: state.selected == state.items[k].id)
    }

    /// `commitPlainSelect` when the caller knows whether `k` is the selected tab.
    @inline(__always)
    public mutating func commitPlainSelect(_ k: Int, source: Source, reselected: Bool) -> [Effect] {
        state.seq += 1
        scrollTravel = 0
        return moveSelection(to: k, source: source, reselected: reselected)
    }

    // MARK: Actions

    mutating func actionTrigger(_ tab: String, source: Source) -> Outcome {
        guard let item = state.item(tab) else { return .fail(.unknownTab(tab)) }
        guard item.kind != .tab else {
            return .fail(.invalidParams("tab", "Item \"\(tab)\" is a tab, not an action or center button; use tab.select."))
        }
        guard item.enabled else { return .fail(.notSelectable(tab, "it is disabled")) }
        state.seq += 1
        var out = Outcome(reply: .success(.obj(["seq": seqJSON])))
        commitAction(state.index(of: tab)!, source: source, into: &out)
        return out
    }

    /// Triggers action or center item `k` as part of the change being made: it becomes the
    /// active action; selection is unchanged; one `action.triggered` event and its sound.
    mutating func commitAction(_ k: Int, source: Source, into out: inout Outcome) {
        let item = state.items[k]
        state.activeAction = item.id
        var params: [JSON.Member] = [JSON.Member("seq", seqJSON), JSON.Member("tab", .string(item.id))]
        if let a = item.action { params.append(JSON.Member("action", .string(a))) }
        out.events.append(Event("action.triggered", .object(params)))
        if source == .user { out.effects += sound(item.kind == .center ? .center : .action, item: item) }
    }

    mutating func actionFinish(_ tab: String) -> Outcome {
        guard state.item(tab) != nil else { return .fail(.unknownTab(tab)) }
        guard state.activeAction == tab else { return Outcome(reply: .success(.obj(["seq": seqJSON]))) }
        state.seq += 1
        state.activeAction = nil
        return Outcome(reply: .success(.obj(["seq": seqJSON])),
                       events: [Event("action.finished", .obj(["seq": seqJSON, "tab": .string(tab)]))])
    }

    // MARK: Configuration

    /// Checks a list of items against the bar's rules; nil when acceptable.
    public static func validate(_ items: [Item], limits: Limits) -> RPCError? {
        if items.isEmpty { return .invalidParams("items", "The bar needs at least one item.") }
        if items.count > limits.maxItems {
            return .limitExceeded("The bar has \(items.count) items; at most \(limits.maxItems) are allowed (max_items).")
        }
        var seen = Set<String>()
        for (k, item) in items.enumerated() {
            if !seen.insert(item.id).inserted {
                return .invalidParams("items[\(k)].id", "Duplicate item id \"\(item.id)\"; ids must be unique.")
            }
        }
        let centers = items.indices.filter { items[$0].kind == .center }
        if centers.count > 1 {
            return .invalidParams("items[\(centers[1])].kind", "At most one item may be \"center\"; found \(centers.count).")
        }
        if let c = centers.first, items.count % 2 == 0 || c != items.count / 2 {
            return .invalidParams("items[\(c)].kind",
                                  "The center item must stand in the middle of an odd number of items (index \(items.count / 2) of \(items.count)).")
        }
        if !items.contains(where: { $0.isSelectable }) {
            return .invalidParams("items", "The bar has no selectable tab: at least one item must be an enabled \"tab\".")
        }
        return nil
    }

    mutating func configure(items newItems: [Item]?, badgeGiven: [Bool], selected: String?, layout: Params?,
                            settings: Params? = nil) -> Outcome {
        var next = state
        if let layout {
            do { next.layout = try Layout.decode(layout, base: state.layout) } catch { return .fail(error) }
        }
        if let settings {
            do { next.settings = try BarSettings.decode(settings, base: state.settings, limits: limits) } catch { return .fail(error) }
        }
        if var items = newItems {
            if let e = Reducer.validate(items, limits: limits) { return .fail(e) }
            for k in items.indices where !(k < badgeGiven.count && badgeGiven[k]) {
                let old = state.item(items[k].id)
                items[k].badge = old?.badge
                items[k].badgeHidden = old?.badgeHidden ?? false
            }
            next.items = items
        }
        if !next.settings.actionBadges {
            // Badges on action and center items are ignored unless the bar enables them.
            for k in next.items.indices where next.items[k].kind != .tab {
                next.items[k].badge = nil
                next.items[k].badgeHidden = false
            }
        }
        if let selected {
            guard let item = next.item(selected) else { return .fail(.unknownTab(selected)) }
            guard item.isSelectable else { return .fail(.notSelectable(selected, item.enabled ? "it is not a tab" : "it is disabled")) }
            if next.selected != selected { next.previous = next.selected }
            next.selected = selected
        } else if let current = state.selected, next.item(current)?.isSelectable != true {
            // The selected item went away or can no longer be selected: fall back to its nearest neighbour.
            let oldIndex = state.index(of: current) ?? 0
            let candidates = next.items.indices.filter { next.items[$0].isSelectable }
            let nearest = candidates.min { abs($0 - oldIndex) < abs($1 - oldIndex) || (abs($0 - oldIndex) == abs($1 - oldIndex) && $0 < $1) }
            next.previous = nil
            next.selected = nearest.map { next.items[$0].id }
        } else if state.selected == nil {
            next.selected = next.items.first { $0.isSelectable }?.id
        }
        if let p = next.previous, next.item(p) == nil { next.previous = nil }
        if let a = next.activeAction, next.item(a) == nil { next.activeAction = nil }
        if let h = next.highlighted, next.item(h)?.enabled != true { next.highlighted = nil }
        if let t = touch.active, next.item(t.item)?.enabled != true { touch.active = nil }
        if next == state {
            return Outcome(reply: .success(.obj(["seq": seqJSON, "state": state.json(limits: limits)])))
        }
        next.seq += 1
        state = next
        let stateJSON = state.json(limits: limits)
        return Outcome(reply: .success(.obj(["seq": seqJSON, "state": stateJSON])),
                       events: [Event("bar.configured", .obj(["seq": seqJSON, "state": stateJSON]))])
    }
}
