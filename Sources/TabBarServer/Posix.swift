@preconcurrency import Glibc

/// An `errno` value with its message.
public struct Errno: Error, Equatable, CustomStringConvertible, Sendable {
    public var code: Int32
    public init(_ code: Int32 = errno) { self.code = code }
    public var description: String { String(cString: strerror(code)) }
}

enum Posix {
    /// Runs a syscall, retrying on EINTR; returns the result or throws the errno.
    @discardableResult
    static func retry<T: BinaryInteger>(_ body: () -> T) throws(Errno) -> T {
        while true {
            let r = body()
            if r >= 0 { return r }
            let e = errno
            if e == EINTR { continue }
            throw Errno(e)
        }
    }

    static func setNonBlocking(_ fd: Int32) {
        let flags = fcntl(fd, F_GETFL)
        _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK)
    }

    static func setCloexec(_ fd: Int32) {
        let flags = fcntl(fd, F_GETFD)
        _ = fcntl(fd, F_SETFD, flags | FD_CLOEXEC)
    }

    /// CLOCK_MONOTONIC in nanoseconds.
    static func monotonicNs() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }

    /// Writes all of `bytes` to a blocking fd.
    static func writeAll(_ fd: Int32, _ bytes: [UInt8]) throws(Errno) {
        var off = 0
        while off < bytes.count {
            let n = try retry { bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + off, $0.count - off) } }
            off += n
        }
    }

    /// Reads a whole file (nil when it does not exist).
    static func readFile(_ path: String, limit: Int = 64 << 20) throws(Errno) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 {
            if errno == ENOENT { return nil }
            throw Errno()
        }
        defer { close(fd) }
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = try retry { chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) } }
            if n == 0 { break }
            out.append(contentsOf: chunk[0..<n])
            if out.count > limit { throw Errno(EFBIG) }
        }
        return out
    }

    /// `mkdir -p` with `mode` for the created directories.
    static func makeDirectories(_ path: String, mode: mode_t = 0o700) throws(Errno) {
        var current = path.hasPrefix("/") ? "" : "."
        for part in path.split(separator: "/") {
            current += "/" + part
            if mkdir(current, mode) != 0 && errno != EEXIST { throw Errno() }
        }
    }

    static func dirname(_ path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    static func env(_ name: String) -> String? {
        guard let v = getenv(name) else { return nil }
        let s = String(cString: v)
        return s.isEmpty ? nil : s
    }
}
