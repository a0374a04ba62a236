import Glibc
import TabBarCore
import TabBarSystem

/// A connected, non-blocking stream socket that sends bytes and hands out whole
/// lines. Reads go through a 64 KiB buffer and a `LineFramer`; every wait is a
/// `poll` bounded by a deadline (recomputed when `Sys` retries an interrupted one).
final class LineChannel {
    private enum Entry {
        case message(ReceivedMessage)
        case violation(String)
    }

    private(set) var fd: Int32
    private var framer = LineFramer(maxLine: Wire.maxLine)
    private var buffer = [UInt8](repeating: 0, count: 65536)
    private var entries: [Entry] = []
    private var head = 0
    /// The peer has closed its side; what is queued can still be read.
    private(set) var eof = false

    /// Owns `fd` from now on, also when this throws (then it is closed).
    init(fd: Int32) throws {
        self.fd = fd
        do throws(Errno) { try Sys.setNonBlocking(fd) } catch {
            try? Sys.close(fd)
            self.fd = -1
            throw ClientError.io("cannot make the socket non-blocking: \(error)")
        }
    }

    deinit { close() }

    /// Whether a line is already buffered (so `next` will not touch the socket).
    var hasBuffered: Bool { head < entries.count }

    func close() {
        if fd >= 0 {
            try? Sys.close(fd)  // (a socket: nothing written is lost by how close ends)
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
                let sent: IOResult<Int>
                do throws(Errno) { sent = try Sys.send(fd, UnsafeRawBufferPointer(rebasing: raw[offset...])) } catch {
                    switch error.code {
                    case EPIPE, ECONNRESET, ENOTCONN:
                        eof = true
                        throw ClientError.closed
                    default:
                        throw ClientError.io("send failed: \(error)")
                    }
                }
                switch sent {
                case .done(let n):
                    offset += n
                case .wouldBlock:
                    let events = eof ? Int16(POLLOUT) : Int16(POLLOUT) | Int16(POLLIN)
                    let revents = try wait(events, deadline: deadline)
                    if revents == 0 { throw ClientError.timeout }
                    if revents & Int16(POLLIN) != 0 && !eof { try fill() }
                }
            }
        }
    }

    /// Polls for `events`; returns the revents, or 0 when the deadline passed.
    private func wait(_ events: Int16, deadline: Deadline?) throws -> Int16 {
        var pfd = [pollfd(fd: fd, events: events, revents: 0)]
        let r: Int
        do throws(Errno) { r = try Sys.poll(&pfd, timeoutMs: deadline?.remainingMs ?? -1) } catch {
            throw ClientError.io("poll failed: \(error)")
        }
        if r == 0 { return 0 }
        if pfd[0].revents & Int16(POLLNVAL) != 0 { throw ClientError.closed }
        return pfd[0].revents
    }

    /// One read into the buffer; complete lines are parsed and queued.
    private func fill() throws {
        let r: IOResult<Int>
        do throws(Errno) { r = try Sys.read(fd, into: &buffer) } catch {
            switch error.code {
            case ECONNRESET, EPIPE, ENOTCONN:
                eof = true
                return
            default:
                throw ClientError.io("read failed: \(error)")
            }
        }
        guard case .done(let n) = r else { return }
        if n > 0 {
            buffer.withUnsafeBufferPointer { buf in
                framer.feed(UnsafeBufferPointer(rebasing: buf[0..<n])) { take($0) }
            }
            return
        }
        eof = true
        framer.finish { take($0) }
    }

    private func take(_ line: LineFramer.Line) {
        switch line {
        case .tooLong:
            entries.append(.violation("a line longer than \(Wire.maxLine) bytes"))
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
