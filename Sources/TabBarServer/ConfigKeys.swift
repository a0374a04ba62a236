import TabBarCore
import TabBarAudio

/// One key of the config file: how it is read into a `ServerConfig`, how
/// `--check-config` shows it, and whether a reload (SIGHUP) applies it live.
/// A new key is one entry in `ConfigKey.all`.
struct ConfigKey {
    let name: String
    let read: (ConfigValue, inout ServerConfig) throws(ConfigError) -> Void
    let show: (ServerConfig) -> JSON
    /// For a key a reload applies without a restart: copies its value from a fresh configuration.
    var adopt: ((ServerConfig, inout ServerConfig) -> Void)? = nil

    /// A reload applies it without a restart.
    var live: Bool { adopt != nil }

    static func copy<T>(_ field: WritableKeyPath<ServerConfig, T>, if live: Bool) -> ((ServerConfig, inout ServerConfig) -> Void)? {
        live ? { fresh, c in c[keyPath: field] = fresh[keyPath: field] } : nil
    }

    /// A whole number in `range`.
    static func int(_ name: String, _ range: ClosedRange<Int>, live: Bool = false,
                    _ field: WritableKeyPath<ServerConfig, Int>) -> ConfigKey {
        ConfigKey(name: name, read: { v, c throws(ConfigError) in c[keyPath: field] = try v.int(range) },
                  show: { .int($0[keyPath: field]) }, adopt: copy(field, if: live))
    }

    /// A non-empty path without NUL.
    static func path(_ name: String, live: Bool = false, _ field: WritableKeyPath<ServerConfig, String>) -> ConfigKey {
        ConfigKey(name: name, read: { v, c throws(ConfigError) in c[keyPath: field] = try v.path() },
                  show: { .string($0[keyPath: field]) }, adopt: copy(field, if: live))
    }

    /// A list of uids or gids.
    static func ids(_ name: String, live: Bool = false, _ field: WritableKeyPath<ServerConfig, [UInt32]>) -> ConfigKey {
        ConfigKey(name: name, read: { v, c throws(ConfigError) in
            var ids: [UInt32] = []
            for e in try v.array() { ids.append(try e.id()) }
            c[keyPath: field] = ids
        }, show: { .array($0[keyPath: field].map { .int($0) }) }, adopt: copy(field, if: live))
    }

    /// One of an enum's raw values.
    static func choice<E: RawRepresentable & CaseIterable>(_ name: String, live: Bool = false,
                                                           _ field: WritableKeyPath<ServerConfig, E>) -> ConfigKey
    where E.RawValue == String {
        ConfigKey(name: name, read: { v, c throws(ConfigError) in
            c[keyPath: field] = E(rawValue: try v.choice(E.allCases.map(\.rawValue)))!
        }, show: { .string($0[keyPath: field].rawValue) }, adopt: copy(field, if: live))
    }

    /// Every key, in the order they are applied (`bar` after the limits it is checked against).
    static var all: [ConfigKey] {
        [
            .path("socket", \.socketPath),
            .path("state", \.statePath),
            ConfigKey(name: "sounds", read: { v, c throws(ConfigError) in
                var dirs: [String] = []
                for e in try v.array() { dirs.append(try e.path()) }
                c.soundDirs = dirs
            }, show: { .array($0.soundDirs.map(JSON.string)) }, adopt: copy(\.soundDirs, if: true)),
            ConfigKey(name: "sound_files", read: { v, c throws(ConfigError) in
                var files: [String: String] = [:]
                for (name, file) in try v.members() { files[name] = try file.path() }
                c.soundFiles = files
            }, show: { c in .object(c.soundFiles.sorted { $0.key < $1.key }.map { JSON.Member($0.key, .string($0.value)) }) },
                      adopt: copy(\.soundFiles, if: true)),
            ConfigKey(name: "sound_retrigger", read: { v, c throws(ConfigError) in
                var policies: [String: Retrigger] = [:]
                for (name, p) in try v.members() { policies[name] = Retrigger(rawValue: try p.choice(["overlap", "restart"]))! }
                c.soundRetrigger = policies
            }, show: { c in .object(c.soundRetrigger.sorted { $0.key < $1.key }.map { JSON.Member($0.key, .string($0.value.rawValue)) }) }),
            .choice("audio", \.audio),
            ConfigKey(name: "alsa_device", read: { v, c throws(ConfigError) in
                let d = try v.string(maxBytes: 1024)
                if d.isEmpty { throw ConfigError(key: v.key, "must name an ALSA PCM (such as \"default\" or \"hw:0,0\"), not an empty string") }
                c.alsaDevice = d
            }, show: { .string($0.alsaDevice) }),
            ConfigKey(name: "log_level", read: { v, c throws(ConfigError) in
                c.logLevel = Priority(name: try v.choice(["error", "warning", "notice", "info", "debug"]))!
            }, show: { .string($0.logLevel.name) }, adopt: copy(\.logLevel, if: true)),
            .int("max_line", 256...(16 << 20), \.maxLine),
            .int("max_clients", 1...100_000, live: true, \.maxClients),
            .int("max_queued_bytes", 4096...(1 << 30), live: true, \.maxQueuedBytes),
            .int("write_timeout_ms", 100...3_600_000, live: true, \.writeTimeoutMs),
            .int("max_items", 1...64, \.limits.maxItems),
            .int("max_id_length", 1...1024, \.limits.maxIDLength),
            .int("max_badge_count", 1...1_000_000, \.limits.maxBadgeCount),
            .int("max_badge_chars", 1...1024, \.limits.maxBadgeChars),
            ConfigKey(name: "sound_map", read: readSoundMap, show: { c in
                let m = c.soundMap
                return .obj(["select": .string(m.select ?? "none"), "reselect": .string(m.reselect ?? "none"),
                             "action": .string(m.action ?? "none"), "center": .string(m.center ?? "none"),
                             "badge": .string(m.badge ?? "none"), "visibility": .string(m.visibility ?? "none")])
            }),
            .ids("allowed_uids", live: true, \.allowedUIDs),
            .ids("allowed_gids", live: true, \.allowedGIDs),
            ConfigKey(name: "bar", read: readBar, show: { c in
                // A summary: the items and the selection (docs/CONFIG.md has the whole of a bar).
                .obj(["items": .array(c.initialBar.items.map { .obj(["id": .string($0.id), "title": .string($0.title), "kind": .string($0.kind.rawValue)]) }),
                      "selected": .optional(c.initialBar.selected)])
            }),
            .int("compact_every", 1...10_000_000, \.compactEvery),
            .int("compact_interval_ms", 0...3_600_000, \.compactIntervalMs),
            .int("fsync_interval_ms", 0...3_600_000, \.fsyncIntervalMs),
            .int("voices", 1...256, \.voices),
            .int("period_frames", 32...8192, \.periodFrames),
            .int("idle_stop_ms", 0...3_600_000, \.idleStopMs),
            .int("realtime_priority", 0...99, \.realtimePriority),
            .choice("desktop_sounds", \.desktopSounds),
            ConfigKey(name: "stream_role", read: { v, c throws(ConfigError) in
                let r = try v.choice(StreamIdentity.roles.map(\.pulse) + ["none"])
                c.streamRole = r == "none" ? nil : r
            }, show: { .string($0.streamRole ?? "none") }),
            ConfigKey(name: "stream_properties", read: readStreamProperties, show: { c in
                .object(c.streamProperties.sorted { $0.key < $1.key }.map { JSON.Member($0.key, .string($0.value)) })
            }),
            .choice("clock", \.clock),
            ConfigKey(name: "capture", read: { v, c throws(ConfigError) in c.capturePath = try v.path() },
                      show: { $0.capturePath.map(JSON.string) ?? .null }),
        ]
    }

    /// Name → value over the defaults; `""` drops a default.
    static func readStreamProperties(_ v: ConfigValue, _ c: inout ServerConfig) throws(ConfigError) {
        for (name, value) in try v.members() {
            if let why = StreamIdentity.validName(name) { throw ConfigError(key: value.key, "a property name \(why)") }
            let s = try value.string(maxBytes: 256)
            if let why = StreamIdentity.validValue(s) { throw ConfigError(key: value.key, why) }
            c.streamProperties[name] = s.isEmpty ? nil : s
        }
    }

    static func readSoundMap(_ v: ConfigValue, _ c: inout ServerConfig) throws(ConfigError) {
        let kinds: [(String, WritableKeyPath<SoundMap, String?>)] = [
            ("select", \.select), ("reselect", \.reselect), ("action", \.action),
            ("center", \.center), ("badge", \.badge), ("visibility", \.visibility),
        ]
        for (name, sound) in try v.members() {
            guard let field = kinds.first(where: { $0.0 == name })?.1 else {
                throw ConfigError(key: sound.key, "is not a kind of event; sound_map takes \(kinds.map(\.0).joined(separator: ", "))")
            }
            let s = try sound.string(maxBytes: 256)
            if s.isEmpty { throw ConfigError(key: sound.key, "must name a sound, or be \"none\" for silence") }
            c.soundMap[keyPath: field] = s == "none" ? nil : s
        }
    }

    /// The params of `bar.configure`, checked as the method checks them, with the key path in front.
    static func readBar(_ v: ConfigValue, _ c: inout ServerConfig) throws(ConfigError) {
        guard case .object = v.json else { throw v.wrong("an object like bar.configure's params") }
        func refuse(_ e: RPCError) -> ConfigError {
            guard let field = e.field else { return ConfigError(key: v.key, String(e.message.trimmingSuffix("."))) }
            var problem = e.message
            let prefix = "Field \"\(field)\" "
            if problem.hasPrefix(prefix) { problem.removeFirst(prefix.count) }
            if problem.hasSuffix(".") { problem.removeLast() }
            return ConfigError(key: "\(v.key).\(field)", problem)
        }
        let cmd: StateCommand
        switch Methods.command(for: Request(id: .int(0), method: "bar.configure", params: v.json), limits: c.limits) {
        case .success(.state(let command)): cmd = command
        case .success(.server): preconditionFailure("bar.configure is a state method")
        case .failure(let e): throw refuse(e)
        }
        var r = Reducer(state: BarState(items: []), limits: c.limits)
        if case .failure(let e) = r.reduce(cmd).reply { throw refuse(e) }
        c.initialBar = r.state
        c.initialBar.seq = 0
    }
}

extension String {
    func trimmingSuffix(_ suffix: String) -> Substring { hasSuffix(suffix) ? dropLast(suffix.count) : self[...] }
}
