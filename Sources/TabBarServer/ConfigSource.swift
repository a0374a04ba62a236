@preconcurrency import Glibc
import TabBarCore

/// How the daemon's configuration is built, kept so that a reload builds it again:
/// built-in defaults, then the config file, then the environment (`TABBARD_SOCKET`,
/// `TABBARD_SOUNDS`), then the flags — each later one wins (docs/CONFIG.md).
public struct ConfigSource: Sendable {
    /// Which config file to read.
    public enum File: Sendable, Equatable {
        /// The usual place: `/etc/tabbard/config.json` for a system daemon,
        /// `$XDG_CONFIG_HOME/tabbard/config.json` (default `~/.config`) for a user's; none if absent.
        case usual
        /// This file (`--config FILE`); it must exist.
        case path(String)
        /// None (`--no-config`).
        case none
    }

    public var file: File = .usual
    public var socket: String?
    public var state: String?
    public var sounds: [String] = []
    public var audio: AudioMode?
    public var alsaDevice: String?
    public var logLevel: Priority?
    public var clock: ClockMode?
    public var capture: String?

    public init() {}

    /// A system daemon, decided as the default socket is: not in a user's session (no
    /// `$XDG_RUNTIME_DIR`, which a login session and a user manager always set) and either
    /// root or a systemd system service (`$RUNTIME_DIRECTORY`/`$STATE_DIRECTORY`).
    public static var isSystemDaemon: Bool {
        if Posix.env("XDG_RUNTIME_DIR") != nil { return false }
        return getuid() == 0 || Posix.env("RUNTIME_DIRECTORY") != nil || Posix.env("STATE_DIRECTORY") != nil
    }

    /// Where the usual config file is for this daemon.
    public static func usualPath() -> String {
        if isSystemDaemon { return "/etc/tabbard/config.json" }
        if let x = Posix.env("XDG_CONFIG_HOME"), x.hasPrefix("/") { return x + "/tabbard/config.json" }
        return (Posix.env("HOME") ?? "") + "/.config/tabbard/config.json"
    }

    /// The file this source reads, if any: `--config`'s, else the usual one when it exists.
    public func resolvedFile() -> String? {
        switch file {
        case .none: return nil
        case .path(let p): return p
        case .usual:
            let p = Self.usualPath()
            return access(p, F_OK) == 0 ? p : nil
        }
    }

    /// The effective configuration, with `origins` saying where each non-default value came from.
    public func load() throws(ConfigError) -> ServerConfig {
        var c = ServerConfig.defaults()
        if let path = resolvedFile() { try c.apply(configFile: path) }
        if let s = Posix.env("TABBARD_SOCKET") { c.socketPath = s; c.origins["socket"] = "env:TABBARD_SOCKET" }
        if let s = Posix.env("TABBARD_SOUNDS") {
            c.soundDirs = s.split(separator: ":").map(String.init)
            c.origins["sounds"] = "env:TABBARD_SOUNDS"
        }
        if let socket { c.socketPath = socket; c.origins["socket"] = "flag:--socket" }
        if let state { c.statePath = state; c.origins["state"] = "flag:--state" }
        if !sounds.isEmpty { c.soundDirs = sounds; c.origins["sounds"] = "flag:--sounds" }
        if let audio { c.audio = audio; c.origins["audio"] = "flag:--audio" }
        if let alsaDevice { c.alsaDevice = alsaDevice; c.origins["alsa_device"] = "flag:--alsa-device" }
        if let logLevel { c.logLevel = logLevel; c.origins["log_level"] = "flag:--log-level" }
        if let clock { c.clock = clock; c.origins["clock"] = "flag:--clock" }
        if let capture { c.capturePath = capture; c.origins["capture"] = "flag:--capture" }
        // What Listener.bind refuses (sun_path holds 108 bytes with its NUL); ignored when systemd passes the socket.
        let bytes = c.socketPath.utf8.count
        if bytes > 107 && Posix.env("LISTEN_FDS") == nil {
            let error = ConfigError(key: "socket", "\(Log.quoted(c.socketPath)) is \(bytes) bytes; a Unix socket path is at most 107")
            throw c.origins["socket"]?.hasPrefix("file:") == true ? error.inFile(c.configFile ?? "") : error
        }
        return c
    }

    /// What `--check-config` prints: the file, then one `key = value  # origin` line per key.
    public func describe(_ c: ServerConfig) -> String {
        var out = "# tabbard \(Server.version): the configuration is valid\n"
        let none = file == .none ? "none (--no-config)" : "none (looked for \(Log.quoted(Self.usualPath())))"
        out += "# file: \(c.configFile.map { Log.quoted($0) } ?? none)\n"
        let keys = ConfigKey.all
        let width = keys.map(\.name.count).max() ?? 0
        for k in keys {
            let name = k.name + String(repeating: " ", count: width - k.name.count)
            out += "\(name) = \(k.show(c).text)  # \(c.origins[k.name] ?? "default")\n"
        }
        return out
    }
}
