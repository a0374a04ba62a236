@preconcurrency import Glibc
import CSystemd
import TabBarSystem

/// sd_notify, socket activation and the watchdog (libsystemd).
enum Systemd {
    /// Sends a notify message (no-op without NOTIFY_SOCKET).
    static func notify(_ state: String) {
        _ = sd_notify(0, state)
    }

    /// Whether a service manager (or a test) listens for notify messages.
    static var notifySocketSet: Bool { Posix.env("NOTIFY_SOCKET") != nil }

    /// `RELOADING=1` as systemd wants it. `MONOTONIC_USEC=` (CLOCK_MONOTONIC, µs) is
    /// what systemd 253+ matches a `Type=notify-reload` reload against; 252 ignores
    /// unknown fields, so it is always sent.
    static func reloadingMessage(status: String, nowNs: UInt64) -> String {
        "RELOADING=1\nMONOTONIC_USEC=\(nowNs / 1000)\nSTATUS=\(status)"
    }

    /// The watchdog interval in µs when systemd (or a test) asks for pings to this process.
    static func watchdogUsec() -> UInt64? {
        var usec: UInt64 = 0
        let r = sd_watchdog_enabled(0, &usec)
        return r > 0 && usec > 0 ? usec : nil
    }

    /// The listening socket passed by socket activation, validated; nil when there is none
    /// (no LISTEN_FDS, or LISTEN_PID names another process). LISTEN_PID, LISTEN_FDS and
    /// LISTEN_FDNAMES are cleared in every case, so nothing started later inherits them.
    static func inheritedListener() throws(ServerError) -> Int32? {
        let names = Posix.env("LISTEN_FDNAMES")
        let given = "LISTEN_PID=\(Posix.env("LISTEN_PID") ?? "") LISTEN_FDS=\(Posix.env("LISTEN_FDS") ?? "")"
        let n = sd_listen_fds(1)
        if n < 0 { throw ServerError("socket activation: \(given) is not valid (\(Errno(-n)))") }
        if n == 0 { return nil }
        let fd = SD_LISTEN_FDS_START
        if n > 1 {
            // One socket is all tabbard serves; the rest would only sit unused.
            Log.warning("socket activation passed \(n) sockets; using the first, closing the others (one ListenStream= in tabbard.socket)",
                        ["fd": String(fd), "names": names ?? ""])
            for extra in (fd + 1)..<(fd + n) { try? Sys.close(extra) }  // (never used: nothing to lose)
        }
        do { try adoptListener(fd) } catch {
            try? Sys.close(fd)
            throw error
        }
        return fd
    }

    /// Checks that `fd` is a listening AF_UNIX stream socket and makes it non-blocking and close-on-exec.
    static func adoptListener(_ fd: Int32) throws(ServerError) {
        if sd_is_socket_unix(fd, Int32(SOCK_STREAM.rawValue), 1, nil, 0) <= 0 {
            throw ServerError("socket activation: fd \(fd) is not a listening AF_UNIX stream socket; fix ListenStream= in tabbard.socket")
        }
        do throws(Errno) {
            try Sys.setNonBlocking(fd)
            try Sys.setCloseOnExec(fd)
        } catch {
            throw ServerError("socket activation: cannot make fd \(fd) non-blocking and close-on-exec: \(error)")
        }
    }

    /// The path a listening AF_UNIX socket is bound to (for logs and STATUS=), if it has one.
    static func boundPath(_ fd: Int32) -> String? {
        var addr = sockaddr_un()
        var len = socklen_t(MemoryLayout<sockaddr_un>.size)
        let r = withUnsafeMutablePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) }
        }
        let pathBytes = Int(len) - MemoryLayout<sa_family_t>.size
        guard r == 0, addr.sun_family == sa_family_t(AF_UNIX), pathBytes > 0 else { return nil }
        return withUnsafeBytes(of: &addr.sun_path) { raw in
            let bytes = raw.prefix(pathBytes)
            if bytes.first == 0 { return "@" + String(decoding: bytes.dropFirst().prefix { $0 != 0 }, as: UTF8.self) }
            return String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
        }
    }
}

/// A start-up failure, stated for a person.
public struct ServerError: Error, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// Binding the daemon's own socket.
enum Listener {
    /// Binds `path` (creating its directory 0700), refusing to steal it from a live
    /// daemon and replacing only a stale socket file. Mode 0600.
    static func bind(path: String) throws(ServerError) -> Int32 {
        let dir = Posix.dirname(path)
        do { try Posix.makeDirectories(dir, mode: 0o700) } catch {
            throw ServerError("cannot create the socket directory \(dir): \(error)")
        }
        if dir == "/tmp/tabbard-\(getuid())", let why = Sys.privateDirectoryProblem(dir) { throw ServerError(why) }
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: addr.sun_path) else {
            throw ServerError("socket path is too long (\(bytes.count) bytes, at most 107): \(path)")
        }
        withUnsafeMutableBytes(of: &addr.sun_path) { raw in
            for (k, b) in bytes.enumerated() { raw[k] = b }
            raw[bytes.count] = 0
        }
        let len = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count + 1)
        // Is somebody already there?
        var st = stat()
        if lstat(path, &st) == 0 {
            guard (st.st_mode & S_IFMT) == S_IFSOCK else {
                throw ServerError("\(path) exists and is not a socket; remove it or choose another --socket")
            }
            let probe = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            if probe < 0 { throw ServerError("socket(): \(Errno())") }
            // Connected (or a full backlog: somebody is there, not accepting fast enough): live.
            let live = (try? Sys.connect(probe, to: &addr, length: len)) != nil
            try? Sys.close(probe)
            if live { throw ServerError("another tabbard is already listening on \(path); stop it first or use --socket") }
            do throws(Errno) { try Sys.unlink(path) } catch {
                if error.code != ENOENT { throw ServerError("cannot replace the stale socket file \(path): \(error)") }
            }
            Log.notice("Replaced a stale socket file", ["path": path])
        }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        if fd < 0 { throw ServerError("socket(): \(Errno())") }
        // Mode 0600 before listen(2): until then a connect is refused, so nobody can get in while
        // the file has bind's mode. (Not by umask(2) around bind: the mask is the process's, and
        // a thread creating a file meanwhile got 0600 too — a test process's other tests saw a
        // directory they could not enter and a copied executable they could not run.)
        let r = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.bind(fd, $0, len) }
        }
        if r != 0 {
            let e = Errno()
            try? Sys.close(fd)
            throw ServerError("cannot bind \(path): \(e)")
        }
        do throws(Errno) { try Sys.chmod(path, 0o600) } catch {
            try? Sys.close(fd)
            try? Sys.unlink(path)
            throw ServerError("cannot make \(path) private (mode 0600): \(error)")
        }
        if listen(fd, 256) != 0 {
            let e = Errno()
            try? Sys.close(fd)
            throw ServerError("cannot listen on \(path): \(e)")
        }
        return fd
    }
}

/// `STATUS=` bookkeeping: what was last said and when. An update goes out when something a
/// person reading `systemctl status` cares about changed (clients, subscribers, sounds,
/// whether the audio device works), at most once per `minIntervalNs` — never per request.
struct StatusNotifier {
    /// The facts `STATUS=` reports; a change in any of them is worth an update.
    struct Key: Equatable {
        var clients: Int
        var subscribed: Int
        var sounds: Int
        var audioOK: Bool
    }

    /// False without NOTIFY_SOCKET: then nothing is computed or sent.
    let enabled: Bool
    let minIntervalNs: UInt64
    /// How often an idle loop wakes to look at the audio device (which changes on the audio thread).
    let pollIntervalNs: UInt64
    private(set) var sentKey: Key?
    private(set) var sentNs: UInt64 = 0
    private(set) var polledNs: UInt64 = 0

    init(enabled: Bool, minIntervalNs: UInt64 = 1_000_000_000, pollIntervalNs: UInt64 = 5_000_000_000) {
        self.enabled = enabled
        self.minIntervalNs = minIntervalNs
        self.pollIntervalNs = pollIntervalNs
    }

    /// Whether an update should be sent now.
    func due(_ key: Key, nowNs: UInt64) -> Bool {
        enabled && key != sentKey && nowNs >= sentNs + minIntervalNs
    }

    /// When the loop has to wake up for `STATUS=` (nil: it need not).
    func deadline(_ key: Key, nowNs: UInt64) -> UInt64? {
        guard enabled else { return nil }
        if key != sentKey { return max(nowNs, sentNs + minIntervalNs) }
        return polledNs + pollIntervalNs
    }

    mutating func sent(_ key: Key, nowNs: UInt64) {
        sentKey = key
        sentNs = nowNs
        polledNs = nowNs
    }

    mutating func polled(nowNs: UInt64) { polledNs = nowNs }
}

extension AudioService {
    /// Whether clicks can be played right now (the device is open).
    var deviceOK: Bool { engine?.isAvailable ?? false }

    /// Sounds and device for `STATUS=`: "6 sounds, audio alsa:default ok" — not
    /// playing/idle, which changes with every click.
    var availabilitySummary: String {
        let device: String
        if let engine {
            if engine.isAvailable { device = "ok" } else {
                let state = engine.deviceState
                device = state == "closed" ? "opening" : state
            }
        } else {
            device = "not running"
        }
        return "\(bank.sounds.count) sound\(bank.sounds.count == 1 ? "" : "s"), audio \(sinkName) \(device)"
    }
}
