@preconcurrency import Glibc
import TabBarCore
import CSystemd

/// The event loop's descriptors: the listening socket, the epoll set, the signalfd, the
/// spare descriptor kept for turning clients away, and whether the loop keeps running.
/// It sets them up, watches descriptors, and tears the socket down; `Server.run` waits on it.
final class EventLoop {
    let listenFD: Int32
    /// Whether tabbard bound the socket itself (else systemd passed it): then it checks its
    /// peers and removes the socket file when it stops.
    let ownsSocketPath: Bool
    private(set) var epfd: Int32 = -1
    private(set) var signalFD: Int32 = -1
    /// A descriptor held in reserve: out of descriptors, it is closed to accept the waiting
    /// client and tell it why it is turned away (`acceptUsingSpare`), then taken again.
    private(set) var spareFD: Int32 = -1
    /// False once SIGTERM/SIGINT arrived: the loop ends after this turn.
    var running = true

    /// The socket first (passed by systemd, else bound at `socketPath`): a daemon that finds
    /// another one live must not touch its state.
    init(socketPath: String) throws {
        if let fd = try Systemd.inheritedListener() {
            (listenFD, ownsSocketPath) = (fd, false)
            Log.info("Using the socket passed by systemd", ["fd": String(fd), "path": Systemd.boundPath(fd) ?? "?"])
        } else {
            (listenFD, ownsSocketPath) = (try Listener.bind(path: socketPath), true)
        }
    }

    /// Creates the epoll set, the signalfd (SIGTERM, SIGINT, SIGHUP) and the spare
    /// descriptor; false when one of them could not be had (errno says why).
    func open() -> Bool {
        epfd = epoll_create1(Int32(EPOLL_CLOEXEC))
        var mask = sigset_t()
        sigemptyset(&mask)
        for s in [SIGTERM, SIGINT, SIGHUP] { sigaddset(&mask, s) }
        signalFD = signalfd(-1, &mask, Int32(SFD_CLOEXEC | SFD_NONBLOCK))
        spareFD = Glibc.open("/dev/null", O_RDONLY | O_CLOEXEC)
        return epfd >= 0 && signalFD >= 0 && spareFD >= 0
    }

    /// Closes the listening socket, and removes its file when tabbard bound it.
    func closeListener(socketPath: String) {
        close(listenFD)
        if ownsSocketPath { unlink(socketPath) }
    }

    /// Adds `fd` to the epoll set; false (logged) when the kernel refuses (ENOMEM, or ENOSPC: fs.epoll.max_user_watches).
    @discardableResult
    func watch(_ fd: Int32, _ events: UInt32) -> Bool {
        do throws(Errno) { try Sys.epollControl(epfd, EPOLL_CTL_ADD, fd, events: events) } catch {
            Log.error("Cannot watch a descriptor (epoll_ctl)", ["fd": String(fd), "error": "\(error)"])
            return false
        }
        return true
    }

    /// Watches `c` for what it is ready for: input unless paused or half-closed, output while some is queued.
    func rewatch(_ c: Connection) {
        let events = (c.readPaused || c.readClosed || c.held ? 0 : EPOLLIN.rawValue) | (c.pollingOut ? EPOLLOUT.rawValue : 0)
        do throws(Errno) { try Sys.epollControl(epfd, EPOLL_CTL_MOD, c.fd, events: events) } catch {
            Log.error("Cannot change what is watched of a client (epoll_ctl)", ["client": String(c.id), "error": "\(error)"])
        }
    }

    /// Takes `fd` out of the epoll set (closing it does so anyway).
    func unwatch(_ fd: Int32) {
        _ = try? Sys.epollControl(epfd, EPOLL_CTL_DEL, fd)
    }

    /// Out of descriptors: closes the spare, accepts the waiting client and hands it to
    /// `refuse` (which closes it), then takes the spare again. True when a client was taken.
    func acceptUsingSpare(_ refuse: (Int32) -> Void) -> Bool {
        guard spareFD >= 0 else { return false }
        close(spareFD)
        let turned = try? Sys.accept(listenFD)
        if case .done(let t)? = turned { refuse(t) }
        spareFD = Glibc.open("/dev/null", O_RDONLY | O_CLOEXEC)
        if case .done? = turned { return true }
        return false
    }

    /// The next signal waiting on the signalfd, nil when there is none.
    func nextSignal() -> UInt32? {
        var info = signalfd_siginfo()
        guard case .done(MemoryLayout<signalfd_siginfo>.size)? = try? withUnsafeMutableBytes(of: &info, { try Sys.read(signalFD, into: $0) }) else {
            return nil
        }
        return info.ssi_signo
    }
}
