import Glibc

/// A descriptor that other threads make readable to wake one that waits in `poll` (the read
/// end of a non-blocking pipe). Closed with the last reference.
public final class Wakeup: Sendable {
    /// The descriptor to poll for `POLLIN` (-1 when the pipe could not be made: nothing wakes
    /// the poller then, which sees only its own timeouts).
    public let fd: Int32
    private let writeFD: Int32

    public init() {
        var p: [Int32] = [-1, -1]
        if pipe(&p) == 0 {
            for fd in p {
                try? Sys.setNonBlocking(fd)
                try? Sys.setCloseOnExec(fd)
            }
        }
        fd = p[0]
        writeFD = p[1]
    }

    deinit {
        if fd >= 0 { try? Sys.close(fd) }
        if writeFD >= 0 { try? Sys.close(writeFD) }
    }

    /// Makes `fd` readable until `drain` (a full pipe is readable already).
    public func wake() {
        var one: UInt8 = 1
        _ = Glibc.write(writeFD, &one, 1)
    }

    /// Takes the wakes that came (`fd` is no longer readable, unless one comes meanwhile).
    public func drain() {
        var sink = [UInt8](repeating: 0, count: 64)
        while Glibc.read(fd, &sink, sink.count) == sink.count {}
    }
}

/// Runs `body` on a new detached POSIX thread. Returns 0, or `pthread_create`'s error (then
/// `body` never runs).
public func startThread(_ body: @escaping @Sendable () -> Void) -> Int32 {
    final class Body: Sendable {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }
    let box = Unmanaged.passRetained(Body(body)).toOpaque()
    var thread = pthread_t()
    let r = pthread_create(&thread, nil, { arg in
        Unmanaged<Body>.fromOpaque(arg!).takeRetainedValue().run()
        return nil
    }, box)
    if r == 0 {
        pthread_detach(thread)
    } else {
        Unmanaged<Body>.fromOpaque(box).release()
    }
    return r
}
