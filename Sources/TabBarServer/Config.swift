@preconcurrency import Glibc
import TabBarCore
import TabBarAudio

/// How audio is played. Wire/flag strings: `auto`, `null`, `alsa`.
public enum AudioMode: String, CaseIterable, Sendable {
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
    /// Whether the desktop's sound settings apply (config `desktop_sounds`; DesktopSettings.swift).
    public var desktopSounds: DesktopSoundsPolicy = .auto
    /// The stream's role for the desktop (config `stream_role`): PulseAudio's name (`event`), nil for none.
    public var streamRole: String? = "event"
    /// What the stream tells a mixer (config `stream_properties`, merged over these defaults; docs/AUDIO.md).
    public var streamProperties = StreamIdentity.defaultProperties(instance: nil)
    /// The stream's role and properties, for the sound server (set once at start-up: `DaemonCommand`).
    public var streamIdentity: StreamIdentity { StreamIdentity(role: streamRole, properties: streamProperties) }
    /// The reducer's and the null sink's clock (config `clock`, `--clock`): `real` or `manual` (docs/HARNESS.md).
    public var clock: ClockMode = .real
    /// A WAV file the null sink writes its stream to from the start (config `capture`, `--capture`).
    public var capturePath: String?
    /// The config file that was read (nil: none).
    public var configFile: String?
    /// Where each key's value came from, for `--check-config`: `file:KEY`, `env:NAME`,
    /// `flag:--NAME`; a key not listed has its default.
    public var origins: [String: String] = [:]

    public init(socketPath: String, statePath: String, soundDirs: [String]) {
        self.socketPath = socketPath
        self.statePath = statePath
        self.soundDirs = soundDirs
    }

    /// Defaults from the environment: XDG and systemd directories.
    public static func defaults() -> ServerConfig {
        var c = ServerConfig(socketPath: defaultSocketPath(), statePath: defaultStatePath(), soundDirs: defaultSoundDirs())
        c.streamProperties = StreamIdentity.defaultProperties(instance: Posix.env("TABBARD_INSTANCE"))
        return c
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

    /// Applies a JSON config file over these values. Errors name the file and the key.
    public mutating func apply(configFile path: String) throws(ConfigError) {
        let bytes: [UInt8]
        do {
            guard let b = try Posix.readFile(path, limit: 1 << 20) else { throw ConfigError("\(path): no such file") }
            bytes = b
        } catch let e as Errno {
            throw ConfigError("\(path): cannot read it: \(e)\(e.code == EFBIG ? " (a config file is at most 1 MiB)" : "")")
        } catch {
            throw error as! ConfigError
        }
        do {
            try apply(configText: bytes)
        } catch {
            throw error.inFile(path)
        }
        configFile = path
    }

    /// Applies the text of a config file: one JSON object whose members are `ConfigKey.all`.
    mutating func apply(configText bytes: [UInt8]) throws(ConfigError) {
        let json: JSON
        do { json = try JSON.parse(bytes) } catch {
            let (line, column) = Self.position(of: error.offset, in: bytes)
            throw ConfigError("not valid JSON at line \(line), column \(column): \(error.reason)")
        }
        guard case .object(let members) = json else {
            throw ConfigError("the configuration must be a JSON object ({\"key\": value, …}), not \(json.typeName)")
        }
        let keys = ConfigKey.all
        for m in members where !keys.contains(where: { $0.name == m.key }) {
            throw ConfigError(key: m.key, "unknown key; the keys are \(keys.map(\.name).joined(separator: ", "))")
        }
        for key in keys {
            guard let v = members.first(where: { $0.key == key.name })?.value else { continue }
            try key.read(ConfigValue(json: v, key: key.name), &self)
            origins[key.name] = "file:\(key.name)"
        }
    }

    /// 1-based line and column (in bytes) of a byte offset.
    static func position(of offset: Int, in bytes: [UInt8]) -> (Int, Int) {
        var line = 1, column = 1
        for b in bytes.prefix(offset) {
            if b == 0x0A { line += 1; column = 1 } else { column += 1 }
        }
        return (line, column)
    }
}
