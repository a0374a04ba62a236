/// Badges: set, clear, hide and show again without losing the value.
extension Reducer {
    /// The badge members of a reply or `badge.changed`: `badge` is what front ends show
    /// (null while hidden); `hidden_badge` carries the kept value while hidden.
    func badgeMembers(_ item: Item) -> [JSON.Member] {
        let lim = displayLimits
        var m = [JSON.Member("badge", item.visibleBadge?.json(lim) ?? .null)]
        if item.badgeHidden, let b = item.badge { m.append(JSON.Member("hidden_badge", b.json(lim))) }
        return m
    }

    mutating func setBadge(_ tab: String, _ update: BadgeUpdate, clearing: Bool = false) -> Outcome {
        guard let k = state.index(of: tab) else { return .fail(.unknownTab(tab)) }
        let item = state.items[k]
        func reply(_ item: Item, ignored: Bool = false) -> JSON {
            if clearing { return .obj(["seq": seqJSON]) }
            var m = [JSON.Member("seq", seqJSON)] + badgeMembers(item)
            if ignored { m.append(JSON.Member("ignored", .bool(true))) }
            return .object(m)
        }
        if item.kind != .tab && !state.settings.actionBadges {
            // Badges on action and center items are ignored unless `settings.action_badges` is true.
            return Outcome(reply: .success(reply(item, ignored: update.value != .remove)))
        }
        var next = item
        switch update.value {
        case .keep: break
        case .remove: next.badge = nil
        case .set(let b): next.badge = b
        }
        if let hidden = update.hidden { next.badgeHidden = hidden }
        if next.badge == nil { next.badgeHidden = false }
        if next == item { return Outcome(reply: .success(reply(item))) }
        state.items[k] = next
        state.seq += 1
        var out = Outcome(reply: .success(reply(next)),
                          events: [Event("badge.changed", .object([JSON.Member("seq", seqJSON), JSON.Member("tab", .string(tab))] + badgeMembers(next)))])
        if next.visibleBadge != nil && next.visibleBadge != item.visibleBadge {
            let effects = sound(.badge, item: next)
            cue(.badge, k, sound: effects, into: &out)
            out.effects += effects
        }
        return out
    }
}
