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
    /// `out` starts in the middle of a line: the tail of a line partly written before the
    /// bytes already sent were taken off the queue (`flush`).
    var startsMidLine = false
    var subscribed = false
    /// nil: every topic.
    var topics: [String]?
    /// The client half-closed: answer what came, flush, close.
    var readClosed = false
    /// EPOLLOUT is registered.
    var pollingOut = false
    /// Reading is paused because too much output is queued (back-pressure).
    var readPaused = false
    /// Bytes read but not yet framed when reading was paused (at most one read).
    var unread: [UInt8] = []
    /// Events were dropped; a `state.resync` is owed.
    var owesResync = false
    /// Fell behind and has not caught up since (its queue has not been empty).
    var behind = false
    /// SO_SNDBUF, read once.
    private var sendBuffer = 0
    var pid: Int32 = 0
    var uid: UInt32 = 0
    var gid: UInt32 = 0
    /// When queued output last moved (or was first queued).
    var lastProgressNs: UInt64 = 0
    var closed = false
    /// The group-commit batch that last marked this connection's queue (see `Batch`).
    var batchEpoch: UInt64 = 0
    /// Its index in the batch's marks (valid while `batchEpoch` is the open batch's).
    var batchMark = 0

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

    /// Drops queued events, keeping any line that is already partly written and every
    /// reply: a request with an id always gets its reply, even from a subscriber that fell
    /// behind. `mark`, a line boundary in the queue (a group commit's, see `Batch`), is
    /// returned where it stands afterwards.
    @discardableResult
    func dropQueue(mark: Int? = nil) -> Int? {
        var keep = sent
        if sent > 0 ? out[sent - 1] != 0x0A : startsMidLine {
            while keep < out.count && out[keep] != 0x0A { keep += 1 }
            if keep < out.count { keep += 1 }
        }
        var moved = mark.map { min($0, keep) }
        var replies: [UInt8] = []
        var i = keep
        while i < out.count {
            var j = i
            while j < out.count && out[j] != 0x0A { j += 1 }
            let end = min(j + 1, out.count)
            if Connection.isReply(out[i..<end]) {
                replies.append(contentsOf: out[i..<end])
                if let m = mark, end <= m { moved! += end - i }
            }
            i = end
        }
        out.removeSubrange(keep...)
        out.append(contentsOf: replies)
        return moved
    }

    /// Bytes the socket would still take now: its send buffer less what the peer has not
    /// read yet (SIOCOUTQ).
    func socketRoom() -> Int {
        if sendBuffer == 0 {
            var v: Int32 = 0
            var len = socklen_t(MemoryLayout<Int32>.size)
            getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &v, &len)
            sendBuffer = Int(v)
        }
        var unread: Int32 = 0
        guard ioctl(fd, UInt(TIOCOUTQ), &unread) == 0 else { return 0 }
        return max(0, sendBuffer - Int(unread))
    }

    static let replyHead: [UInt8] = Array(#"{"jsonrpc":"2.0","id":"#.utf8)

    /// Replies start `{"jsonrpc":"2.0","id":`; notifications `{"jsonrpc":"2.0","method":`.
    static func isReply(_ line: ArraySlice<UInt8>) -> Bool {
        line.count >= replyHead.count && line.prefix(replyHead.count).elementsEqual(replyHead)
    }

    /// Writes as much as the socket takes. Returns false when the peer is gone.
    func flush(now: UInt64) -> Bool {
        while sent < out.count {
            let r = try? Sys.send(fd, out, sent..<out.count)
            if case .done(let n)? = r, n > 0 {
                sent += n
                lastProgressNs = now
                continue
            }
            if case .wouldBlock? = r {
                // A client that reads, but never quite catches up, must not make the buffer
                // grow forever with bytes already sent: drop them once they are most of it.
                // (Never inside a group commit: flushing waits for `Server.commitBatch`.)
                if sent >= 1 << 16 && sent * 2 >= out.count {
                    startsMidLine = out[sent - 1] != 0x0A
                    out.removeSubrange(0..<sent)
                    sent = 0
                }
                return true
            }
            return false
        }
        // Everything went out: reuse the buffer.
        if sent > 0 {
            if out.capacity > 1 << 20 { out = [] } else { out.removeAll(keepingCapacity: true) }
            sent = 0
        }
        startsMidLine = false
        return true
    }

    /// Writes what is queued before `limit` (bytes an open group commit has not added),
    /// moving nothing in the queue. Returns whether the socket took all of it; false also
    /// when the peer is gone (the next `flush` finds out).
    func flushCommitted(upTo limit: Int, now: UInt64) -> Bool {
        while sent < limit {
            if case .done(let n)? = try? Sys.send(fd, out, sent..<limit), n > 0 {
                sent += n
                lastProgressNs = now
                continue
            }
            return false
        }
        return true
    }
}
