/// What the click's stream tells the desktop it is: its role (the event role, whose volume and
/// mute are the desktop's "alert volume") and the properties a mixer shows (`application.name`,
/// `application.id`, `application.icon_name`, `media.name`). PipeWire's ALSA plugin reads them from
/// `PIPEWIRE_ALSA` when a PCM is opened; PulseAudio's ALSA plugin from libpulse's `PULSE_PROP`
/// (merged: the role) and `PULSE_PROP_OVERRIDE` (over what the plugin sets itself: the
/// application's name). `environment` says what to set; the daemon sets it once, at start-up,
/// before any thread exists (`DaemonCommand`), since `setenv` is not safe while another thread
/// may read the environment (docs/DESKTOP.md, "The desktop's view of the stream").
public struct StreamIdentity: Sendable, Equatable {
    /// The role as PulseAudio names it (`event`, …), nil for none.
    public var role: String?
    /// Stream and client properties, name → value (never `media.role`: that is `role`).
    public var properties: [String: String]

    public init(role: String?, properties: [String: String]) {
        self.role = role
        self.properties = properties
    }

    /// PulseAudio's role names (config `stream_role`) and PipeWire's for the same role, as
    /// pipewire-pulse translates them (`event` ↔ `Notification`: the alert volume).
    public static let roles: [(pulse: String, pipewire: String)] = [
        ("event", "Notification"), ("phone", "Communication"), ("music", "Music"), ("video", "Movie"),
        ("game", "Game"), ("a11y", "Accessibility"), ("production", "Production"), ("test", "Test"),
    ]

    /// The properties a stream gets unless the configuration says otherwise. `instance`: the
    /// name of a `tabbard@NAME` instance (`TABBARD_INSTANCE`, set by the template unit).
    public static func defaultProperties(instance: String?) -> [String: String] {
        var name = "tabbard"
        if let instance, !instance.isEmpty, validValue(instance) == nil { name = "tabbard@" + instance }
        return ["application.name": name, "application.id": "tabbard", "application.icon_name": "audio-x-generic",
                "media.name": "tabbard: tab clicks"]
    }

    /// Why `name` cannot be a property name (nil: it can): 1–64 bytes of letters, digits, `.`, `_`, `-`.
    public static func validName(_ name: String) -> String? {
        if name.isEmpty || name.utf8.count > 64 { return "must be 1 to 64 bytes" }
        for b in name.utf8 {
            let ok = (b >= 0x61 && b <= 0x7A) || (b >= 0x41 && b <= 0x5A) || (b >= 0x30 && b <= 0x39)
                || b == 0x2E || b == 0x5F || b == 0x2D
            if !ok { return "may hold only letters, digits, \".\", \"_\" and \"-\"" }
        }
        if name == "media.role" { return "is set by stream_role" }
        return nil
    }

    /// Why `value` cannot be a property's value (nil: it can): at most 256 bytes, no control
    /// characters, no `"`, `'` or `\` (it is written quoted into PIPEWIRE_ALSA and PULSE_PROP).
    public static func validValue(_ value: String) -> String? {
        if value.utf8.count > 256 { return "must be at most 256 bytes" }
        for u in value.unicodeScalars where u.value < 0x20 || u.value == 0x7F || u == "\"" || u == "'" || u == "\\" {
            return "may not hold control characters, quotes or backslashes"
        }
        return nil
    }

    /// PipeWire's name of `role` (nil: not one of `roles`).
    public static func pipewireRole(_ role: String) -> String? {
        roles.first { $0.pulse == role }?.pipewire
    }

    private var sorted: [(String, String)] { properties.filter { !$0.value.isEmpty }.sorted { $0.key < $1.key } }

    /// `PIPEWIRE_ALSA`: a SPA JSON object, e.g. `{ media.role = "Notification" application.name = "tabbard" … }`.
    public var pipewireALSA: String {
        var parts: [String] = []
        if let role, let pw = StreamIdentity.pipewireRole(role) { parts.append("media.role = \"\(pw)\"") }
        for (k, v) in sorted { parts.append("\(k) = \"\(v)\"") }
        return "{ " + parts.joined(separator: " ") + " }"
    }

    /// `PULSE_PROP`: what libpulse merges into the client's properties, hence into its streams' (the role).
    public var pulseProp: String {
        role.map { "media.role=\"\($0)\"" } ?? ""
    }

    /// `PULSE_PROP_OVERRIDE`: client properties over the plugin's own (`application.name` "ALSA plug-in
    /// [tabbard]"). `media.name` is left out: the plugin names its stream itself ("ALSA Playback").
    public var pulsePropOverride: String {
        sorted.filter { $0.0 != "media.name" }.map { "\($0.0)=\"\($0.1)\"" }.joined(separator: " ")
    }

    /// The variables to set, in order (an empty value: leave that one unset).
    public var environment: [(name: String, value: String)] {
        [("PIPEWIRE_ALSA", pipewireALSA), ("PULSE_PROP", pulseProp), ("PULSE_PROP_OVERRIDE", pulsePropOverride)]
    }
}
