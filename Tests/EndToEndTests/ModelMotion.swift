import TabBarCore

// The model's touch, highlight, visibility, animation and clock (docs/PROTOCOL.md "Touch,
// visibility and animation", docs/HARNESS.md "The manual clock").
extension Model {
    // MARK: Highlight

    /// `sound`: a press's click (`click_on: "press"`), named by the event and the cue.
    func highlightBegin(_ k: Int, sound snd: String? = nil) {
        let id = s.items[k].id
        if let h = s.highlighted, h != id { highlightEnd(h, "cancel") }
        guard s.highlighted != id else { return }
        s.highlighted = id
        emit("tab.highlighted", [JSON.Member("tab", .string(id)), JSON.Member("phase", .string("begin"))]
             + (snd.map { [JSON.Member("sound", .string($0))] } ?? []))
        cue("highlight", k, sound: snd)
        play(snd)
    }

    func highlightEnd(_ id: String, _ phase: String) {
        guard s.highlighted == id else { return }
        s.highlighted = nil
        emit("tab.highlighted", [JSON.Member("tab", .string(id)), JSON.Member("phase", .string(phase))])
    }

    func highlight(_ tab: String, _ phase: String) {
        guard let k = s.index(tab) else { return fail("unknown_tab") }
        if phase == "begin" {
            if !s.items[k].enabled { return fail("not_selectable") }
            highlightBegin(k)
        } else {
            highlightEnd(tab, phase)
        }
        commitChange()
        out.reply = .result(.obj(["seq": .int(s.seq)]))
    }

    // MARK: Touch

    func endTouch() {
        guard let t = touch else { return }
        touch = nil
        highlightEnd(t.item, "cancel")
    }

    func commit(_ k: Int, click: Bool = true) -> String {
        if s.items[k].kind == "tab" { return commitTab(k, source: "user", click: click) ? "reselect" : "select" }
        commitAction(k, source: "user", click: click)
        return "action"
    }

    /// The click a user's commit of `k` would play now (played on the press under `click_on: "press"`).
    func pressSound(_ k: Int) -> String? {
        let item = s.items[k]
        switch item.kind {
        case "tab": return sound(s.selected == item.id ? "reselect" : "select", item: item)
        case "center": return sound("center", item: item)
        default: return sound("action", item: item)
        }
    }

    func touchStep(_ phase: String, x: Double, y: Double, id: Int?) {
        let h = s.hit(x: x, y: y)
        let target: JSON = h.target.map { .string(s.items[$0].id) } ?? .null
        let consumed: JSON = h.consumed.map(JSON.bool) ?? modelAny
        func ignored() {
            out.reply = .result(.obj(["seq": .int(s.seq), "commit": .null, "ignored": .bool(true)]))
        }
        var committed: String?
        touchClick = nil
        if phase == "down" {
            if let id, seenTouchIDs.contains(id) { return ignored() }
            endTouch()
            if let k = h.target {
                if let id {
                    seenTouchIDs.append(id)
                    if seenTouchIDs.count > 256 { seenTouchIDs.removeFirst() }
                }
                let pressed = s.settings.clickOn == "press" && s.settings.commitOn == "up" && s.highlighted != s.items[k].id
                let snd = pressed ? pressSound(k) : nil
                touchClick = snd
                highlightBegin(k, sound: snd)
                touch = (s.items[k].id, id, false, pressed)
                if s.settings.commitOn == "down" {
                    committed = commit(k)
                    touch?.committed = true
                }
            }
        } else {
            guard let t = touch, id == nil || id == t.id else { return ignored() }
            touch = nil
            if phase == "up", let k = h.target, s.items[k].id == t.item {
                highlightEnd(t.item, "end")
                if !t.committed { committed = commit(k, click: !t.clicked) }
            } else {
                highlightEnd(t.item, "cancel")
            }
        }
        commitChange()
        var reply: [JSON.Member] = [JSON.Member("seq", .int(s.seq)), JSON.Member("target", target), JSON.Member("consumed", consumed),
                                    JSON.Member("commit", .optional(committed))]
        if let touchClick { reply.append(JSON.Member("sound", .string(touchClick))) }
        out.reply = .result(.object(reply))
    }

    // MARK: Visibility

    func visibilityEvent(_ ms: Int) {
        emit("bar.visibility", [JSON.Member("hidden", .bool(s.hidden)), JSON.Member("phase", .string(s.phase)),
                                JSON.Member("reasons", .array(s.orderedReasons.map(JSON.string))),
                                JSON.Member("duration_ms", .int(ms)), JSON.Member("nav_stack", .array(s.navStack.map(JSON.bool)))])
    }

    /// New reasons / stack / hold as part of the change being made. A flip of an animated change
    /// slides from wherever the bar has got to over its share of `hide_duration_ms`.
    func applyVisibility(reasons: Set<String>, stack: [Bool], hold: Bool, animated: Bool) {
        let wasHidden = s.hidden
        let from = s.progress(now)
        let oldEnd = s.phaseStart + s.phaseDuration
        let oldPhase = s.phase
        s.reasons = reasons
        s.navStack = stack
        s.pushHold = hold
        if wasHidden != s.hidden {
            let target = s.hidden ? 1.0 : 0.0
            let ms = animated ? Int((Double(s.settings.hideMs) * abs(target - from)).rounded()) : 0
            if ms > 0 {
                s.phase = s.hidden ? "hiding" : "showing"
                s.phaseStart = now
                s.phaseDuration = ms
                s.phaseFrom = from
            } else {
                s.phase = "idle"
                s.phaseStart = 0
                s.phaseDuration = 0
            }
            visibilityEvent(ms)
            let snd = sound("visibility", item: nil)
            if ms > 0 {
                let h = s.layout.height
                emit("animation.cue", [JSON.Member("tab", .null), JSON.Member("trigger", .string("visibility")),
                                       JSON.Member("kind", .string("slide")),
                                       JSON.Member("descriptor", .object([JSON.Member("target", .string("bar")),
                                                                          JSON.Member("property", .string("translation.y")),
                                                                          JSON.Member("from", .double(from * h)),
                                                                          JSON.Member("to", .double(target * h))] + timing(ms))),
                                       JSON.Member("sound", .optional(snd))])
            }
            play(snd)
            if s.hidden {
                endTouch()
                if let h = s.highlighted { highlightEnd(h, "cancel") }
            }
        } else {
            visibilityEvent(oldPhase == "idle" ? 0 : max(0, oldEnd - now))
        }
    }

    func visibilityReply() { out.reply = .result(.obj(["seq": .int(s.seq), "visibility": s.visibilityJSON])) }

    func changeVisibility(reasons: Set<String>, stack: [Bool], hold: Bool, animated: Bool) {
        if reasons != s.reasons || stack != s.navStack || hold != s.pushHold {
            applyVisibility(reasons: reasons, stack: stack, hold: hold, animated: animated)
            commitChange()
        }
        visibilityReply()
    }

    func pushReason(_ r: inout Set<String>, stack: [Bool], hold: Bool) {
        if hold || stack.contains(true) { r.insert("push") } else { r.remove("push") }
    }

    func setHidden(_ hidden: Bool, reason: String, animated: Bool) {
        var r = s.reasons
        var hold = s.pushHold
        if reason == "push" {
            hold = hidden
            pushReason(&r, stack: s.navStack, hold: hold)
        } else if hidden {
            r.insert(reason)
        } else {
            r.remove(reason)
        }
        if reason == "scroll" { travel = 0 }
        changeVisibility(reasons: r, stack: s.navStack, hold: hold, animated: animated)
    }

    func navPush(_ hides: Bool) {
        if s.navStack.count >= 256 { return fail("limit_exceeded") }
        var r = s.reasons
        let stack = s.navStack + [hides]
        pushReason(&r, stack: stack, hold: s.pushHold)
        changeVisibility(reasons: r, stack: stack, hold: s.pushHold, animated: true)
    }

    func navPop() {
        guard !s.navStack.isEmpty else { return visibilityReply() }
        var r = s.reasons
        let stack = Array(s.navStack.dropLast())
        pushReason(&r, stack: stack, hold: s.pushHold)
        changeVisibility(reasons: r, stack: stack, hold: s.pushHold, animated: true)
    }

    func scroll(_ dy: Double) {
        guard dy != 0 else { return visibilityReply() }
        if travel != 0 && (travel > 0) != (dy > 0) { travel = 0 }
        travel += dy
        let scrolled = s.reasons.contains("scroll")
        var r = s.reasons
        if dy > 0 && travel >= s.settings.scrollThreshold && !scrolled {
            r.insert("scroll")
        } else if dy < 0 && -travel >= s.settings.scrollThreshold && scrolled {
            r.remove("scroll")
        } else {
            return visibilityReply()
        }
        travel = 0
        changeVisibility(reasons: r, stack: s.navStack, hold: s.pushHold, animated: true)
    }

    // MARK: Front-end animations

    func animationBegin(_ kind: String, tab: String?, ms: Int) {
        if let tab, s.index(tab) == nil { return fail("unknown_tab") }
        if s.animations.count >= 64 { return fail("limit_exceeded") }
        let id = pseq
        s.animations.append(MAnimation(id: id, kind: kind, tab: tab, durationMs: ms, start: now))
        emit("animation.began", [JSON.Member("animation", .int(id)), JSON.Member("kind", .string(kind)),
                                 JSON.Member("tab", .optional(tab)), JSON.Member("duration_ms", .int(ms))])
        if s.profile == "full" { play(s.settings.animationSounds[kind]) }
        commitChange()
        out.reply = .result(.obj(["seq": .int(s.seq), "animation": .int(id)]))
    }

    func animationEnd(_ id: Int, reason: String) {
        if let i = s.animations.firstIndex(where: { $0.id == id }) {
            s.animations.remove(at: i)
            emit("animation.ended", [JSON.Member("animation", .int(id)), JSON.Member("reason", .string(reason))])
            commitChange()
        } else if id > s.seq {
            return fail("invalid_params", field: "animation")
        }
        out.reply = .result(.obj(["seq": .int(s.seq)]))
    }

    // MARK: The manual clock

    /// Moves the clock by `ms`: every timer due on the way fires at its own time, earliest
    /// first (ties: the bar's phase, then animations by id), each its own change.
    func advance(_ ms: Int) {
        let target = now + ms
        while true {
            var due: (at: Int, animation: Int?)?
            if s.phase != "idle" { due = (s.phaseStart + s.phaseDuration, nil) }
            for a in s.animations.sorted(by: { $0.id < $1.id }) where a.start + a.durationMs < (due?.at ?? Int.max) {
                due = (a.start + a.durationMs, a.id)
            }
            guard let d = due, d.at <= target else { break }
            now = max(now, d.at)
            if let id = d.animation {
                s.animations.removeAll { $0.id == id }
                emit("animation.ended", [JSON.Member("animation", .int(id)), JSON.Member("reason", .string("finished"))])
            } else {
                s.phase = "idle"
                s.phaseStart = 0
                s.phaseDuration = 0
                visibilityEvent(0)
            }
            commitChange()
        }
        now = target
    }
}
