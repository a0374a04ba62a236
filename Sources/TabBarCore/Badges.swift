/// Badges: set, clear, hide and show again without losing the value.
extension Reducer {
    mutating func setBadge(_ tab: String, _ update: BadgeUpdate, clearing: Bool = false, into out: inout Outcome) {
        guard let k = state.index(of: tab) else { return out.fail(.unknownTab(tab)) }
        let item = state.items[k]
        func reply(_ item: Item, ignored: Bool = false) -> Reply {
            clearing ? .seq(seq) : .badge(seq: seq, item, displayLimits, ignored: ignored)
        }
        if item.kind != .tab && !state.settings.actionBadges {
            // Badges on action and center items are ignored unless `settings.action_badges` is true.
            return out.reset(.success(reply(item, ignored: true)))
        }
        var next = item
        switch update.value {
        case .keep: break
        case .remove: next.badge = nil
        case .set(let b): next.badge = b
        }
        if let hidden = update.hidden { next.badgeHidden = hidden }
        if next.badge == nil { next.badgeHidden = false }
        if next == item { return out.reset(.success(reply(item))) }
        state.items[k] = next
        state.seq += 1
        out.reset(.success(reply(next)))
        out.publish(.badgeChanged(seq: seq, next, displayLimits))
        if next.visibleBadge != nil && next.visibleBadge != item.visibleBadge {
            let effects = sound(.badge, own: next.sound)
            cue(.badge, k, sound: effects, into: &out)
            out.play(effects)
        }
    }
}
