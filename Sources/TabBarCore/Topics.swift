/// The topics `subscribe` takes: the names of the events the daemon publishes, and their
/// first parts (`tab` is every `tab.*` event). A topic matches an event of the same name
/// and every event it is the first part of, at a dot: `tab` matches `tab.selected`, never
/// `tabs.x`. `tabbarctl monitor --topics` takes the same names.
public enum Topics {
    /// Every event the daemon publishes: the reducer's (`BarEvent`), the sound reports
    /// (`SoundEvent`) and the server's own (`server.stopping`, `state.resync`, sent to every
    /// subscriber whatever its topics) — each with the JSON Schema of its params, for
    /// `rpc.discover`'s document (`x-events`).
    public static let declared: [EventSpec] = {
        let seq = Schema.seq, tab = Schema.itemID, source = Schema.choice(Source.self)
        return [
            EventSpec("tab.selected", "Another tab was selected.",
                      ["seq": seq, "tab": tab, "previous": Schema.optionalID, "source": source]),
            EventSpec("tab.reselected", "The selected tab was selected again.", ["seq": seq, "tab": tab, "source": source]),
            EventSpec("tab.highlighted", "A highlight began, ended or was cancelled (sound: the click a press began with, click_on \"press\").",
                      ["seq": seq, "tab": tab, "phase": Schema.choice(HighlightPhase.self)], optional: ["sound": Schema.str]),
            EventSpec("action.triggered", "A center or action item was triggered.", ["seq": seq, "tab": tab], optional: ["action": Schema.str]),
            EventSpec("action.finished", "The active action ended.", ["seq": seq, "tab": tab]),
            EventSpec("badge.changed", "A badge was set, changed, hidden or cleared (null).",
                      ["seq": seq, "tab": tab, "badge": Schema.optionalBadge], optional: ["hidden_badge": Schema.badge]),
            EventSpec("bar.configured", "The bar was configured.", ["seq": seq, "state": Schema.state]),
            EventSpec("bar.visibility", "The reasons, the navigation stack or the phase changed.",
                      ["seq": seq, "hidden": Schema.boolean, "phase": Schema.visibilityPhase,
                       "reasons": Schema.array(Schema.choice(HideReason.self)), "duration_ms": Schema.seq,
                       "nav_stack": Schema.array(Schema.boolean)]),
            EventSpec("animation.cue", "What a front end should animate (docs/PROTOCOL.md, Animation cues).",
                      ["seq": seq, "tab": Schema.optionalID,
                       "trigger": Schema.strings(["select", "deselect", "reselect", "highlight", "badge", "visibility"]),
                       "kind": Schema.choice(AnimationStyle.self), "descriptor": Schema.anyObject, "sound": Schema.optionalString]),
            EventSpec("animation.began", "A front end began an animation.",
                      ["seq": seq, "animation": Schema.seq, "kind": Schema.str, "tab": Schema.optionalID, "duration_ms": Schema.seq]),
            EventSpec("animation.ended", "An animation ended (animation.end or its duration).",
                      ["seq": seq, "animation": Schema.seq, "reason": Schema.choice(AnimationEndReason.self)]),
            EventSpec("feedback.changed", "The profile or the volume changed.", ["seq": seq, "feedback": Schema.feedback]),
            EventSpec("sound.played", "A sound started playing (frame: its first frame's stream position).",
                      ["voice": Schema.seq, "name": Schema.str, "frame": Schema.seq]),
            EventSpec("sound.failed", "An accepted sound was not heard intact.",
                      ["voice": Schema.seq, "name": Schema.str, "reason": Schema.str]),
            EventSpec("sound.suppressed", "A sound was not played because the desktop's sound settings say so (reason).",
                      ["name": Schema.str, "reason": Schema.str]),
            EventSpec("server.stopping", "The daemon is shutting down (to every subscriber).", [:]),
            EventSpec("state.resync", "This subscriber fell behind: the state replaces the events it missed (to every subscriber).",
                      ["seq": seq, "state": Schema.state]),
        ]
    }()

    /// The events' names.
    public static let events: [String] = declared.map(\.name)

    /// The events' first parts, in the order of `events`.
    public static let prefixes: [String] = {
        var seen: [String] = []
        for e in events {
            let p = String(e.split(separator: ".")[0])
            if !seen.contains(p) { seen.append(p) }
        }
        return seen
    }()

    /// Every topic `subscribe` accepts: the first parts, then the event names.
    public static var all: [String] { prefixes + events }

    /// Whether `topic` is an event name or an event name's first part.
    public static func isKnown(_ topic: String) -> Bool { events.contains(topic) || prefixes.contains(topic) }

    /// Whether a subscriber to `topic` gets `event`: the same name, or `topic` followed by a dot.
    public static func matches(_ topic: String, _ event: String) -> Bool {
        event == topic || (event.utf8.count > topic.utf8.count && event.hasPrefix(topic + "."))
    }
}

/// An event (a notification to subscribers): its name, what it says and its params' schema.
public struct EventSpec: Sendable {
    public let name: String
    public let summary: String
    public let params: JSON

    init(_ name: String, _ summary: String, _ members: KeyValuePairs<String, JSON>, optional: KeyValuePairs<String, JSON> = [:]) {
        self.name = name
        self.summary = summary
        params = Schema.sent(members, optional: optional)
    }

    /// The topics that carry it: its first part and its name.
    public var topics: [String] { [String(name.split(separator: ".")[0]), name] }
}
