@preconcurrency import Glibc
import CTabBarSystem

/// What a call on a non-blocking descriptor did: its result, or nothing because it would
/// have had to wait (EAGAIN/EWOULDBLOCK, or EINPROGRESS for `connect`). Waiting is the
/// normal case of a non-blocking descriptor, not an error, so it is a value here.
public enum IOResult<Value> {
    /// The call did its work; its result (bytes moved, the new descriptor, …).
    case done(Value)
    /// Nothing could be done now; wait until the descriptor is ready (poll/epoll).
    case wouldBlock
}

extension IOResult: Equatable where Value: Equatable {}
extension IOResult: Sendable where Value: Sendable {}

/// The project's system calls, wrapped once (swift-system's approach, in our own few lines).
///
/// - EINTR is retried in exactly one place, `call`; everything else goes through it.
/// - EAGAIN/EWOULDBLOCK is the value `.wouldBlock` where a non-blocking descriptor can give
///   it (`read`, `write`, `send`, `accept`, `connect`).
/// - Any other failure throws `Errno` (typed throws): no result can be dropped unseen.
///
/// Descriptors stay plain `Int32`, as the rest of the code keeps them.
public enum Sys {
    /// Runs `body` (a system call returning -1 and setting errno on failure) until it is not
    /// interrupted: the only EINTR loop of the project. `body` runs again after an EINTR, so a
    /// timeout it computes from a deadline is computed afresh. Throws the errno of any other failure.
    @inlinable @inline(__always) @discardableResult
    public static func call<T: FixedWidthInteger & SignedInteger>(_ body: () -> T) throws(Errno) -> T {
        while true {
            let r = body()
            if r != -1 { return r }
            let e = errno
            if e != EINTR { throw Errno(e) }
        }
    }

    /// `call` for a non-blocking descriptor: EAGAIN/EWOULDBLOCK comes back as `.wouldBlock`.
    @inlinable @inline(__always)
    public static func nonBlocking<T: FixedWidthInteger & SignedInteger>(_ body: () -> T) throws(Errno) -> IOResult<T> {
        do throws(Errno) {
            return .done(try call(body))
        } catch {
            if error.isWouldBlock { return .wouldBlock }
            throw error
        }
    }

    // MARK: Reading and writing

    /// `read(2)` into `buffer`: `.done(0)` is end of file.
    @inlinable
    public static func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) throws(Errno) -> IOResult<Int> {
        try nonBlocking { Glibc.read(fd, buffer.baseAddress, buffer.count) }
    }

    /// `write(2)` of `bytes`: `.done(n)` may be fewer than `bytes.count`.
    @inlinable
    public static func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) throws(Errno) -> IOResult<Int> {
        try nonBlocking { Glibc.write(fd, bytes.baseAddress, bytes.count) }
    }

    /// `send(2)` of `bytes` on a socket, with MSG_NOSIGNAL: a peer that is gone is the error
    /// EPIPE, never a SIGPIPE. `.done(n)` may be fewer than `bytes.count`.
    @inlinable
    public static func send(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) throws(Errno) -> IOResult<Int> {
        try nonBlocking { Glibc.send(fd, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL)) }
    }

    /// `pwrite(2)` of `bytes` at `offset` (a regular file: it never would block).
    @inlinable
    public static func pwrite(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, at offset: off_t) throws(Errno) -> Int {
        try call { Glibc.pwrite(fd, bytes.baseAddress, bytes.count, offset) }
    }

    // Arrays (`Array.withUnsafeBytes` does not pass a typed error through; its buffer pointer does).

    /// `read` into `buffer` from its start.
    @inlinable
    public static func read(_ fd: Int32, into buffer: inout [UInt8]) throws(Errno) -> IOResult<Int> {
        try buffer.withUnsafeMutableBufferPointer { (b) throws(Errno) in try read(fd, into: UnsafeMutableRawBufferPointer(b)) }
    }

    /// `write` of `bytes[range]`.
    @inlinable
    public static func write(_ fd: Int32, _ bytes: [UInt8], _ range: Range<Int>) throws(Errno) -> IOResult<Int> {
        try bytes.withUnsafeBufferPointer { (b) throws(Errno) in try write(fd, UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: b[range]))) }
    }

    /// `send` of `bytes[range]`.
    @inlinable
    public static func send(_ fd: Int32, _ bytes: [UInt8], _ range: Range<Int>) throws(Errno) -> IOResult<Int> {
        try bytes.withUnsafeBufferPointer { (b) throws(Errno) in try send(fd, UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: b[range]))) }
    }

    /// `pwrite` of all of `bytes` at `offset`.
    public static func pwrite(_ fd: Int32, _ bytes: [UInt8], at offset: off_t) throws(Errno) -> Int {
        try bytes.withUnsafeBufferPointer { (b) throws(Errno) in try pwrite(fd, UnsafeRawBufferPointer(b), at: offset) }
    }

    /// `writeAll` of an array.
    public static func writeAll(_ fd: Int32, _ bytes: [UInt8]) throws(Errno) {
        try bytes.withUnsafeBufferPointer { (b) throws(Errno) in try writeAll(fd, UnsafeRawBufferPointer(b)) }
    }

    /// Writes all of `bytes` to a blocking descriptor (a file, a pipe): short writes are
    /// continued; EAGAIN (it was non-blocking after all) throws.
    public static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) throws(Errno) {
        var off = 0
        while off < bytes.count {
            switch try write(fd, UnsafeRawBufferPointer(rebasing: bytes[off...])) {
            case .done(let n): off += n
            case .wouldBlock: throw Errno(EAGAIN)
            }
        }
    }

    /// Reads a blocking descriptor to its end, at most `limit` bytes (more: EFBIG).
    public static func readAll(_ fd: Int32, limit: Int = 64 << 20) throws(Errno) -> [UInt8] {
        var out: [UInt8] = []
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 65536, alignment: 1)
        defer { chunk.deallocate() }
        while true {
            guard case .done(let n) = try read(fd, into: chunk) else { throw Errno(EAGAIN) }
            if n == 0 { return out }
            out.append(contentsOf: chunk[0..<n])
            if out.count > limit { throw Errno(EFBIG) }
        }
    }

    /// `poll(2)`: the number of descriptors with events (0: the timeout passed). The timeout
    /// (ms, -1: none) is evaluated again after an interruption, so pass one computed from a deadline.
    @inlinable
    public static func poll(_ fds: inout [pollfd], timeoutMs: @autoclosure () -> Int32) throws(Errno) -> Int {
        let n = nfds_t(fds.count)
        return Int(try fds.withUnsafeMutableBufferPointer { (p) throws(Errno) in try call { Glibc.poll(p.baseAddress, n, timeoutMs()) } })
    }

    // MARK: Sockets

    /// `accept4(2)` on a non-blocking listening socket: the client's descriptor, itself
    /// non-blocking and close-on-exec, or `.wouldBlock` when nobody is waiting. (EMFILE and
    /// ENFILE, the descriptor limit, throw: the caller decides how to turn the client away.)
    public static func accept(_ listener: Int32) throws(Errno) -> IOResult<Int32> {
        try nonBlocking { tabbard_system_accept(listener) }
    }

    /// `connect(2)` to `address` (`length` bytes of it). `.wouldBlock` on a non-blocking
    /// socket still connecting (EINPROGRESS) or, for AF_UNIX, whose listener's backlog is full
    /// (EAGAIN). EISCONN — which an interrupted connect, tried again, reports once it
    /// completed meanwhile — counts as connected.
    public static func connect(_ fd: Int32, to address: inout sockaddr_un, length: socklen_t) throws(Errno) -> IOResult<Void> {
        do throws(Errno) {
            _ = try withUnsafePointer(to: &address) { (p) throws(Errno) in
                try p.withMemoryRebound(to: sockaddr.self, capacity: 1) { (a) throws(Errno) in
                    try call { () -> Int32 in
                        let r = Glibc.connect(fd, a, length)
                        return r == -1 && errno == EISCONN ? 0 : r
                    }
                }
            }
            return .done(())
        } catch {
            if error.isWouldBlock || error.code == EINPROGRESS { return .wouldBlock }
            throw error
        }
    }
}
