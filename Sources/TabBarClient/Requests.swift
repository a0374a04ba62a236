import TabBarCore

/// The typed methods' requests: each a method of the daemon's table (`Methods.all`) and its
/// params. `RequestsTests` decodes every one with the table's own decoder, so a method
/// renamed or a param changed there fails the tests, not a front end.
enum Requests {
    typealias Line = (method: String, params: JSON?)

    static func ping() -> Line { ("ping", nil) }
    static func stateGet() -> Line { ("state.get", nil) }
    static func configure(_ params: JSON) -> Line { ("bar.configure", params) }

    static func select(_ tab: TabRef, ifSeq: UInt64?, source: Source) -> Line {
        var p: [JSON.Member] = []
        switch tab {
        case .id(let id): p.append(JSON.Member("tab", .string(id)))
        case .index(let k): p.append(JSON.Member("index", .int(k)))
        }
        if let ifSeq { p.append(JSON.Member("if_seq", .int(ifSeq))) }
        if source != .user { p.append(JSON.Member("source", .string(source.rawValue))) }
        return ("tab.select", .object(p))
    }

    static func trigger(_ tab: String, source: Source) -> Line {
        ("action.trigger", source == .user ? ["tab": .string(tab)] : ["tab": .string(tab), "source": .string(source.rawValue)])
    }

    static func finishAction(_ tab: String) -> Line { ("action.finish", ["tab": .string(tab)]) }

    /// `badge` nil removes it (`count` 0); `hidden` nil keeps whether it is hidden.
    static func setBadge(_ badge: Badge?, on tab: String, hidden: Bool?) -> Line {
        var p = [JSON.Member("tab", .string(tab))]
        switch badge {
        case .count(let n)?: p.append(JSON.Member("count", .int(n)))
        case .text(let t)?: p.append(JSON.Member("text", .string(t)))
        case .dot?: p.append(JSON.Member("dot", true))
        case nil: p.append(JSON.Member("count", 0))
        }
        if let hidden { p.append(JSON.Member("hidden", .bool(hidden))) }
        return ("badge.set", .object(p))
    }

    static func hideBadge(_ hidden: Bool, on tab: String) -> Line {
        ("badge.set", ["tab": .string(tab), "hidden": .bool(hidden)])
    }

    static func clearBadge(on tab: String) -> Line { ("badge.clear", ["tab": .string(tab)]) }

    static func setFeedback(profile: FeedbackProfile?, volume: Double?) -> Line {
        var p: [JSON.Member] = []
        if let profile { p.append(JSON.Member("profile", .string(profile.rawValue))) }
        if let volume { p.append(JSON.Member("volume", .double(volume))) }
        return ("feedback.set", .object(p))
    }

    static func touch(_ phase: TouchPhase, x: Double, y: Double, touchID: Int?) -> Line {
        var p = [JSON.Member("phase", .string(phase.rawValue)), JSON.Member("x", .double(x)), JSON.Member("y", .double(y))]
        if let touchID { p.append(JSON.Member("touch_id", .int(touchID))) }
        return ("touch", .object(p))
    }

    static func highlight(_ tab: String, _ phase: HighlightPhase) -> Line {
        ("tab.highlight", ["tab": .string(tab), "phase": .string(phase.rawValue)])
    }

    static func push(hidesBar: Bool) -> Line { ("nav.push", ["hides_bar": .bool(hidesBar)]) }
    static func pop() -> Line { ("nav.pop", nil) }
    static func playSound(_ name: String) -> Line { ("sound.play", ["name": .string(name)]) }
    static func subscribe(_ topics: [String]?) -> Line { ("subscribe", topics.map { ["topics": .array($0.map(JSON.string))] }) }
    static func unsubscribe() -> Line { ("unsubscribe", nil) }
    static func advanceClock(ms: Int) -> Line { ("clock.advance", ["ms": .int(ms)]) }
}
