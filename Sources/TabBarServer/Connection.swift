@preconcurrency import Glibc
import TabBarCore

/// One client: its socket, its framer, what is queued for it, and what it subscribed to.
final class Connection {
    let fd: Int32
    let id: UInt64
    var framer: LineFramer
    /// Bytes queued for the client; `sent` of them are already written.
    var out: [UInt8] = []
    var sent = 0
    var subscribed = false
    /// nil: every topic.
    var topics: [String]?
    /// The client half-closed: answer what came, flush, close.
    var readClosed = false
    /// EPOLLOUT is registered.
    var pollingOut = false
    /// Reading is paused because too much output is queued (back-pressure).
    var readPaused = false
    /// Events were dropped; a `state.resync` is owed.
    var owesResync = false
    var pid: Int32 = 0
    var uid: UInt32 = 0
    var gid: UInt32 = 0
    /// When queued output last moved (or was first queued).
    var lastProgressNs: UInt64 = 0
    var closed = false

    init(fd: Int32, id: UInt64, maxLine: Int) {
        self.fd = fd
        self.id = id
        framer = LineFramer(maxLine: maxLine)
    }

    var queued: Int { out.count - sent }

    func wants(_ event: String) -> Bool {
        guard subscribed else { return false }
        guard let topics else { return true }
        // Control events reach every subscriber, whatever its topics.
        if event == "server.stopping" || event == "state.resync" { return true }
        for t in topics {
            if event == t { return true }
            if event.utf8.count > t.utf8.count, event.hasPrefix(t), event.utf8[event.utf8.index(event.utf8.startIndex, offsetBy: t.utf8.count)] == UInt8(ascii: ".") {
                return true
            }
        }
        return false
    }

    /// Drops queued events, keeping any line that is already partly written.
    func dropQueue() {
        var keep = sent
        if sent > 0 && out[sent - 1] != 0x0A {
            while keep < out.count && out[keep] != 0x0A { keep += 1 }
            if keep < out.count { keep += 1 }
        }
        out.removeSubrange(keep...)
    }

    /// Writes as much as the socket takes. Returns false when the peer is gone.
    func flush(now: UInt64) -> Bool {
        while sent < out.count {
            let n = out.withUnsafeBytes { send(fd, $0.baseAddress! + sent, $0.count - sent, Int32(MSG_NOSIGNAL)) }
            if n > 0 {
                sent += n
                lastProgressNs = now
                continue
            }
            if n < 0 && errno == EINTR { continue }
            if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { return true }
            return false
        }
        // Everything went out: reuse the buffer.
        if sent > 0 {
            if out.capacity > 1 << 20 { out = [] } else { out.removeAll(keepingCapacity: true) }
            sent = 0
        }
        return true
    }
}
