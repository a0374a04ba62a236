@preconcurrency import Glibc
import CSystemd

/// `tabbard`'s command line: flags → config → server.
public enum DaemonCommand {
    public static let usage = """
    Usage: tabbard [options]

    The tab bar daemon: keeps the authoritative state of a tab bar, tells every
    subscriber, and plays the click. Clients speak JSON-RPC lines on a Unix socket.

    Options:
      --socket PATH       listen here (default: $TABBARD_SOCKET, else
                          $XDG_RUNTIME_DIR/tabbard/socket, else /run/tabbard/socket as root)
      --config FILE       JSON configuration file (see docs/CONFIG.md)
      --sounds DIR        directory of sounds (repeatable; default: the installed
                          share/tabbard/sounds or the source tree's Sounds/)
      --state PATH        state file (default: $STATE_DIRECTORY/state.json, else
                          $XDG_STATE_HOME/tabbard/state.json)
      --audio MODE        auto (ALSA, falling back to the null sink), null, alsa
      --alsa-device NAME  ALSA PCM (default "default"; any PCM string, e.g. hw:0,0)
      --log-level LEVEL   error, warning, notice, info (default), debug
      --clock MODE        real (default) or manual: time moves only by clock.advance
                          (test harnesses; docs/HARNESS.md)
      --capture FILE.wav  with --audio null: write the mix the device would play to FILE
      --help              show this help
      --version           show the version

    Socket activation (LISTEN_FDS) and sd_notify (NOTIFY_SOCKET, WATCHDOG_USEC) are
    used when systemd provides them. SIGHUP reloads the sounds; SIGTERM stops.
    """

    /// Parses `args`, runs the daemon, returns the exit status.
    public static func main(_ args: [String]) -> Int32 {
        // A fixed mmap threshold: by default glibc raises it each time a big buffer (a client's
        // queued replies) is freed, after which such buffers come from the heap and the RSS
        // ratchets up under load instead of going back down.
        _ = tabbard_fix_mmap_threshold(128 * 1024)
        var config = ServerConfig.defaults()
        var socket: String?, state: String?, sounds: [String] = [], audio: AudioMode?, device: String?, level: Priority?
        var configFile: String?
        var clock: ClockMode?, capture: String?
        var k = 0
        func value(_ flag: String) -> String? {
            if k + 1 < args.count { k += 1; return args[k] }
            fail("\(flag) needs a value")
            return nil
        }
        while k < args.count {
            var arg = args[k]
            var inline: String?
            if arg.hasPrefix("--"), let eq = arg.firstIndex(of: "=") {
                inline = String(arg[arg.index(after: eq)...])
                arg = String(arg[..<eq])
            }
            func v() -> String? { inline ?? value(arg) }
            switch arg {
            case "--help", "-h":
                print(usage)
                return 0
            case "--version":
                print("tabbard \(Server.version) (protocol 1)")
                return 0
            case "--socket": guard let s = v() else { return 1 }; socket = s
            case "--config": guard let s = v() else { return 1 }; configFile = s
            case "--sounds": guard let s = v() else { return 1 }; sounds.append(s)
            case "--state": guard let s = v() else { return 1 }; state = s
            case "--audio":
                guard let s = v() else { return 1 }
                guard let m = AudioMode(rawValue: s) else { fail("--audio must be auto, null or alsa, not \"\(s)\""); return 1 }
                audio = m
            case "--alsa-device": guard let s = v() else { return 1 }; device = s
            case "--log-level":
                guard let s = v() else { return 1 }
                guard let p = Priority(name: s) else { fail("--log-level must be error, warning, notice, info or debug, not \"\(s)\""); return 1 }
                level = p
            case "--clock":
                guard let s = v() else { return 1 }
                guard let c = ClockMode(rawValue: s) else { fail("--clock must be real or manual, not \"\(s)\""); return 1 }
                clock = c
            case "--capture": guard let s = v() else { return 1 }; capture = s
            default:
                fail("unknown option \"\(args[k])\"; see tabbard --help")
                return 1
            }
            k += 1
        }
        if let configFile {
            do { try config.apply(configFile: configFile) } catch {
                fail("config: \(error)")
                return 1
            }
        }
        // Flags win over the config file; TABBARD_SOCKET over the config's socket.
        if let e = Posix.env("TABBARD_SOCKET"), socket == nil, configFile != nil { config.socketPath = e }
        if let socket { config.socketPath = socket }
        if let state { config.statePath = state }
        if !sounds.isEmpty { config.soundDirs = sounds }
        if let audio { config.audio = audio }
        if let device { config.alsaDevice = device }
        if let level { config.logLevel = level }
        if let clock { config.clock = clock }
        if let capture { config.capturePath = capture }
        if let c = config.capturePath, config.audio != .null {
            fail("--capture \(c) needs --audio null (the capture is the null sink's stream)")
            return 1
        }
        Log.level = config.logLevel
        do {
            let server = try Server(config: config)
            return server.run()
        } catch {
            Log.error("tabbard cannot start: \(error)")
            return 1
        }
    }

    static func fail(_ message: String) {
        Log.error("tabbard: \(message)")
    }
}
