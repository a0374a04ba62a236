@preconcurrency import Glibc
import CSystemd

/// `tabbard`'s command line: flags → config → server.
public enum DaemonCommand {
    public static let usage = """
    Usage: tabbard [options]
           tabbard --check-config [FILE] [options]

    The tab bar daemon: keeps the authoritative state of a tab bar, tells every
    subscriber, and plays the click. Clients speak JSON-RPC lines on a Unix socket.

    Options:
      --socket PATH       listen here (default: $TABBARD_SOCKET, else
                          $XDG_RUNTIME_DIR/tabbard/socket, else /run/tabbard/socket as
                          root, else /tmp/tabbard-UID/socket)
      --config FILE       JSON configuration file (default: /etc/tabbard/config.json for
                          a system daemon, else $XDG_CONFIG_HOME/tabbard/config.json, i.e.
                          ~/.config/tabbard/config.json; read when present)
      --no-config         read no configuration file
      --check-config [FILE]
                          validate the configuration (FILE, else as --config would find
                          it), print the effective values and where each came from, and
                          exit 0 (valid) or 1 (not)
      --sounds DIR        directory of sounds (repeatable; default: $TABBARD_SOUNDS, a
                          colon-separated list, else the installed share/tabbard/sounds
                          or the source tree's Sounds/)
      --state PATH        state file (default: $STATE_DIRECTORY/state.json, else
                          $XDG_STATE_HOME/tabbard/state.json, else
                          ~/.local/state/tabbard/state.json)
      --audio MODE        auto (ALSA, falling back to the null sink), null, alsa
      --alsa-device NAME  ALSA PCM (default "default"; any PCM string, e.g. hw:0,0)
      --log-level LEVEL   error, warning, notice, info (default), debug
      --clock MODE        real (default) or manual: time moves only by clock.advance
                          (test harnesses; docs/HARNESS.md)
      --capture FILE.wav  with --audio null: write the mix the device would play to FILE
      -h, --help          show this help
      -V, --version       show the version

    Precedence: flags, then $TABBARD_SOCKET and $TABBARD_SOUNDS, then the config file,
    then the defaults. Socket activation (LISTEN_FDS) and sd_notify (NOTIFY_SOCKET,
    WATCHDOG_USEC) are used when systemd provides them. SIGHUP re-reads the config
    file and the sounds (and logs which changed keys need a restart); SIGTERM stops.
    See docs/CONFIG.md.
    """

    /// Parses `args`, runs the daemon, returns the exit status.
    public static func main(_ args: [String]) -> Int32 {
        // A fixed mmap threshold: by default glibc raises it each time a big buffer (a client's
        // queued replies) is freed, after which such buffers come from the heap and the RSS
        // ratchets up under load instead of going back down.
        _ = tabbard_fix_mmap_threshold(128 * 1024)
        var source = ConfigSource()
        var check = false
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
            case "--version", "-V":
                print("tabbard \(Server.version) (protocol 1)")
                return 0
            case "--socket": guard let s = v() else { return 1 }; source.socket = s
            case "--config": guard let s = v() else { return 1 }; source.file = .path(s)
            case "--no-config": source.file = .none
            case "--check-config":
                check = true
                if let inline { source.file = .path(inline) } else if k + 1 < args.count, !args[k + 1].hasPrefix("-") {
                    k += 1
                    source.file = .path(args[k])
                }
            case "--sounds": guard let s = v() else { return 1 }; source.sounds.append(s)
            case "--state": guard let s = v() else { return 1 }; source.state = s
            case "--audio":
                guard let s = v() else { return 1 }
                guard let m = AudioMode(rawValue: s) else { fail("--audio must be auto, null or alsa, not \(Log.quoted(s))"); return 1 }
                source.audio = m
            case "--alsa-device": guard let s = v() else { return 1 }; source.alsaDevice = s
            case "--log-level":
                guard let s = v() else { return 1 }
                guard let p = Priority(name: s) else { fail("--log-level must be error, warning, notice, info or debug, not \(Log.quoted(s))"); return 1 }
                source.logLevel = p
            case "--clock":
                guard let s = v() else { return 1 }
                guard let c = ClockMode(rawValue: s) else { fail("--clock must be real or manual, not \(Log.quoted(s))"); return 1 }
                source.clock = c
            case "--capture": guard let s = v() else { return 1 }; source.capture = s
            default:
                fail("unknown option \(Log.quoted(args[k])); see tabbard --help")
                return 1
            }
            k += 1
        }
        let config: ServerConfig
        do { config = try source.load() } catch {
            fail("config: \(error)")
            return 1
        }
        if check {
            // What a start would report about the sounds fails the check too.
            let problems = SoundCheck.problems(config)
            guard problems.isEmpty else {
                for p in problems { fail("config: \(p)") }
                return 1
            }
            print(source.describe(config), terminator: "")
            return 0
        }
        if let c = config.capturePath, config.audio != .null {
            fail("--capture \(c) needs --audio null (the capture is the null sink's stream)")
            return 1
        }
        Log.level = config.logLevel
        if let file = config.configFile {
            Log.info("Configuration read", ["file": file])
        } else {
            Log.info("No configuration file; using the defaults", ["looked_for": source.file == .none ? "none (--no-config)" : ConfigSource.usualPath()])
        }
        // Before any thread exists (the server's first thread is the audio engine's).
        StreamEnvironment.apply(config.streamIdentity)
        do {
            let server = try Server(config: config)
            server.configSource = source
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
