@preconcurrency import Glibc
import TabBarCore
import CSystemd

/// What the transport hands on: each framed line, and when it needs what is staged
/// delivered (to resume a paused client, or to free the slots of clients that hung up).
protocol TransportDelegate: AnyObject {
    /// A complete line (or one that was too long) from `c`, read at `readNs`.
    func received(_ line: LineFramer.Line, from c: Connection, readNs: UInt64)
    /// Commits and delivers whatever is staged.
    @discardableResult func deliverStaged() -> Bool
    /// The `state.resync` line owed to a subscriber that fell behind.
    func resyncLine() -> [UInt8]
}

/// The transport stage: the clients' sockets. Accepting (and refusing) clients, reading and
/// framing their lines, queueing replies and events, back-pressure, flushing, and dropping
/// clients. It knows bytes and connections, not what a line means.
final class Transport {
    let loop: EventLoop
    private(set) var clients = ClientTable()
    var config: ServerConfig
    let stats: ServerStats
    let peerLogs: PeerLogs
    unowned(unsafe) var delegate: TransportDelegate!  // (the server, which owns the transport)
    private let hello: [UInt8]
    /// What one read of a client takes at most (a page). A turn reads each ready client once,
    /// so the answers to a burst leave after its first page while the client sends on, and one
    /// client's burst does not hold the others' turn (docs/PERFORMANCE.md, "One read a turn").
    static let readSize = 4096
    private var readBuffer = [UInt8](repeating: 0, count: Transport.readSize)
    /// Where an event line is encoded, once for all its subscribers.
    private var scratch = ByteBuffer(capacity: 8192)
    /// A committed group's events are being published: a burst, see `fellBehind`.
    var publishingGroup = false

    init(loop: EventLoop, config: ServerConfig, stats: ServerStats, peerLogs: PeerLogs, hello: [UInt8]) {
        self.loop = loop
        self.config = config
        self.stats = stats
        self.peerLogs = peerLogs
        self.hello = hello
    }


    var connectionCount: Int { clients.byFD.count }
    var subscriberCount: Int { clients.subscribers.count }

    func connection(fd: Int32) -> Connection? { clients.connection(fd: fd) }

    // MARK: Accepting

    func acceptClients(now: UInt64) {
        while true {
            let fd: Int32
            do throws(Errno) {
                guard case .done(let accepted) = try Sys.accept(loop.listenFD) else { return }
                fd = accepted
            } catch {
                if error.code == EMFILE || error.code == ENFILE {
                    peerLogs.write(.outOfFDs, .warning, "Out of file descriptors; turning new clients away", ["error": error.description], nowNs: now)
                    // The waiting client stays in the backlog and the socket stays readable: the
                    // loop would spin on it. Make room with the spare, take the client, say why.
                    let turned = loop.acceptUsingSpare { t in
                        stats.connectionsRefused += 1
                        refuse(t, .limitExceeded("The daemon is out of file descriptors (RLIMIT_NOFILE); try again later."))
                    }
                    if turned { continue }
                }
                return
            }
            var pid: Int32 = 0, uid: UInt32 = 0, gid: UInt32 = 0
            _ = tabbard_peer_cred(fd, &pid, &uid, &gid)
            // A socket from systemd is guarded by its unit's SocketUser=/SocketGroup=/SocketMode=
            // (the system one is root:tabbard 0660, and under PrivateUsers= peers other than root
            // and tabbard show up as "nobody"): whoever could connect may talk. The peer check
            // guards a socket tabbard bound itself.
            if loop.ownsSocketPath && !allowed(uid: uid, gid: gid, fd: fd) {
                stats.connectionsRefused += 1
                refuse(fd, .permissionDenied("uid \(uid) may not use this tabbard (allowed: its own uid \(getuid()), root, and allowed_uids/allowed_gids in the config)."))
                peerLogs.write(.refused, .warning, "Refused a client", ["pid": String(pid), "uid": String(uid), "gid": String(gid)], nowNs: now)
                continue
            }
            if clients.byFD.count >= config.maxClients { reapHungUp(now: now) }
            if clients.byFD.count >= config.maxClients {
                stats.connectionsRefused += 1
                refuse(fd, .limitExceeded("Too many clients (max_clients = \(config.maxClients)); try again later."))
                peerLogs.write(.full, .warning, "Refused a client: max_clients reached", ["pid": String(pid), "uid": String(uid)], nowNs: now)
                continue
            }
            let c = Connection(fd: fd, id: clients.nextID, maxLine: config.maxLine)
            clients.nextID += 1
            (c.pid, c.uid, c.gid) = (pid, uid, gid)
            c.lastProgressNs = now
            clients.add(c)
            stats.connectionsTotal += 1
            guard loop.watch(fd, EPOLLIN.rawValue | EPOLLRDHUP.rawValue) else { drop(c); continue }
            c.out.append(hello)
            markDirty(c)
            peerLogs.write(.connected, .debug, "Client connected", ["client": String(c.id), "pid": String(pid), "uid": String(uid)], nowNs: now)
        }
    }

    /// At the limit, clients that already hung up still hold their slots until their EOF
    /// is read in a later loop turn; a burst of connect-and-vanish clients would then
    /// lock out everyone else. Read those EOFs now (answering any last line as usual).
    private func reapHungUp(now: UInt64) {
        var fds = clients.byFD.values.map { pollfd(fd: $0.fd, events: Int16(POLLIN) | 0x2000 /* POLLRDHUP */, revents: 0) }
        guard poll(&fds, nfds_t(fds.count), 0) > 0 else { return }
        for p in fds where p.revents & (Int16(POLLHUP) | Int16(POLLERR) | 0x2000) != 0 {
            if let c = clients.connection(fd: p.fd) { read(c, now: now) }
        }
        delegate.deliverStaged()
        flushDirty(now: now)
    }

    /// Root, our own uid, `allowed_uids`, or a member of one of `allowed_gids` — by its
    /// primary group or any of its supplementary ones (SO_PEERGROUPS, asked only then).
    private func allowed(uid: UInt32, gid: UInt32, fd: Int32) -> Bool {
        if uid == 0 || uid == getuid() || config.allowedUIDs.contains(uid) || config.allowedGIDs.contains(gid) { return true }
        guard !config.allowedGIDs.isEmpty else { return false }
        return Posix.peerGroups(fd).contains { config.allowedGIDs.contains($0) }
    }

    /// One error line, then close.
    private func refuse(_ fd: Int32, _ error: RPCError) {
        var line: [UInt8] = []
        Wire.reply(id: .null, .failure(error), into: &line)
        _ = try? Sys.send(fd, line, 0..<line.count)  // (best effort: the client is turned away either way)
        close(fd)
    }

    // MARK: Reading

    /// Marks `c` for this turn's flush (once, however many lines were queued for it).
    func markDirty(_ c: Connection) {
        guard !c.closed, !c.markedDirty else { return }
        c.markedDirty = true
        clients.dirty.append(c)
    }

    /// Reads what `c` sent, one read of at most `readSize` bytes a turn, and hands each framed
    /// line to the delegate, stamped with this loop turn's time. While its queued output is over
    /// max_queued_bytes it is not read (back-pressure) until a flush drains half of that.
    func read(_ c: Connection, now: UInt64) {
        defer { markDirty(c) }
        pauseIfBehind(c)
        guard !c.closed && !c.readClosed && !c.readPaused && !c.held else { return }
        let n: Int
        do throws(Errno) {
            guard case .done(let got) = try Sys.read(c.fd, into: &readBuffer) else { return }
            n = got
        } catch {
            drop(c)
            return
        }
        if n == 0 {
            // Half-close: answer every complete line received, flush, then close.
            c.readClosed = true
            c.framer.finish { unit in delegate.received(unit, from: c, readNs: now) }
            loop.rewatch(c)
        } else {
            readBuffer.withUnsafeBufferPointer { buf in
                c.framer.feed(UnsafeBufferPointer(rebasing: buf[0..<n])) { unit in delegate.received(unit, from: c, readNs: now) }
            }
            pauseIfBehind(c)
        }
    }

    /// Stops reading `c` while its queued output is over max_queued_bytes (back-pressure);
    /// `flushDirty` resumes it once half of that has drained.
    private func pauseIfBehind(_ c: Connection) {
        guard !c.closed && !c.readPaused && c.queued > config.maxQueuedBytes else { return }
        c.readPaused = true
        loop.rewatch(c)
    }

    // MARK: Queueing

    /// Queues the reply to a request (`stats.get`'s latency: its line read → queued now).
    func queueReply(to c: Connection, id: RequestID, _ result: Result<Reply, RPCError>, readNs: UInt64, now: UInt64) {
        if case .failure = result { stats.errors += 1 }
        guard !c.closed else { return }
        c.queueReply(id: id, result)
        stats.handling.record(now &- readNs)
        markDirty(c)
    }

    /// Encodes an event once and queues it for every subscriber that wants it.
    func publish<E: EventLine>(_ event: E) {
        stats.events += 1
        guard !clients.subscribers.isEmpty else { return }
        scratch.removeAll()
        event.write(into: &scratch)
        queue(event.method, line: scratch.bytes)
    }

    /// `publish` of the server's own events (`server.stopping`).
    func publish(_ event: Event) {
        stats.events += 1
        guard !clients.subscribers.isEmpty else { return }
        Wire.notification(event.method, event.params).withUnsafeBufferPointer { queue(event.method, line: $0) }
    }

    /// Queues an event line already encoded (a committed group's) for the subscribers of `name`.
    func publish(_ name: StaticString, line: UnsafeBufferPointer<UInt8>) {
        stats.events += 1
        guard !clients.subscribers.isEmpty else { return }
        queue(name.description, line: line)
    }

    /// Queues an encoded event line for every subscriber that wants `method`; a subscriber
    /// too slow to keep up loses its queued events (never its replies) for one `state.resync`.
    private func queue(_ method: String, line: UnsafeBufferPointer<UInt8>) {
        for s in clients.subscribers where s.wants(method) {
            if s.owesResync { continue }
            if s.queued + line.count > config.maxQueuedBytes && fellBehind(s, adding: line.count) {
                s.dropEvents()
                s.owesResync = true
                if !s.behind {
                    // Once per episode: a stuck subscriber overflows again at every few events.
                    s.behind = true
                    peerLogs.write(.behind, .info, "Subscriber fell behind; sending state.resync", ["client": String(s.id), "pid": String(s.pid)],
                                   nowNs: MonotonicClock.nanoseconds())
                }
            } else {
                s.out.append(line)
                stats.eventBytes += line.count
            }
            markDirty(s)
        }
    }

    /// Whether subscriber `s`, over max_queued_bytes, really cannot keep up: only when its
    /// socket takes no more. What is queued is written first; while a committed group's
    /// events are published, they may queue up to the limit plus the room left in the
    /// socket — a burst, not a slow subscriber.
    private func fellBehind(_ s: Connection, adding bytes: Int) -> Bool {
        _ = s.flush(now: MonotonicClock.nanoseconds())
        guard publishingGroup else { return s.queued + bytes > config.maxQueuedBytes }
        return s.queued + bytes > config.maxQueuedBytes + s.socketRoom()
    }

    func subscribe(_ c: Connection, topics: [String]?) {
        if !c.subscribed {
            c.subscribed = true
            clients.subscribers.append(c)
        }
        c.topics = topics
    }

    func unsubscribe(_ c: Connection) {
        guard c.subscribed else { return }
        c.subscribed = false
        clients.subscribers.removeAll { $0 === c }
    }

    // MARK: Flushing

    /// Writes what is queued for every connection marked this turn; resumes paused readers
    /// whose queue drained; closes half-closed clients that got all their answers.
    func flushDirty(now: UInt64) {
        guard !clients.dirty.isEmpty else { return }
        let list = clients.dirty
        clients.dirty = []
        for c in list { c.markedDirty = false }
        for c in list where !c.closed {
            if c.owesResync {
                c.owesResync = false
                stats.resyncs += 1
                c.out.append(delegate.resyncLine())
            }
            if c.queued == 0 && !c.readClosed && !c.pollingOut { continue }
            if !c.flush(now: now) {
                drop(c)
                continue
            }
            if c.queued == 0 { c.behind = false }
            var changed = false
            // Resume a paused client once half its allowance has drained.
            if c.readPaused && c.queued <= config.maxQueuedBytes / 2 {
                c.readPaused = false
                changed = true
            }
            let pending = c.queued > 0
            if pending != c.pollingOut { clients.setPollingOut(c, pending); changed = true }
            if c.readClosed && !pending && !c.held {
                drop(c)
                continue
            }
            if changed { loop.rewatch(c) }
        }
    }

    /// Whether some client has output its socket did not take (the loop then wakes at
    /// least once a second to find clients that stopped reading).
    var waitingToWrite: Bool { clients.waitingToWrite > 0 }

    /// Drops clients whose queued output has not moved for write_timeout_ms.
    func dropStalledClients(now: UInt64) {
        guard clients.waitingToWrite > 0 else { return }
        let limitNs = UInt64(config.writeTimeoutMs) * 1_000_000
        for c in clients.byFD.values where c.queued > 0 && now > c.lastProgressNs + limitNs {
            peerLogs.write(.slow, .warning, "Disconnecting a client that does not read its replies", [
                "client": String(c.id), "pid": String(c.pid), "uid": String(c.uid), "queued_bytes": String(c.queued)], nowNs: now)
            stats.slowClientsDropped += 1
            drop(c)
        }
    }

    func drop(_ c: Connection) {
        guard !c.closed else { return }
        c.closed = true
        loop.unwatch(c.fd)
        close(c.fd)
        clients.remove(c)
        if c.subscribed { clients.subscribers.removeAll { $0 === c } }
        peerLogs.write(.disconnected, .debug, "Client disconnected", ["client": String(c.id)], nowNs: MonotonicClock.nanoseconds())
    }

    /// Flushes what it can to every client and closes them all (shutdown).
    func closeAll() {
        let now = MonotonicClock.nanoseconds()
        for c in clients.byFD.values { _ = c.flush(now: now) }
        for c in Array(clients.byFD.values) { drop(c) }
    }
}

/// The connections and who subscribed.
struct ClientTable {
    /// Every open connection, by descriptor.
    private(set) var byFD: [Int32: Connection] = [:]
    /// The same, at their descriptors' indices: the loop finds an event's connection
    /// without hashing (`connection(fd:)`).
    private var slots: [Connection?] = []
    var subscribers: [Connection] = []
    /// Connections with output to flush at the end of this loop turn.
    var dirty: [Connection] = []
    /// How many connections have output the socket did not take (`pollingOut`).
    private(set) var waitingToWrite = 0
    var nextID: UInt64 = 1

    mutating func add(_ c: Connection) {
        byFD[c.fd] = c
        let k = Int(c.fd)
        if k >= slots.count { slots += repeatElement(nil, count: k + 1 - slots.count) }
        slots[k] = c
    }

    mutating func remove(_ c: Connection) {
        setPollingOut(c, false)
        byFD[c.fd] = nil
        if Int(c.fd) < slots.count { slots[Int(c.fd)] = nil }
    }

    mutating func setPollingOut(_ c: Connection, _ on: Bool) {
        guard c.pollingOut != on else { return }
        c.pollingOut = on
        waitingToWrite += on ? 1 : -1
    }

    /// The open connection on descriptor `fd`, if any.
    func connection(fd: Int32) -> Connection? {
        let k = Int(fd)
        return k >= 0 && k < slots.count ? slots[k] : nil
    }
}

// MARK: - One client

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

