/// An animation a front end reported with `animation.begin` that has not ended.
public struct ActiveAnimation: Equatable, Sendable {
    /// The id `animation.begin` returned (the seq of that change).
    public var id: Int
    public var kind: String
    public var tab: String?
    public var durationMs: Int
    public var startMs: Int64

    public var json: JSON {
        .obj(["animation": .int(id), "kind": .string(kind), "tab": .optional(tab), "duration_ms": .int(durationMs)])
    }
}

/// What caused an `animation.cue`. Wire strings: `select`, `deselect`, `reselect`, `highlight`, `badge`, `visibility`.
public enum CueTrigger: String, Equatable, Sendable {
    case select, deselect, reselect, highlight, badge, visibility
}

/// The built-in descriptors: what a front end animates, without knowing the style.
///
/// Members: `target` (`item`, `icon`, `badge`, `indicator`, `bar`), `property`, either
/// `from`/`to` or `keyframes` with `key_times` (0…1), `duration_ms`, `timing`
/// (`ease_in_ease_out`, `linear`), `autoreverse`, `repeat` (extra repetitions, 0: play once).
public enum AnimationDescriptor {
    static let smallIcon: JSON = .obj(["w": .int(25), "h": .int(23)])
    static let largeIcon: JSON = .obj(["w": .double(37.5), "h": .double(34.5)])
    static let bounceValues: [Double] = [1, 1.4, 0.9, 1.15, 0.95, 1.02, 1]
    static let bounceKeyTimes: [Double] = [0, 0.1667, 0.3333, 0.5, 0.6667, 0.8333, 1]

    static func timing(_ ms: Int, _ curve: String = "ease_in_ease_out", autoreverse: Bool = false) -> [JSON.Member] {
        [JSON.Member("duration_ms", .int(ms)), JSON.Member("timing", .string(curve)),
         JSON.Member("autoreverse", .bool(autoreverse)), JSON.Member("repeat", .int(0))]
    }

    /// Scale 0.7 → 1.3, 200 ms, ease-in-ease-out, autoreverse (reversed: 1.3 → 0.7).
    public static func pulse(target: String = "item", reversed: Bool = false) -> JSON {
        .object([JSON.Member("target", .string(target)), JSON.Member("property", .string("transform.scale")),
                 JSON.Member("from", .double(reversed ? 1.3 : 0.7)), JSON.Member("to", .double(reversed ? 0.7 : 1.3))]
                + timing(200, autoreverse: true))
    }

    /// Scale keyframes 1, 1.4, 0.9, 1.15, 0.95, 1.02, 1 at even key times over 600 ms.
    public static func bounce(target: String = "item", reversed: Bool = false) -> JSON {
        let values = reversed ? bounceValues.reversed() : bounceValues
        return .object([JSON.Member("target", .string(target)), JSON.Member("property", .string("transform.scale")),
                         JSON.Member("keyframes", .array(values.map(JSON.double))),
                         JSON.Member("key_times", .array(bounceKeyTimes.map(JSON.double)))]
                        + timing(600))
    }

    /// The icon cross-fades to `toIcon` while its size goes 25×23 → 37.5×34.5 in 250 ms (reversed on deselect).
    public static func crossfade(fromIcon: String?, toIcon: String?, reversed: Bool = false) -> JSON {
        .object([JSON.Member("target", .string("icon")), JSON.Member("transition", .string("crossfade")),
                 JSON.Member("property", .string("bounds.size")),
                 JSON.Member("from", reversed ? largeIcon : smallIcon), JSON.Member("to", reversed ? smallIcon : largeIcon),
                 JSON.Member("from_icon", .optional(fromIcon)), JSON.Member("to_icon", .optional(toIcon))]
                + timing(250))
    }

    /// The bar (`translation.y`, points down: show/hide) or the selection indicator
    /// (`position.x`, the centres of two items) slides; 500 ms unless the bar says otherwise.
    public static func slide(target: String, property: String, from: Double, to: Double, durationMs: Int = 500) -> JSON {
        .object([JSON.Member("target", .string(target)), JSON.Member("property", .string(property)),
                 JSON.Member("from", .double(from)), JSON.Member("to", .double(to))]
                + timing(durationMs))
    }
}

/// Animation cues and the animations front ends report.
extension Reducer {
    static let maxAnimations = 64

    func style(of item: Item) -> AnimationStyle { item.animation ?? state.settings.animation }

    /// The descriptor of item `k`'s style (`style(of:)`) for `trigger`, or nil when the style
    /// has no cue for it.
    func descriptor(_ style: AnimationStyle, _ trigger: CueTrigger, _ k: Int, from previous: Int?) -> (AnimationStyle, JSON)? {
        let item = state.items[k]
        let target = trigger == .badge ? "badge" : "item"
        switch style {
        case .none:
            return nil
        case .pulse:
            return (style, AnimationDescriptor.pulse(target: target, reversed: trigger == .deselect))
        case .bounce:
            return (style, AnimationDescriptor.bounce(target: target, reversed: trigger == .deselect))
        case .crossfade:
            let selectedIcon = item.presentation(selected: true).icon
            switch trigger {
            case .select: return (style, AnimationDescriptor.crossfade(fromIcon: item.icon, toIcon: selectedIcon))
            case .deselect: return (style, AnimationDescriptor.crossfade(fromIcon: selectedIcon, toIcon: item.icon, reversed: true))
            default: return nil
            }
        case .slide:
            guard trigger == .select else { return nil }
            let frames = state.layout.frames(for: state.items)
            guard k < frames.count else { return nil }
            let to = frames[k].x + frames[k].w / 2
            let from = previous.map { frames[$0].x + frames[$0].w / 2 } ?? to
            return (style, AnimationDescriptor.slide(target: "indicator", property: "position.x", from: from, to: to))
        }
    }

    /// Emits `animation.cue` for item `k` when its style has one for `trigger`; `sound` is the
    /// sound starting with it (played by the same change).
    mutating func cue(_ trigger: CueTrigger, _ k: Int, from previous: Int? = nil, sound: Effect? = nil, into out: inout Outcome) {
        // The common bar has no cues.
        let style = state.items[k].animation ?? state.settings.animation
        if style == .none { return }
        guard let (style, descriptor) = descriptor(style, trigger, k, from: previous) else { return }
        out.publish(cueEvent(tab: state.items[k].id, trigger, style, descriptor, sound: sound))
    }

    /// The bar's slide for an animated show/hide (`tab` null).
    mutating func visibilityCue(from: Double, to: Double, durationMs: Int, sound: Effect?, into out: inout Outcome) {
        let h = state.layout.height
        let d = AnimationDescriptor.slide(target: "bar", property: "translation.y", from: from * h, to: to * h, durationMs: durationMs)
        out.publish(cueEvent(tab: nil, .visibility, .slide, d, sound: sound))
    }

    func cueEvent(tab: String?, _ trigger: CueTrigger, _ style: AnimationStyle, _ descriptor: JSON, sound: Effect?) -> BarEvent {
        var soundName: String?
        if case let .play(name, _, _)? = sound { soundName = name }
        return .animationCue(seq: seq, tab: tab, trigger: trigger, kind: style, descriptor: descriptor, sound: soundName)
    }

    mutating func animationBegin(kind: String, tab: String?, durationMs: Int, into out: inout Outcome) {
        if let tab, state.index(of: tab) == nil { return out.fail(.unknownTab(tab)) }
        guard state.animations.count < Reducer.maxAnimations else {
            return out.fail(.limitExceeded("\(Reducer.maxAnimations) animations are already running; end some with animation.end first."))
        }
        state.seq += 1
        let a = ActiveAnimation(id: Int(state.seq), kind: kind, tab: tab, durationMs: durationMs, startMs: now)
        state.animations.append(a)
        out.reset(.success(.animation(seq: seq, id: a.id)))
        out.publish(.animationBegan(seq: seq, a))
        out.play(sound(.animation, kind: kind))
        out.effects.append(.timer(.animation(a.id), atMs: now + Int64(durationMs)))
    }

    mutating func animationEnd(id: Int, reason: AnimationEndReason, into out: inout Outcome) {
        guard let i = state.animations.firstIndex(where: { $0.id == id }) else {
            // Already ended (by its front end or when its duration passed): nothing to do.
            if id <= state.seq { return out.reset(.success(.seq(seq))) }
            return out.fail(.invalidParams("animation", "There is no animation \(id); use the id animation.begin returned."))
        }
        state.animations.remove(at: i)
        state.seq += 1
        out.reset(.success(.seq(seq)))
        out.publish(.animationEnded(seq: seq, id: id, reason: reason))
        out.effects.append(.cancelTimer(.animation(id)))
    }

    /// A front end's animation reached its duration without `animation.end`: it ends as `finished`.
    mutating func animationTimerFired(_ id: Int, into out: inout Outcome) {
        guard state.animations.contains(where: { $0.id == id }) else { return out.reset() }
        animationEnd(id: id, reason: .finished, into: &out)
        out.effects.removeAll(keepingCapacity: true)
        out.journal = .timerFired(.animation(id))
    }
}
