/// Badges: set, clear, hide and show again without losing the value.
extension Reducer {
    mutating func setBadge(_ tab: String, _ update: BadgeUpdate, clearing: Bool = false, into out: inout Outcome) {
        guard let k = state.index(of: tab) else { return out.fail(.unknownTab(tab)) }
        if state.items[k].kind != .tab && !state.settings.actionBadges {
            // Badges on action and center items are ignored unless `settings.action_badges` is true.
            return out.reset(.success(clearing ? .seq(seq) : .badge(seq: seq, state.items[k], displayLimits, ignored: true)))
        }
        let oldBadge = state.items[k].badge, oldHidden = state.items[k].badgeHidden
        var badge = oldBadge
        switch update.value {
        case .keep: break
        case .remove: badge = nil
        case .set(let b): badge = b
        }
        var hidden = update.hidden ?? oldHidden
        if badge == nil { hidden = false }
        if badge == oldBadge && hidden == oldHidden {
            return out.reset(.success(clearing ? .seq(seq) : .badge(seq: seq, state.items[k], displayLimits, ignored: false)))
        }
        let wasVisible = state.items[k].visibleBadge
        state.items[k].badge = badge
        state.items[k].badgeHidden = hidden
        state.seq += 1
        out.reset(.success(clearing ? .seq(seq) : .badge(seq: seq, state.items[k], displayLimits, ignored: false)))
        out.publish(.badgeChanged(seq: seq, state.items[k], displayLimits))
        if let shown = state.items[k].visibleBadge, shown != wasVisible {
            let effects = sound(.badge)
            cue(.badge, k, sound: effects, into: &out)
            out.play(effects)
        }
    }
}
