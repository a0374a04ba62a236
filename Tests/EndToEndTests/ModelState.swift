import TabBarCore

// The plain model of the contract (PROTOCOL.md and docs/PROTOCOL.md), read independently of
// the daemon's code: its state, the state's wire form, the bar's geometry. ModelContract.swift
// holds what each method does; ModelTests.swift drives the real daemon and compares.
// Only `JSON` (the wire value type) is shared with the daemon's sources.

/// A value the contract leaves to the implementation: matches anything.
let modelAny = JSON.string("\u{0}any")

enum MBadge: Equatable {
    case count(Int), text(String), dot
}

struct MItem: Equatable {
    var id: String
    var title: String
    var kind = "tab"
    var enabled = true
    var icon: String?
    var selectedIcon: String?
    var sound: String?
    var action: String?
    var morphTitle: String?
    var morphIcon: String?
    var animation: String?
    var badge: MBadge?
    var badgeHidden = false

    var selectable: Bool { kind == "tab" && enabled }
}

struct MLayout: Equatable {
    var width = 375.0, height = 49.0, safeBottom = 0.0
    var centerWidth = 70.0, centerHeight = 70.0, raise = 21.0
    var shape = "circle"
    var rtl = false
}

struct MSettings: Equatable {
    var commitOn = "up"
    var clickOn = "commit"
    var centerCorners = "pass_through"
    var animation = "none"
    var actionBadges = false
    var scrollThreshold = 24.0
    var hideMs = 500
    var maxCount = 99
    var maxChars = 16
    /// Per-trigger sounds of the bar (a name or "none").
    var sounds: [String: String] = [:]
    /// Sounds bound to animation kinds.
    var animationSounds: [String: String] = [:]
}

struct MAnimation: Equatable {
    var id: Int
    var kind: String
    var tab: String?
    var durationMs: Int
    var start: Int
}

struct MFrame { var x, y, w, h: Double }

/// The bar's state as the contract describes it.
struct MState: Equatable {
    var seq = 0
    var items: [MItem] = MState.builtInItems
    var selected: String? = "home"
    var previous: String?
    /// After a fallback selection the contract does not say what `previous` becomes.
    var previousUnspecified = false
    var highlighted: String?
    var activeAction: String?
    var reasons: Set<String> = []
    var navStack: [Bool] = []
    var pushHold = false
    var phase = "idle"
    var phaseStart = 0
    var phaseDuration = 0
    /// How far hidden the bar was when the running phase started (0 shown … 1 hidden).
    var phaseFrom = 0.0
    var layout = MLayout()
    var profile = "full"
    var volume = 1.0
    var settings = MSettings()
    var animations: [MAnimation] = []

    /// The built-in bar (docs/PROTOCOL.md: home, nearby, a raised center `post` button, chat, me).
    static let builtInItems: [MItem] = [
        MItem(id: "home", title: "Home", icon: "house", selectedIcon: "house.fill"),
        MItem(id: "nearby", title: "Nearby", icon: "location", selectedIcon: "location.fill"),
        MItem(id: "post", title: "Post", kind: "center", icon: "plus", sound: "center", action: "compose"),
        MItem(id: "chat", title: "Chat", icon: "bubble", selectedIcon: "bubble.fill"),
        MItem(id: "me", title: "Me", icon: "person", selectedIcon: "person.fill"),
    ]

    var hidden: Bool { !reasons.isEmpty }
    var orderedReasons: [String] { ["explicit", "push", "scroll"].filter { reasons.contains($0) } }
    func index(_ id: String) -> Int? { items.firstIndex { $0.id == id } }
    func item(_ id: String) -> MItem? { items.first { $0.id == id } }

    // MARK: Geometry (PROTOCOL.md "Geometry")

    func frames() -> [MFrame] {
        let l = layout
        let hasCenter = items.contains { $0.kind == "center" }
        let others = Double(items.count - (hasCenter ? 1 : 0))
        let w = others > 0 ? ((hasCenter ? l.width - l.centerWidth : l.width) / others) : 0
        var out: [MFrame] = []
        var before = 0.0  // non-center items so far
        var centerBefore = false
        for item in items {
            if item.kind == "center" {
                out.append(MFrame(x: (l.width - l.centerWidth) / 2, y: -l.raise, w: l.centerWidth, h: l.centerHeight))
                centerBefore = true
            } else {
                let x = before * w + (centerBefore ? l.centerWidth : 0)
                let f = MFrame(x: l.rtl ? l.width - x - w : x, y: 0, w: w, h: l.height - l.safeBottom)
                out.append(f)
                before += 1
            }
        }
        return out
    }

    /// What a point hits: the enabled item (or nil) and whether the bar consumes it
    /// (nil: the contract leaves it open — a round center's lower box corners on the bar).
    func hit(x: Double, y: Double) -> (target: Int?, consumed: Bool?) {
        if hidden { return (nil, false) }
        let fs = frames()
        func inside(_ f: MFrame) -> Bool { x >= f.x && x < f.x + f.w && y >= f.y && y < f.y + f.h }
        var result: (Int?, Bool?)?
        if let c = items.firstIndex(where: { $0.kind == "center" }), inside(fs[c]) {
            let f = fs[c]
            if layout.shape == "rect" {
                result = (c, true)
            } else {
                let r = min(f.w, f.h) / 2, dx = x - (f.x + f.w / 2), dy = y - (f.y + f.h / 2)
                if dx * dx + dy * dy <= r * r {
                    result = (c, true)
                } else if settings.centerCorners == "swallow" {
                    return (nil, true)
                } else {
                    return (nil, y < 0 ? false : nil)
                }
            }
        }
        if result == nil {
            for (k, item) in items.enumerated() where item.kind != "center" && inside(fs[k]) { result = (k, true) }
        }
        if let (k, consumed) = result, let k {
            return items[k].enabled ? (k, consumed) : (nil, true)
        }
        if x >= 0 && x < layout.width && y >= 0 && y < layout.height { return (nil, true) }
        return (nil, false)
    }

    /// How far hidden the bar is at `now` (0 shown … 1 hidden).
    func progress(_ now: Int) -> Double {
        let target = hidden ? 1.0 : 0.0
        if phase == "idle" || phaseDuration <= 0 { return target }
        let t = min(1, max(0, Double(now - phaseStart) / Double(phaseDuration)))
        return phaseFrom + (target - phaseFrom) * t
    }

    // MARK: Wire form

    func badgeJSON(_ b: MBadge) -> JSON {
        switch b {
        case .count(let n):
            return .obj(["kind": .string("count"), "value": .int(n), "display": .string(n > settings.maxCount ? "\(settings.maxCount)+" : String(n))])
        case .text(let t):
            let shown = t.count > settings.maxChars ? String(t.prefix(settings.maxChars - 1)) + "…" : t
            return .obj(["kind": .string("text"), "value": .string(t), "display": .string(shown)])
        case .dot:
            return .obj(["kind": .string("dot"), "display": .string("")])
        }
    }

    /// `badge` (what to show) and, while hidden, `hidden_badge`.
    func badgeMembers(_ item: MItem) -> [JSON.Member] {
        var m = [JSON.Member("badge", item.badge.map { item.badgeHidden ? .null : badgeJSON($0) } ?? .null)]
        if item.badgeHidden, let b = item.badge { m.append(JSON.Member("hidden_badge", badgeJSON(b))) }
        return m
    }

    func presentation(_ item: MItem, selected: Bool) -> (title: String, icon: String?, morphed: Bool) {
        if selected, let t = item.morphTitle { return (t, item.morphIcon, true) }
        return (item.title, selected ? (item.selectedIcon ?? item.icon) : item.icon, false)
    }

    var visibilityJSON: JSON {
        .obj(["hidden": .bool(hidden), "reasons": .array(orderedReasons.map(JSON.string)), "phase": .string(phase),
              "nav_stack": .array(navStack.map(JSON.bool)), "push_hold": .bool(pushHold)])
    }

    var feedbackJSON: JSON { .obj(["profile": .string(profile), "volume": .double(volume)]) }

    var json: JSON {
        let fs = frames()
        let itemsJSON: [JSON] = items.enumerated().map { k, it in
            var m: [JSON.Member] = [JSON.Member("id", .string(it.id)), JSON.Member("title", .string(it.title)),
                                    JSON.Member("kind", .string(it.kind)), JSON.Member("enabled", .bool(it.enabled))]
            if let v = it.icon { m.append(JSON.Member("icon", .string(v))) }
            if let v = it.selectedIcon { m.append(JSON.Member("selected_icon", .string(v))) }
            if let v = it.sound { m.append(JSON.Member("sound", .string(v))) }
            if let v = it.action { m.append(JSON.Member("action", .string(v))) }
            if let t = it.morphTitle {
                m.append(JSON.Member("morph", .object([JSON.Member("title", .string(t))] + (it.morphIcon.map { [JSON.Member("icon", .string($0))] } ?? []))))
            }
            if let v = it.animation { m.append(JSON.Member("animation", .string(v))) }
            m += badgeMembers(it)
            let p = presentation(it, selected: it.id == selected)
            m.append(JSON.Member("presentation", .obj(["title": .string(p.title), "icon": .optional(p.icon), "morphed": .bool(p.morphed)])))
            let f = fs[k]
            m.append(JSON.Member("frame", .obj(["x": .double(f.x), "y": .double(f.y), "w": .double(f.w), "h": .double(f.h)])))
            return .object(m)
        }
        var sounds: [JSON.Member] = settings.sounds.keys.sorted().map { JSON.Member($0, .string(settings.sounds[$0]!)) }
        if !settings.animationSounds.isEmpty {
            sounds.append(JSON.Member("animations", .object(settings.animationSounds.keys.sorted().map {
                JSON.Member($0, .string(settings.animationSounds[$0]!)) })))
        }
        let l = layout
        return .obj([
            "items": .array(itemsJSON),
            "selected": .optional(selected),
            "previous": previousUnspecified ? modelAny : .optional(previous),
            "highlighted": .optional(highlighted),
            "active_action": .optional(activeAction),
            "visibility": visibilityJSON,
            "layout": .obj(["width": .double(l.width), "height": .double(l.height), "safe_bottom": .double(l.safeBottom),
                            "center": .obj(["width": .double(l.centerWidth), "height": .double(l.centerHeight),
                                            "raise": .double(l.raise), "shape": .string(l.shape)]),
                            "rtl": .bool(l.rtl)]),
            "feedback": feedbackJSON,
            "settings": .obj(["commit_on": .string(settings.commitOn), "click_on": .string(settings.clickOn), "center_corners": .string(settings.centerCorners),
                              "animation": .string(settings.animation), "action_badges": .bool(settings.actionBadges),
                              "scroll_threshold": .double(settings.scrollThreshold), "hide_duration_ms": .int(settings.hideMs),
                              "max_count": .int(settings.maxCount), "max_chars": .int(settings.maxChars),
                              "sounds": .object(sounds)]),
            "animations": .array(animations.map {
                .obj(["animation": .int($0.id), "kind": .string($0.kind), "tab": .optional($0.tab), "duration_ms": .int($0.durationMs)])
            }),
        ])
    }
}

/// Compares what the model says with what the daemon sent: every member the model names must
/// be there with that value (numbers by value, `modelAny` matches anything); members the model
/// does not name are the implementation's. nil when they agree, else where they differ.
func modelMismatch(_ want: JSON, _ got: JSON, _ path: String = "") -> String? {
    if want == modelAny { return nil }
    switch (want, got) {
    case (.number(let a), .number(let b)):
        guard let x = Double(a), let y = Double(b), abs(x - y) <= 1e-9 * max(1, abs(x)) else { return "\(path): \(a) ≠ \(b)" }
        return nil
    case (.object(let wm), .object):
        for m in wm where m.value != modelAny {
            guard let g = got[m.key] else { return "\(path).\(m.key) missing" }
            if let d = modelMismatch(m.value, g, "\(path).\(m.key)") { return d }
        }
        return nil
    case (.array(let wa), .array(let ga)):
        guard wa.count == ga.count else { return "\(path): \(wa.count) elements ≠ \(ga.count)" }
        for (k, (a, b)) in zip(wa, ga).enumerated() { if let d = modelMismatch(a, b, "\(path)[\(k)]") { return d } }
        return nil
    default:
        return want == got ? nil : "\(path): \(want.text) ≠ \(got.text)"
    }
}
