@preconcurrency import Glibc
import CTabBarSystem

/// Descriptors, files and epoll: the checked wrappers of `Sys` whose failures matter.
extension Sys {
    /// `open(2)`: the new descriptor (pass O_CLOEXEC). ENOENT and the rest throw.
    public static func open(_ path: String, _ flags: Int32, mode: mode_t = 0) throws(Errno) -> Int32 {
        try call { Glibc.open(path, flags, mode) }
    }

    /// `close(2)`. Never retried: on Linux the descriptor is gone even when close reports
    /// EINTR (retrying could close a descriptor another thread just got), so EINTR counts as
    /// closed. Other errors (EIO: written data may be lost; EBADF: a bug) throw.
    public static func close(_ fd: Int32) throws(Errno) {
        if Glibc.close(fd) == -1 && errno != EINTR { throw Errno() }
    }

    /// `rename(2)` of `from` to `to` (atomic, replacing `to`).
    public static func rename(_ from: String, to: String) throws(Errno) {
        try call { Glibc.rename(from, to) }
    }

    /// `unlink(2)`.
    public static func unlink(_ path: String) throws(Errno) {
        try call { Glibc.unlink(path) }
    }

    /// `chmod(2)`.
    public static func chmod(_ path: String, _ mode: mode_t) throws(Errno) {
        try call { Glibc.chmod(path, mode) }
    }

    /// `fsync(2)`: the file's data and metadata are on disk.
    public static func fsync(_ fd: Int32) throws(Errno) {
        try call { Glibc.fsync(fd) }
    }

    /// `fdatasync(2)`: the file's data (and the size) are on disk.
    public static func fdatasync(_ fd: Int32) throws(Errno) {
        try call { Glibc.fdatasync(fd) }
    }

    /// fsyncs the directory `dir`, so that a rename or create in it is on disk.
    public static func fsyncDirectory(_ dir: String) throws(Errno) {
        let fd = try open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        defer { try? close(fd) }  // (read-only: nothing to lose)
        try fsync(fd)
    }

    /// `ftruncate(2)`.
    public static func ftruncate(_ fd: Int32, to length: off_t) throws(Errno) {
        try call { Glibc.ftruncate(fd, length) }
    }

    /// `truncate(2)`.
    public static func truncate(_ path: String, to length: off_t) throws(Errno) {
        try call { Glibc.truncate(path, length) }
    }

    /// `flock(2)`. With LOCK_NB a lock held elsewhere throws EWOULDBLOCK (a lock is not I/O:
    /// the caller refuses, it does not wait for readiness).
    public static func lock(_ fd: Int32, _ operation: Int32) throws(Errno) {
        try call { () -> Int32 in flock(fd, operation) }
    }

    /// Makes `fd` non-blocking (O_NONBLOCK, keeping its other status flags).
    public static func setNonBlocking(_ fd: Int32) throws(Errno) {
        let flags = try call { fcntl(fd, F_GETFL) }
        if flags & O_NONBLOCK == 0 { try call { fcntl(fd, F_SETFL, flags | O_NONBLOCK) } }
    }

    /// Makes `fd` close-on-exec (FD_CLOEXEC).
    public static func setCloseOnExec(_ fd: Int32) throws(Errno) {
        let flags = try call { fcntl(fd, F_GETFD) }
        if flags & FD_CLOEXEC == 0 { try call { fcntl(fd, F_SETFD, flags | FD_CLOEXEC) } }
    }

    /// `waitpid(2)`: the pid that changed state (0 with WNOHANG: none yet).
    public static func waitpid(_ pid: pid_t, _ status: inout Int32, _ options: Int32 = 0) throws(Errno) -> pid_t {
        try call { Glibc.waitpid(pid, &status, options) }
    }

    // MARK: epoll

    /// `epoll_create1(EPOLL_CLOEXEC)`.
    public static func epollCreate() throws(Errno) -> Int32 {
        try call { epoll_create1(Int32(EPOLL_CLOEXEC)) }
    }

    /// `epoll_ctl(2)`: watch `fd` for `events` (`EPOLL_CTL_ADD`, `_MOD`), or stop (`_DEL`,
    /// `events` ignored). `event.data.fd` is `fd`.
    public static func epollControl(_ epfd: Int32, _ op: Int32, _ fd: Int32, events: UInt32 = 0) throws(Errno) {
        var ev = epoll_event()
        ev.events = events
        ev.data.fd = fd
        try call { epoll_ctl(epfd, op, fd, &ev) }
    }

    /// `epoll_wait(2)` into `events`: how many are ready (0: the timeout passed). The timeout
    /// (ms, -1: none) is evaluated again after an interruption, as `poll`'s is.
    @inlinable
    public static func epollWait(_ epfd: Int32, _ events: inout [epoll_event], timeoutMs: @autoclosure () -> Int32) throws(Errno) -> Int {
        Int(try events.withUnsafeMutableBufferPointer { (p) throws(Errno) in
            try call { epoll_wait(epfd, p.baseAddress, Int32(p.count), timeoutMs()) }
        })
    }

    // MARK: inotify

    /// `inotify_init1(IN_NONBLOCK | IN_CLOEXEC)`.
    public static func inotifyCreate() throws(Errno) -> Int32 {
        try call { inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC)) }
    }

    /// `inotify_add_watch(2)` of `path` for `mask`: the watch descriptor.
    public static func inotifyWatch(_ fd: Int32, _ path: String, _ mask: UInt32) throws(Errno) -> Int32 {
        try call { inotify_add_watch(fd, path, mask) }
    }

    /// `inotify_rm_watch(2)` of the watch `wd`.
    public static func inotifyUnwatch(_ fd: Int32, _ wd: Int32) throws(Errno) {
        try call { inotify_rm_watch(fd, wd) }
    }
}
