import TabBarCore

// What each method does to the model's state, what it replies, which events it publishes and
// which sounds it plays — written from PROTOCOL.md and docs/PROTOCOL.md, not from the daemon.
// Touch, highlight, visibility, animation and the clock are in ModelMotion.swift.

/// What the model expects of one step.
struct ModelExpectation {
    enum Reply {
        /// A result: the members the model names (see `modelMismatch`).
        case result(JSON)
        /// An error: one of these `data.kind`s (several when the contract does not rank two
        /// faults of one request) and, if given, `data.field`.
        case error(Set<String>, field: String?)
        /// A result checked by a rule (nil: fine; else what is wrong).
        case check((JSON) -> String?)
        /// A notification: no reply at all.
        case none
    }
    var reply: Reply = .result(.obj([:]))
    /// Events in the order the contract gives them.
    var events: [(method: String, params: JSON)] = []
    /// Names of the sounds that start (`sound.played`).
    var sounds: [String] = []
}

/// The contract, as a plain state machine.
final class Model {
    var s = MState()
    var now = 0
    /// The finger on the bar: the item it went down on, its touch id, whether it committed on down.
    var touch: (item: String, id: Int?, committed: Bool, clicked: Bool)?
    /// The click the touch being stepped started (its press's or its commit's): its reply's `sound`.
    var touchClick: String?
    /// touch ids of sequences that started (the daemon remembers the last 256).
    var seenTouchIDs: [Int] = []
    /// Points scrolled in the current direction.
    var travel = 0.0
    var capturing = false
    var subscribed = true
    var topics: [String]?
    /// The sounds the daemon has (the names of Sounds/*.wav).
    let soundNames: Set<String>

    var out = ModelExpectation()
    private var mark = 0

    init(soundNames: Set<String>) { self.soundNames = soundNames }

    // MARK: Step bookkeeping

    /// The seq of the change being made.
    var pseq: Int { s.seq + 1 }

    func emit(_ method: String, _ members: [JSON.Member]) {
        out.events.append((method, .object([JSON.Member("seq", .int(pseq))] + members)))
    }

    /// Ends one change: it counts (seq + 1) when it published anything.
    func commitChange() {
        if out.events.count > mark {
            s.seq += 1
            mark = out.events.count
        }
    }

    func fail(_ kinds: String..., field: String? = nil) { out.reply = .error(Set(kinds), field: kinds.count == 1 ? field : nil) }

    func play(_ name: String?) { if let name { out.sounds.append(name) } }

    /// Whether a subscriber with the model's topics gets `method`.
    func delivered(_ method: String) -> Bool {
        guard subscribed else { return false }
        guard let topics else { return true }
        return topics.contains { method == $0 || method.hasPrefix($0 + ".") }
    }

    /// Runs one request; returns what the daemon must do (events unfiltered by topics).
    func step(_ op: ModelOp, notification: Bool) -> ModelExpectation {
        out = ModelExpectation()
        mark = 0
        apply(op)
        commitChange()
        if notification { out.reply = .none }
        return out
    }

    // MARK: Sounds (docs/PROTOCOL.md "Sounds")

    static let defaultSounds = ["select": "click", "reselect": "reselect", "action": "action", "center": "center"]

    /// The sound a user event of `trigger` plays: the item's own sound for its commits, else the
    /// bar's `settings.sounds`, else the daemon's defaults; "none" is silence; quiet keeps only
    /// select and reselect; silent nothing.
    func sound(_ trigger: String, item: MItem?) -> String? {
        if s.profile == "silent" { return nil }
        if s.profile == "quiet" && trigger != "select" && trigger != "reselect" { return nil }
        var name = s.settings.sounds[trigger] ?? Model.defaultSounds[trigger]
        if let own = item?.sound, ["select", "reselect", "action", "center"].contains(trigger) { name = own }
        return name == "none" ? nil : name
    }

    // MARK: Cues (docs/PROTOCOL.md "Animation cues")

    func style(_ item: MItem) -> String { item.animation ?? s.settings.animation }

    func timing(_ ms: Int, autoreverse: Bool = false) -> [JSON.Member] {
        [JSON.Member("duration_ms", .int(ms)), JSON.Member("timing", .string("ease_in_ease_out")),
         JSON.Member("autoreverse", .bool(autoreverse)), JSON.Member("repeat", .int(0))]
    }

    func cue(_ trigger: String, _ k: Int, from old: Int? = nil, sound: String? = nil) {
        let item = s.items[k]
        let kind = style(item)
        let reversed = trigger == "deselect"
        let target = trigger == "badge" ? "badge" : "item"
        var d: [JSON.Member]
        switch kind {
        case "pulse":
            d = [JSON.Member("target", .string(target)), JSON.Member("property", .string("transform.scale")),
                 JSON.Member("from", .double(reversed ? 1.3 : 0.7)), JSON.Member("to", .double(reversed ? 0.7 : 1.3))]
                + timing(200, autoreverse: true)
        case "bounce":
            let keys: [Double] = [1, 1.4, 0.9, 1.15, 0.95, 1.02, 1]
            d = [JSON.Member("target", .string(target)), JSON.Member("property", .string("transform.scale")),
                 JSON.Member("keyframes", .array((reversed ? keys.reversed() : keys).map(JSON.double))),
                 JSON.Member("key_times", .array([0, 0.1667, 0.3333, 0.5, 0.6667, 0.8333, 1].map(JSON.double)))] + timing(600)
        case "crossfade":
            guard trigger == "select" || trigger == "deselect" else { return }
            let small: JSON = .obj(["w": .int(25), "h": .int(23)]), large: JSON = .obj(["w": .double(37.5), "h": .double(34.5)])
            let plain = item.icon, chosen = s.presentation(item, selected: true).icon
            d = [JSON.Member("target", .string("icon")), JSON.Member("transition", .string("crossfade")),
                 JSON.Member("property", .string("bounds.size")),
                 JSON.Member("from", reversed ? large : small), JSON.Member("to", reversed ? small : large),
                 JSON.Member("from_icon", .optional(reversed ? chosen : plain)), JSON.Member("to_icon", .optional(reversed ? plain : chosen))]
                + timing(250)
        case "slide":
            guard trigger == "select" else { return }
            let fs = s.frames()
            let to = fs[k].x + fs[k].w / 2
            let from = old.map { fs[$0].x + fs[$0].w / 2 } ?? to
            d = [JSON.Member("target", .string("indicator")), JSON.Member("property", .string("position.x")),
                 JSON.Member("from", .double(from)), JSON.Member("to", .double(to))] + timing(500)
        default:
            return
        }
        emit("animation.cue", [JSON.Member("tab", .string(item.id)), JSON.Member("trigger", .string(trigger)),
                               JSON.Member("kind", .string(kind)), JSON.Member("descriptor", .object(d)),
                               JSON.Member("sound", .optional(sound))])
    }

    // MARK: Selection and actions

    /// Selects (or reselects) tab `k`: one commit event, its cues and sound; clears the active
    /// action; withdraws the scroll reason in the same change. Returns whether it reselected.
    @discardableResult
    func commitTab(_ k: Int, source: String, click: Bool = true) -> Bool {
        let item = s.items[k]
        let old = s.selected.flatMap { s.index($0) }
        let reselect = s.selected == item.id
        s.activeAction = nil
        if !reselect {
            s.previous = s.selected
            s.previousUnspecified = false
            s.selected = item.id
        }
        let snd = source == "user" && click ? sound(reselect ? "reselect" : "select", item: item) : nil
        if touchClick == nil { touchClick = snd }
        if reselect {
            emit("tab.reselected", [JSON.Member("tab", .string(item.id)), JSON.Member("source", .string(source))])
            cue("reselect", k, sound: snd)
        } else {
            emit("tab.selected", [JSON.Member("tab", .string(item.id)), JSON.Member("previous", .optional(s.previous)),
                                  JSON.Member("source", .string(source))])
            cue("select", k, from: old, sound: snd)
            if let old { cue("deselect", old) }
        }
        play(snd)
        travel = 0
        if s.reasons.contains("scroll") {
            var r = s.reasons
            r.remove("scroll")
            applyVisibility(reasons: r, stack: s.navStack, hold: s.pushHold, animated: true)
        }
        return reselect
    }

    func commitAction(_ k: Int, source: String, click: Bool = true) {
        let item = s.items[k]
        s.activeAction = item.id
        emit("action.triggered", [JSON.Member("tab", .string(item.id))] + (item.action.map { [JSON.Member("action", .string($0))] } ?? []))
        let snd = source == "user" && click ? sound(item.kind == "center" ? "center" : "action", item: item) : nil
        if touchClick == nil { touchClick = snd }
        play(snd)
    }

    func select(_ ref: ModelOp.Ref, ifSeq: Int?, source: String) {
        let k: Int
        switch ref {
        case .id(let id):
            guard let i = s.index(id) else { return fail("unknown_tab") }
            k = i
        case .index(let i):
            guard i >= 0 && i < s.items.count else { return fail("unknown_tab") }
            k = i
        }
        var kinds: [String] = []
        if !s.items[k].selectable { kinds.append("not_selectable") }
        if let ifSeq, ifSeq != s.seq { kinds.append("conflict") }
        if !kinds.isEmpty { out.reply = .error(Set(kinds), field: nil); return }
        let reselect = commitTab(k, source: source)
        commitChange()
        out.reply = .result(.obj(["seq": .int(s.seq), "selected": .optional(s.selected),
                                  "previous": s.previousUnspecified ? modelAny : .optional(s.previous), "reselected": .bool(reselect)]))
    }

    func actionTrigger(_ tab: String, source: String) {
        guard let k = s.index(tab) else { return fail("unknown_tab") }
        if s.items[k].kind == "tab" { return fail("invalid_params", field: "tab") }
        if !s.items[k].enabled { return fail("not_selectable") }
        commitAction(k, source: source)
        commitChange()
        out.reply = .result(.obj(["seq": .int(s.seq)]))
    }

    func actionFinish(_ tab: String) {
        guard s.index(tab) != nil else { return fail("unknown_tab") }
        if s.activeAction == tab {
            s.activeAction = nil
            emit("action.finished", [JSON.Member("tab", .string(tab))])
            commitChange()
        }
        out.reply = .result(.obj(["seq": .int(s.seq)]))
    }

    // MARK: Badges

    func badgeSet(_ tab: String, value: ModelOp.BadgeValue?, hidden: Bool?) {
        guard let k = s.index(tab) else { return fail("unknown_tab") }
        let item = s.items[k]
        if item.kind != "tab" && !s.settings.actionBadges {
            // docs/PROTOCOL.md: ignored, whatever the request asks (a removal included).
            out.reply = .result(.obj(["seq": .int(s.seq), "badge": .null, "ignored": .bool(true)]))
            return
        }
        var next = item
        if let value { next.badge = value.badge }
        if let hidden { next.badgeHidden = hidden }
        if next.badge == nil { next.badgeHidden = false }
        if next != item {
            s.items[k] = next
            emit("badge.changed", [JSON.Member("tab", .string(tab))] + s.badgeMembers(next))
            let shown = next.badgeHidden ? nil : next.badge, was = item.badgeHidden ? nil : item.badge
            if shown != nil && shown != was {
                let snd = sound("badge", item: nil)
                cue("badge", k, sound: snd)
                play(snd)
            }
            commitChange()
        }
        out.reply = .result(.object([JSON.Member("seq", .int(s.seq))] + s.badgeMembers(next)))
    }

    func badgeClear(_ tab: String) {
        guard let k = s.index(tab) else { return fail("unknown_tab") }
        if s.items[k].badge != nil {
            s.items[k].badge = nil
            s.items[k].badgeHidden = false
            emit("badge.changed", [JSON.Member("tab", .string(tab)), JSON.Member("badge", .null)])
            commitChange()
        }
        out.reply = .result(.obj(["seq": .int(s.seq)]))
    }

    // MARK: Feedback

    func feedbackSet(profile: String?, volume: Double?) {
        let before = (s.profile, s.volume)
        if let profile { s.profile = profile }
        if let volume { s.volume = volume }
        if before != (s.profile, s.volume) {
            emit("feedback.changed", [JSON.Member("feedback", s.feedbackJSON)])
            commitChange()
        }
        out.reply = .result(.obj(["seq": .int(s.seq), "feedback": s.feedbackJSON]))
    }

    // MARK: Configuration (docs/PROTOCOL.md "bar.configure", "Bar settings")

    func configure(_ c: ModelOp.Configure) {
        var kinds: [(String, String?)] = []
        if let items = c.items {
            if items.count > 5 { kinds.append(("limit_exceeded", nil)) }
            if items.isEmpty { kinds.append(("invalid_params", "items")) }
            if Set(items.map(\.item.id)).count != items.count { kinds.append(("invalid_params", nil)) }
            let centers = items.indices.filter { items[$0].item.kind == "center" }
            if centers.count > 1 || (centers.count == 1 && (items.count % 2 == 0 || centers[0] != items.count / 2)) {
                kinds.append(("invalid_params", nil))
            }
            if !items.isEmpty && !items.contains(where: { $0.item.selectable }) { kinds.append(("invalid_params", "items")) }
        }
        var next = s
        if let l = c.layout {
            l.apply(to: &next.layout)
            if next.layout.safeBottom > next.layout.height { kinds.append(("invalid_params", "layout.safe_bottom")) }
            if next.layout.centerWidth > next.layout.width { kinds.append(("invalid_params", "layout.center.width")) }
        }
        if let st = c.settings { st.apply(to: &next.settings) }
        if c.items == nil && c.layout == nil && c.settings == nil { kinds.append(("invalid_params", "items")) }
        if let items = c.items {
            next.items = items.map { spec in
                var it = spec.item
                switch spec.badge {
                case .absent:
                    let old = s.item(it.id)
                    it.badge = old?.badge
                    it.badgeHidden = old?.badgeHidden ?? false
                case .null: it.badge = nil; it.badgeHidden = false
                case .shown(let b): it.badge = b.badge; it.badgeHidden = false
                case .hidden(let b): it.badge = b.badge; it.badgeHidden = b.badge != nil
                }
                return it
            }
        }
        if let sel = c.selected, kinds.isEmpty {
            if let it = next.item(sel) {
                if !it.selectable { kinds.append(("not_selectable", nil)) }
            } else {
                kinds.append(("unknown_tab", nil))
            }
        }
        if !kinds.isEmpty {
            out.reply = .error(Set(kinds.map(\.0)), field: kinds.count == 1 ? kinds[0].1 : nil)
            return
        }
        if !next.settings.actionBadges {
            for k in next.items.indices where next.items[k].kind != "tab" {
                next.items[k].badge = nil
                next.items[k].badgeHidden = false
            }
        }
        if let sel = c.selected {
            if next.selected != sel { next.previous = next.selected; next.previousUnspecified = false }
            next.selected = sel
        } else if let cur = s.selected, next.item(cur)?.selectable != true {
            // The selected item went: the nearest selectable neighbour (the generator avoids ties).
            let oldIndex = s.index(cur) ?? 0
            let nearest = next.items.indices.filter { next.items[$0].selectable }.min { abs($0 - oldIndex) < abs($1 - oldIndex) }
            next.selected = nearest.map { next.items[$0].id }
            next.previousUnspecified = true
        }
        if let p = next.previous, next.item(p) == nil { next.previous = nil }
        if let a = next.activeAction, next.item(a) == nil { next.activeAction = nil }
        if let h = next.highlighted, next.item(h)?.enabled != true { next.highlighted = nil }
        if let t = touch, next.item(t.item)?.enabled != true { touch = nil }
        if next != s {
            s = next
            emit("bar.configured", [JSON.Member("state", s.json)])
            commitChange()
        }
        out.reply = .result(.obj(["seq": .int(s.seq), "state": s.json]))
    }

    /// The nearest selectable neighbours of the selection if `items` drop it (empty: it stays).
    func fallbackCandidates(_ items: [MItem]) -> [String] {
        guard let cur = s.selected, !(items.first { $0.id == cur }?.selectable ?? false) else { return [] }
        let oldIndex = s.index(cur) ?? 0
        let sel = items.indices.filter { items[$0].selectable }
        guard let best = sel.map({ abs($0 - oldIndex) }).min() else { return [] }
        return sel.filter { abs($0 - oldIndex) == best }.map { items[$0].id }
    }

    // MARK: The dispatch of one request

    func apply(_ op: ModelOp) {
        switch op {
        case .ping, .statsGet, .discover, .unsubscribe:
            out.reply = .result(.obj([:]))
            if case .unsubscribe = op { subscribed = false }
        case .stateGet:
            out.reply = .result(.obj(["seq": .int(s.seq), "state": s.json]))
        case .subscribe(let t):
            subscribed = true
            topics = t
            out.reply = .result(.obj(["seq": .int(s.seq), "state": s.json]))
        case .soundList:
            let names = soundNames
            out.reply = .check { r in
                guard case .array(let list)? = r["sounds"] else { return "no sounds array" }
                let got = Set(list.compactMap { $0["name"]?.stringValue })
                if got != names { return "sounds \(got.sorted()) ≠ \(names.sorted())" }
                for e in list where e["frames"] == nil || e["rate"] == nil || e["channels"] == nil || e["source"] == nil {
                    return "sound entry without frames/rate/channels/source: \(e.text)"
                }
                return nil
            }
        case .soundReload:
            out.reply = .result(.obj(["failures": .array([])]))
        case .soundPlay(let name):
            guard soundNames.contains(name) else { return fail("unknown_sound") }
            out.reply = .check { $0["voice"]?.intValue == nil ? "no voice id" : nil }
            play(name)
        case .clockGet:
            out.reply = .result(.obj(["now_ms": .int(now), "mode": .string("manual")]))
        case .clockAdvance(let ms):
            advance(ms)
            out.reply = .result(.obj(["now_ms": .int(now)]))
        case .captureStart(let path):
            if capturing { return fail("capture_failed") }
            capturing = true
            out.reply = .result(.obj(["path": .string(path)]))
        case .captureStop:
            if !capturing { return fail("capture_failed") }
            capturing = false
            out.reply = .check { $0["path"]?.stringValue == nil || $0["frames"]?.intValue == nil ? "no path or frames" : nil }
        case .configure(let c): configure(c)
        case .configureInitial:
            configure(ModelOp.Configure.initial)
        case let .select(ref, ifSeq, source): select(ref, ifSeq: ifSeq, source: source ?? "user")
        case let .actionTrigger(tab, source): actionTrigger(tab, source: source ?? "user")
        case .actionFinish(let tab): actionFinish(tab)
        case let .badgeSet(tab, value, hidden): badgeSet(tab, value: value, hidden: hidden)
        case .badgeClear(let tab): badgeClear(tab)
        case let .feedbackSet(profile, volume): feedbackSet(profile: profile, volume: volume)
        case let .highlight(tab, phase): highlight(tab, phase)
        case let .touch(phase, x, y, id): touchStep(phase, x: x, y: y, id: id)
        case let .setHidden(hidden, reason, animated): setHidden(hidden, reason: reason ?? "explicit", animated: animated ?? false)
        case .navPush(let h): navPush(h)
        case .navPop: navPop()
        case .scroll(let dy): scroll(dy)
        case let .animationBegin(kind, tab, ms): animationBegin(kind, tab: tab, ms: ms)
        case let .animationEnd(id, reason): animationEnd(id, reason: reason ?? "finished")
        case let .bad(_, _, kind, field): out.reply = .error([kind], field: field)
        case let .raw(_, kind): out.reply = .error([kind], field: nil)
        }
    }
}
