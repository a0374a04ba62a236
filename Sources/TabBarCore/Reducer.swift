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
}

/// What caused a sound, for the per-event sound map. Wire strings as the cases.
public enum SoundTrigger: String, Equatable, Sendable {
    case select, reselect, action, center, badge, visibility
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

/// The result of one command: the reply, the events to publish, the effects to run.
public struct Outcome: Equatable, Sendable {
    public var reply: Result<JSON, RPCError>
    public var events: [Event]
    public var effects: [Effect]

    public init(reply: Result<JSON, RPCError>, events: [Event] = [], effects: [Effect] = []) {
        self.reply = reply
        self.events = events
        self.effects = effects
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

    public init(state: BarState = .defaultBar, limits: Limits = Limits(), sounds: SoundMap = SoundMap()) {
        self.state = state
        self.limits = limits
        self.sounds = sounds
    }

    var seqJSON: JSON { .int(state.seq) }

    /// Applies a state command. Non-state commands are the server's and answer `internal_error`.
    public mutating func reduce(_ command: Command) -> Outcome {
        switch command {
        case .stateGet:
            return Outcome(reply: .success(.obj(["seq": seqJSON, "state": state.json(limits: limits)])))
        case let .configure(items, badgeGiven, selected, layout):
            return configure(items: items, badgeGiven: badgeGiven, selected: selected, layout: layout)
        case let .select(ref, ifSeq, source):
            return select(ref, ifSeq: ifSeq, source: source)
        case let .actionTrigger(tab, source):
            return actionTrigger(tab, source: source)
        case let .actionFinish(tab):
            return actionFinish(tab)
        case let .badgeSet(tab, badge):
            return setBadge(tab, badge)
        case let .badgeClear(tab):
            return setBadge(tab, nil, clearing: true)
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

    func sound(_ trigger: SoundTrigger, item: Item?) -> [Effect] {
        let profile = state.feedback.profile
        if profile == .silent { return [] }
        if profile == .quiet && trigger != .select && trigger != .reselect { return [] }
        let mapped: String?
        switch trigger {
        case .select: mapped = sounds.select
        case .reselect: mapped = sounds.reselect
        case .action: mapped = sounds.action
        case .center: mapped = sounds.center
        case .badge: mapped = sounds.badge
        case .visibility: mapped = sounds.visibility
        }
        // An item's own sound replaces the default for its commits; "none" silences it.
        var name = mapped
        if let own = item?.sound, trigger != .badge, trigger != .visibility { name = own }
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
        let src = JSON.string(source.rawValue)
        state.seq += 1
        state.activeAction = nil
        if state.selected == item.id {
            let effects = source == .user ? sound(.reselect, item: item) : []
            return Outcome(
                reply: .success(.obj(["seq": seqJSON, "selected": .string(item.id), "previous": .optional(state.previous), "reselected": .bool(true)])),
                events: [Event("tab.reselected", .obj(["seq": seqJSON, "tab": .string(item.id), "source": src]))],
                effects: effects)
        }
        state.previous = state.selected
        state.selected = item.id
        let effects = source == .user ? sound(.select, item: item) : []
        return Outcome(
            reply: .success(.obj(["seq": seqJSON, "selected": .string(item.id), "previous": .optional(state.previous), "reselected": .bool(false)])),
            events: [Event("tab.selected", .obj(["seq": seqJSON, "tab": .string(item.id), "previous": .optional(state.previous), "source": src]))],
            effects: effects)
    }

    // MARK: Actions

    mutating func actionTrigger(_ tab: String, source: Source) -> Outcome {
        guard let item = state.item(tab) else { return .fail(.unknownTab(tab)) }
        guard item.kind != .tab else {
            return .fail(.invalidParams("tab", "Item \"\(tab)\" is a tab, not an action or center button; use tab.select."))
        }
        guard item.enabled else { return .fail(.notSelectable(tab, "it is disabled")) }
        state.seq += 1
        state.activeAction = tab
        var params: [JSON.Member] = [JSON.Member("seq", seqJSON), JSON.Member("tab", .string(tab))]
        if let a = item.action { params.append(JSON.Member("action", .string(a))) }
        let effects = source == .user ? sound(item.kind == .center ? .center : .action, item: item) : []
        return Outcome(reply: .success(.obj(["seq": seqJSON])), events: [Event("action.triggered", .object(params))], effects: effects)
    }

    mutating func actionFinish(_ tab: String) -> Outcome {
        guard state.item(tab) != nil else { return .fail(.unknownTab(tab)) }
        guard state.activeAction == tab else { return Outcome(reply: .success(.obj(["seq": seqJSON]))) }
        state.seq += 1
        state.activeAction = nil
        return Outcome(reply: .success(.obj(["seq": seqJSON])),
                       events: [Event("action.finished", .obj(["seq": seqJSON, "tab": .string(tab)]))])
    }

    // MARK: Badges

    mutating func setBadge(_ tab: String, _ badge: Badge?, clearing: Bool = false) -> Outcome {
        guard let k = state.index(of: tab) else { return .fail(.unknownTab(tab)) }
        let old = state.items[k].badge
        if old == badge {
            let reply: JSON = clearing ? .obj(["seq": seqJSON]) : .obj(["seq": seqJSON, "badge": badge?.json(limits) ?? .null])
            return Outcome(reply: .success(reply))
        }
        state.items[k].badge = badge
        state.seq += 1
        let b = badge?.json(limits) ?? .null
        let reply: JSON = clearing ? .obj(["seq": seqJSON]) : .obj(["seq": seqJSON, "badge": b])
        return Outcome(reply: .success(reply),
                       events: [Event("badge.changed", .obj(["seq": seqJSON, "tab": .string(tab), "badge": b]))],
                       effects: badge == nil ? [] : sound(.badge, item: state.items[k]))
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

    mutating func configure(items newItems: [Item]?, badgeGiven: [Bool], selected: String?, layout: Params?) -> Outcome {
        var next = state
        if let layout {
            do { next.layout = try Layout.decode(layout, base: state.layout) } catch { return .fail(error) }
        }
        if var items = newItems {
            if let e = Reducer.validate(items, limits: limits) { return .fail(e) }
            for k in items.indices where !(k < badgeGiven.count && badgeGiven[k]) {
                items[k].badge = state.item(items[k].id)?.badge
            }
            next.items = items
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
        if let h = next.highlighted, next.item(h) == nil { next.highlighted = nil }
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
