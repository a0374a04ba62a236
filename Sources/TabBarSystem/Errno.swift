@preconcurrency import Glibc

/// An `errno` value with its message: the error every wrapper in `Sys` throws.
///
/// `Errno()` reads the calling thread's `errno` (right after the call that failed);
/// `Errno(EAGAIN)` names one. Compare `code` with the Glibc constants.
public struct Errno: Error, Hashable, CustomStringConvertible, Sendable {
    /// The errno value (`ENOENT`, `EAGAIN`, …).
    public var code: Int32
    /// `code`, or by default the calling thread's current `errno`.
    public init(_ code: Int32 = errno) { self.code = code }
    /// `strerror(code)`, e.g. "No such file or directory".
    public var description: String { String(cString: strerror(code)) }
    /// EAGAIN or EWOULDBLOCK (the same value on Linux): a non-blocking call found nothing to do.
    @inlinable public var isWouldBlock: Bool { code == EAGAIN || code == EWOULDBLOCK }
}
