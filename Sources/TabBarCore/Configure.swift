/// `bar.configure`: the items, selection, layout and settings of the bar, checked whole.
extension Reducer {
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
                            settings: Params?, into out: inout Outcome) {
        var next = state
        if let layout {
            do { next.layout = try Layout.decode(layout, base: state.layout) } catch { return out.fail(error) }
        }
        if let settings {
            do { next.settings = try BarSettings.decode(settings, base: state.settings, limits: limits) } catch { return out.fail(error) }
        }
        if var items = newItems {
            if let e = Reducer.validate(items, limits: limits) { return out.fail(e) }
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
            guard let item = next.item(selected) else { return out.fail(.unknownTab(selected)) }
            guard item.isSelectable else { return out.fail(.notSelectable(selected, item.enabled ? "it is not a tab" : "it is disabled")) }
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
            return out.reset(.success(.state(seq: seq, state, limits)))
        }
        next.seq += 1
        state = next
        out.reset(.success(.state(seq: seq, state, limits)))
        out.publish(.barConfigured(seq: seq, state, limits))
    }
}
