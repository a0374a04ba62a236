/// Which item a request names: by id or by position in `items`.
public enum TabRef: Equatable, Sendable {
    case id(String)
    case index(Int)
}

/// Who caused a change. Wire strings: `user`, `program`. Only user changes click.
public enum Source: String, Equatable, Sendable, CaseIterable {
    case user
    case program
}

/// A request that the reducer handles: it may change the state (`Reducer.reduce`).
public enum StateCommand: Equatable, Sendable {
    /// `items` nil: a layout-only update. `badgeGiven[k]`: item k names its badge (else it keeps its old one).
    case configure(items: [Item]?, badgeGiven: [Bool], selected: String?, layout: Params?, settings: Params? = nil)
    case select(TabRef, ifSeq: Int?, source: Source)
    case actionTrigger(String, source: Source)
    case actionFinish(String)
    case badgeSet(String, BadgeUpdate)
    case badgeClear(String)
    case feedbackSet(profile: FeedbackProfile?, volume: Double?)
    /// A finger on the bar, in bar coordinates; `touchID` names the sequence (down…up/cancel).
    case touch(TouchPhase, x: Double, y: Double, touchID: Int?)
    case highlight(String, HighlightPhase)
    case setHidden(Bool, reason: HideReason, animated: Bool)
    case navPush(hidesBar: Bool)
    case navPop
    case scroll(dy: Double)
    case animationBegin(kind: String, tab: String?, durationMs: Int)
    case animationEnd(id: Int, reason: AnimationEndReason)
    /// A timer the reducer asked for (`Effect.timer`) is due; sent by the server's loop, never by clients.
    case timerFired(TimerKey)
}

/// A request that the server answers itself: it reads the state or works outside it
/// (sounds, subscriptions, statistics, the test harness), and never changes the state.
public enum ServerCommand: Equatable, Sendable {
    case ping
    case stateGet
    case soundPlay(String)
    case soundList
    case soundReload
    case subscribe(topics: [String]?)
    case unsubscribe
    case statsGet
    /// `rpc.discover`: the OpenRPC document (`OpenRPC`).
    case discover
    /// Test harness (`HarnessMethods.swift`): the manual clock and the null sink's capture.
    case clockAdvance(ms: Int)
    case clockGet
    case captureStart(path: String)
    case captureStop
}

/// A request, decoded and validated against its method's parameter rules: which of the
/// two handles it is part of its type.
public enum Command: Equatable, Sendable {
    case state(StateCommand)
    case server(ServerCommand)

    /// Whether the command may change the state.
    public var changesState: Bool {
        switch self {
        case .state: return true
        case .server: return false
        }
    }
}

extension Params: Equatable {
    /// Same text, same prefix.
    public static func == (a: Params, b: Params) -> Bool {
        guard a.prefix == b.prefix else { return false }
        switch (a.object, b.object) {
        case (nil, nil): return true
        case let (x?, y?): return x.sameText(y)
        default: return false
        }
    }
}

/// One method, declared once: its name, its params (each field's name, whether it is
/// required and its JSON Schema), how its params decode, what it answers and the errors it
/// can return — and, by the kind of command the decoder returns, who handles it: the reducer
/// (a state method, which may change the state and is journaled) or the server. `rpc.discover`'s
/// document (`OpenRPC`) is made from these declarations; there is no other list. (A class:
/// taking a method from the table counts one reference, not one for each of its parts.)
public final class MethodSpec: Sendable {
    public let name: String
    /// What it does, one sentence.
    public let summary: String
    /// Whether the method may change the state (its command is a `StateCommand`).
    public let changesState: Bool
    /// Its params: any other key is refused, naming it, before the decoder runs.
    public let params: [Field]
    /// What JSON Schema says of the params beyond each field (for example "exactly one of
    /// `tab` and `index`"): members added to the params object's schema.
    public let rule: [JSON.Member]
    /// The fields its params accept, laid out for matching keys (made from `params`): the
    /// decoder's readers find these by their slots.
    public let fields: Fields
    /// The JSON Schema of its result.
    public let result: JSON
    /// The errors it can return beyond a params object its schema refuses (`invalid_params`,
    /// every method) and a change that could not be saved (`storage_failed`, state methods).
    public let errors: [MethodError]
    /// The decoder, given the params as `fields` reads them.
    let body: @Sendable (Params, Limits) throws(RPCError) -> Command

    init(name: String, summary: String, changesState: Bool, params: [Field], rule: [JSON.Member], result: JSON, errors: [MethodError],
         body: @escaping @Sendable (Params, Limits) throws(RPCError) -> Command) {
        self.name = name
        self.summary = summary
        self.changesState = changesState
        self.params = params
        self.rule = rule
        self.fields = Fields(params.map(\.name))
        self.result = result
        self.errors = errors
        self.body = body
    }

    /// Decodes `params`: its keys checked against `fields` and located, then the decoder.
    public func decode(_ params: Params, _ limits: Limits) throws(RPCError) -> Command {
        try body(try params.reading(fields), limits)
    }

    /// A method the reducer handles.
    public static func state(_ name: String, _ summary: String, params: [Field], rule: [JSON.Member] = [], result: JSON,
                             errors: [MethodError] = [],
                             _ decode: @escaping @Sendable (Params, Limits) throws(RPCError) -> StateCommand) -> MethodSpec {
        MethodSpec(name: name, summary: summary, changesState: true, params: params, rule: rule, result: result, errors: errors,
                   body: { p, l throws(RPCError) in .state(try decode(p, l)) })
    }

    /// A method the server handles.
    public static func server(_ name: String, _ summary: String, params: [Field], rule: [JSON.Member] = [], result: JSON,
                              errors: [MethodError] = [],
                              _ decode: @escaping @Sendable (Params, Limits) throws(RPCError) -> ServerCommand) -> MethodSpec {
        MethodSpec(name: name, summary: summary, changesState: false, params: params, rule: rule, result: result, errors: errors,
                   body: { p, l throws(RPCError) in .server(try decode(p, l)) })
    }
}

/// An error a method can return: its `data.kind` (the code is the kind's, `RPCError`) and
/// when. `field`: an `invalid_params` that a schema-valid request can still get (a rule
/// between items, or one that depends on the state), with the `data.field` it names — a
/// prefix of it when it ends in `[` or `.`.
public struct MethodError: Sendable {
    public let kind: String
    public let when: String
    public let field: String?

    public init(_ kind: String, _ when: String, field: String? = nil) {
        self.kind = kind
        self.when = when
        self.field = field
    }

    public static let unknownTab = MethodError("unknown_tab", "No item has that id.")
}

/// `rule` members: the object must have at least one of these fields.
func anyOfRequired(_ names: String...) -> [JSON.Member] {
    [JSON.Member("anyOf", .array(names.map { .obj(["required": .array([.string($0)])]) }))]
}

/// `rule` members: the object must have exactly one of these fields.
func oneOfRequired(_ names: String...) -> [JSON.Member] {
    [JSON.Member("oneOf", .array(names.map { .obj(["required": .array([.string($0)])]) }))]
}

/// Every method, declared once. Unknown methods and bad params get uniform errors.
public enum Methods {
    /// Every method: the foundation's and those of touch, visibility and animation (`StyleMethods.swift`).
    public static let all: [MethodSpec] = core + styles + harness

    static let core: [MethodSpec] = [
        .server("ping", "Answers {}: the daemon is there.", params: [], result: Schema.sent([:])) { _, _ throws(RPCError) in .ping },
        .server("state.get", "The whole state and its seq.", params: [], result: Results.state) { _, _ throws(RPCError) in .stateGet },
        .state("bar.configure", "Sets the items, the selection, the layout and the settings (any of them); the reply is the new state.",
               params: [
                   Field("items", Schema.array(Schema.itemInput, minItems: 1, maxItems: Limits().maxItems),
                         "The items, left to right: ids unique, at most one center item (in the middle of an odd number), at least one enabled tab."),
                   .id("selected", "The tab to select."),
                   Field("layout", Schema.layoutInput, "The bar's geometry; members not given are kept."),
                   Field("settings", Schema.settingsInput, "The bar's settings; members not given are kept."),
               ],
               rule: anyOfRequired("items", "layout", "settings"),
               result: Results.state,
               errors: [
                   MethodError("invalid_params", "Two items have the same id, a center item is not in the middle, or no item is an enabled tab.", field: "items"),
                   MethodError("invalid_params", "safe_bottom exceeds height, or center.width exceeds width, once merged with the current layout.", field: "layout."),
                   MethodError("limit_exceeded", "More items than max_items."),
                   MethodError("unknown_tab", "No item has the id in selected."),
                   MethodError("not_selectable", "selected names an item that is not an enabled tab."),
               ]) { p, limits throws(RPCError) in
            var items: [Item]?
            var badgeGiven: [Bool] = []
            if let list = try p.array("items") {
                if list.count > limits.maxItems {
                    throw .limitExceeded("The bar has \(list.count) items; at most \(limits.maxItems) are allowed (max_items).")
                }
                var decoded: [Item] = []
                for (k, j) in list.enumerated() {
                    decoded.append(try Item.decode(j, at: k, limits: limits))
                    badgeGiven.append(j["badge"] != nil || j["hidden_badge"] != nil)
                }
                items = decoded
            }
            // (Kept past the line's document: the reducer reads them.)
            let layout = try p.object("layout")?.detached()
            let settings = try p.object("settings")?.detached()
            if items == nil && layout == nil && settings == nil {
                throw .invalidParams("items", "Missing field \"items\" (an array of items); give \"items\", \"layout\", \"settings\" or any of them.")
            }
            return .configure(items: items, badgeGiven: badgeGiven, selected: try p.id("selected", maxLength: limits.maxIDLength),
                              layout: layout, settings: settings)
        },
        .state("tab.select", "Selects a tab by id or position; selecting the selected tab is a reselect.",
               params: [
                   .id("tab", "The tab's id."),
                   .int("index", "The tab's position in items (0-based, center and action items counted)."),
                   .int("if_seq", "Select only if the state's seq is this one."),
                   .choice("source", Source.self, "Who selects: user (default; clicks) or program (silent)."),
               ],
               rule: oneOfRequired("tab", "index"),
               result: Results.selected,
               errors: [
                   .unknownTab,
                   MethodError("not_selectable", "The item is a center or action item, or disabled."),
                   MethodError("conflict", "if_seq is not the current seq."),
               ]) { p, limits throws(RPCError) in
            let ref: TabRef
            switch (try p.id("tab", maxLength: limits.maxIDLength), try p.int("index")) {
            case (let t?, nil): ref = .id(t)
            case (nil, let i?): ref = .index(i)
            case (nil, nil): throw .invalidParams("tab", "Missing field \"tab\" (an item id) or \"index\" (a position).")
            case (_?, _?): throw .invalidParams("index", "Give either \"tab\" or \"index\", not both.")
            }
            return .select(ref, ifSeq: try p.int("if_seq"), source: try p.choice("source", Source.self, allowed: Source.allCases.map(\.rawValue)) ?? .user)
        },
        .state("action.trigger", "Triggers a center or action item: it becomes the active action; the selection stays.",
               params: [.id("tab", required: true, "The center or action item."),
                        .choice("source", Source.self, "user (default; clicks) or program.")],
               result: Results.seq,
               errors: [.unknownTab, MethodError("invalid_params", "The item is a tab (use tab.select).", field: "tab"),
                        MethodError("not_selectable", "The item is disabled.")]) { p, limits throws(RPCError) in
            return .actionTrigger(try p.requiredID("tab", maxLength: limits.maxIDLength),
                                  source: try p.choice("source", Source.self, allowed: Source.allCases.map(\.rawValue)) ?? .user)
        },
        .state("action.finish", "Ends the active action (nothing if that item's action is not active).",
               params: [.id("tab", required: true, "The item whose action ended.")],
               result: Results.seq, errors: [.unknownTab]) { p, limits throws(RPCError) in
            return .actionFinish(try p.requiredID("tab", maxLength: limits.maxIDLength))
        },
        .state("badge.set", "Sets an item's badge (a count, a text or a dot), or only whether it is hidden.",
               params: [.id("tab", required: true, "The item.")] + Schema.badgeValues + [.bool("hidden", "Keep the badge but hide it.")],
               rule: [JSON.Member("oneOf", .array([
                   .obj(["required": .array([.string("count")])]),
                   .obj(["required": .array([.string("text")])]),
                   .obj(["required": .array([.string("dot")])]),
                   .obj(["required": .array([.string("hidden")]),
                         "not": .obj(["anyOf": .array(["count", "text", "dot"].map { .obj(["required": .array([.string($0)])]) })])]),
               ]))],
               result: Results.badge, errors: [.unknownTab]) { p, limits throws(RPCError) in
            let tab = try p.requiredID("tab", maxLength: limits.maxIDLength)
            let hidden = try p.bool("hidden")
            if hidden != nil && !["count", "text", "dot"].contains(where: { p[$0].map { !$0.isNull } ?? false }) {
                return .badgeSet(tab, BadgeUpdate(value: .keep, hidden: hidden))
            }
            let badge = try Badge.decode(p, limits: limits)
            return .badgeSet(tab, BadgeUpdate(value: badge.map { .set($0) } ?? .remove, hidden: hidden))
        },
        .state("badge.clear", "Removes an item's badge.", params: [.id("tab", required: true, "The item.")],
               result: Results.seq, errors: [.unknownTab]) { p, limits throws(RPCError) in
            return .badgeClear(try p.requiredID("tab", maxLength: limits.maxIDLength))
        },
        .state("feedback.set", "Sets the feedback profile, the volume or both.",
               params: [.choice("profile", FeedbackProfile.self, "full, quiet (select and reselect clicks only) or silent."),
                        .number("volume", 0...1, "The clicks' volume.")],
               rule: anyOfRequired("profile", "volume"),
               result: Schema.sent(["seq": Schema.seq, "feedback": Schema.feedback])) { p, _ throws(RPCError) in
            let profile = try p.choice("profile", FeedbackProfile.self, allowed: FeedbackProfile.allCases.map(\.rawValue))
            let volume = try p.double("volume", range: 0...1)
            if profile == nil && volume == nil {
                throw .invalidParams("profile", "Give \"profile\" (full, quiet, silent), \"volume\" (0…1) or both.")
            }
            return .feedbackSet(profile: profile, volume: volume)
        },
        .server("sound.play", "Plays a loaded sound.", params: [.string("name", maxBytes: 256, required: true, "The sound's name (sound.list).")],
                result: Schema.sent(["voice": Schema.anyOf(Schema.seq, Schema.null)], optional: ["suppressed": Schema.str]),
                errors: [MethodError("unknown_sound", "No sound has that name."),
                         MethodError("sound_not_loaded", "The sound was to be loaded but was not (data.reason says why: the file's problem)."),
                         MethodError("audio_unavailable", "The audio device cannot play now.")]) { p, _ throws(RPCError) in
            return .soundPlay(try p.requiredString("name", maxLength: 256))
        },
        .server("sound.list", "The loaded sounds, the sounds that failed to load and why, and whether a load is still running.", params: [],
                result: Schema.sent(["sounds": Schema.array(Schema.anyObject)],
                                    optional: ["failed": Schema.array(Schema.sent(["source": Schema.str, "reason": Schema.str], optional: ["name": Schema.str])),
                                               "loading": Schema.boolean])) { _, _ throws(RPCError) in .soundList },
        .server("sound.reload", "Reloads the sound files, like SIGHUP; answered once the new sounds are in (other connections are served meanwhile).", params: [],
                result: Schema.sent(["sounds": Schema.seq, "failures": Schema.array(Schema.sent(["source": Schema.str, "reason": Schema.str], optional: ["name": Schema.str]))])) { _, _ throws(RPCError) in .soundReload },
        .server("subscribe", "Sends this connection the events of these topics (all when absent), replacing its topics; the reply is the snapshot.",
                params: [Field("topics", Schema.array(Schema.strings(Topics.all)), "Event names or their first parts (see x-events).")],
                result: Results.state) { p, _ throws(RPCError) in
            guard let list = try p.array("topics") else { return .subscribe(topics: nil) }
            var topics: [String] = []
            for (k, t) in list.enumerated() {
                guard let s = t.stringValue, !s.isEmpty, s.utf8.count <= 64 else {
                    throw .invalidParams("topics[\(k)]", "Each topic must be a non-empty string of at most 64 bytes, such as \"tab\" or \"badge.changed\".")
                }
                guard Topics.isKnown(s) else {
                    throw .invalidParams("topics[\(k)]", "There is no topic \"\(s)\"; topics are event names (such as \"badge.changed\") or their first part: "
                                         + Topics.prefixes.joined(separator: ", ") + ".")
                }
                topics.append(s)
            }
            return .subscribe(topics: topics)
        },
        .server("unsubscribe", "Stops this connection's events.", params: [], result: Schema.sent([:])) { _, _ throws(RPCError) in .unsubscribe },
        .server("stats.get", "The daemon's counters (members may be added).", params: [], result: Schema.sent(["seq": Schema.seq])) { _, _ throws(RPCError) in .statsGet },
        .server("rpc.discover", "This OpenRPC document.", params: [], result: Schema.sent(["openrpc": Schema.str, "info": Schema.anyObject, "methods": Schema.array(Schema.anyObject)])) { _, _ throws(RPCError) in .discover },
    ]

    /// The result shapes several methods share.
    enum Results {
        static let seq = Schema.sent(["seq": Schema.seq])
        static let state = Schema.sent(["seq": Schema.seq, "state": Schema.state])
        static let selected = Schema.sent(["seq": Schema.seq, "selected": Schema.itemID, "previous": Schema.optionalID, "reselected": Schema.boolean])
        static let badge = Schema.sent(["seq": Schema.seq, "badge": Schema.optionalBadge], optional: ["ignored": Schema.boolean])
        static let visibility = Schema.sent(["seq": Schema.seq, "visibility": Schema.visibility])
    }

    /// The names of all methods, for `hello.features` and docs.
    public static var names: [String] { all.map(\.name) }

    /// The index in `all` of the method whose name is `raw` (bytes, no escapes), if any:
    /// one probe of `MethodNames`' hash table for almost every name.
    static func index(named raw: UnsafeBufferPointer<UInt8>) -> Int? {
        let k = MethodNames.shared.index(of: raw)
        return k < 0 ? nil : k
    }

    /// The method called `name`, if there is one.
    public static func spec(named name: String) -> MethodSpec? {
        for m in all where m.name == name { return m }
        return nil
    }

    /// Looks up and decodes a request's params.
    public static func command(for request: Request, limits: Limits) -> Result<Command, RPCError> {
        guard let spec = spec(named: request.method) else { return .failure(.methodNotFound(request.method)) }
        do {
            return .success(try spec.decode(try Params(request.params), limits))
        } catch {
            return .failure(error)
        }
    }
}

/// The methods' names, for lookup by the bytes of a request's `method`, and each method's
/// fields by its index (what the envelope reader reads its params by).
struct MethodNames: Sendable {
    static let shared = MethodNames(Methods.all.map(\.name), fields: Methods.all.map(\.fields.entries))

    /// Each method's fields (`MethodSpec.fields.entries`), by its index.
    let fields: [Fields.Entries]
    /// Each method's name as bytes, by its index.
    private let names: [[UInt8]]

    init(_ names: [String], fields: [Fields.Entries]) {
        // Plain printable ASCII, no quote or backslash: the envelope reader finds a name by
        // its bytes before it checks them (`EnvelopeReader.knownMethod`).
        for n in names {
            precondition(!n.isEmpty && n.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") },
                         "method \(n) is plain printable ASCII")
        }
        self.fields = fields
        self.names = names.map { Array($0.utf8) }
    }

    /// The index of the name `raw` spells, or -1.
    func index(of raw: UnsafeBufferPointer<UInt8>) -> Int {
        guard let p = raw.baseAddress else { return -1 }
        for k in names.indices where names[k].count == raw.count {
            if names[k].withUnsafeBufferPointer({ memcmpEqual($0.baseAddress!, p, raw.count) }) { return k }
        }
        return -1
    }
}
