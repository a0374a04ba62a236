/// When a touch on an item commits (selects, reselects or triggers). Wire strings: `down`, `up`.
public enum CommitOn: String, Equatable, Sendable, CaseIterable {
    /// On touch down, as native tab bars do.
    case down
    /// On touch up inside the same item, as custom buttons do (the default).
    case up
}

/// When a touch's click plays. Wire strings: `commit` (the default), `press`.
public enum ClickOn: String, Equatable, Sendable, CaseIterable {
    /// With the commit (on `up` under `commit_on: "up"`), as today.
    case commit
    /// On the `down` that begins the highlight of an item that would commit; the commit itself
    /// is then silent, and a cancelled touch keeps the click it played (as a keyboard's key).
    case press
}

/// What a touch inside the center item's box but outside its circle does.
/// Wire strings: `pass_through` (the default: not consumed, the content below gets it), `swallow`.
public enum CenterCorners: String, Equatable, Sendable, CaseIterable {
    case passThrough = "pass_through"
    case swallow
}

/// A built-in animation a front end renders from its descriptor.
/// Wire strings: `none`, `pulse`, `bounce`, `crossfade`, `slide`.
public enum AnimationStyle: String, Equatable, Sendable, CaseIterable {
    /// No cue is emitted.
    case none
    /// Scale 0.7 → 1.3, 200 ms, ease-in-ease-out, autoreverse.
    case pulse
    /// Scale keyframes 1, 1.4, 0.9, 1.15, 0.95, 1.02, 1 over 600 ms.
    case bounce
    /// Icon cross-fade to the selected icon, enlarging 25×23 → 37.5×34.5, 250 ms.
    case crossfade
    /// The bar's selection indicator slides to the selected item, 500 ms.
    case slide
}

/// Bar-level behaviour, set with `bar.configure {"settings":{…}}` and shown as `state.settings`.
public struct BarSettings: Equatable, Sendable {
    public var commitOn: CommitOn = .up
    /// When a touch's click plays (only differs from the commit under `commit_on: "up"`).
    public var clickOn: ClickOn = .commit
    public var centerCorners: CenterCorners = .passThrough
    /// The animation style of every item that does not name its own.
    public var animation: AnimationStyle = .none
    /// Whether `action` and `center` items may carry badges (else `badge.set` on them is ignored).
    public var actionBadges = false
    /// Points of scrolling in one direction before `scroll` hides (down) or shows (up) the bar.
    public var scrollThreshold: Double = 24
    /// How long an animated show/hide takes (the `slide` of the bar), in ms; 0: not animated.
    public var hideDurationMs: Int = 500
    /// Counts above this display as "N+"; nil: the daemon's `max_badge_count` (99).
    public var maxCount: Int?
    /// Badge texts longer than this are cut and end in "…"; nil: the daemon's `max_badge_chars` (16).
    public var maxChars: Int?
    /// Per-bar sounds by trigger (`select`, `reselect`, `action`, `center`, `badge`, `visibility`):
    /// a sound name, or `none` for silence. Triggers not named use the daemon's `sound_map`.
    public var sounds: [String: String] = [:]
    /// Sounds bound to animation kinds: played when a cue or `animation.begin` of that kind starts.
    public var animationSounds: [String: String] = [:]

    public init() {}

    /// The display limits with this bar's `max_count` / `max_chars` applied.
    public func effective(_ limits: Limits) -> Limits {
        var l = limits
        if let maxCount { l.maxBadgeCount = maxCount }
        if let maxChars { l.maxBadgeChars = maxChars }
        return l
    }

    static let fields: [StaticString] = ["commit_on", "click_on", "center_corners", "animation", "action_badges", "scroll_threshold",
                         "hide_duration_ms", "max_count", "max_chars", "sounds"]
    static let soundTriggers = ["select", "reselect", "action", "center", "badge", "visibility"]

    /// The wire form (effective values, so a front end never guesses a default).
    public func json(limits: Limits) -> JSON {
        var soundMembers = Self.soundTriggers.compactMap { t in sounds[t].map { JSON.Member(t, .string($0)) } }
        if !animationSounds.isEmpty {
            soundMembers.append(JSON.Member("animations", .object(animationSounds.keys.sorted().map { JSON.Member($0, .string(animationSounds[$0]!)) })))
        }
        return .obj([
            "commit_on": .string(commitOn.rawValue),
            "click_on": .string(clickOn.rawValue),
            "center_corners": .string(centerCorners.rawValue),
            "animation": .string(animation.rawValue),
            "action_badges": .bool(actionBadges),
            "scroll_threshold": .double(scrollThreshold),
            "hide_duration_ms": .int(hideDurationMs),
            "max_count": .int(maxCount ?? limits.maxBadgeCount),
            "max_chars": .int(maxChars ?? limits.maxBadgeChars),
            "sounds": .object(soundMembers),
        ])
    }

    /// Decodes `settings`; members not given keep the values of `base`.
    public static func decode(_ p: Params, base: BarSettings, limits: Limits) throws(RPCError) -> BarSettings {
        try p.only(fields)
        var s = base
        s.commitOn = try p.choice("commit_on", CommitOn.self, allowed: CommitOn.allCases.map(\.rawValue)) ?? s.commitOn
        s.clickOn = try p.choice("click_on", ClickOn.self, allowed: ClickOn.allCases.map(\.rawValue)) ?? s.clickOn
        s.centerCorners = try p.choice("center_corners", CenterCorners.self, allowed: CenterCorners.allCases.map(\.rawValue)) ?? s.centerCorners
        s.animation = try p.choice("animation", AnimationStyle.self, allowed: AnimationStyle.allCases.map(\.rawValue)) ?? s.animation
        s.actionBadges = try p.bool("action_badges") ?? s.actionBadges
        s.scrollThreshold = try p.double("scroll_threshold", range: 0...100_000) ?? s.scrollThreshold
        s.hideDurationMs = try p.int("hide_duration_ms", range: 0...10_000) ?? s.hideDurationMs
        if let n = try p.int("max_count", range: 1...1_000_000) { s.maxCount = n == limits.maxBadgeCount ? nil : n }
        if let n = try p.int("max_chars", range: 1...1024) { s.maxChars = n == limits.maxBadgeChars ? nil : n }
        if let sp = try p.object("sounds") {
            try sp.only(names: soundTriggers + ["animations"])
            for t in soundTriggers where sp.has(name: t) {
                if sp[name: t]?.isNull == true { s.sounds[t] = nil; continue }
                s.sounds[t] = try soundName(sp, t)
            }
            if let a = try sp.object("animations") {
                for m in a.members {
                    if m.value.isNull { s.animationSounds[m.key] = nil; continue }
                    if m.key.isEmpty || m.key.utf8.count > 64 {
                        throw .invalidParams(a.name(m.key), "Animation kinds are 1 to 64 bytes long.")
                    }
                    s.animationSounds[m.key] = try soundName(a, m.key)
                }
            }
        }
        return s
    }

    static func soundName(_ p: Params, _ key: String) throws(RPCError) -> String {
        let name = try p.requiredString(name: key, maxLength: 256)
        if name.isEmpty { throw .invalidParams(p.name(key), "A sound name must not be empty; use \"none\" for silence.") }
        return name
    }
}
