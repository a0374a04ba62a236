/// The topics `subscribe` takes: the names of the events the daemon publishes, and their
/// first parts (`tab` is every `tab.*` event). A topic matches an event of the same name
/// and every event it is the first part of, at a dot: `tab` matches `tab.selected`, never
/// `tabs.x`. `tabbarctl monitor --topics` takes the same names.
public enum Topics {
    /// Every event the daemon publishes: the reducer's (`BarEvent`), the sound reports
    /// (`SoundEvent`) and the server's own (`server.stopping`, `state.resync`, sent to every
    /// subscriber whatever its topics).
    public static let events: [String] = [
        "tab.selected", "tab.reselected", "tab.highlighted", "action.triggered", "action.finished",
        "badge.changed", "bar.configured", "bar.visibility", "animation.cue", "animation.began",
        "animation.ended", "feedback.changed", "sound.played", "sound.failed", "server.stopping", "state.resync",
    ]

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
