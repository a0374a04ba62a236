import TabBarCore
import TabBarTesting

/// Makes seeded random requests that a front end might send, looking at the model for what is
/// there now (items, frames, the touch in progress, running animations). It never reads the daemon.
struct ModelGenerator {
    var rng: SplitMix64
    let captureDir: String
    var nextTouchID: Int
    var captures = 0
    /// Request kinds still to send once each before random choice takes over (coverage).
    var prelude: [String]
    /// Requests to send next, in order (a burst up to a limit).
    var queued: [ModelOp] = []

    static let kinds = ["select", "touch", "highlight", "trigger", "finish", "badge", "clear", "configure", "initial", "feedback",
                        "hidden", "push", "pop", "scroll", "abegin", "aend", "advance", "clock", "state", "ping", "stats", "discover",
                        "list", "reload", "play", "subscribe", "unsubscribe", "cstart", "cstop", "bad", "raw"]
    static let weights: [String: Int] = [
        "select": 14, "touch": 16, "highlight": 5, "trigger": 4, "finish": 3, "badge": 8, "clear": 2, "configure": 6, "initial": 1,
        "feedback": 3, "hidden": 5, "push": 3, "pop": 3, "scroll": 7, "abegin": 3, "aend": 3, "advance": 8, "clock": 1, "state": 3,
        "ping": 1, "stats": 1, "discover": 1, "list": 1, "reload": 1, "play": 2, "subscribe": 2, "unsubscribe": 1, "cstart": 1, "cstop": 1,
        "bad": 3, "raw": 1,
    ]
    static let idPool = ["home", "feed", "chat", "me", "post", "rec", "map", "cart"]
    static let sounds = ["click", "reselect", "action", "center", "badge", "slide"]
    static let styles = ["none", "pulse", "bounce", "crossfade", "slide"]

    init(seed: UInt64, captureDir: String) {
        rng = SplitMix64(seed: seed)
        self.captureDir = captureDir
        nextTouchID = 1000 + Int(seed % 1000) * 1000
        var p = ModelGenerator.kinds
        for k in stride(from: p.count - 1, to: 0, by: -1) { p.swapAt(k, rng.int(k + 1)) }
        prelude = p
    }

    mutating func next(_ m: Model) -> ModelOp {
        let kind: String
        if !queued.isEmpty { return queued.removeFirst() }
        if rng.chance(0.002) {
            // Up to the 64 running animations and past it (limit_exceeded), then end them all.
            queued = (0..<66).map { _ in ModelOp.animationBegin("wiggle", tab: nil, ms: 600_000) }
                + (1...70).map { k in ModelOp.animationEnd(m.s.seq + k, reason: "cancelled") }
            return queued.removeFirst()
        }
        if rng.chance(0.0008) {
            // The navigation stack to its 256 screens and one more (limit_exceeded), then back.
            let depth = 257 - m.s.navStack.count
            queued = (0..<max(depth, 1)).map { _ in ModelOp.navPush(false) } + (0..<260).map { _ in ModelOp.navPop }
            return queued.removeFirst()
        }
        if !prelude.isEmpty {
            kind = prelude.removeFirst()
        } else if !m.subscribed || m.topics != nil, rng.chance(0.25) {
            return .subscribe(nil)
        } else if m.s.hidden, rng.chance(0.15) {
            // Show the bar again now and then: withdraw one of the reasons that hold.
            let r = m.s.orderedReasons.randomElementSeeded(&rng)
            if r == "push" && m.s.navStack.contains(true) && rng.chance(0.6) { return .navPop }
            return .setHidden(false, reason: r == "explicit" && rng.chance(0.5) ? nil : r, animated: rng.pick([nil, true, false]))
        } else if m.touch != nil, rng.chance(0.5) {
            kind = "touch"
        } else {
            var r = rng.int(ModelGenerator.weights.values.reduce(0, +))
            var chosen = "ping"
            for k in ModelGenerator.kinds {
                r -= ModelGenerator.weights[k]!
                if r < 0 { chosen = k; break }
            }
            kind = chosen
        }
        return make(kind, m)
    }

    mutating func anyID(_ m: Model) -> String {
        rng.chance(0.06) ? "nope" : (m.s.items.isEmpty ? "home" : rng.pick(m.s.items).id)
    }

    mutating func source() -> String? { rng.pick([nil, nil, "user", "program"]) }

    mutating func make(_ kind: String, _ m: Model) -> ModelOp {
        let s = m.s
        switch kind {
        case "select":
            let ref: ModelOp.Ref = rng.chance(0.8) ? .id(anyID(m)) : .index(rng.int(s.items.count + 1))
            let ifSeq: Int? = rng.chance(0.15) ? (rng.chance(0.7) ? s.seq : s.seq - 1) : nil
            return .select(ref, ifSeq: ifSeq, source: source())
        case "touch": return touch(m)
        case "highlight": return .highlight(anyID(m), rng.pick(["begin", "begin", "end", "cancel"]))
        case "trigger":
            let actions = s.items.filter { $0.kind != "tab" }.map(\.id)
            return .actionTrigger(actions.isEmpty || rng.chance(0.2) ? anyID(m) : rng.pick(actions), source: source())
        case "finish": return .actionFinish(rng.chance(0.6) ? (s.activeAction ?? anyID(m)) : anyID(m))
        case "badge":
            let tab = anyID(m)
            let hasBadge = s.item(tab)?.badge != nil
            let value: ModelOp.BadgeValue? = hasBadge && rng.chance(0.25) ? nil : badgeValue()
            let hidden: Bool? = value == nil ? rng.chance(0.5) : (rng.chance(0.2) ? rng.chance(0.5) : nil)
            return .badgeSet(tab, value, hidden: hidden)
        case "clear": return .badgeClear(anyID(m))
        case "configure": return configure(m)
        case "initial": return .configureInitial
        case "feedback":
            let p: String? = m.s.profile != "full" && rng.chance(0.6) ? "full"
                : (rng.chance(0.7) ? rng.pick(["full", "quiet", "silent"]) : nil)
            let v: Double? = p == nil || rng.chance(0.3) ? rng.pick([0.2, 0.5, 1]) : nil
            return .feedbackSet(profile: p, volume: v)
        case "hidden":
            return .setHidden(rng.chance(0.4), reason: rng.pick([nil, "explicit", "push", "scroll"]), animated: rng.pick([nil, true, false]))
        case "push": return s.navStack.count > 5 ? .navPop : .navPush(rng.chance(0.6))
        case "pop": return .navPop
        case "scroll": return .scroll(rng.pick([-40, -25, -12, -5, 0, 5, 12, 15, 25, 40]))
        case "abegin":
            let tab: String? = rng.chance(0.6) ? anyID(m) : nil
            return .animationBegin(rng.pick(["spin", "fade", "wiggle"]), tab: tab, ms: rng.pick([0, 100, 300, 1000, 5000]))
        case "aend":
            let id: Int
            if !s.animations.isEmpty, rng.chance(0.6) { id = rng.pick(s.animations).id } else if rng.chance(0.7) { id = max(1, s.seq - rng.int(5)) } else { id = s.seq + 3 }
            return .animationEnd(id, reason: rng.pick([nil, "finished", "cancelled"]))
        case "advance": return .clockAdvance(rng.pick([0, 1, 50, 100, 200, 250, 300, 499, 500, 700, 1500]))
        case "clock": return .clockGet
        case "state": return .stateGet
        case "ping": return .ping
        case "stats": return .statsGet
        case "discover": return .discover
        case "list": return .soundList
        case "reload": return .soundReload
        case "play": return .soundPlay(rng.chance(0.15) ? "nope" : rng.pick(ModelGenerator.sounds))
        case "subscribe":
            if rng.chance(0.5) { return .subscribe(nil) }
            let all = ["tab", "badge", "bar", "bar.visibility", "animation", "animation.cue", "action", "sound", "feedback", "tab.selected"]
            return .subscribe(all.filter { _ in rng.chance(0.4) })
        case "unsubscribe": return .unsubscribe
        case "cstart":
            captures += 1
            return .captureStart(captureDir + "/model-capture-\(captures).wav")
        case "cstop": return .captureStop
        case "bad": return bad(m)
        default:
            return rng.pick([ModelOp.raw("{not json", kind: "parse_error"), .raw("[1,2]", kind: "batch_unsupported"),
                             .raw(#"{"id":null,"method":"ping"}"#, kind: "invalid_request"), .raw(#"{"id":"r","method":7}"#, kind: "invalid_request")])
        }
    }

    mutating func badgeValue() -> ModelOp.BadgeValue {
        switch rng.int(3) {
        case 0: return .count(rng.pick([-3, 0, 1, 7, 42, 99, 100, 150, 1000]))
        case 1: return .text(rng.pick(["new", "hot", "a much longer badge text"]))
        default: return .dot
        }
    }

    mutating func bad(_ m: Model) -> ModelOp {
        let cases: [(String, String, String, String?)] = [
            ("tab.selekt", "{}", "method_not_found", nil),
            ("tab.select", #"{"tabb":"home"}"#, "invalid_params", "tabb"),
            ("tab.select", #"{"tab":"home","index":0}"#, "invalid_params", nil),
            ("tab.select", #"{"index":1.5}"#, "invalid_params", "index"),
            ("tab.select", #"{"tab":"home","source":"robot"}"#, "invalid_params", "source"),
            ("badge.set", #"{"tab":"home","count":1,"dot":true}"#, "invalid_params", nil),
            ("badge.set", #"{"tab":"home","text":""}"#, "invalid_params", "text"),
            ("badge.set", #"{"tab":"home","dot":false}"#, "invalid_params", "dot"),
            ("touch", #"{"phase":"hover","x":1,"y":1}"#, "invalid_params", "phase"),
            ("touch", #"{"phase":"move","x":1,"y":1}"#, "invalid_params", "phase"),
            ("touch", #"{"phase":"down","x":"1","y":1}"#, "invalid_params", "x"),
            ("bar.set_hidden", #"{"hidden":"yes"}"#, "invalid_params", "hidden"),
            ("nav.push", "{}", "invalid_params", "hides_bar"),
            ("scroll", #"{"dy":"down"}"#, "invalid_params", "dy"),
            ("feedback.set", #"{"volume":2}"#, "invalid_params", "volume"),
            ("feedback.set", #"{"profile":"loud"}"#, "invalid_params", "profile"),
            ("feedback.set", "{}", "invalid_params", nil),
            ("animation.begin", #"{"kind":"spin"}"#, "invalid_params", "duration_ms"),
            ("animation.begin", #"{"kind":"spin","duration_ms":600001}"#, "invalid_params", "duration_ms"),
            ("animation.end", "{}", "invalid_params", "animation"),
            ("bar.configure", "{}", "invalid_params", "items"),
            ("bar.configure", #"{"items":[{"id":"a","kind":"button"}]}"#, "invalid_params", "items[0].kind"),
            ("bar.configure", #"{"settings":{"commit_on":"sideways"}}"#, "invalid_params", "settings.commit_on"),
            ("bar.configure", #"{"initial":false}"#, "invalid_params", nil),
            ("tab.highlight", #"{"tab":"home","phase":"up"}"#, "invalid_params", "phase"),
            ("ping", #"{"x":1}"#, "invalid_params", "x"),
            ("clock.advance", #"{"ms":-1}"#, "invalid_params", "ms"),
            ("sound.play", "{}", "invalid_params", "name"),
            ("subscribe", #"{"topics":[1]}"#, "invalid_params", nil),
        ]
        let c = rng.pick(cases)
        return .bad(c.0, c.1, kind: c.2, field: c.3)
    }

    // MARK: Touch points from the model's geometry

    mutating func point(_ m: Model) -> (Double, Double) {
        let s = m.s
        let fs = s.frames()
        let l = s.layout
        let u = 0.15 + 0.7 * rng.unit(), v = 0.15 + 0.7 * rng.unit()
        let c = s.items.firstIndex { $0.kind == "center" }
        switch rng.int(10) {
        case 0..<5:
            let k = rng.int(fs.count)
            let f = fs[k]
            if k == c && l.shape == "circle" {
                let r = min(f.w, f.h) / 2
                return (f.x + f.w / 2 + (u - 0.5) * 0.6 * r, f.y + f.h / 2 + (v - 0.5) * 0.6 * r)
            }
            return (f.x + u * f.w, f.y + v * f.h)
        case 5:
            guard let c else { return (l.width * u, l.height * v) }
            let f = fs[c]
            return (f.x + (rng.chance(0.5) ? 0.05 : 0.95) * f.w, f.y + (rng.chance(0.5) ? 0.05 : 0.95) * f.h)
        case 6:
            // The safe area under the row (background), or a tab column's middle.
            return l.safeBottom > 0 ? (l.width * u, l.height - l.safeBottom * 0.5) : (l.width * u, l.height * v)
        case 7: return (3, -8)
        case 8: return (l.width + 20, 10)
        default: return (l.width * u, l.height + 30)
        }
    }

    mutating func touch(_ m: Model) -> ModelOp {
        let (x, y) = point(m)
        if let t = m.touch, rng.chance(0.7) {
            let id: Int? = rng.chance(0.85) ? t.id : (rng.chance(0.5) ? nil : nextTouchID + 500_000)
            // Up on its own item most of the time.
            var px = x, py = y
            if let k = m.s.index(t.item), rng.chance(0.7) {
                let f = m.s.frames()[k]
                if m.s.items[k].kind == "center" { px = f.x + f.w / 2; py = f.y + f.h / 2 } else { px = f.x + f.w / 2; py = f.y + f.h / 2 }
            }
            return .touch(rng.chance(0.8) ? "up" : "cancel", x: px, y: py, id: id)
        }
        if rng.chance(0.08), !m.seenTouchIDs.isEmpty { return .touch("down", x: x, y: y, id: rng.pick(m.seenTouchIDs)) }
        if rng.chance(0.1) { return .touch(rng.pick(["up", "cancel"]), x: x, y: y, id: rng.chance(0.5) ? nil : nextTouchID + 700_000) }
        nextTouchID += 1
        return .touch("down", x: x, y: y, id: rng.chance(0.85) ? nextTouchID : nil)
    }

    // MARK: Bars

    mutating func configure(_ m: Model) -> ModelOp {
        var c = ModelOp.Configure()
        if rng.chance(0.75) {
            let n = rng.chance(0.05) ? rng.pick([0, 6]) : 1 + rng.int(5)
            var ids = ModelGenerator.idPool
            for k in stride(from: ids.count - 1, to: 0, by: -1) { ids.swapAt(k, rng.int(k + 1)) }
            var specs: [ModelOp.ItemSpec] = []
            let center = n % 2 == 1 && n > 1 && rng.chance(0.45) ? n / 2 : -1
            for k in 0..<n {
                let id = ids[k]
                var it = MItem(id: id, title: id.capitalized)
                it.kind = k == center ? "center" : (rng.chance(0.15) ? "action" : "tab")
                it.enabled = rng.chance(0.88)
                if rng.chance(0.7) { it.icon = id + ".icon" }
                if rng.chance(0.5) { it.selectedIcon = id + ".fill" }
                if rng.chance(0.15) { it.sound = rng.pick(["badge", "slide", "none", "click"]) }
                if it.kind != "tab" && rng.chance(0.8) { it.action = "do_" + id }
                if it.kind == "tab" && rng.chance(0.15) { it.morphTitle = "Top"; it.morphIcon = "arrow.up" }
                if rng.chance(0.25) { it.animation = rng.pick(ModelGenerator.styles) }
                var spec = ModelOp.ItemSpec(item: it)
                switch rng.int(10) {
                case 0: spec.badge = .null
                case 1: spec.badge = .shown(badgeValue())
                case 2 where rng.chance(0.4): spec.badge = .hidden(badgeValue())
                default: break
                }
                specs.append(spec)
            }
            if n > 1 && rng.chance(0.04) { specs[1].item.id = specs[0].item.id }
            if n == 4 && rng.chance(0.1) { specs[1].item.kind = "center" }
            let items = specs.map(\.item)
            if rng.chance(0.35) {
                c.selected = rng.chance(0.8) ? (items.filter(\.selectable).map(\.id).first ?? "home") : rng.pick(ModelGenerator.idPool)
            } else if m.fallbackCandidates(items).count > 1, let first = items.first(where: \.selectable) {
                c.selected = first.id  // the contract does not say which of two nearest neighbours
            }
            c.items = specs
        }
        if c.items == nil || rng.chance(0.3) {
            var l = ModelOp.LayoutPatch()
            if rng.chance(0.5) { l.width = rng.pick([375, 320, 414]) }
            if rng.chance(0.4) { l.height = rng.pick([49, 56, 83]) }
            if rng.chance(0.3) { l.safeBottom = rng.pick([0, 34, 100]) }
            if rng.chance(0.3) { l.centerWidth = rng.pick([70, 64]) }
            if rng.chance(0.3) { l.centerHeight = rng.pick([70, 60]) }
            if rng.chance(0.3) { l.raise = rng.pick([21, 0, 10]) }
            if rng.chance(0.3) { l.shape = rng.pick(["circle", "rect"]) }
            if rng.chance(0.3) { l.rtl = rng.chance(0.5) }
            c.layout = l
        }
        if (c.items == nil && rng.chance(0.6)) || rng.chance(0.3) {
            var st = ModelOp.SettingsPatch()
            if rng.chance(0.4) { st.commitOn = rng.pick(["up", "down"]) }
            if rng.chance(0.4) { st.clickOn = rng.pick(["commit", "press"]) }
            if rng.chance(0.3) { st.centerCorners = rng.pick(["pass_through", "swallow"]) }
            if rng.chance(0.4) { st.animation = rng.pick(ModelGenerator.styles) }
            if rng.chance(0.3) { st.actionBadges = rng.chance(0.5) }
            if rng.chance(0.3) { st.scrollThreshold = rng.pick([0, 10, 24, 40]) }
            if rng.chance(0.3) { st.hideMs = rng.pick([0, 250, 300, 500]) }
            if rng.chance(0.2) { st.maxCount = rng.pick([9, 99, 150]) }
            if rng.chance(0.2) { st.maxChars = rng.pick([4, 16]) }
            if rng.chance(0.3) {
                for t in ["select", "reselect", "action", "center", "badge", "visibility"] where rng.chance(0.3) {
                    st.sounds.append((t, rng.pick(["click", "badge", "slide", "none", nil])))
                }
                if rng.chance(0.4) { st.animationSounds.append((rng.pick(["spin", "fade"]), rng.pick(["slide", "badge", nil]))) }
            }
            c.settings = st
        }
        // A layout-only request may leave the bar unchanged; an invalid one keeps it.
        let layoutOK = { (p: ModelOp.LayoutPatch?) -> Bool in
            var l = m.s.layout
            p?.apply(to: &l)
            return l.safeBottom <= l.height && l.centerWidth <= l.width && l.safeBottom < l.height
        }
        if c.layout != nil && !layoutOK(c.layout) && rng.chance(0.7) { c.layout?.safeBottom = 0 }
        return .configure(c)
    }
}

extension Array {
    func randomElementSeeded(_ rng: inout SplitMix64) -> Element { self[rng.int(count)] }
}
