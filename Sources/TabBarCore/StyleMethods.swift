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
        .state("touch", "A finger on the bar, in bar points: down, then up or cancel; the daemon hit-tests and commits.",
               params: [
                   .choice("phase", TouchPhase.self, required: true, "down, up or cancel."),
                   .number("x", required: true, "Bar points from the left."),
                   .number("y", required: true, "Bar points from the top."),
                   .int("touch_id", 0...Params.safeIntegers.upperBound,
                        "Names one finger's sequence; the daemon remembers the last 256 of all clients (docs/PROTOCOL.md)."),
               ],
               result: Schema.sent(["seq": Schema.seq, "target": Schema.optionalID, "consumed": Schema.boolean,
                                    "commit": Schema.anyOf(Schema.strings(["select", "reselect", "action"]), Schema.null)],
                                   optional: ["ignored": Schema.boolean, "sound": Schema.str])) { p, _ throws(RPCError) in
            guard let phase = try p.choice("phase", TouchPhase.self, allowed: TouchPhase.allCases.map(\.rawValue)) else {
                throw .invalidParams("phase", "Missing field \"phase\" (\"down\", \"up\" or \"cancel\").")
            }
            let x = try p.requiredDouble("x"), y = try p.requiredDouble("y")
            return .touch(phase, x: x, y: y, touchID: try p.int("touch_id", range: 0...Params.safeIntegers.upperBound))
        },
        .state("tab.highlight", "Begins, ends or cancels an item's highlight (a press the front end tracks itself).",
               params: [.id("tab", required: true, "The item."),
                        .choice("phase", HighlightPhase.self, required: true, "begin, end or cancel.")],
               result: Results.seq,
               errors: [.unknownTab, MethodError("not_selectable", "begin on a disabled item.")]) { p, limits throws(RPCError) in
            let tab = try p.requiredID("tab", maxLength: limits.maxIDLength)
            guard let phase = try p.choice("phase", HighlightPhase.self, allowed: HighlightPhase.allCases.map(\.rawValue)) else {
                throw .invalidParams("phase", "Missing field \"phase\" (\"begin\", \"end\" or \"cancel\").")
            }
            return .highlight(tab, phase)
        },
        .state("bar.set_hidden", "Sets or withdraws a reason to hide the bar; it is hidden while any reason holds.",
               params: [.bool("hidden", required: true, "Set (true) or withdraw (false) the reason."),
                        .choice("reason", HideReason.self, "explicit (default), push or scroll."),
                        .bool("animated", "Slide (hide_duration_ms) instead of jumping.")],
               result: Results.visibility) { p, _ throws(RPCError) in
            let hidden = try p.requiredBool("hidden")
            let reason = try p.choice("reason", HideReason.self, allowed: HideReason.allCases.map(\.rawValue)) ?? .explicit
            return .setHidden(hidden, reason: reason, animated: try p.bool("animated") ?? false)
        },
        .state("nav.push", "A screen was pushed; hides_bar: whether it hides the bar.",
               params: [.bool("hides_bar", required: true, "Whether the new screen hides the bar.")],
               result: Results.visibility,
               errors: [MethodError("limit_exceeded", "The navigation stack is 256 screens deep.")]) { p, _ throws(RPCError) in
            return .navPush(hidesBar: try p.requiredBool("hides_bar"))
        },
        .state("nav.pop", "The top screen was popped.", params: [], result: Results.visibility) { _, _ throws(RPCError) in .navPop },
        .state("scroll", "The content scrolled by dy points (positive: down); enough of it hides or shows the bar.",
               params: [.number("dy", -1_000_000...1_000_000, required: true, "Points scrolled.")],
               result: Results.visibility) { p, _ throws(RPCError) in
            return .scroll(dy: try p.requiredDouble("dy", range: -1_000_000...1_000_000))
        },
        .state("animation.begin", "A front end began an animation of its own; the daemon ends it after duration_ms.",
               params: [.string("kind", minLength: 1, maxBytes: 64, required: true, "What kind (for example bounce)."),
                        .id("tab", "The item it animates."),
                        .int("duration_ms", 0...600_000, required: true, "Its length.")],
               result: Schema.sent(["seq": Schema.seq, "animation": Schema.seq]),
               errors: [.unknownTab, MethodError("limit_exceeded", "Too many animations are running.")]) { p, limits throws(RPCError) in
            let kind = try p.requiredString("kind", maxLength: 64)
            if kind.isEmpty { throw .invalidParams("kind", "Field \"kind\" must not be empty (for example \"bounce\").") }
            guard let ms = try p.int("duration_ms", range: 0...600_000) else {
                throw .invalidParams("duration_ms", "Missing field \"duration_ms\" (the animation's length in ms, 0…600000).")
            }
            return .animationBegin(kind: kind, tab: try p.id("tab", maxLength: limits.maxIDLength), durationMs: ms)
        },
        .state("animation.end", "Ends an animation animation.begin began.",
               params: [.int("animation", 1...Params.safeIntegers.upperBound, required: true, "The id animation.begin returned."),
                        .choice("reason", AnimationEndReason.self, "finished (default) or cancelled.")],
               result: Results.seq,
               errors: [MethodError("invalid_params", "No running animation has that id.", field: "animation")]) { p, _ throws(RPCError) in
            guard let id = try p.int("animation", range: 1...Params.safeIntegers.upperBound) else {
                throw .invalidParams("animation", "Missing field \"animation\" (the id animation.begin returned).")
            }
            let reason = try p.choice("reason", AnimationEndReason.self, allowed: AnimationEndReason.allCases.map(\.rawValue)) ?? .finished
            return .animationEnd(id: id, reason: reason)
        },
    ]
}
