extension Visibility {
    /// How far hidden the bar is at `now`: 0 shown … 1 hidden.
    public func progress(at now: Int64) -> Double {
        let target: Double = hidden ? 1 : 0
        guard phase != .idle, phaseDurationMs > 0 else { return target }
        let t = min(1, max(0, Double(now - phaseStartMs) / Double(phaseDurationMs)))
        return phaseFrom + (target - phaseFrom) * t
    }

    /// When the running show/hide animation ends.
    public var phaseEndMs: Int64 { phaseStartMs + Int64(phaseDurationMs) }

    /// Sets or withdraws one reason, keeping the order explicit, push, scroll.
    mutating func set(_ reason: HideReason, _ on: Bool) {
        reasons = HideReason.allCases.filter { $0 == reason ? on : reasons.contains($0) }
    }

    /// The `push` reason holds while it was set directly or any pushed screen hides the bar.
    mutating func updatePushReason() {
        set(.push, pushHold || navStack.contains(true))
    }

    /// No animation in progress (after a restart).
    mutating func settle() {
        phase = .idle
        phaseStartMs = 0
        phaseDurationMs = 0
        phaseFrom = hidden ? 1 : 0
    }

    /// The parts that are state rather than animation timing.
    var logical: ([HideReason], [Bool], Bool) { (reasons, navStack, pushHold) }
}

/// Visibility: hide reasons, the navigation stack, scrolling, and animated phases.
extension Reducer {
    static let maxNavDepth = 256

    func visibilityReply(into out: inout Outcome) {
        out.reset(.success(.visibility(seq: seq, state.visibility)))
    }

    mutating func setHidden(_ hidden: Bool, reason: HideReason, animated: Bool, into out: inout Outcome) {
        var v = state.visibility
        switch reason {
        case .explicit, .scroll:
            v.set(reason, hidden)
        case .push:
            v.pushHold = hidden
            v.updatePushReason()
        }
        if reason == .scroll { scrollTravel = 0 }
        changeVisibility(to: v, animated: animated, into: &out)
    }

    mutating func navPush(hidesBar: Bool, into out: inout Outcome) {
        guard state.visibility.navStack.count < Reducer.maxNavDepth else {
            return out.fail(.limitExceeded("The navigation stack is \(Reducer.maxNavDepth) screens deep; pop screens with nav.pop first."))
        }
        var v = state.visibility
        v.navStack.append(hidesBar)
        v.updatePushReason()
        changeVisibility(to: v, animated: true, into: &out)
    }

    mutating func navPop(into out: inout Outcome) {
        guard !state.visibility.navStack.isEmpty else { return visibilityReply(into: &out) }
        var v = state.visibility
        v.navStack.removeLast()
        v.updatePushReason()
        changeVisibility(to: v, animated: true, into: &out)
    }

    /// Scrolling down (dy > 0) by the threshold hides the bar; scrolling up by it shows it again.
    mutating func scroll(dy: Double, into out: inout Outcome) {
        guard dy != 0 else { return visibilityReply(into: &out) }
        if scrollTravel != 0 && (scrollTravel > 0) != (dy > 0) { scrollTravel = 0 }
        scrollTravel += dy
        let threshold = state.settings.scrollThreshold
        let scrollHidden = state.visibility.reasons.contains(.scroll)
        let hide: Bool
        if dy > 0 && scrollTravel >= threshold && !scrollHidden {
            hide = true
        } else if dy < 0 && -scrollTravel >= threshold && scrollHidden {
            hide = false
        } else {
            return visibilityReply(into: &out)
        }
        scrollTravel = 0
        var v = state.visibility
        v.set(.scroll, hide)
        changeVisibility(to: v, animated: true, into: &out)
        // Replaying the request alone would not reproduce the travel before it: record what it did.
        out.journal = .setHidden(hide, reason: .scroll)
    }

    /// Selecting a tab shows a bar that scrolling hid (part of the change being made).
    mutating func withdrawScrollReason(into out: inout Outcome) {
        scrollTravel = 0
        guard state.visibility.reasons.contains(.scroll) else { return }
        var v = state.visibility
        v.set(.scroll, false)
        applyVisibility(v, animated: true, into: &out)
    }

    /// A visibility change as a command of its own: one seq, the reply carries the visibility.
    mutating func changeVisibility(to v: Visibility, animated: Bool, into out: inout Outcome) {
        guard v.logical != state.visibility.logical else { return visibilityReply(into: &out) }
        state.seq += 1
        out.reset()
        applyVisibility(v, animated: animated, into: &out)
        out.answer(.success(.visibility(seq: seq, state.visibility)))
    }

    /// Applies new reasons/stack as part of the change being made. When the bar flips between
    /// shown and hidden, an animated change starts a `hiding`/`showing` phase (from wherever a
    /// running one has got to: it is retargeted, not queued) and asks for a timer to end it.
    mutating func applyVisibility(_ v: Visibility, animated: Bool, into out: inout Outcome) {
        let old = state.visibility
        var next = v
        var durationMs = 0
        if old.hidden != next.hidden {
            let from = old.progress(at: now)
            let target: Double = next.hidden ? 1 : 0
            durationMs = animated ? Int((Double(state.settings.hideDurationMs) * abs(target - from)).rounded()) : 0
            if durationMs > 0 {
                next.phase = next.hidden ? .hiding : .showing
                next.phaseStartMs = now
                next.phaseDurationMs = durationMs
                next.phaseFrom = from
                out.effects.append(.timer(.visibility, atMs: now + Int64(durationMs)))
            } else {
                next.settle()
                if old.phase != .idle { out.effects.append(.cancelTimer(.visibility)) }
            }
            state.visibility = next
            out.publish(visibilityEvent(durationMs: durationMs))
            let effects = sound(.visibility)
            if durationMs > 0 { visibilityCue(from: from, to: target, durationMs: durationMs, sound: effects, into: &out) }
            out.play(effects)
            if next.hidden { cancelTouchesAndHighlight(into: &out) }
        } else {
            // Reasons or the stack changed, not whether the bar is hidden: a running phase goes on.
            state.visibility = next
            durationMs = old.phase == .idle ? 0 : Int(max(0, old.phaseEndMs - now))
            out.publish(visibilityEvent(durationMs: durationMs))
        }
    }

    func visibilityEvent(durationMs: Int) -> BarEvent {
        .barVisibility(seq: seq, state.visibility, durationMs: durationMs)
    }

    /// The show/hide animation is due to end: phase back to `idle` (one more seq).
    mutating func visibilityTimerFired(into out: inout Outcome) {
        let v = state.visibility
        guard v.phase != .idle else { return out.reset() }
        if now < v.phaseEndMs {
            // Early (the animation was retargeted meanwhile): wait for its new end.
            out.reset()
            return out.effects.append(.timer(.visibility, atMs: v.phaseEndMs))
        }
        state.seq += 1
        state.visibility.settle()
        out.reset(.success(.seq(seq)))
        out.publish(visibilityEvent(durationMs: 0))
        out.journal = .timerFired(.visibility)
    }
}
