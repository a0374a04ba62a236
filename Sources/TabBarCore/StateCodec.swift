/// Limits and display rules the reducer enforces; every one is configurable.
public struct Limits: Equatable, Sendable {
    /// Most items a bar may have (`max_items`).
    public var maxItems: Int = 5
    /// Longest item id, in bytes.
    public var maxIDLength: Int = 64
    /// Longest title, icon or sound name, in bytes.
    public var maxTextLength: Int = 256
    /// Counts above this display as "N+" (`max_count`).
    public var maxBadgeCount: Int = 99
    /// Badge texts longer than this many characters are cut and end in "…" (`max_chars`).
    public var maxBadgeChars: Int = 16
    /// Longest badge text accepted at all, in bytes.
    public var maxBadgeTextBytes: Int = 256

    public init() {}
}

extension Badge {
    /// The text every front end shows: count > max → "99+", dot → "", long text cut with "…".
    public func display(_ limits: Limits = Limits()) -> String {
        switch self {
        case .count(let n): return n > limits.maxBadgeCount ? "\(limits.maxBadgeCount)+" : String(n)
        case .dot: return ""
        case .text(let t):
            guard t.count > limits.maxBadgeChars else { return t }
            return String(t.prefix(max(0, limits.maxBadgeChars - 1))) + "…"
        }
    }

    public func json(_ limits: Limits = Limits()) -> JSON {
        switch self {
        case .count(let n):
            return .obj(["kind": .string("count"), "value": .int(n), "display": .string(display(limits))])
        case .text(let t):
            return .obj(["kind": .string("text"), "value": .string(t), "display": .string(display(limits))])
        case .dot:
            return .obj(["kind": .string("dot"), "display": .string("")])
        }
    }

    /// Decodes `{"count":n}` | `{"text":s}` | `{"dot":true}` (as in `badge.set`), or a
    /// stored badge `{"kind","value"}`. A count ≤ 0 means no badge (returns nil).
    public static func decode(_ p: Params, limits: Limits) throws(RPCError) -> Badge? {
        if let kind = try p.string("kind", maxLength: 16) {
            switch kind {
            case "count": return (try p.int("value")).flatMap { $0 > 0 ? .count($0) : nil }
            case "text": return .text(try p.requiredString("value", maxLength: limits.maxBadgeTextBytes))
            case "dot": return .dot
            default: throw .invalidParams(p.name("kind"), "Badge kind must be \"count\", \"text\" or \"dot\".")
            }
        }
        // (A field given as null is not given, as every reader reads it: `"count":null`
        // once reached `p.int("count")!` and stopped the daemon.)
        let given = ["count", "text", "dot"].filter { p[name: $0].map { !$0.isNull } ?? false }
        guard given.count == 1 else {
            throw .invalidParams(p.name(given.count == 0 ? "count" : given[1]),
                                 "Give exactly one of \"count\" (integer), \"text\" (string) or \"dot\" (true).")
        }
        switch given[0] {
        case "count":
            let n = try p.int("count")!
            return n > 0 ? .count(n) : nil
        case "text":
            let t = try p.requiredString("text", maxLength: limits.maxBadgeTextBytes)
            if t.isEmpty { throw .invalidParams(p.name("text"), "Badge text must not be empty; use \"dot\" for a bare dot or badge.clear to remove it.") }
            if t.unicodeScalars.contains(where: { $0.value < 0x20 }) {
                throw .invalidParams(p.name("text"), "Badge text must not contain control characters.")
            }
            return .text(t)
        default:
            guard try p.bool("dot") == true else { throw .invalidParams(p.name("dot"), "\"dot\" must be true; use badge.clear to remove a badge.") }
            return .dot
        }
    }
}

extension Item {
    /// Title and icon a front end shows now: the morph while selected, else the normal one.
    public func presentation(selected: Bool) -> (title: String, icon: String?, morphed: Bool) {
        if selected, let morph { return (morph.title, morph.icon ?? icon, true) }
        return (title, selected ? (selectedIcon ?? icon) : icon, false)
    }

    static let fields: [StaticString] = ["id", "title", "kind", "enabled", "icon", "selected_icon", "sound", "action", "morph",
                         "badge", "hidden_badge", "animation", "presentation", "frame"]

    /// Decodes an item as given to `bar.configure` (computed members are accepted and ignored).
    public static func decode(_ json: JSONValue, at index: Int, limits: Limits) throws(RPCError) -> Item {
        let p = try Params(json, prefix: "items[\(index)]")
        try p.only(fields)
        let id = try p.requiredID("id", maxLength: limits.maxIDLength)
        let kind = try p.choice("kind", ItemKind.self, allowed: ItemKind.allCases.map(\.rawValue)) ?? .tab
        var morph: Morph?
        if let m = try p.object("morph") {
            try m.only(["title", "icon"])
            morph = Morph(title: try m.requiredString("title", maxLength: limits.maxTextLength),
                          icon: try m.string("icon", maxLength: limits.maxTextLength))
        }
        var badge: Badge?
        var badgeHidden = false
        if let b = try p.object("badge") { badge = try Badge.decode(b, limits: limits) }
        if let b = try p.object("hidden_badge") {
            if badge != nil { throw .invalidParams(p.name("hidden_badge"), "Give \"badge\" (shown) or \"hidden_badge\" (kept but hidden), not both.") }
            badge = try Badge.decode(b, limits: limits)
            badgeHidden = badge != nil
        }
        return Item(id: id, title: try p.string("title", maxLength: limits.maxTextLength) ?? id, kind: kind,
                    enabled: try p.bool("enabled") ?? true,
                    icon: try p.string("icon", maxLength: limits.maxTextLength),
                    selectedIcon: try p.string("selected_icon", maxLength: limits.maxTextLength),
                    sound: try p.string("sound", maxLength: limits.maxTextLength),
                    action: try p.string("action", maxLength: limits.maxTextLength),
                    morph: morph, badge: badge, badgeHidden: badgeHidden,
                    animation: try p.choice("animation", AnimationStyle.self, allowed: AnimationStyle.allCases.map(\.rawValue)))
    }

    public func json(selected: Bool, frame: Frame?, limits: Limits) -> JSON {
        var m: [JSON.Member] = [
            JSON.Member("id", .string(id)),
            JSON.Member("title", .string(title)),
            JSON.Member("kind", .string(kind.rawValue)),
            JSON.Member("enabled", .bool(enabled)),
        ]
        if let icon { m.append(JSON.Member("icon", .string(icon))) }
        if let selectedIcon { m.append(JSON.Member("selected_icon", .string(selectedIcon))) }
        if let sound { m.append(JSON.Member("sound", .string(sound))) }
        if let action { m.append(JSON.Member("action", .string(action))) }
        if let morph {
            var mm = [JSON.Member("title", .string(morph.title))]
            if let icon = morph.icon { mm.append(JSON.Member("icon", .string(icon))) }
            m.append(JSON.Member("morph", .object(mm)))
        }
        if let animation { m.append(JSON.Member("animation", .string(animation.rawValue))) }
        m.append(JSON.Member("badge", visibleBadge?.json(limits) ?? .null))
        if badgeHidden, let badge { m.append(JSON.Member("hidden_badge", badge.json(limits))) }
        let p = presentation(selected: selected)
        m.append(JSON.Member("presentation", .obj(["title": .string(p.title), "icon": .optional(p.icon), "morphed": .bool(p.morphed)])))
        m.append(JSON.Member("frame", frame.map { .obj(["x": .double($0.x), "y": .double($0.y), "w": .double($0.w), "h": .double($0.h)]) } ?? .null))
        return .object(m)
    }
}

extension Layout {
    public var json: JSON {
        .obj([
            "width": .double(width), "height": .double(height), "safe_bottom": .double(safeBottom),
            "center": .obj(["width": .double(center.width), "height": .double(center.height),
                            "raise": .double(center.raise), "shape": .string(center.shape.rawValue)]),
            "rtl": .bool(rtl),
        ])
    }

    /// Decodes a layout; missing members keep the values of `base`.
    public static func decode(_ p: Params, base: Layout) throws(RPCError) -> Layout {
        try p.only(["width", "height", "safe_bottom", "center", "rtl"])
        var l = base
        let size = 0.0...100_000.0
        l.width = try p.double("width", range: size) ?? l.width
        l.height = try p.double("height", range: size) ?? l.height
        l.safeBottom = try p.double("safe_bottom", range: size) ?? l.safeBottom
        l.rtl = try p.bool("rtl") ?? l.rtl
        if let c = try p.object("center") {
            try c.only(["width", "height", "raise", "shape"])
            l.center.width = try c.double("width", range: size) ?? l.center.width
            l.center.height = try c.double("height", range: size) ?? l.center.height
            l.center.raise = try c.double("raise", range: -size.upperBound...size.upperBound) ?? l.center.raise
            l.center.shape = try c.choice("shape", CenterShape.self, allowed: ["rect", "circle"]) ?? l.center.shape
        }
        if l.safeBottom > l.height {
            throw .invalidParams(p.name("safe_bottom"), "safe_bottom (\(l.safeBottom)) must not exceed height (\(l.height)).")
        }
        if l.center.width > l.width {
            throw .invalidParams(p.name("center.width"), "center.width (\(l.center.width)) must not exceed width (\(l.width)).")
        }
        return l
    }
}

extension BarState {
    /// The wire `State` object (with computed presentations and frames).
    public func json(limits base: Limits = Limits()) -> JSON {
        let limits = settings.effective(base)
        let frames = layout.frames(for: items)
        let itemsJSON = items.enumerated().map { k, item in
            item.json(selected: item.id == selected, frame: frames.isEmpty ? nil : frames[k], limits: limits)
        }
        return .obj([
            "items": .array(itemsJSON),
            "selected": .optional(selected),
            "previous": .optional(previous),
            "highlighted": .optional(highlighted),
            "active_action": .optional(activeAction),
            "visibility": visibility.json,
            "layout": layout.json,
            "feedback": feedback.json,
            "settings": settings.json(limits: base),
            "animations": .array(animations.map(\.json)),
        ])
    }

    /// `decode` from a `JSON` value (tests and tools).
    public static func decode(_ json: JSON, seq: UInt64, limits: Limits) throws(RPCError) -> BarState {
        let doc = JSONDocument(json)
        defer { withExtendedLifetime(doc) {} }
        return try decode(doc.root, seq: seq, limits: limits)
    }

    /// Restores a state from its wire form (as persisted); `seq` is given separately.
    public static func decode(_ json: JSONValue, seq: UInt64, limits: Limits) throws(RPCError) -> BarState {
        let p = try Params(json, prefix: "state")
        guard let itemsJSON = try p.array("items") else { throw .invalidParams("state.items", "The state has no items.") }
        var items: [Item] = []
        for (k, j) in itemsJSON.enumerated() { items.append(try Item.decode(j, at: k, limits: limits)) }
        var state = BarState(seq: seq, items: items)
        state.selected = try p.id("selected")
        state.previous = try p.id("previous")
        state.activeAction = try p.id("active_action")
        if let l = try p.object("layout") { state.layout = try Layout.decode(l, base: Layout()) }
        if let f = try p.object("feedback") {
            state.feedback.profile = try f.choice("profile", FeedbackProfile.self, allowed: ["full", "quiet", "silent"]) ?? .full
            state.feedback.volume = try f.double("volume", range: 0...1) ?? 1
        }
        if let s = try p.object("settings") {
            state.settings = try BarSettings.decode(s, base: BarSettings(), limits: limits)
        }
        if let v = try p.object("visibility") {
            let reasons = (try v.array("reasons") ?? []).compactMap { $0.stringValue.flatMap(HideReason.init(rawValue:)) }
            let stack = (try v.array("nav_stack") ?? []).compactMap(\.boolValue)
            // `push_hold` (the push reason set directly) is only needed when a pushed screen also hides
            // the bar; snapshots written without it infer it from the reasons.
            let hold = try v.bool("push_hold") ?? (reasons.contains(.push) && !stack.contains(true))
            state.visibility = Visibility(reasons: HideReason.allCases.filter { reasons.contains($0) }, navStack: stack,
                                          pushHold: hold)
        }
        return state
    }
}

extension Visibility {
    public var json: JSON {
        .obj(["hidden": .bool(hidden), "reasons": .array(reasons.map { .string($0.rawValue) }), "phase": .string(phase.rawValue),
              "nav_stack": .array(navStack.map(JSON.bool)), "push_hold": .bool(pushHold)])
    }
}

extension Feedback {
    public var json: JSON { .obj(["profile": .string(profile.rawValue), "volume": .double(volume)]) }
}
