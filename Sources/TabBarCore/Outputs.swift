/// What a request answers, typed: each case is one reply shape of docs/PROTOCOL.md,
/// written straight to bytes by `Wire.reply` (no `JSON` tree).
public enum Reply: Equatable, Sendable {
    /// Nothing to say (a timer's step, never sent to a client).
    case none
    /// `{}`
    case empty
    /// `{"seq":N}`
    case seq(UInt64)
    /// `tab.select`: `{"seq","selected","previous","reselected"}`.
    case selected(seq: UInt64, tab: String, previous: String?, reselected: Bool)
    /// `{"seq","state"}` (`state.get`, `bar.configure`, `subscribe`).
    indirect case state(seq: UInt64, BarState, Limits)
    /// `feedback.set`: `{"seq","feedback"}`.
    case feedback(seq: UInt64, Feedback)
    /// Visibility methods: `{"seq","visibility"}`.
    indirect case visibility(seq: UInt64, Visibility)
    /// `touch`: `{"seq","target","consumed","commit"[,"sound"][,"ignored":true]}` (`sound`: the
    /// sound this request started, on the press or with the commit).
    case touch(seq: UInt64, target: String?, consumed: Bool, commit: Commit?, ignored: Bool, sound: String? = nil)
    /// `badge.set`: `{"seq","badge"[,"hidden_badge"][,"ignored":true]}` (`limits`: the display rules).
    indirect case badge(seq: UInt64, Item, Limits, ignored: Bool)
    /// `animation.begin`: `{"seq","animation"}`.
    case animation(seq: UInt64, id: Int)
    /// The server's own answers (statistics, sound lists, the harness): a value built for it.
    indirect case json(JSON)

    /// The reply as a `JSON` value (tests and tools).
    public var json: JSON { try! JSON.parse(ByteBuffer.collect { Wire.reply(id: .null, .success(self), into: &$0) })["result"]! }
}

/// A notification for subscribers, typed: one case per event of docs/PROTOCOL.md, each
/// carrying its `seq`, written straight to bytes by `write(into:)`.
public enum BarEvent: Equatable, Sendable {
    case tabSelected(seq: UInt64, tab: String, previous: String?, source: Source)
    case tabReselected(seq: UInt64, tab: String, source: Source)
    case actionTriggered(seq: UInt64, tab: String, action: String?)
    case actionFinished(seq: UInt64, tab: String)
    /// The item after the change; `limits`: the display rules.
    indirect case badgeChanged(seq: UInt64, Item, Limits)
    indirect case barConfigured(seq: UInt64, BarState, Limits)
    indirect case barVisibility(seq: UInt64, Visibility, durationMs: Int)
    case feedbackChanged(seq: UInt64, Feedback)
    /// `sound`: the click a `begin` started (a press under `click_on: "press"`).
    case tabHighlighted(seq: UInt64, tab: String, phase: HighlightPhase, sound: String? = nil)
    /// `tab` nil: the bar itself (a show/hide slide).
    indirect case animationCue(seq: UInt64, tab: String?, trigger: CueTrigger, kind: AnimationStyle, descriptor: JSON, sound: String?)
    indirect case animationBegan(seq: UInt64, ActiveAnimation)
    case animationEnded(seq: UInt64, id: Int, reason: AnimationEndReason)

    /// The event's method name (its topic).
    public var method: String { name.description }

    /// The method name as a literal.
    public var name: StaticString {
        switch self {
        case .tabSelected: return "tab.selected"
        case .tabReselected: return "tab.reselected"
        case .actionTriggered: return "action.triggered"
        case .actionFinished: return "action.finished"
        case .badgeChanged: return "badge.changed"
        case .barConfigured: return "bar.configured"
        case .barVisibility: return "bar.visibility"
        case .feedbackChanged: return "feedback.changed"
        case .tabHighlighted: return "tab.highlighted"
        case .animationCue: return "animation.cue"
        case .animationBegan: return "animation.began"
        case .animationEnded: return "animation.ended"
        }
    }

    /// Appends the whole notification line, newline included.
    public func write(into o: inout ByteBuffer) {
        o.put(#"{"jsonrpc":"2.0","method":""#)
        o.put(name)
        o.put(#"","params":"#)
        writeParams(into: &o)
        o.put("}\n")
    }

    /// Appends the params object.
    public func writeParams(into o: inout ByteBuffer) {
        switch self {
        case let .tabSelected(s, tab, previous, source):
            o.seqHead(s); o.put(#","tab":"#); o.string(tab)
            o.put(#","previous":"#); o.optional(previous)
            o.put(#","source":"#); o.source(source); o.put("}")
        case let .tabReselected(s, tab, source):
            o.seqHead(s); o.put(#","tab":"#); o.string(tab)
            o.put(#","source":"#); o.source(source); o.put("}")
        case let .actionTriggered(s, tab, action):
            o.seqHead(s); o.put(#","tab":"#); o.string(tab)
            if let action { o.put(#","action":"#); o.string(action) }
            o.put("}")
        case let .actionFinished(s, tab):
            o.seqHead(s); o.put(#","tab":"#); o.string(tab); o.put("}")
        case let .badgeChanged(s, item, limits):
            o.seqHead(s); o.put(#","tab":"#); o.string(item.id); item.writeBadge(limits, into: &o); o.put("}")
        case let .barConfigured(s, state, limits):
            o.seqHead(s); o.put(#","state":"#); o.json(state.json(limits: limits)); o.put("}")
        case let .barVisibility(s, v, durationMs):
            o.seqHead(s); o.put(#","hidden":"#); o.bool(v.hidden); o.put(#","phase":""#); o.utf8(v.phase.rawValue)
            o.put(#"","reasons":"#); v.writeReasons(into: &o); o.put(#","duration_ms":"#); o.int(durationMs)
            o.put(#","nav_stack":"#); v.writeNavStack(into: &o); o.put("}")
        case let .feedbackChanged(s, f):
            o.seqHead(s); o.put(#","feedback":"#); f.write(into: &o); o.put("}")
        case let .tabHighlighted(s, tab, phase, sound):
            o.seqHead(s); o.put(#","tab":"#); o.string(tab)
            o.put(#","phase":""#); o.utf8(phase.rawValue); o.put(#"""#)
            if let sound { o.put(#","sound":"#); o.string(sound) }
            o.put("}")
        case let .animationCue(s, tab, trigger, kind, descriptor, sound):
            o.seqHead(s); o.put(#","tab":"#); o.optional(tab)
            o.put(#","trigger":""#); o.utf8(trigger.rawValue)
            o.put(#"","kind":""#); o.utf8(kind.rawValue)
            o.put(#"","descriptor":"#); o.json(descriptor)
            o.put(#","sound":"#); o.optional(sound); o.put("}")
        case let .animationBegan(s, a):
            o.seqHead(s); o.put(#","animation":"#); o.int(a.id); o.put(#","kind":"#); o.string(a.kind)
            o.put(#","tab":"#); o.optional(a.tab); o.put(#","duration_ms":"#); o.int(a.durationMs); o.put("}")
        case let .animationEnded(s, id, reason):
            o.seqHead(s); o.put(#","animation":"#); o.int(id); o.put(#","reason":""#); o.utf8(reason.rawValue); o.put(#""}"#)
        }
    }

    /// The params as a `JSON` value (tests and tools).
    public var params: JSON { try! JSON.parse(ByteBuffer.collect { writeParams(into: &$0) }) }

    /// The whole notification line (tests and tools).
    public var line: [UInt8] { ByteBuffer.collect { write(into: &$0) } }
}

/// What the server publishes to subscribers: a notification's method (its topic) and its
/// whole line. The reducer's events (`BarEvent`) and the sound reports (`SoundEvent`).
public protocol EventLine {
    var method: String { get }
    func write(into o: inout ByteBuffer)
}

extension BarEvent: EventLine {}

/// The audio thread's reports as subscribers get them (docs/PROTOCOL.md): a voice started,
/// at sink frame `frame`, or failed, with why. They change no state: no `seq`.
public enum SoundEvent: Equatable, Sendable, EventLine {
    case played(voice: UInt32, name: String, frame: Int64)
    case failed(voice: UInt32, name: String, reason: String)
    /// A sound not played because the desktop's sound settings say so (no voice: nothing failed).
    case suppressed(name: String, reason: String)

    public var method: String {
        switch self {
        case .played: return "sound.played"
        case .failed: return "sound.failed"
        case .suppressed: return "sound.suppressed"
        }
    }

    /// Appends the whole notification line, newline included.
    public func write(into o: inout ByteBuffer) {
        switch self {
        case let .played(voice, name, frame):
            o.put(#"{"jsonrpc":"2.0","method":"sound.played","params":{"voice":"#); o.uint(UInt64(voice))
            o.put(#","name":"#); o.string(name); o.put(#","frame":"#); o.int(Int(frame))
        case let .failed(voice, name, reason):
            o.put(#"{"jsonrpc":"2.0","method":"sound.failed","params":{"voice":"#); o.uint(UInt64(voice))
            o.put(#","name":"#); o.string(name); o.put(#","reason":"#); o.string(reason)
        case let .suppressed(name, reason):
            o.put(#"{"jsonrpc":"2.0","method":"sound.suppressed","params":{"name":"#); o.string(name)
            o.put(#","reason":"#); o.string(reason)
        }
        o.put("}}\n")
    }

    /// The whole notification line (tests and tools).
    public var line: [UInt8] { ByteBuffer.collect { write(into: &$0) } }
}

extension Item {
    /// `,"badge":…[,"hidden_badge":…]`: what front ends show (null while hidden), and the
    /// kept value while hidden.
    func writeBadge(_ limits: Limits, into o: inout ByteBuffer) {
        o.put(#","badge":"#)
        if let b = visibleBadge { b.write(limits, into: &o) } else { o.put("null") }
        if badgeHidden, let b = badge { o.put(#","hidden_badge":"#); b.write(limits, into: &o) }
    }
}

extension Badge {
    /// Appends the badge as `json(limits)` spells it.
    func write(_ limits: Limits, into o: inout ByteBuffer) {
        switch self {
        case .count(let n):
            o.put(#"{"kind":"count","value":"#); o.int(n); o.put(#","display":"#); o.string(display(limits)); o.put("}")
        case .text(let t):
            o.put(#"{"kind":"text","value":"#); o.string(t); o.put(#","display":"#); o.string(display(limits)); o.put("}")
        case .dot:
            o.put(#"{"kind":"dot","display":""}"#)
        }
    }
}

extension Feedback {
    func write(into o: inout ByteBuffer) {
        o.put(#"{"profile":""#); o.utf8(profile.rawValue); o.put(#"","volume":"#); o.double(volume); o.put("}")
    }
}

extension Visibility {
    /// Appends `json`'s text.
    func write(into o: inout ByteBuffer) {
        o.put(#"{"hidden":"#); o.bool(hidden); o.put(#","reasons":"#); writeReasons(into: &o)
        o.put(#","phase":""#); o.utf8(phase.rawValue); o.put(#"","nav_stack":"#); writeNavStack(into: &o)
        o.put(#","push_hold":"#); o.bool(pushHold); o.put("}")
    }

    func writeReasons(into o: inout ByteBuffer) {
        o.put("[")
        for (k, r) in reasons.enumerated() {
            if k > 0 { o.put(",") }
            o.put("\""); o.utf8(r.rawValue); o.put("\"")
        }
        o.put("]")
    }

    func writeNavStack(into o: inout ByteBuffer) {
        o.put("[")
        for (k, b) in navStack.enumerated() {
            if k > 0 { o.put(",") }
            o.bool(b)
        }
        o.put("]")
    }
}

/// The JSON-RPC lines the daemon writes: replies and notifications, one line each (through
/// `ByteBuffer`, the one encoder).
public enum Wire {
    /// A notification's line (the server's own: `hello`, `state.resync`, `server.stopping`).
    public static func notification(_ method: String, _ params: JSON) -> [UInt8] {
        ByteBuffer.collect { o in
            o.put(#"{"jsonrpc":"2.0","method":"#); o.string(method); o.put(#","params":"#); o.json(params); o.put("}\n")
        }
    }

    /// Appends the reply line to request `id`: `{"jsonrpc":"2.0","id":…,` then `"result":` and
    /// the typed value, or `"error":` and the error; `}` and the newline.
    public static func reply(id: RequestID, _ result: Result<Reply, RPCError>, into o: inout ByteBuffer) {
        o.put(#"{"jsonrpc":"2.0","id":"#); o.id(id)
        let value: Reply
        switch result {
        case .success(let v): value = v
        case .failure(let error):
            o.put(#","error":"#); o.json(error.json)
            return o.put("}\n")
        }
        o.put(#","result":"#)
        switch value {
        case .none: o.put("null")
        case .empty: o.put("{}")
        case .seq(let s): o.seqHead(s); o.put("}")
        case let .selected(s, tab, previous, reselected):
            o.seqHead(s); o.put(#","selected":"#); o.string(tab)
            o.put(#","previous":"#); o.optional(previous)
            o.put(#","reselected":"#); o.bool(reselected); o.put("}")
        case let .state(s, state, limits):
            o.seqHead(s); o.put(#","state":"#); o.json(state.json(limits: limits)); o.put("}")
        case let .feedback(s, f):
            o.seqHead(s); o.put(#","feedback":"#); f.write(into: &o); o.put("}")
        case let .visibility(s, v):
            o.seqHead(s); o.put(#","visibility":"#); v.write(into: &o); o.put("}")
        case let .touch(s, target, consumed, commit, ignored, sound):
            o.seqHead(s); o.put(#","target":"#); o.optional(target)
            o.put(#","consumed":"#); o.bool(consumed)
            o.put(#","commit":"#); o.optional(commit?.rawValue)
            if let sound { o.put(#","sound":"#); o.string(sound) }
            if ignored { o.put(#","ignored":true"#) }
            o.put("}")
        case let .badge(s, item, limits, ignored):
            o.seqHead(s); item.writeBadge(limits, into: &o)
            if ignored { o.put(#","ignored":true"#) }
            o.put("}")
        case let .animation(s, id):
            o.seqHead(s); o.put(#","animation":"#); o.int(id); o.put("}")
        case .json(let j): o.json(j)
        }
        o.put("}\n")
    }

    /// `reply` into an array (tests and tools).
    public static func reply(id: RequestID, _ result: Result<Reply, RPCError>, into out: inout [UInt8]) {
        out += ByteBuffer.collect { reply(id: id, result, into: &$0) }
    }
}
