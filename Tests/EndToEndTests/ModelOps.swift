import TabBarCore

/// One request the generator makes, as the model reads it; `params` is its wire form.
enum ModelOp {
    enum Ref { case id(String), index(Int) }

    enum BadgeValue: Equatable {
        case count(Int), text(String), dot
        /// What it sets: a count ≤ 0 means no badge.
        var badge: MBadge? {
            switch self {
            case .count(let n): return n > 0 ? .count(n) : nil
            case .text(let t): return .text(t)
            case .dot: return .dot
            }
        }
        var members: [JSON.Member] {
            switch self {
            case .count(let n): return [JSON.Member("count", .int(n))]
            case .text(let t): return [JSON.Member("text", .string(t))]
            case .dot: return [JSON.Member("dot", .bool(true))]
            }
        }
        var storedJSON: JSON {
            switch self {
            case .count(let n): return .obj(["kind": .string("count"), "value": .int(n)])
            case .text(let t): return .obj(["kind": .string("text"), "value": .string(t)])
            case .dot: return .obj(["kind": .string("dot")])
            }
        }
    }

    struct ItemSpec {
        enum BadgeSpec { case absent, null, shown(BadgeValue), hidden(BadgeValue) }
        var item: MItem
        var badge: BadgeSpec = .absent

        var json: JSON {
            let it = item
            var m: [JSON.Member] = [JSON.Member("id", .string(it.id)), JSON.Member("title", .string(it.title))]
            if it.kind != "tab" || it.id.count % 2 == 0 { m.append(JSON.Member("kind", .string(it.kind))) }
            if !it.enabled { m.append(JSON.Member("enabled", .bool(false))) }
            if let v = it.icon { m.append(JSON.Member("icon", .string(v))) }
            if let v = it.selectedIcon { m.append(JSON.Member("selected_icon", .string(v))) }
            if let v = it.sound { m.append(JSON.Member("sound", .string(v))) }
            if let v = it.action { m.append(JSON.Member("action", .string(v))) }
            if let t = it.morphTitle { m.append(JSON.Member("morph", .obj(["title": .string(t), "icon": .optional(it.morphIcon)]))) }
            if let v = it.animation { m.append(JSON.Member("animation", .string(v))) }
            switch badge {
            case .absent: break
            case .null: m.append(JSON.Member("badge", .null))
            case .shown(let b): m.append(JSON.Member("badge", b.storedJSON))
            case .hidden(let b): m.append(JSON.Member("hidden_badge", b.storedJSON))
            }
            return .object(m)
        }
    }

    struct LayoutPatch {
        var width, height, safeBottom, centerWidth, centerHeight, raise: Double?
        var shape: String?
        var rtl: Bool?
        func apply(to l: inout MLayout) {
            if let v = width { l.width = v }
            if let v = height { l.height = v }
            if let v = safeBottom { l.safeBottom = v }
            if let v = centerWidth { l.centerWidth = v }
            if let v = centerHeight { l.centerHeight = v }
            if let v = raise { l.raise = v }
            if let v = shape { l.shape = v }
            if let v = rtl { l.rtl = v }
        }
        var json: JSON {
            var m: [JSON.Member] = []
            if let v = width { m.append(JSON.Member("width", .double(v))) }
            if let v = height { m.append(JSON.Member("height", .double(v))) }
            if let v = safeBottom { m.append(JSON.Member("safe_bottom", .double(v))) }
            var c: [JSON.Member] = []
            if let v = centerWidth { c.append(JSON.Member("width", .double(v))) }
            if let v = centerHeight { c.append(JSON.Member("height", .double(v))) }
            if let v = raise { c.append(JSON.Member("raise", .double(v))) }
            if let v = shape { c.append(JSON.Member("shape", .string(v))) }
            if !c.isEmpty { m.append(JSON.Member("center", .object(c))) }
            if let v = rtl { m.append(JSON.Member("rtl", .bool(v))) }
            return .object(m)
        }
    }

    struct SettingsPatch {
        var commitOn, centerCorners, animation: String?
        var clickOn: String?
        var actionBadges: Bool?
        var scrollThreshold: Double?
        var hideMs, maxCount, maxChars: Int?
        /// trigger → name, or nil for JSON null (back to the daemon's map).
        var sounds: [(String, String?)] = []
        var animationSounds: [(String, String?)] = []
        var sendSoundsObject = false

        func apply(to s: inout MSettings) {
            if let v = commitOn { s.commitOn = v }
            if let v = clickOn { s.clickOn = v }
            if let v = centerCorners { s.centerCorners = v }
            if let v = animation { s.animation = v }
            if let v = actionBadges { s.actionBadges = v }
            if let v = scrollThreshold { s.scrollThreshold = v }
            if let v = hideMs { s.hideMs = v }
            if let v = maxCount { s.maxCount = v }
            if let v = maxChars { s.maxChars = v }
            for (t, n) in sounds { s.sounds[t] = n }
            for (k, n) in animationSounds { s.animationSounds[k] = n }
        }
        var json: JSON {
            var m: [JSON.Member] = []
            if let v = commitOn { m.append(JSON.Member("commit_on", .string(v))) }
            if let v = clickOn { m.append(JSON.Member("click_on", .string(v))) }
            if let v = centerCorners { m.append(JSON.Member("center_corners", .string(v))) }
            if let v = animation { m.append(JSON.Member("animation", .string(v))) }
            if let v = actionBadges { m.append(JSON.Member("action_badges", .bool(v))) }
            if let v = scrollThreshold { m.append(JSON.Member("scroll_threshold", .double(v))) }
            if let v = hideMs { m.append(JSON.Member("hide_duration_ms", .int(v))) }
            if let v = maxCount { m.append(JSON.Member("max_count", .int(v))) }
            if let v = maxChars { m.append(JSON.Member("max_chars", .int(v))) }
            if sendSoundsObject || !sounds.isEmpty || !animationSounds.isEmpty {
                var sm: [JSON.Member] = sounds.map { JSON.Member($0.0, .optional($0.1)) }
                if !animationSounds.isEmpty { sm.append(JSON.Member("animations", .object(animationSounds.map { JSON.Member($0.0, .optional($0.1)) }))) }
                m.append(JSON.Member("sounds", .object(sm)))
            }
            return .object(m)
        }
    }

    struct Configure {
        var items: [ItemSpec]?
        var selected: String?
        var layout: LayoutPatch?
        var settings: SettingsPatch?

        var json: JSON {
            var m: [JSON.Member] = []
            if let items { m.append(JSON.Member("items", .array(items.map(\.json)))) }
            if let selected { m.append(JSON.Member("selected", .string(selected))) }
            if let layout { m.append(JSON.Member("layout", layout.json)) }
            if let settings { m.append(JSON.Member("settings", settings.json)) }
            return .object(m)
        }

        /// `{"initial": true}`: the built-in bar as a client would send it (items with no badge,
        /// home selected, the default layout, every setting at its default; docs/PROTOCOL.md).
        static let initial = Configure(
            items: MState.builtInItems.map { ItemSpec(item: $0, badge: .null) }, selected: "home",
            layout: LayoutPatch(width: 375, height: 49, safeBottom: 0, centerWidth: 70, centerHeight: 70, raise: 21, shape: "circle", rtl: false),
            settings: SettingsPatch(commitOn: "up", centerCorners: "pass_through", animation: "none", clickOn: "commit", actionBadges: false,
                                    scrollThreshold: 24, hideMs: 500, maxCount: 99, maxChars: 16, sendSoundsObject: true))
    }

    case ping, stateGet, statsGet, discover, soundList, soundReload, unsubscribe, clockGet, captureStop, navPop, configureInitial
    case soundPlay(String)
    case subscribe([String]?)
    case clockAdvance(Int)
    case captureStart(String)
    case configure(Configure)
    case select(Ref, ifSeq: Int?, source: String?)
    case actionTrigger(String, source: String?)
    case actionFinish(String)
    case badgeSet(String, BadgeValue?, hidden: Bool?)
    case badgeClear(String)
    case feedbackSet(profile: String?, volume: Double?)
    case highlight(String, String)
    case touch(String, x: Double, y: Double, id: Int?)
    case setHidden(Bool, reason: String?, animated: Bool?)
    case navPush(Bool)
    case scroll(Double)
    case animationBegin(String, tab: String?, ms: Int)
    case animationEnd(Int, reason: String?)
    /// A request the contract refuses: its method, params text, and the error kind and field.
    case bad(String, String, kind: String, field: String?)
    /// A line that is no request at all, and the error kind it gets (reply id null).
    case raw(String, kind: String)

    var method: String {
        switch self {
        case .ping: return "ping"
        case .stateGet: return "state.get"
        case .statsGet: return "stats.get"
        case .discover: return "rpc.discover"
        case .soundList: return "sound.list"
        case .soundReload: return "sound.reload"
        case .unsubscribe: return "unsubscribe"
        case .clockGet: return "clock.get"
        case .captureStop: return "capture.stop"
        case .navPop: return "nav.pop"
        case .configureInitial, .configure: return "bar.configure"
        case .soundPlay: return "sound.play"
        case .subscribe: return "subscribe"
        case .clockAdvance: return "clock.advance"
        case .captureStart: return "capture.start"
        case .select: return "tab.select"
        case .actionTrigger: return "action.trigger"
        case .actionFinish: return "action.finish"
        case .badgeSet: return "badge.set"
        case .badgeClear: return "badge.clear"
        case .feedbackSet: return "feedback.set"
        case .highlight: return "tab.highlight"
        case .touch: return "touch"
        case .setHidden: return "bar.set_hidden"
        case .navPush: return "nav.push"
        case .scroll: return "scroll"
        case .animationBegin: return "animation.begin"
        case .animationEnd: return "animation.end"
        case .bad(let m, _, _, _): return m
        case .raw: return "(raw)"
        }
    }

    /// The params' wire text (nil: none sent).
    var paramsText: String? {
        func o(_ pairs: KeyValuePairs<String, JSON>) -> String { JSON.obj(pairs).text }
        func opt(_ m: [JSON.Member]) -> String { JSON.object(m).text }
        switch self {
        case .ping, .stateGet, .statsGet, .discover, .soundList, .soundReload, .unsubscribe, .clockGet, .captureStop, .navPop: return nil
        case .configureInitial: return #"{"initial":true}"#
        case .configure(let c): return c.json.text
        case .soundPlay(let n): return o(["name": .string(n)])
        case .subscribe(let t): return t.map { o(["topics": .array($0.map(JSON.string))]) } ?? "{}"
        case .clockAdvance(let ms): return o(["ms": .int(ms)])
        case .captureStart(let p): return o(["path": .string(p)])
        case let .select(ref, ifSeq, source):
            var m: [JSON.Member] = []
            switch ref {
            case .id(let id): m.append(JSON.Member("tab", .string(id)))
            case .index(let i): m.append(JSON.Member("index", .int(i)))
            }
            if let ifSeq { m.append(JSON.Member("if_seq", .int(ifSeq))) }
            if let source { m.append(JSON.Member("source", .string(source))) }
            return opt(m)
        case let .actionTrigger(tab, source):
            return opt([JSON.Member("tab", .string(tab))] + (source.map { [JSON.Member("source", .string($0))] } ?? []))
        case .actionFinish(let tab), .badgeClear(let tab): return o(["tab": .string(tab)])
        case let .badgeSet(tab, value, hidden):
            return opt([JSON.Member("tab", .string(tab))] + (value?.members ?? []) + (hidden.map { [JSON.Member("hidden", .bool($0))] } ?? []))
        case let .feedbackSet(profile, volume):
            var m: [JSON.Member] = []
            if let profile { m.append(JSON.Member("profile", .string(profile))) }
            if let volume { m.append(JSON.Member("volume", .double(volume))) }
            return opt(m)
        case let .highlight(tab, phase): return o(["tab": .string(tab), "phase": .string(phase)])
        case let .touch(phase, x, y, id):
            return opt([JSON.Member("phase", .string(phase)), JSON.Member("x", .double(x)), JSON.Member("y", .double(y))]
                       + (id.map { [JSON.Member("touch_id", .int($0))] } ?? []))
        case let .setHidden(hidden, reason, animated):
            var m = [JSON.Member("hidden", .bool(hidden))]
            if let reason { m.append(JSON.Member("reason", .string(reason))) }
            if let animated { m.append(JSON.Member("animated", .bool(animated))) }
            return opt(m)
        case .navPush(let h): return o(["hides_bar": .bool(h)])
        case .scroll(let dy): return o(["dy": .double(dy)])
        case let .animationBegin(kind, tab, ms):
            return opt([JSON.Member("kind", .string(kind))] + (tab.map { [JSON.Member("tab", .string($0))] } ?? [])
                       + [JSON.Member("duration_ms", .int(ms))])
        case let .animationEnd(id, reason):
            return opt([JSON.Member("animation", .int(id))] + (reason.map { [JSON.Member("reason", .string($0))] } ?? []))
        case .bad(_, let p, _, _): return p
        case .raw: return nil
        }
    }

    /// The request line (`id` nil: a notification).
    func line(id: Int?) -> String {
        if case .raw(let l, _) = self { return l }
        var s = #"{"jsonrpc":"2.0""#
        if let id { s += #","id":\#(id)"# }
        s += #","method":"\#(method)""#
        if let p = paramsText { s += #","params":\#(p)"# }
        return s + "}"
    }
}
