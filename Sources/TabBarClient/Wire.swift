import Glibc
import Synchronization
import TabBarCore
import TabBarSystem

/// One line received from the daemon: its parsed value and its exact text
/// (without the line terminator).
public struct ReceivedMessage: Sendable {
    /// The line, parsed.
    public let json: JSON
    /// The line as the daemon wrote it.
    public let text: String

    /// A line and its parse.
    public init(json: JSON, text: String) {
        self.json = json
        self.text = text
    }
}

/// A point in time on the monotonic clock, after which a wait gives up.
struct Deadline {
    let nanoseconds: UInt64

    static func now() -> UInt64 { MonotonicClock.nanoseconds() }

    /// `ms` milliseconds from now (negative counts as zero).
    static func after(ms: Int) -> Deadline {
        Deadline(nanoseconds: now() + UInt64(max(0, ms)) * 1_000_000)
    }

    /// What is left, rounded up to whole milliseconds, as `poll` wants it.
    var remainingMs: Int32 {
        let t = Deadline.now()
        guard nanoseconds > t else { return 0 }
        return Int32(clamping: (nanoseconds - t + 999_999) / 1_000_000)
    }
}

/// `strerror` as a Swift string.
func errnoText(_ code: Int32) -> String { String(cString: strerror(code)) }

/// The socket and the lines on it, below `TabBar`: connecting, request lines, error texts.
enum Wire {
    /// The longest line accepted from the daemon.
    static let maxLine = 16 << 20

    /// A request line (a notification without `id`), its newline included.
    static func requestLine(id: Int?, method: String, params: JSON?) -> [UInt8] {
        requestLine(id: id, Requests.Line(method, params.map { p in { $0.json(p) } }))
    }

    /// A typed request's line (`Requests`).
    static func requestLine(id: Int?, _ r: Requests.Line) -> [UInt8] {
        ByteBuffer.collect { $0.request(id: id, method: r.method, params: r.write) }
    }

    /// A reply line as the daemon writes a result (`{"jsonrpc":"2.0","id":N,"result":…}`,
    /// TabBarCore's `Wire.reply`): its id and the bytes of its result, which the reader then
    /// parses alone. Nil for any other line (the reader parses it whole); the result's bytes
    /// are a reply's only if they parse as one JSON value.
    static func resultParts(_ line: UnsafeBufferPointer<UInt8>) -> (id: Int, result: UnsafeBufferPointer<UInt8>)? {
        let head: StaticString = #"{"jsonrpc":"2.0","id":"#
        let tail: StaticString = #","result":"#
        @inline(__always) func matches(_ s: StaticString, at i: Int) -> Bool {
            let n = s.utf8CodeUnitCount
            return i + n <= line.count && memcmp(line.baseAddress! + i, s.utf8Start, n) == 0
        }
        guard line.last == UInt8(ascii: "}"), matches(head, at: 0) else { return nil }
        var i = head.utf8CodeUnitCount
        let first = i
        var id = 0
        while i < line.count, i - first < 18, case let d = line[i] &- 0x30, d < 10 {
            id = id * 10 + Int(d)
            i += 1
        }
        // (One digit at least, no leading zero: the JSON number the whole parse would read.)
        guard i > first, line[first] != UInt8(ascii: "0") || i == first + 1, matches(tail, at: i) else { return nil }
        let start = i + tail.utf8CodeUnitCount
        guard start < line.count - 1 else { return nil }
        return (id, UnsafeBufferPointer(rebasing: line[start..<(line.count - 1)]))
    }

    /// The first 120 characters of `text`, for an error message.
    static func excerpt(_ text: String) -> String {
        text.count > 120 ? String(text.prefix(120)) + "…" : text
    }

    static func connectSocket(path: String) throws -> Int32 {
        var addr = sockaddr_un()
        let capacity = MemoryLayout.size(ofValue: addr.sun_path)
        let bytes = Array(path.utf8)
        guard !bytes.isEmpty else {
            throw ClientError.connect(path: path, reason: "the socket path is empty — pass --socket PATH or set TABBARD_SOCKET")
        }
        guard bytes.count < capacity else {
            throw ClientError.connect(path: path, reason: "the path is \(bytes.count) bytes long but a Unix socket path may have at most \(capacity - 1) — use a shorter --socket path")
        }
        addr.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &addr.sun_path) { dst in
            dst.copyBytes(from: bytes)
            dst[bytes.count] = 0
        }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else {
            throw ClientError.connect(path: path, reason: "cannot create a socket: \(errnoText(errno))")
        }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count + 1)
        var e = EAGAIN  // (a listener whose backlog is full: .wouldBlock)
        do throws(Errno) {
            if case .done = try Sys.connect(fd, to: &addr, length: length) { return fd }
        } catch {
            e = error.code
        }
        try? Sys.close(fd)
        throw ClientError.connect(path: path, reason: connectHint(e))
    }

    /// `TabBar.startAdvice`.
    static let advice = Mutex("start it (`systemctl --user start tabbard.socket`)")

    /// The system's reason plus what to do about it.
    static func connectHint(_ e: Int32) -> String {
        let startAdvice = advice.withLock { $0 }
        let reason = errnoText(e)
        switch e {
        case ENOENT, ENOTDIR:
            return "\(reason) — is tabbard running? \(startAdvice) or pass --socket"
        case ECONNREFUSED:
            return "\(reason) — nothing is listening there (a stale socket of a stopped tabbard?); \(startAdvice) or pass --socket"
        case EACCES, EPERM:
            return "\(reason) — you may not use this socket; run as the daemon's user or group, or pass --socket"
        case EAGAIN:
            return "\(reason) — tabbard is not accepting connections fast enough; retry in a moment"
        default:
            return "\(reason) — is tabbard running? \(startAdvice) or pass --socket"
        }
    }
}
