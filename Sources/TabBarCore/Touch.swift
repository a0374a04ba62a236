/// The finger on the bar (one at a time) and the touch ids already used, so that a
/// replayed sequence is ignored. Lives only while the daemon runs.
struct TouchTracker: Equatable, Sendable {
    struct Active: Equatable, Sendable {
        /// The item the touch went down on.
        var item: String
        /// The client's `touch_id`, if it gave one.
        var id: Int?
        /// Already committed (on `down`, when the bar commits on down).
        var committed: Bool
        /// Its click already played on `down` (`click_on: "press"`): the commit on `up` is silent.
        var clicked = false
    }
    var active: Active?
    /// The most recent touch ids that started a sequence, oldest first.
    private(set) var recent: [Int] = []
    static let remembered = 256

    func seen(_ id: Int) -> Bool { recent.contains(id) }

    /// Starts a touch, none being in progress (`Reducer.endTouch` ended it).
    mutating func begin(_ touch: Active) {
        active = touch
    }

    /// The touch in progress, taken, if `touchID` may end it (nil ends any); else nil, and it stays.
    mutating func end(_ touchID: Int?) -> Active? {
        if let touchID, active?.id != touchID { return nil }
        return active.take()
    }

    mutating func remember(_ id: Int) {
        recent.append(id)
        if recent.count > Self.remembered { recent.removeFirst(recent.count - Self.remembered) }
    }
}

/// What a committed touch did. Wire strings (`touch` reply `commit`): `select`, `reselect`, `action`.
public enum Commit: String, Equatable, Sendable {
    case select, reselect, action
}

/// Touches and highlights: the daemon hit-tests, highlights, and commits.
extension Reducer {
    /// What a point hits now: the enabled item there (nil for none or a disabled one) and
    /// whether the bar swallows the touch. A hidden bar hits nothing and swallows nothing.
    public func hit(x: Double, y: Double) -> (index: Int?, consumed: Bool) {
        if state.visibility.hidden { return (nil, false) }
        let h = state.layout.hitTest(x: x, y: y, items: state.items,
                                     swallowCenterCorners: state.settings.centerCorners == .swallow)
        if let k = h.index, !state.items[k].enabled { return (nil, true) }  // consumed, does nothing
        return h
    }

    /// `touch`: the daemon hit-tests the point, highlights on `down`, commits on `up`.
    mutating func touch(_ phase: TouchPhase, x: Double, y: Double, touchID: Int?, into out: inout Outcome) {
        let h = hit(x: x, y: y)
        let target = h.index.map { state.items[$0].id }
        func reply(commit: Commit? = nil, ignored: Bool = false) -> Reply {
            .touch(seq: seq, target: target, consumed: h.consumed, commit: commit, ignored: ignored, sound: ignored ? nil : click(in: out))
        }
        switch phase {
        case .down:
            if let id = touchID, touch.seen(id) { return out.reset(.success(reply(ignored: true))) }
            guard let k = h.index else {
                // A touch that starts on nothing ends the one in progress, if any.
                guard touch.active != nil else { return out.reset(.success(reply())) }
                state.seq += 1
                endTouch(.cancel, into: &out)
                record(journalEntry(commit: nil, nil), into: &out)
                out.answer(.success(reply()))
                return
            }
            state.seq += 1
            endTouch(.cancel, into: &out)
            if let id = touchID { touch.remember(id) }
            // `click_on: "press"` plays the commit's click now, once per touch that begins a highlight.
            let pressed = state.settings.clickOn == .press && state.settings.commitOn == .up && state.highlighted != state.items[k].id
            highlightBegin(k, sound: pressed ? commitSound(k) : nil, into: &out)
            touch.begin(TouchTracker.Active(item: state.items[k].id, id: touchID, committed: false, clicked: pressed))
            var commit: Commit?
            if state.settings.commitOn == .down {
                commit = self.commit(k, into: &out)
                touch.active?.committed = true
            }
            record(journalEntry(commit: commit, k), into: &out)
            out.answer(.success(reply(commit: commit)))
        case .up, .cancel:
            guard let active = touch.end(touchID) else {
                // No sequence in progress with this id: a stray or replayed up/cancel.
                return out.reset(.success(reply(ignored: true)))
            }
            state.seq += 1
            var commit: Commit?
            var committed: Int?
            if phase == .up, let k = h.index, state.items[k].id == active.item {
                highlightEnd(active.item, .end, into: &out)
                if !active.committed { commit = self.commit(k, click: !active.clicked, into: &out); committed = k }
            } else {
                highlightEnd(active.item, .cancel, into: &out)
            }
            record(journalEntry(commit: commit, committed), into: &out)
            out.answer(.success(reply(commit: commit)))
        }
    }

    /// Records the journal entry of a touch that counted a seq. A touch whose only effect is
    /// on the finger tracker (say an up after `tab.highlight` moved the highlight elsewhere)
    /// is no change: it records nothing and takes back the `seq` it counted, which would
    /// otherwise be a gap every subscriber sees. (A commit always publishes an event, so
    /// such a touch's `entry` is `touchHighlight`, which holds nothing.)
    mutating func record(_ entry: JournalEntry, into out: inout Outcome) {
        if out.events.isEmpty { state.seq -= 1 } else { out.record(entry) }
    }

    /// What the journal records for a touch: what it committed, as the request that does
    /// the same (a replay must not depend on the finger tracker, which is not persisted and
    /// is lost when a snapshot falls between a touch's down and up); a touch that only
    /// moved the highlight is recorded as `touch.highlight`, which a replay skips.
    func journalEntry(commit: Commit?, _ k: Int?) -> JournalEntry {
        guard let commit, let k else { return .touchHighlight }
        let tab = state.items[k].id
        return commit == .action ? .actionTrigger(tab: tab, source: .user) : .select(tab: tab, source: .user)
    }

    /// Commits item `k` for the user: reselect, select, or trigger; without its click when
    /// `click` is false (it played on the press).
    mutating func commit(_ k: Int, click: Bool = true, into out: inout Outcome) -> Commit {
        if state.items[k].kind == .tab {
            return commitTab(k, source: .user, click: click, into: &out).reselected ? .reselect : .select
        }
        commitAction(k, source: .user, click: click, into: &out)
        return .action
    }

    /// The click a user's commit of item `k` plays (on the `down` under `click_on: "press"`):
    /// the reselect sound on the selected tab, the select sound on another, the center or
    /// action sound; the item's own `sound` and the sound map apply.
    func commitSound(_ k: Int) -> Effect? {
        switch state.items[k].kind {
        case .tab: return sound(state.selected == state.items[k].id ? .reselect : .select, of: k)
        case .center: return sound(.center, of: k)
        case .action: return sound(.action, of: k)
        }
    }

    /// The name of the click a touch started (its press's or its commit's), for its reply.
    func click(in out: Outcome) -> String? {
        for case let .play(name, _, trigger) in out.effects {
            switch trigger {
            case .select, .reselect, .action, .center: return name
            case .badge, .visibility, .animation: continue
            }
        }
        return nil
    }

    /// Ends the touch in progress, if any, ending its highlight with `phase`.
    mutating func endTouch(_ phase: HighlightPhase, into out: inout Outcome) {
        guard let active = touch.active.take() else { return }
        highlightEnd(active.item, phase, into: &out)
    }

    /// `tab.highlight`: a front end that hit-tests itself reports a highlight.
    mutating func highlight(_ tab: String, _ phase: HighlightPhase, into out: inout Outcome) {
        guard let k = state.index(of: tab) else { return out.fail(.unknownTab(tab)) }
        switch phase {
        case .begin:
            guard state.items[k].enabled else { return out.fail(.notSelectable(tab, "it is disabled")) }
            guard state.highlighted != tab else { return out.reset(.success(.seq(seq))) }
        case .end, .cancel:
            guard state.highlighted == tab else { return out.reset(.success(.seq(seq))) }
        }
        state.seq += 1
        out.reset(.success(.seq(seq)))
        if phase == .begin { highlightBegin(k, into: &out) } else { highlightEnd(tab, phase, into: &out) }
    }

    /// Highlights item `k`, cancelling another highlight first; `sound`: the click of a press
    /// (`click_on: "press"`), started with the highlight and named by its event and cue.
    mutating func highlightBegin(_ k: Int, sound: Effect? = nil, into out: inout Outcome) {
        let id = state.items[k].id
        if let h = state.highlighted, h != id { highlightEnd(h, .cancel, into: &out) }
        guard state.highlighted != id else { return }
        state.highlighted = id
        var name: String?
        if case let .play(n, _, _)? = sound { name = n }
        out.publish(.tabHighlighted(seq: seq, tab: state.items[k].id, phase: .begin, sound: name))
        cue(.highlight, k, sound: sound, into: &out)
        out.play(sound)
    }

    /// Ends the highlight of `id` (if it is the highlighted item) with `end` or `cancel`.
    mutating func highlightEnd(_ id: String, _ phase: HighlightPhase, into out: inout Outcome) {
        guard state.highlighted == id else { return }
        state.highlighted = nil
        out.publish(.tabHighlighted(seq: seq, tab: id, phase: phase))
    }

    /// The bar went hidden: no touch or highlight may outlive it.
    mutating func cancelTouchesAndHighlight(into out: inout Outcome) {
        endTouch(.cancel, into: &out)
        if let h = state.highlighted { highlightEnd(h, .cancel, into: &out) }
    }
}
