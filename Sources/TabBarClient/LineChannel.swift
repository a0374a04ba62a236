import Glibc
import TabBarCore

/// One line received from the daemon: its parsed value and its exact text
/// (without the line terminator).
public struct ReceivedMessage {
    public let json: JSON
    public let text: String

    public init(json: JSON, text: String) {
        self.json = json
        self.text = text
    }
}

/// A point in time on the monotonic clock, after which a wait gives up.
struct Deadline {
    let nanoseconds: UInt64

    static func now() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }

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

/// A connected, non-blocking stream socket that sends bytes and hands out whole
/// lines. Reads go through a 64 KiB buffer and a `LineFramer`; every wait is a
/// `poll` bounded by a deadline; `EINTR` is retried here and nowhere else.
final class LineChannel {
    private enum Entry {
        case message(ReceivedMessage)
        case violation(String)
    }

    /// The longest line accepted from the daemon.
    static let maxLine = 16 << 20

    private(set) var fd: Int32
    private var framer = LineFramer(maxLine: LineChannel.maxLine)
    private var buffer = [UInt8](repeating: 0, count: 65536)
    private var entries: [Entry] = []
    private var head = 0
    /// The peer has closed its side; what is queued can still be read.
    private(set) var eof = false

    init(fd: Int32) {
        self.fd = fd
        let flags = fcntl(fd, F_GETFL)
        if flags >= 0 { _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK) }
    }

    deinit { close() }

    /// Whether a line is already buffered (so `next` will not touch the socket).
    var hasBuffered: Bool { head < entries.count }

    func close() {
        if fd >= 0 {
            Glibc.close(fd)
            fd = -1
        }
        eof = true
    }

    /// The next line, waiting until `deadline` (forever when nil); nil on timeout.
    /// Throws `.closed` once the peer has closed and every line was handed out.
    func next(deadline: Deadline?) throws -> ReceivedMessage? {
        while true {
            if head < entries.count {
                let entry = entries[head]
                head += 1
                if head == entries.count {
                    entries.removeAll(keepingCapacity: true)
                    head = 0
                }
                switch entry {
                case .message(let m): return m
                case .violation(let what): throw ClientError.protocolViolation(what)
                }
            }
            if eof || fd < 0 { throw ClientError.closed }
            let revents = try wait(Int16(POLLIN), deadline: deadline)
            if revents == 0 { return nil }
            try fill()
        }
    }

    /// Sends all of `bytes`. While the socket is full, incoming lines are read
    /// into the queue so that neither side can block the other.
    func send(_ bytes: [UInt8], deadline: Deadline?) throws {
        guard fd >= 0 else { throw ClientError.closed }
        var offset = 0
        try bytes.withUnsafeBytes { raw in
            while offset < raw.count {
                let n = Glibc.send(fd, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
                if n >= 0 {
                    offset += n
                    continue
                }
                let e = errno
                switch e {
                case EINTR:
                    continue
                case EAGAIN, EWOULDBLOCK:
                    let events = eof ? Int16(POLLOUT) : Int16(POLLOUT) | Int16(POLLIN)
                    let revents = try wait(events, deadline: deadline)
                    if revents == 0 { throw ClientError.timeout }
                    if revents & Int16(POLLIN) != 0 && !eof { try fill() }
                case EPIPE, ECONNRESET, ENOTCONN:
                    eof = true
                    throw ClientError.closed
                default:
                    throw ClientError.io("send failed: \(errnoText(e))")
                }
            }
        }
    }

    /// Polls for `events`; returns the revents, or 0 when the deadline passed.
    private func wait(_ events: Int16, deadline: Deadline?) throws -> Int16 {
        while true {
            var pfd = pollfd(fd: fd, events: events, revents: 0)
            let timeout = deadline?.remainingMs ?? -1
            let r = poll(&pfd, 1, timeout)
            if r > 0 {
                if pfd.revents & Int16(POLLNVAL) != 0 { throw ClientError.closed }
                return pfd.revents
            }
            if r == 0 { return 0 }
            let e = errno
            if e == EINTR { continue }
            throw ClientError.io("poll failed: \(errnoText(e))")
        }
    }

    /// One read into the buffer; complete lines are parsed and queued.
    private func fill() throws {
        let n: Int = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress!, $0.count) }
        if n > 0 {
            buffer.withUnsafeBufferPointer { buf in
                framer.feed(UnsafeBufferPointer(rebasing: buf[0..<n])) { take($0) }
            }
            return
        }
        if n == 0 {
            eof = true
            framer.finish { take($0) }
            return
        }
        let e = errno
        switch e {
        case EINTR, EAGAIN, EWOULDBLOCK:
            return
        case ECONNRESET, EPIPE, ENOTCONN:
            eof = true
        default:
            throw ClientError.io("read failed: \(errnoText(e))")
        }
    }

    private func take(_ line: LineFramer.Line) {
        switch line {
        case .tooLong:
            entries.append(.violation("a line longer than \(LineChannel.maxLine) bytes"))
        case .line(let bytes):
            do {
                let json = try JSON.parse(bytes)
                entries.append(.message(ReceivedMessage(json: json, text: String(decoding: bytes, as: UTF8.self))))
            } catch {
                let shown = String(decoding: bytes.prefix(80), as: UTF8.self)
                entries.append(.violation("a line that is not JSON (\(error.description)): \(shown)"))
            }
        }
    }
}
