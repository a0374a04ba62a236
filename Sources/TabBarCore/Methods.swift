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

/// One method, declared once: its name, the fields its params accept, how its params
/// decode, and — by the kind of command the decoder returns — who handles it: the reducer
/// (a state method, which may change the state and is journaled) or the server. (A class:
/// taking a method from the table counts one reference, not one for each of its parts.)
public final class MethodSpec: Sendable {
    public let name: String
    /// Whether the method may change the state (its command is a `StateCommand`).
    public let changesState: Bool
    /// The fields its params accept (`[]`: none): any other is refused, naming it, before
    /// the decoder runs; the decoder's readers find these by their slots. (No default: a
    /// declaration written the old way, with `p.only` in its decoder, does not compile.)
    public let fields: Fields
    /// The decoder, given the params as `fields` reads them.
    let body: @Sendable (Params, Limits) throws(RPCError) -> Command

    init(name: String, changesState: Bool, fields: Fields, body: @escaping @Sendable (Params, Limits) throws(RPCError) -> Command) {
        self.name = name
        self.changesState = changesState
        self.fields = fields
        self.body = body
    }

    /// Decodes `params`: its keys checked against `fields` and located, then the decoder.
    public func decode(_ params: Params, _ limits: Limits) throws(RPCError) -> Command {
        try body(try params.reading(fields), limits)
    }

    /// A method the reducer handles.
    public static func state(_ name: String, fields: Fields, _ decode: @escaping @Sendable (Params, Limits) throws(RPCError) -> StateCommand) -> MethodSpec {
        MethodSpec(name: name, changesState: true, fields: fields, body: { p, l throws(RPCError) in .state(try decode(p, l)) })
    }

    /// A method the server handles.
    public static func server(_ name: String, fields: Fields, _ decode: @escaping @Sendable (Params, Limits) throws(RPCError) -> ServerCommand) -> MethodSpec {
        MethodSpec(name: name, changesState: false, fields: fields, body: { p, l throws(RPCError) in .server(try decode(p, l)) })
    }
}

/// Every method, declared once. Unknown methods and bad params get uniform errors.
public enum Methods {
    /// Every method: the foundation's and those of touch, visibility and animation (`StyleMethods.swift`).
    public static let all: [MethodSpec] = core + styles + harness

    static let core: [MethodSpec] = [
        .server("ping", fields: []) { _, _ throws(RPCError) in .ping },
        .server("state.get", fields: []) { _, _ throws(RPCError) in .stateGet },
        .state("bar.configure", fields: ["items", "selected", "layout", "settings"]) { p, limits throws(RPCError) in
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
        .state("tab.select", fields: ["tab", "index", "if_seq", "source"]) { p, limits throws(RPCError) in
            let ref: TabRef
            switch (try p.id("tab", maxLength: limits.maxIDLength), try p.int("index")) {
            case (let t?, nil): ref = .id(t)
            case (nil, let i?): ref = .index(i)
            case (nil, nil): throw .invalidParams("tab", "Missing field \"tab\" (an item id) or \"index\" (a position).")
            case (_?, _?): throw .invalidParams("index", "Give either \"tab\" or \"index\", not both.")
            }
            return .select(ref, ifSeq: try p.int("if_seq"),
                           source: try p.choice("source", Source.self, allowed: ["user", "program"]) ?? .user)
        },
        .state("action.trigger", fields: ["tab", "source"]) { p, limits throws(RPCError) in
            return .actionTrigger(try p.requiredID("tab", maxLength: limits.maxIDLength),
                                  source: try p.choice("source", Source.self, allowed: ["user", "program"]) ?? .user)
        },
        .state("action.finish", fields: ["tab"]) { p, limits throws(RPCError) in
            return .actionFinish(try p.requiredID("tab", maxLength: limits.maxIDLength))
        },
        .state("badge.set", fields: ["tab", "count", "text", "dot", "hidden"]) { p, limits throws(RPCError) in
            let tab = try p.requiredID("tab", maxLength: limits.maxIDLength)
            let hidden = try p.bool("hidden")
            if hidden != nil && !["count", "text", "dot"].contains(where: { p[$0].map { !$0.isNull } ?? false }) {
                return .badgeSet(tab, BadgeUpdate(value: .keep, hidden: hidden))
            }
            let badge = try Badge.decode(p, limits: limits)
            return .badgeSet(tab, BadgeUpdate(value: badge.map { .set($0) } ?? .remove, hidden: hidden))
        },
        .state("badge.clear", fields: ["tab"]) { p, limits throws(RPCError) in
            return .badgeClear(try p.requiredID("tab", maxLength: limits.maxIDLength))
        },
        .state("feedback.set", fields: ["profile", "volume"]) { p, _ throws(RPCError) in
            let profile = try p.choice("profile", FeedbackProfile.self, allowed: ["full", "quiet", "silent"])
            let volume = try p.double("volume", range: 0...1)
            if profile == nil && volume == nil {
                throw .invalidParams("profile", "Give \"profile\" (full, quiet, silent), \"volume\" (0…1) or both.")
            }
            return .feedbackSet(profile: profile, volume: volume)
        },
        .server("sound.play", fields: ["name"]) { p, _ throws(RPCError) in
            return .soundPlay(try p.requiredString("name", maxLength: 256))
        },
        .server("sound.list", fields: []) { _, _ throws(RPCError) in .soundList },
        .server("sound.reload", fields: []) { _, _ throws(RPCError) in .soundReload },
        .server("subscribe", fields: ["topics"]) { p, _ throws(RPCError) in
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
        .server("unsubscribe", fields: []) { _, _ throws(RPCError) in .unsubscribe },
        .server("stats.get", fields: []) { _, _ throws(RPCError) in .statsGet },
    ]

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
    private let indices: [String: Int]

    init(_ names: [String], fields: [Fields.Entries]) {
        // Plain printable ASCII, no quote or backslash: the envelope reader finds a name by
        // its bytes before it checks them (`EnvelopeReader.knownMethod`).
        for n in names {
            precondition(!n.isEmpty && n.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") },
                         "method \(n) is plain printable ASCII")
        }
        self.fields = fields
        indices = Dictionary(uniqueKeysWithValues: names.enumerated().map { ($1, $0) })
    }

    /// The index of the name `raw` spells, or -1.
    func index(of raw: UnsafeBufferPointer<UInt8>) -> Int {
        indices[String(decoding: raw, as: UTF8.self)] ?? -1
    }
}
