import TabBarCore

/// A topic of `TabBar.events(topics:)`: an event's name (`badge.changed`) or its first
/// part (`badge`: every `badge.*` event). The daemon's list is `Topics.all`; a name it
/// does not know is refused with `ClientError.rpc(kind: "invalid_params")`.
public struct Topic: Hashable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// The name as `subscribe` takes it.
    public let name: String
    /// The topic called `name` (an event name or its first part, `Topics.all`).
    public init(_ name: String) { self.name = name }
    /// `"tab.selected"` as a topic.
    public init(stringLiteral name: String) { self.name = name }
    /// The name.
    public var description: String { name }

    /// `tab.selected`, `tab.reselected`, `tab.highlighted`.
    public static let tab = Topic("tab")
    /// `action.triggered`, `action.finished`.
    public static let action = Topic("action")
    /// `badge.changed`.
    public static let badge = Topic("badge")
    /// `bar.configured`, `bar.visibility`.
    public static let bar = Topic("bar")
    /// `animation.cue`, `animation.began`, `animation.ended`.
    public static let animation = Topic("animation")
    /// `feedback.changed`.
    public static let feedback = Topic("feedback")
    /// `sound.played`, `sound.failed`.
    public static let sound = Topic("sound")
}

/// The daemon's `hello`: who it is and what it speaks.
public struct Hello: Sendable, Equatable {
    /// `tabbard`.
    public var server: String
    /// The daemon's version.
    public var version: String
    /// The protocol's version.
    public var protocolVersion: String
    /// The longest request line it accepts, in bytes.
    public var maxLine: Int
    /// Every method it offers (`Methods.names` of its build).
    public var features: [String]
    /// The params as received.
    public var json: JSON

    /// Reads `hello`'s params.
    public init(_ params: JSON) {
        json = params
        server = params["server"]?.stringValue ?? ""
        version = params["version"]?.stringValue ?? ""
        protocolVersion = params["protocol"]?.stringValue ?? params["protocol"]?.text ?? ""
        maxLine = params["max_line"]?.intValue ?? 0
        features = params["features"]?.arrayValue?.compactMap(\.stringValue) ?? []
    }
}

/// The bar's state with its `seq` (`state.get`, `bar.configure`, `subscribe`).
public struct Snapshot: Sendable, Equatable {
    /// The change counter the state is at.
    public var seq: UInt64
    /// The state, as the daemon's own type.
    public var state: BarState
    /// The state as received (members a newer daemon adds are here).
    public var json: JSON

    /// Reads `{"seq", "state"}`.
    public init(_ result: JSON) throws(ClientError) {
        seq = try Decode.seq(result, "seq")
        json = result["state"] ?? .null
        state = try Decode.state(json, seq: seq)
    }
}

/// What `tab.select` did.
public struct Selection: Sendable, Equatable {
    /// The change's `seq`.
    public var seq: UInt64
    /// The tab selected now.
    public var selected: String
    /// The tab selected before (for a reselect, the one before that).
    public var previous: String?
    /// Whether the tab was already selected (a reselect).
    public var reselected: Bool

    /// A selection as `tab.select` answers it.
    public init(seq: UInt64, selected: String, previous: String?, reselected: Bool) {
        self.seq = seq
        self.selected = selected
        self.previous = previous
        self.reselected = reselected
    }
}

/// What `badge.set` did.
public struct BadgeResult: Sendable, Equatable {
    /// The change's `seq`.
    public var seq: UInt64
    /// The badge now (nil: none).
    public var badge: Badge?
    /// Whether the daemon ignored it (the same badge again).
    public var ignored: Bool
}

/// What a `touch` did: which item it hit and, on `up`, what it committed.
public struct TouchResult: Sendable, Equatable {
    /// The change's `seq`.
    public var seq: UInt64
    /// The enabled item under the finger (nil: none).
    public var target: String?
    /// Whether the bar took the touch (the front end must not pass it on).
    public var consumed: Bool
    /// What an `up` committed: `select`, `reselect` or `action` (nil: nothing).
    public var commit: Commit?
    /// Whether the daemon ignored it (a replayed `touch_id`).
    public var ignored: Bool
}

/// Where a sound went (`sound.played`).
public struct PlayedSound: Equatable, Sendable {
    /// The sound's name.
    public var name: String
    /// The voice `sound.play` answered.
    public var voice: Int
    /// Stream position (frames since the daemon started) of the sound's first frame.
    public var frame: Int64

    /// A sound that started at `frame`.
    public init(name: String, voice: Int, frame: Int64) {
        self.name = name
        self.voice = voice
        self.frame = frame
    }
}

/// An event from the daemon, typed. The names are those of `Topics.declared`; one this
/// version does not know arrives as `.other`.
public enum TabBarEvent: Sendable, Equatable {
    /// The first element of `events(topics:)`: the state when the subscription began;
    /// every event after it is newer.
    case subscribed(Snapshot)
    /// Replace your copy of the state with this one: the daemon's `state.resync` (you fell
    /// behind; `reconnected` false) or, with `reconnect: true`, the state after the
    /// connection came back (`reconnected` true).
    case resync(Snapshot, reconnected: Bool)
    /// `tab.selected`: another tab was selected.
    case tabSelected(seq: UInt64, tab: String, previous: String?, source: Source)
    /// `tab.reselected`: the selected tab was selected again.
    case tabReselected(seq: UInt64, tab: String, source: Source)
    /// `tab.highlighted`: a highlight began, ended or was cancelled.
    case tabHighlighted(seq: UInt64, tab: String, phase: HighlightPhase)
    /// `action.triggered`: a center or action item was triggered.
    case actionTriggered(seq: UInt64, tab: String, action: String?)
    /// `action.finished`: the active action ended.
    case actionFinished(seq: UInt64, tab: String)
    /// `badge.changed`: `badge` is the badge shown (nil: none); `hiddenBadge` one kept hidden.
    case badgeChanged(seq: UInt64, tab: String, badge: Badge?, hiddenBadge: Badge?)
    /// `bar.configured`: the new state.
    case barConfigured(Snapshot)
    /// `bar.visibility`: the bar's visibility changed (`phase` hiding, showing or idle).
    case barVisibility(seq: UInt64, hidden: Bool, phase: VisibilityPhase, reasons: [HideReason], durationMs: Int, navStack: [Bool])
    /// `feedback.changed`: the profile or the volume changed.
    case feedbackChanged(seq: UInt64, feedback: Feedback)
    /// `animation.cue`: what a front end should animate (params as received).
    case animationCue(seq: UInt64, tab: String?, params: JSON)
    /// `animation.began`.
    case animationBegan(seq: UInt64, animation: Int, kind: String, tab: String?, durationMs: Int)
    /// `animation.ended`.
    case animationEnded(seq: UInt64, animation: Int, reason: AnimationEndReason)
    /// `sound.played`: a sound's first frame reached the device.
    case soundPlayed(PlayedSound)
    /// `sound.failed`: an accepted sound was not heard intact.
    case soundFailed(voice: Int, name: String, reason: String)
    /// `sound.suppressed`: a sound was not played because the desktop's sound settings
    /// silence it (`reason` says which).
    case soundSuppressed(name: String, reason: String)
    /// `server.stopping`: the daemon is shutting down.
    case serverStopping
    /// An event this version of the client does not know, as received.
    case other(name: String, params: JSON)

    /// The event's name as the daemon sends it (`subscribed` has none of its own: `subscribe`).
    public var name: String {
        switch self {
        case .subscribed: return "subscribe"
        case .resync: return "state.resync"
        case .tabSelected: return "tab.selected"
        case .tabReselected: return "tab.reselected"
        case .tabHighlighted: return "tab.highlighted"
        case .actionTriggered: return "action.triggered"
        case .actionFinished: return "action.finished"
        case .badgeChanged: return "badge.changed"
        case .barConfigured: return "bar.configured"
        case .barVisibility: return "bar.visibility"
        case .feedbackChanged: return "feedback.changed"
        case .animationCue: return "animation.cue"
        case .animationBegan: return "animation.began"
        case .animationEnded: return "animation.ended"
        case .soundPlayed: return "sound.played"
        case .soundFailed: return "sound.failed"
        case .soundSuppressed: return "sound.suppressed"
        case .serverStopping: return "server.stopping"
        case .other(let name, _): return name
        }
    }

    /// The state's `seq` the event carries (nil for sounds and `server.stopping`).
    public var seq: UInt64? {
        switch self {
        case .subscribed(let s), .resync(let s, _), .barConfigured(let s): return s.seq
        case .tabSelected(let seq, _, _, _), .tabReselected(let seq, _, _), .tabHighlighted(let seq, _, _),
             .actionTriggered(let seq, _, _), .actionFinished(let seq, _), .badgeChanged(let seq, _, _, _),
             .barVisibility(let seq, _, _, _, _, _), .feedbackChanged(let seq, _), .animationCue(let seq, _, _),
             .animationBegan(let seq, _, _, _, _), .animationEnded(let seq, _, _):
            return seq
        case .other(_, let params): return params["seq"].flatMap { Decode.uint($0) }
        case .soundPlayed, .soundFailed, .soundSuppressed, .serverStopping: return nil
        }
    }

    /// Decodes the notification `name` with `params`. A known event whose params do not
    /// have its shape throws `ClientError.protocolViolation`.
    public init(name: String, params: JSON) throws(ClientError) {
        let p = params
        switch name {
        case "tab.selected":
            self = .tabSelected(seq: try Decode.seq(p, "seq"), tab: try Decode.string(p, "tab"),
                                previous: p["previous"]?.stringValue, source: try Decode.choice(p, "source"))
        case "tab.reselected":
            self = .tabReselected(seq: try Decode.seq(p, "seq"), tab: try Decode.string(p, "tab"), source: try Decode.choice(p, "source"))
        case "tab.highlighted":
            self = .tabHighlighted(seq: try Decode.seq(p, "seq"), tab: try Decode.string(p, "tab"), phase: try Decode.choice(p, "phase"))
        case "action.triggered":
            self = .actionTriggered(seq: try Decode.seq(p, "seq"), tab: try Decode.string(p, "tab"), action: p["action"]?.stringValue)
        case "action.finished":
            self = .actionFinished(seq: try Decode.seq(p, "seq"), tab: try Decode.string(p, "tab"))
        case "badge.changed":
            self = .badgeChanged(seq: try Decode.seq(p, "seq"), tab: try Decode.string(p, "tab"),
                                 badge: try Decode.badge(p["badge"]), hiddenBadge: try Decode.badge(p["hidden_badge"]))
        case "bar.configured":
            self = .barConfigured(try Snapshot(p))
        case "bar.visibility":
            self = .barVisibility(seq: try Decode.seq(p, "seq"), hidden: p["hidden"]?.boolValue ?? false,
                                  phase: try Decode.choice(p, "phase"),
                                  reasons: (p["reasons"]?.arrayValue ?? []).compactMap { $0.stringValue.flatMap(HideReason.init(rawValue:)) },
                                  durationMs: p["duration_ms"]?.intValue ?? 0,
                                  navStack: (p["nav_stack"]?.arrayValue ?? []).compactMap(\.boolValue))
        case "feedback.changed":
            let f = p["feedback"] ?? .null
            self = .feedbackChanged(seq: try Decode.seq(p, "seq"),
                                    feedback: Feedback(profile: try Decode.choice(f, "profile"), volume: f["volume"]?.doubleValue ?? 1))
        case "animation.cue":
            self = .animationCue(seq: try Decode.seq(p, "seq"), tab: p["tab"]?.stringValue, params: p)
        case "animation.began":
            self = .animationBegan(seq: try Decode.seq(p, "seq"), animation: try Decode.int(p, "animation"),
                                   kind: p["kind"]?.stringValue ?? "", tab: p["tab"]?.stringValue,
                                   durationMs: p["duration_ms"]?.intValue ?? 0)
        case "animation.ended":
            self = .animationEnded(seq: try Decode.seq(p, "seq"), animation: try Decode.int(p, "animation"), reason: try Decode.choice(p, "reason"))
        case "sound.played":
            self = .soundPlayed(PlayedSound(name: try Decode.string(p, "name"), voice: try Decode.int(p, "voice"),
                                            frame: Int64(p["frame"]?.intValue ?? -1)))
        case "sound.failed":
            self = .soundFailed(voice: try Decode.int(p, "voice"), name: try Decode.string(p, "name"), reason: p["reason"]?.stringValue ?? "")
        case "sound.suppressed":
            self = .soundSuppressed(name: try Decode.string(p, "name"), reason: try Decode.string(p, "reason"))
        case "server.stopping":
            self = .serverStopping
        case "state.resync":
            self = .resync(try Snapshot(p), reconnected: p["reconnected"]?.boolValue ?? false)
        default:
            self = .other(name: name, params: params)
        }
    }
}

/// Reading replies' and events' members, each failure a `protocolViolation` naming the member.
enum Decode {
    /// Limits wide enough for any state a daemon sends (its own may be configured above the defaults).
    static let lenient: Limits = {
        var l = Limits()
        l.maxItems = .max
        l.maxIDLength = .max
        l.maxTextLength = .max
        l.maxBadgeTextBytes = .max
        return l
    }()

    static func uint(_ j: JSON) -> UInt64? {
        guard case .number(let text) = j else { return nil }
        return UInt64(text)
    }

    static func seq(_ j: JSON, _ key: String) throws(ClientError) -> UInt64 {
        guard let v = j[key].flatMap(uint) else { throw missing(j, key, "a whole number") }
        return v
    }

    /// `seq` of a parsed line's value, read in place (what does not read throws as from the tree).
    static func seq(_ v: JSONValue, _ key: String) throws(ClientError) -> UInt64 {
        if let m = v[key] {
            if let i = m.intValue, i >= 0 { return UInt64(i) }
            if let t = m.numberText, let n = UInt64(t) { return n }
        }
        return try seq(v.json, key)
    }

    /// `string` of a parsed line's value, read in place.
    static func string(_ v: JSONValue, _ key: String) throws(ClientError) -> String {
        if let s = v[key]?.stringValue { return s }
        return try string(v.json, key)
    }

    static func int(_ j: JSON, _ key: String) throws(ClientError) -> Int {
        guard let v = j[key]?.intValue else { throw missing(j, key, "a whole number") }
        return v
    }

    static func string(_ j: JSON, _ key: String) throws(ClientError) -> String {
        guard let v = j[key]?.stringValue else { throw missing(j, key, "a string") }
        return v
    }

    static func bool(_ j: JSON, _ key: String) throws(ClientError) -> Bool {
        guard let v = j[key]?.boolValue else { throw missing(j, key, "a boolean") }
        return v
    }

    static func choice<C: RawRepresentable>(_ j: JSON, _ key: String) throws(ClientError) -> C where C.RawValue == String {
        guard let v = j[key]?.stringValue.flatMap(C.init(rawValue:)) else { throw missing(j, key, "one of its names") }
        return v
    }

    /// A badge as the daemon writes it (`{"kind","value","display"}`), or nil for null / absent.
    static func badge(_ j: JSON?) throws(ClientError) -> Badge? {
        guard let j, !j.isNull else { return nil }
        switch j["kind"]?.stringValue {
        case "count"?: return .count(try int(j, "value"))
        case "text"?: return .text(try string(j, "value"))
        case "dot"?: return .dot
        default: throw .protocolViolation("a badge of no known kind: \(j.text)")
        }
    }

    static func state(_ j: JSON, seq: UInt64) throws(ClientError) -> BarState {
        do { return try BarState.decode(j, seq: seq, limits: lenient) } catch {
            throw .protocolViolation("a state this client cannot read (\(error.message)): \(Wire.excerpt(j.text))")
        }
    }

    static func missing(_ j: JSON, _ key: String, _ what: String) -> ClientError {
        .protocolViolation("\"\(key)\" should be \(what) in \(Wire.excerpt(j.text))")
    }
}
