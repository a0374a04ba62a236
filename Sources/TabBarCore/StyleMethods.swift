/// Phase of a `touch`. Wire strings: `down`, `up`, `cancel`.
public enum TouchPhase: String, Equatable, Sendable, CaseIterable {
    case down, up, cancel
}

/// Phase of a highlight (`tab.highlight`, `tab.highlighted`). Wire strings: `begin`, `end`, `cancel`.
public enum HighlightPhase: String, Equatable, Sendable, CaseIterable {
    case begin, end, cancel
}

/// Why an animation ended. Wire strings: `finished`, `cancelled`.
public enum AnimationEndReason: String, Equatable, Sendable, CaseIterable {
    case finished, cancelled
}

/// A timer the reducer needs: the server turns `Effect.timer` into an epoll timeout and
/// sends `Command.timerFired` back when it is due.
public enum TimerKey: Hashable, Sendable {
    /// The bar's show/hide animation reaches its end (phase back to `idle`).
    case visibility
    /// A front end's animation (`animation.begin`) reaches its duration.
    case animation(Int)

    /// The wire form, as written to the journal.
    public var json: JSON {
        switch self {
        case .visibility: return .obj(["timer": .string("visibility")])
        case .animation(let id): return .obj(["timer": .string("animation"), "animation": .int(id)])
        }
    }
}

/// What `badge.set` changes: the value (kept, removed or set) and whether it is hidden.
public struct BadgeUpdate: Equatable, Sendable {
    public enum Value: Equatable, Sendable {
        case keep
        case remove
        case set(Badge)
    }
    public var value: Value
    /// nil: keep the hidden flag as it is.
    public var hidden: Bool?
    public init(value: Value, hidden: Bool? = nil) {
        self.value = value
        self.hidden = hidden
    }
}

extension Methods {
    /// Touch, highlight, visibility and animation methods.
    static let styles: [MethodSpec] = [
        .state("touch", fields: ["phase", "x", "y", "touch_id"]) { p, _ throws(RPCError) in
            guard let phase = try p.choice("phase", TouchPhase.self, allowed: TouchPhase.allCases.map(\.rawValue)) else {
                throw .invalidParams("phase", "Missing field \"phase\" (\"down\", \"up\" or \"cancel\").")
            }
            let x = try p.requiredDouble("x"), y = try p.requiredDouble("y")
            return .touch(phase, x: x, y: y, touchID: try p.int("touch_id", range: 0...Params.safeIntegers.upperBound))
        },
        .state("tab.highlight", fields: ["tab", "phase"]) { p, limits throws(RPCError) in
            let tab = try p.requiredID("tab", maxLength: limits.maxIDLength)
            guard let phase = try p.choice("phase", HighlightPhase.self, allowed: HighlightPhase.allCases.map(\.rawValue)) else {
                throw .invalidParams("phase", "Missing field \"phase\" (\"begin\", \"end\" or \"cancel\").")
            }
            return .highlight(tab, phase)
        },
        .state("bar.set_hidden", fields: ["hidden", "reason", "animated"]) { p, _ throws(RPCError) in
            let hidden = try p.requiredBool("hidden")
            let reason = try p.choice("reason", HideReason.self, allowed: HideReason.allCases.map(\.rawValue)) ?? .explicit
            return .setHidden(hidden, reason: reason, animated: try p.bool("animated") ?? false)
        },
        .state("nav.push", fields: ["hides_bar"]) { p, _ throws(RPCError) in
            return .navPush(hidesBar: try p.requiredBool("hides_bar"))
        },
        .state("nav.pop", fields: []) { _, _ throws(RPCError) in .navPop },
        .state("scroll", fields: ["dy"]) { p, _ throws(RPCError) in
            return .scroll(dy: try p.requiredDouble("dy", range: -1_000_000...1_000_000))
        },
        .state("animation.begin", fields: ["kind", "tab", "duration_ms"]) { p, limits throws(RPCError) in
            let kind = try p.requiredString("kind", maxLength: 64)
            if kind.isEmpty { throw .invalidParams("kind", "Field \"kind\" must not be empty (for example \"bounce\").") }
            guard let ms = try p.int("duration_ms", range: 0...600_000) else {
                throw .invalidParams("duration_ms", "Missing field \"duration_ms\" (the animation's length in ms, 0…600000).")
            }
            return .animationBegin(kind: kind, tab: try p.id("tab", maxLength: limits.maxIDLength), durationMs: ms)
        },
        .state("animation.end", fields: ["animation", "reason"]) { p, _ throws(RPCError) in
            guard let id = try p.int("animation", range: 1...Params.safeIntegers.upperBound) else {
                throw .invalidParams("animation", "Missing field \"animation\" (the id animation.begin returned).")
            }
            let reason = try p.choice("reason", AnimationEndReason.self, allowed: AnimationEndReason.allCases.map(\.rawValue)) ?? .finished
            return .animationEnd(id: id, reason: reason)
        },
    ]
}
