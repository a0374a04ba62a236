@preconcurrency import Glibc
import TabBarCore

/// One client: its socket, its framer, what is queued for it, and what it subscribed to.
final class Connection {
    let fd: Int32
    let id: UInt64
    var framer: LineFramer
    /// Bytes queued for the client; `sent` of them are already written. Replies are
    /// encoded straight into it (`queueReply`).
    var out = ByteBuffer(capacity: 1024)
    var sent = 0
    /// `out` starts in the middle of a line: the tail of a line partly written before the
    /// bytes already sent were taken off the queue (`flush`).
    var startsMidLine = false
    var subscribed = false
    /// nil: every topic.
    var topics: [String]?
    /// The client half-closed: answer what came, flush, close.
    var readClosed = false
    /// EPOLLOUT is registered: output is queued that the socket did not take. (Changed
    /// only by `ClientTable.setPollingOut`, which counts such connections.)
    var pollingOut = false
    /// Reading is paused because too much output is queued (back-pressure).
    var readPaused = false
    /// Bytes read but not yet framed when reading was paused (at most one read).
    var unread: [UInt8] = []
    /// A request of this client waits for the sounds (`sound.reload`, a `sound.play` of a sound
    /// still loading): it is not read, and lines already read wait in `heldLines`, so that its
    /// replies stay in request order (SoundLoading.swift).
    var held = false
    var heldLines: [HeldLine] = []
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
    /// In the transport's list of connections to flush this turn (`Transport.markDirty`).
    var markedDirty = false
    /// Where the replies are in `out` (the rest are events): what pruning a slow
    /// subscriber keeps.
    private var replies: [Range<Int>] = []

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

    /// Queues the reply to a request, encoded from its typed value (`Wire.reply`) straight
    /// into the queue.
    func queueReply(id: RequestID, _ result: consuming Result<Reply, RPCError>) {
        let start = out.count
        Wire.reply(id: id, result, into: &out)
        replies.append(start..<out.count)
    }

    /// Queues a reply line already encoded.
    func queueReply(line: UnsafeBufferPointer<UInt8>) {
        let start = out.count
        out.append(line)
        replies.append(start..<out.count)
    }

    /// `queueReply` of a result.
    func queueReply(id: RequestID, _ reply: consuming Reply) {
        let start = out.count
        Wire.reply(id: id, reply, into: &out)
        replies.append(start..<out.count)
    }

    /// Drops queued events, keeping any line that is already partly written and every
    /// reply: a request with an id always gets its reply, even from a subscriber that fell
    /// behind. (Where the replies are is recorded as they are queued: `queueReply`.)
    func dropEvents() {
        var keep = sent
        if sent > 0 ? out[sent - 1] != 0x0A : startsMidLine {
            // The line being written goes out whole. (It is a reply or an event; if a
            // reply, its range starts before `keep` and is kept with it.)
            while keep < out.count && out[keep] != 0x0A { keep += 1 }
            if keep < out.count { keep += 1 }
        }
        var kept: [UInt8] = []
        replies = replies.map { r in
            if r.upperBound <= keep { return r }
            if r.lowerBound < keep { return r.lowerBound..<keep }
            let at = keep + kept.count
            kept.append(contentsOf: UnsafeBufferPointer(rebasing: out.bytes[r]))
            return at..<(at + r.count)
        }
        out.truncate(to: keep)
        out.append(kept)
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

    /// Writes as much as the socket takes. Returns false when the peer is gone.
    func flush(now: UInt64) -> Bool {
        while sent < out.count {
            let r = try? Sys.send(fd, UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: out.bytes[sent...])))
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
                    out.removeFirst(sent)
                    replies = replies.compactMap { r in
                        r.upperBound <= sent ? nil : (max(r.lowerBound, sent) - sent)..<(r.upperBound - sent)
                    }
                    sent = 0
                }
                return true
            }
            return false
        }
        // Everything went out: reuse the buffer (memory a burst made it grow to goes back).
        if sent > 0 {
            out.removeAll()
            sent = 0
        }
        replies.removeAll()
        startsMidLine = false
        return true
    }
}

