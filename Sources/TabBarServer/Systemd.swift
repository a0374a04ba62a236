@preconcurrency import Glibc
import CSystemd

/// sd_notify, socket activation and the watchdog (libsystemd).
enum Systemd {
    /// Sends a notify message (no-op without NOTIFY_SOCKET).
    static func notify(_ state: String) {
        _ = sd_notify(0, state)
    }

    /// The watchdog interval in µs when systemd (or a test) asks for pings to this process.
    static func watchdogUsec() -> UInt64? {
        var usec: UInt64 = 0
        let r = sd_watchdog_enabled(0, &usec)
        return r > 0 && usec > 0 ? usec : nil
    }

    /// The listening socket passed by socket activation, validated; nil when there is none.
    /// The LISTEN_* variables are cleared so children do not inherit them.
    static func inheritedListener() throws(ServerError) -> Int32? {
        let n = sd_listen_fds(1)
        if n < 0 { throw ServerError("socket activation: \(Errno(-n))") }
        if n == 0 { return nil }
        let fd = SD_LISTEN_FDS_START
        if n > 1 { Log.warning("socket activation passed \(n) sockets; using the first", ["fd": String(fd)]) }
        if sd_is_socket_unix(fd, Int32(SOCK_STREAM.rawValue), 1, nil, 0) <= 0 {
            throw ServerError("socket activation: fd \(fd) is not a listening AF_UNIX stream socket; fix ListenStream= in tabbard.socket")
        }
        Posix.setNonBlocking(fd)
        Posix.setCloexec(fd)
        return fd
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
            let live = withUnsafePointer(to: &addr) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(probe, $0, len) == 0 }
            }
            close(probe)
            if live { throw ServerError("another tabbard is already listening on \(path); stop it first or use --socket") }
            unlink(path)
            Log.notice("Replaced a stale socket file", ["path": path])
        }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        if fd < 0 { throw ServerError("socket(): \(Errno())") }
        let old = umask(0o177)
        let r = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.bind(fd, $0, len) }
        }
        umask(old)
        if r != 0 {
            let e = Errno()
            close(fd)
            throw ServerError("cannot bind \(path): \(e)")
        }
        if listen(fd, 256) != 0 {
            let e = Errno()
            close(fd)
            throw ServerError("cannot listen on \(path): \(e)")
        }
        return fd
    }
}
