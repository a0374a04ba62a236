@preconcurrency import Glibc
import TabBarCore
import CSystemd

/// The clients: accepting (and refusing) them, reading and framing their lines, flushing
/// what is queued for them, and dropping them.
extension Server {
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
            c.pid = pid
            c.uid = uid
            c.gid = gid
            c.lastProgressNs = now
            clients.add(c)
            stats.connectionsTotal += 1
            guard loop.watch(fd, EPOLLIN.rawValue | EPOLLRDHUP.rawValue) else { drop(c); continue }
            c.out.append(helloLine)
            markDirty(c)
            peerLogs.write(.connected, .debug, "Client connected", ["client": String(c.id), "pid": String(pid), "uid": String(uid)], nowNs: now)
        }
    }

    /// At the limit, clients that already hung up still hold their slots until their EOF
    /// is read in a later loop turn; a burst of connect-and-vanish clients would then
    /// lock out everyone else. Read those EOFs now (answering any last line as usual).
    func reapHungUp(now: UInt64) {
        var fds = clients.byFD.values.map { pollfd(fd: $0.fd, events: Int16(POLLIN) | 0x2000 /* POLLRDHUP */, revents: 0) }
        guard poll(&fds, nfds_t(fds.count), 0) > 0 else { return }
        for p in fds where p.revents & (Int16(POLLHUP) | Int16(POLLERR) | 0x2000) != 0 {
            if let c = clients.connection(fd: p.fd) { readFrom(c, now: now) }
        }
        flushDirty(now: now)
    }

    /// Root, our own uid, `allowed_uids`, or a member of one of `allowed_gids` — by its
    /// primary group or any of its supplementary ones (SO_PEERGROUPS, asked only then).
    func allowed(uid: UInt32, gid: UInt32, fd: Int32) -> Bool {
        if uid == 0 || uid == getuid() || config.allowedUIDs.contains(uid) || config.allowedGIDs.contains(gid) { return true }
        guard !config.allowedGIDs.isEmpty else { return false }
        return Posix.peerGroups(fd).contains { config.allowedGIDs.contains($0) }
    }

    /// One error line, then close.
    func refuse(_ fd: Int32, _ error: RPCError) {
        var line: [UInt8] = []
        Wire.error(id: .null, error, into: &line)
        _ = try? Sys.send(fd, line, 0..<line.count)  // (best effort: the client is turned away either way)
        close(fd)
    }

    func markDirty(_ c: Connection) {
        if !c.closed { clients.dirty.append(c) }
    }

    func readFrom(_ c: Connection, now: UInt64) {
        var reads = 0
        while !c.closed && !c.readClosed && !c.readPaused && reads < 8 {
            let n: Int
            do throws(Errno) {
                guard case .done(let got) = try Sys.read(c.fd, into: &work.readBuffer) else { break }
                n = got
            } catch {
                drop(c)
                return
            }
            reads += 1
            if n == 0 {
                // Half-close: answer every complete line received, flush, then close.
                c.readClosed = true
                work.lineReadNs = now
                c.framer.finish { unit in handle(unit, from: c) }
                commitBatch()
                loop.rewatch(c)
                markDirty(c)
                break
            }
            work.lineReadNs = now
            let used = work.readBuffer.withUnsafeBufferPointer { buf in frame(UnsafeBufferPointer(rebasing: buf[0..<n]), for: c) }
            if used < n {
                // Back-pressure in the middle of a read: the rest waits until the client reads its replies.
                c.unread = Array(work.readBuffer[used..<n])
            }
            if c.queued > config.maxQueuedBytes && !c.readPaused {
                // Back-pressure: stop reading until the client reads its replies.
                c.readPaused = true
                loop.rewatch(c)
            }
            if n < work.readBuffer.count { break }
        }
        markDirty(c)
    }

    /// Frames `bytes` for `c` in slices, stopping as soon as its queued output is over
    /// max_queued_bytes; returns the bytes consumed. A 64 KiB read of small requests with
    /// big replies (`state.get`) would otherwise queue megabytes at once.
    func frame(_ bytes: UnsafeBufferPointer<UInt8>, for c: Connection) -> Int {
        var off = 0
        while off < bytes.count && !c.closed && c.queued <= config.maxQueuedBytes {
            let end = min(bytes.count, off + 4096)
            c.framer.feed(UnsafeBufferPointer(rebasing: bytes[off..<end])) { unit in handle(unit, from: c) }
            off = end
        }
        return off
    }

    /// Frames what was read while the client was paused (its changes committed as one
    /// group); pauses it again if need be.
    func resumeUnread(_ c: Connection) {
        let pending = c.unread
        c.unread = []
        // (Framed now, after this loop turn's timers fired: stamped with the time it is framed.)
        work.lineReadNs = MonotonicClock.nanoseconds()
        let used = pending.withUnsafeBufferPointer { frame($0, for: c) }
        if used < pending.count { c.unread = Array(pending[used...]) }
        commitBatch()  // it is flushed at once (flushDirty)
        if c.queued > config.maxQueuedBytes { c.readPaused = true }
    }

    func flushDirty(now: UInt64) {
        // Nothing of a change leaves the process before its journal line is written.
        commitBatch()
        // The clicks of this turn's taps start once their replies have left (AudioService).
        defer { audio.wakeIfPending() }
        guard !clients.dirty.isEmpty else { return }
        // Taken by swap and given back below (copying it, then emptying the table's, made a
        // new array at every loop turn); what is marked dirty meanwhile goes to a new list.
        var list: [Connection] = []
        swap(&list, &clients.dirty)
        defer {
            if clients.dirty.isEmpty {
                list.empty()
                swap(&list, &clients.dirty)
            }
        }
        for c in list where !c.closed {
            if c.owesResync {
                c.owesResync = false
                stats.resyncs += 1
                c.out.append(Wire.notification("state.resync", .obj(["seq": .int(reducer.state.seq), "state": reducer.state.json(limits: reducer.limits)])))
            }
            if c.queued == 0 && !c.readClosed && !c.pollingOut { continue }
            if !c.flush(now: now) {
                drop(c)
                continue
            }
            if c.queued == 0 { c.behind = false }
            var changed = false
            // Resume a paused client: first what was read but not framed, flushing as it goes,
            // until it is paused again by a full socket or everything is framed.
            while c.readPaused && c.queued <= config.maxQueuedBytes / 2 {
                c.readPaused = false
                changed = true
                guard !c.unread.isEmpty else { break }
                resumeUnread(c)
                if c.closed { break }
                if !c.flush(now: now) {
                    drop(c)
                    break
                }
            }
            if c.closed { continue }
            let pending = c.queued > 0
            if pending != c.pollingOut { clients.setPollingOut(c, pending); changed = true }
            if c.readClosed && !pending {
                drop(c)
                continue
            }
            if changed { loop.rewatch(c) }
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
}

/// The connections and who subscribed: what accepting, reading, publishing and dropping
/// clients change (the loop's other parts — the `EventLoop`'s descriptors, the group commit
/// `Batch`, the `StateStore`, the `Timers`, the `Watchdog`, the `Workspace`, the
/// `AudioService` — each own theirs).
struct ClientTable {
    /// Every open connection, by descriptor.
    private(set) var byFD: [Int32: Connection] = [:]
    /// The same, at their descriptors' indices: the loop finds an event's connection
    /// without hashing (`connection(fd:)`).
    private var slots: [Connection?] = []
    var subscribers: [Connection] = []
    /// Connections with output to flush at the end of this loop turn.
    var dirty: [Connection] = []
    /// How many connections have output the socket did not take (`pollingOut`): while
    /// there are none, the loop neither wakes for slow readers nor looks for them.
    private(set) var waitingToWrite = 0
    var nextID: UInt64 = 1
}

extension ClientTable {
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
