@preconcurrency import Glibc
import TabBarCore
import TabBarAudio

/// How audio is played. Wire/flag strings: `auto`, `null`, `alsa`.
public enum AudioMode: String, Sendable {
    /// ALSA when a device opens, else the null sink with a warning.
    case auto
    case null
    case alsa
}

/// Everything the daemon can be told, from flags, environment and config file.
public struct ServerConfig: Sendable {
    public var socketPath: String
    public var statePath: String
    public var soundDirs: [String]
    /// Extra sounds by name → file (config `sound_files`).
    public var soundFiles: [String: String] = [:]
    /// Per-sound retrigger policy (config `sound_retrigger`): `overlap` (default) or `restart`.
    public var soundRetrigger: [String: Retrigger] = [:]
    public var audio: AudioMode = .auto
    public var alsaDevice = "default"
    public var logLevel: Priority = .info
    public var maxLine = 65536
    public var maxClients = 64
    /// Bytes of replies/events queued for one client before back-pressure applies.
    public var maxQueuedBytes = 1 << 20
    /// A client whose queued output does not move for this long is disconnected.
    public var writeTimeoutMs = 10_000
    public var limits = Limits()
    public var soundMap = SoundMap()
    /// Peers allowed besides the daemon's own uid and root.
    public var allowedUIDs: [UInt32] = []
    public var allowedGIDs: [UInt32] = []
    /// The bar used when there is no persisted state.
    public var initialBar: BarState = .defaultBar
    /// Journal entries after which the state is compacted into a snapshot.
    public var compactEvery = 4096
    /// At least this long between two compactions (ms).
    public var compactIntervalMs = 100
    /// How often appended journal data is fsync'ed (0: after every group commit).
    public var fsyncIntervalMs = 1000
    public var voices = 16
    public var periodFrames = 128
    /// SCHED_FIFO priority of the audio thread (0 = normal scheduling); see docs/AUDIO.md.
    public var realtimePriority = 83
    public var idleStopMs = 2000
    /// Where the config came from, for messages.
    public var configFile: String?

    public init(socketPath: String, statePath: String, soundDirs: [String]) {
        self.socketPath = socketPath
        self.statePath = statePath
        self.soundDirs = soundDirs
    }

    /// Defaults from the environment: XDG and systemd directories.
    public static func defaults() -> ServerConfig {
        ServerConfig(socketPath: defaultSocketPath(), statePath: defaultStatePath(), soundDirs: defaultSoundDirs())
    }

    public static func defaultSocketPath() -> String {
        if let s = Posix.env("TABBARD_SOCKET") { return s }
        if let r = Posix.env("XDG_RUNTIME_DIR") { return r + "/tabbard/socket" }
        if getuid() == 0 { return "/run/tabbard/socket" }
        return "/tmp/tabbard-\(getuid())/socket"
    }

    public static func defaultStatePath() -> String {
        if let d = Posix.env("STATE_DIRECTORY") {
            // systemd may pass several, colon-separated; the first is ours.
            return String(d.split(separator: ":").first ?? Substring(d)) + "/state.json"
        }
        if let x = Posix.env("XDG_STATE_HOME") { return x + "/tabbard/state.json" }
        if let h = Posix.env("HOME") { return h + "/.local/state/tabbard/state.json" }
        return "/var/lib/tabbard/state.json"
    }

    /// `$TABBARD_SOUNDS`, else the installed share dir next to the binary, else the source tree's `Sounds/`.
    public static func defaultSoundDirs() -> [String] {
        if let s = Posix.env("TABBARD_SOUNDS") { return s.split(separator: ":").map(String.init) }
        var candidates: [String] = []
        if let exe = executablePath() {
            let bin = Posix.dirname(exe)
            candidates.append(Posix.dirname(bin) + "/share/tabbard/sounds")
            // .build/<triple>/<config>/tabbard → repo/Sounds
            var dir = bin
            for _ in 0..<4 {
                dir = Posix.dirname(dir)
                candidates.append(dir + "/Sounds")
            }
        }
        candidates += ["/usr/local/share/tabbard/sounds", "/usr/share/tabbard/sounds"]
        for c in candidates where access(c + "/click.wav", R_OK) == 0 { return [c] }
        return []
    }

    static func executablePath() -> String? {
        var buf = [CChar](repeating: 0, count: 4096)
        let n = readlink("/proc/self/exe", &buf, buf.count - 1)
        guard n > 0 else { return nil }
        return String(decoding: buf[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    static let fileKeys = [
        "socket", "state", "sounds", "sound_files", "sound_retrigger", "audio", "alsa_device", "log_level", "max_line", "max_clients",
        "max_queued_bytes", "write_timeout_ms", "max_items", "max_id_length", "max_badge_count", "max_badge_chars",
        "sound_map", "allowed_uids", "allowed_gids", "bar", "compact_every", "compact_interval_ms", "fsync_interval_ms", "voices",
        "period_frames", "idle_stop_ms", "realtime_priority",
    ]

    /// Applies a JSON config file over these values. Errors name the file and the key.
    public mutating func apply(configFile path: String) throws(ConfigError) {
        let bytes: [UInt8]
        do {
            guard let b = try Posix.readFile(path, limit: 1 << 20) else { throw ConfigError("\(path): no such file") }
            bytes = b
        } catch let e as Errno {
            throw ConfigError("\(path): \(e)")
        } catch {
            throw error as! ConfigError
        }
        let json: JSON
        do { json = try JSON.parse(bytes) } catch { throw ConfigError("\(path): not valid JSON: \(error.description)") }
        do {
            try apply(json)
        } catch {
            throw ConfigError("\(path): \(error.message)")
        }
        configFile = path
    }

    mutating func apply(_ json: JSON) throws(RPCError) {
        let p = try Params(json, prefix: "")
        try p.only(Self.fileKeys)
        if let s = try p.string("socket") { socketPath = s }
        if let s = try p.string("state") { statePath = s }
        if let dirs = try p.array("sounds") {
            soundDirs = dirs.compactMap(\.stringValue)
        }
        if let files = try p.object("sound_files") {
            for m in files.members {
                guard let f = m.value.stringValue else { throw .invalidParams("sound_files.\(m.key)", "sound_files values must be file paths") }
                soundFiles[m.key] = f
            }
        }
        if let r = try p.object("sound_retrigger") {
            for m in r.members {
                guard let v = m.value.stringValue, let policy = Retrigger(rawValue: v) else {
                    throw .invalidParams("sound_retrigger.\(m.key)", "sound_retrigger values must be \"overlap\" or \"restart\"")
                }
                soundRetrigger[m.key] = policy
            }
        }
        if let a = try p.choice("audio", AudioMode.self, allowed: ["auto", "null", "alsa"]) { audio = a }
        if let d = try p.string("alsa_device") { alsaDevice = d }
        if let l = try p.string("log_level") {
            guard let level = Priority(name: l) else { throw .invalidParams("log_level", "log_level must be error, warning, notice, info or debug") }
            logLevel = level
        }
        maxLine = try p.int("max_line", range: 256...(16 << 20)) ?? maxLine
        maxClients = try p.int("max_clients", range: 1...100_000) ?? maxClients
        maxQueuedBytes = try p.int("max_queued_bytes", range: 4096...(1 << 30)) ?? maxQueuedBytes
        writeTimeoutMs = try p.int("write_timeout_ms", range: 100...3_600_000) ?? writeTimeoutMs
        limits.maxItems = try p.int("max_items", range: 1...64) ?? limits.maxItems
        limits.maxIDLength = try p.int("max_id_length", range: 1...1024) ?? limits.maxIDLength
        limits.maxBadgeCount = try p.int("max_badge_count", range: 1...1_000_000) ?? limits.maxBadgeCount
        limits.maxBadgeChars = try p.int("max_badge_chars", range: 1...1024) ?? limits.maxBadgeChars
        if let m = try p.object("sound_map") {
            try m.only(["select", "reselect", "action", "center", "badge", "visibility"])
            func pick(_ k: String, _ cur: String?) throws(RPCError) -> String? {
                guard m.has(k) else { return cur }
                let v = try m.string(k)
                return v == "none" ? nil : v
            }
            soundMap.select = try pick("select", soundMap.select)
            soundMap.reselect = try pick("reselect", soundMap.reselect)
            soundMap.action = try pick("action", soundMap.action)
            soundMap.center = try pick("center", soundMap.center)
            soundMap.badge = try pick("badge", soundMap.badge)
            soundMap.visibility = try pick("visibility", soundMap.visibility)
        }
        if let uids = try p.array("allowed_uids") { allowedUIDs = uids.compactMap { $0.intValue.map { UInt32(clamping: $0) } } }
        if let gids = try p.array("allowed_gids") { allowedGIDs = gids.compactMap { $0.intValue.map { UInt32(clamping: $0) } } }
        if let bar = p["bar"] {
            guard case .object = bar else { throw .invalidParams("bar", "bar must be an object like bar.configure's params") }
            let cmd = try Methods.command(for: Request(id: .null, method: "bar.configure", params: bar), limits: limits).get()
            var r = Reducer(state: BarState(items: []), limits: limits)
            if case .failure(let e) = r.reduce(cmd).reply { throw e }
            initialBar = r.state
            initialBar.seq = 0
        }
        compactEvery = try p.int("compact_every", range: 1...10_000_000) ?? compactEvery
        compactIntervalMs = try p.int("compact_interval_ms", range: 0...3_600_000) ?? compactIntervalMs
        fsyncIntervalMs = try p.int("fsync_interval_ms", range: 0...3_600_000) ?? fsyncIntervalMs
        voices = try p.int("voices", range: 1...256) ?? voices
        periodFrames = try p.int("period_frames", range: 32...8192) ?? periodFrames
        idleStopMs = try p.int("idle_stop_ms", range: 0...3_600_000) ?? idleStopMs
        realtimePriority = try p.int("realtime_priority", range: 0...99) ?? realtimePriority
    }
}

/// A configuration problem, stated for a person.
public struct ConfigError: Error, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
