@preconcurrency import Glibc
import TabBarCore

extension Server {
    /// Handles one framed line from a client: decode, dispatch, reply, publish.
    func handle(_ unit: LineFramer.Line, from c: Connection) {
        guard !c.closed else { return }
        let line: UnsafeBufferPointer<UInt8>
        switch unit {
        case .tooLong:
            commitBatch()
            stats.linesTooLong += 1
            stats.errors += 1
            Wire.error(id: .null, .lineTooLong(limit: config.maxLine), into: &c.out)
            return
        case .line(let l): line = l
        }
        var fast = FastSelect.blank
        if fastPath, FastSelect.scan(line, maxIDLength: reducer.limits.maxIDLength, into: &fast) {
            handleSelect(fast, line, from: c)
            return
        }
        let request: Request
        switch Envelope.decode(line) {
        case .failure(let rejection):
            commitBatch()
            stats.errors += 1
            if !rejection.silent { Wire.error(id: rejection.id, rejection.error, into: &c.out) }
            return
        case .success(let r): request = r
        }
        if request.id == nil { stats.notifications += 1 } else { stats.requests += 1 }
        let staged = batch.count
        let result = execute(request, from: c)
        if let id = request.id {
            // Only replies to staged changes may wait among them for the group's write.
            if batch.count == staged { commitBatch() }
            reply(id: id, result, to: c)
        }
    }

    /// Queues the reply to a request and records how long it took since the line was read.
    func reply(id: JSON, _ result: Result<JSON, RPCError>, to c: Connection) {
        switch result {
        case .success(let value): Wire.result(id: id, value, into: &c.out)
        case .failure(let error):
            stats.errors += 1
            Wire.error(id: id, error, into: &c.out)
        }
        stats.handling.record(Posix.monotonicNs() &- lineReadNs)
    }

    /// The byte-level path for a `tab.select` line `FastSelect` recognised: what `handle`
    /// does for it, without the `JSON` tree of the request, and with the journal's params
    /// copied from the line. Replies, events, journal lines and state are the same bytes
    /// as the slow path's (`FastPathTests` run both).
    func handleSelect(_ fast: FastSelect, _ line: UnsafeBufferPointer<UInt8>, from c: Connection) {
        if !plainIndexValid {
            plainIndex = PlainSelectIndex(reducer.state)
            plainIndexValid = true
        }
        if var plan = plainIndex.plan(fast, line, seq: reducer.state.seq &+ 1) {
            assert(reducer.plainSelectTarget(fast, line) == plan.k, "the plain select index and the reducer disagree")
            plan.seqDigits = seqDigits.next(plan.seq)
            if plainSelect(plan, fast, line, from: c) { return }
        }
        stats.requests += 1
        let staged = batch.count
        let id = fast.idJSON(line)
        let result = applyStateCommand(fast.command(line), method: "tab.select", params: nil,
                                       writeParams: { fast.writeParams(line, into: &$0) }, id: id, from: c)
        if batch.count == staged { commitBatch() }
        reply(id: id, result, to: c)
    }

    /// A plain select (`PlainSelectIndex.plan`) without an `Outcome` or a `JSON` tree: the
    /// reducer commits it, and its journal line, event and reply are written as bytes
    /// (`PlainPlan`) — the same bytes, the same group commit and undo as the general
    /// path. Returns false, having changed nothing, when a line would not fit the scratch
    /// memory; the general path then handles the request.
    func plainSelect(_ plan: PlainPlan, _ fast: FastSelect, _ line: UnsafeBufferPointer<UInt8>, from c: Connection) -> Bool {
        let half = Server.scratchSize / 2
        let stagedBefore = store.stagedBytes
        guard store.stage(seq: plan.seq, upTo: half, { plan.writeJournal(fast, line, into: &$0) }) else { return false }
        var reply = ByteWriter(base: scratch, capacity: half)
        plainIndex.writeReply(plan, fast, line, into: &reply)
        var event = ByteWriter(base: scratch + half, capacity: Server.scratchSize - half)
        let method = subscribers.isEmpty ? "" : plainIndex.writeEvent(plan, source: fast.source, into: &event)
        guard !reply.failed, !event.failed else {
            store.unstageLast(to: stagedBefore)
            return false
        }
        stats.requests += 1
        stats.plainSelects += 1
        batch.join(state: reducer.state, requester: c)
        let effects = reducer.commitPlainSelect(plan.k, source: fast.source, reselected: plan.reselected)
        // The commit changed the reducer (which makes the index stale): it moved only the selection.
        plainIndex.committed(plan)
        plainIndexValid = true
        seqDigits = plan.seqDigits
        batch.staged(from: c)
        if !effects.isEmpty { batch.effects.append(contentsOf: effects) }
        stats.events += 1
        if !subscribers.isEmpty { publish(method, line: event.bytes) }
        c.out.append(contentsOf: reply.bytes)
        stats.handling.record(Posix.monotonicNs() &- lineReadNs)
        return true
    }

    /// Runs a request; state commands go through the reducer and the journal.
    func execute(_ request: Request, from c: Connection) -> Result<JSON, RPCError> {
        let request = resolvingInitialBar(request)  // bar.configure {"initial":true}: InitialBar.swift
        let command: Command
        switch Methods.command(for: request, limits: reducer.limits) {
        case .failure(let e): return .failure(e)
        case .success(let cmd): command = cmd
        }
        switch command {
        case .ping, .soundList, .soundReload, .soundPlay, .subscribe, .unsubscribe, .statsGet,
             .clockAdvance, .clockGet, .captureStart, .captureStop:
            // They read state or stats: let them see only changes that are in the journal.
            commitBatch()
        default:
            break
        }
        switch command {
        case .ping:
            return .success(.obj([:]))
        case .soundList:
            return .success(.obj(["sounds": .array(audio.soundList())]))
        case .soundReload:
            let failures = audio.reload()
            return .success(.obj(["sounds": .int(audio.bank.sounds.count),
                                  "failures": .array(failures.map { .obj(["source": .string($0.0), "reason": .string($0.1)]) })]))
        case .soundPlay(let name):
            let r = audio.play(name: name, gain: reducer.state.feedback.profile == .silent ? 0 : reducer.state.feedback.volume,
                               requestedAt: lineReadNs)
            switch r {
            case .success(let voice):
                stats.soundsPlayed += 1
                settleAudio(queued: true)
                return .success(.obj(["voice": .int(voice)]))
            case .failure(let e):
                stats.soundsFailed += 1
                return .failure(e)
            }
        case .subscribe(let topics):
            if !c.subscribed {
                c.subscribed = true
                subscribers.append(c)
            }
            c.topics = topics
            return .success(.obj(["seq": .int(reducer.state.seq), "state": reducer.state.json(limits: reducer.limits)]))
        case .unsubscribe:
            if c.subscribed {
                c.subscribed = false
                subscribers.removeAll { $0 === c }
            }
            return .success(.obj([:]))
        case .statsGet:
            return .success(statsJSON())
        case .clockAdvance, .clockGet, .captureStart, .captureStop:
            return executeHarness(command)
        default:
            return applyStateCommand(command, request: request, from: c)
        }
    }

    func applyStateCommand(_ command: Command, request: Request, from c: Connection) -> Result<JSON, RPCError> {
        applyStateCommand(command, method: request.method, params: request.params, id: request.id, from: c)
    }

    /// Runs a state command through the reducer at the loop's clock. A change is staged
    /// for the journal (as the outcome says, else as `method`/`params`) and its events
    /// published; `commitBatch` writes it — at the end of the loop turn for a client's
    /// request (group commit, `flushDirty`), at once for anything else (timers) — before any reply
    /// leaves the process, and only then runs its effects.
    func applyStateCommand(_ command: Command, method: String, params: JSON?,
                           writeParams: ((inout [UInt8]) -> Void)? = nil, id: JSON? = nil,
                           from c: Connection? = nil) -> Result<JSON, RPCError> {
        var before = reducer.state
        var outcome = reducer.reduce(command, at: nowMs())
        if reducer.state.seq == before.seq && batch.open && !commitBatch() {
            // An answer that changes nothing must not rest on changes that were just undone.
            before = reducer.state
            outcome = reducer.reduce(command, at: nowMs())
        }
        if reducer.state.seq != before.seq {
            batch.join(state: before, requester: c)
            if outcome.journal == nil, let writeParams {
                store.stage(seq: reducer.state.seq, method: method, writeParams: writeParams)
            } else {
                let entry = outcome.journal ?? JournalEntry(method, params)
                store.stage(seq: reducer.state.seq, method: entry.method, params: entry.params)
            }
            batch.staged(from: c)
            batch.effects.append(contentsOf: outcome.effects)
            for e in outcome.events { broadcast(e) }
            if c == nil && !commitBatch() {
                return .failure(storageFailed(store.lastError ?? "the journal write failed"))
            }
            return outcome.reply
        }
        run(outcome.effects)
        return outcome.reply
    }

    func run(_ effects: [Effect]) {
        for effect in effects {
            switch effect {
            case let .play(name, gain, _):
                switch audio.play(name: name, gain: gain, requestedAt: lineReadNs) {
                case .success:
                    stats.soundsPlayed += 1
                    settleAudio(queued: true)
                case .failure(let e):
                    stats.soundsFailed += 1
                    peerLogs.write(.feedback, .debug, "Feedback sound not played", ["sound": name, "reason": e.message], nowNs: Posix.monotonicNs())
                }
            case let .timer(key, atMs):
                timers[key] = atMs
            case let .cancelTimer(key):
                timers[key] = nil
            }
        }
    }

    func storageFailed(_ why: String) -> RPCError { .storageFailed(why, advice: store.advice) }

    /// Writes the staged changes to the journal with one write, then runs their effects.
    /// If the write fails they are undone — nothing of them has left the process yet:
    /// the state is restored, their replies and events are taken off the queues, and
    /// each is answered `storage_failed` instead. Returns false when it undid them.
    @discardableResult
    func commitBatch() -> Bool {
        guard batch.open else { return true }
        do {
            try store.commitReachable(before: batch.stateBefore, after: reducer.state, limits: reducer.limits)
        } catch {
            reducer.state = batch.stateBefore
            peerLogs.write(.journal, .error, "Could not record \(batch.count == 1 ? "a change" : "\(batch.count) changes"); refused",
                           ["error": "\(error)", "file": store.journalPath], nowNs: Posix.monotonicNs())
            let refused = storageFailed("\(error)")
            // What a queue holds past its mark is the group's: the replies to its changes
            // (in order) and its events. Each reply becomes the refusal of its request.
            for (conn, mark) in batch.marks {
                guard conn.out.count >= mark else { conn.owesResync = true; continue }
                let ids = Batch.replyIDs(conn.out[mark...])
                conn.out.removeSubrange(mark...)
                for id in ids { Wire.error(id: id, refused, into: &conn.out) }
            }
            stats.errors += batch.clientChanges
            batch.close()
            return false
        }
        let effects = batch.effects
        batch.close()
        run(effects)
        return true
    }

    func statsJSON() -> JSON {
        let now = Posix.monotonicNs()
        return .obj([
            "seq": .int(reducer.state.seq),
            "uptime_ms": .int((now - stats.startedNs) / 1_000_000),
            "clients": .int(conns.count),
            "subscribers": .int(subscribers.count),
            "connections_total": .int(stats.connectionsTotal),
            "connections_refused": .int(stats.connectionsRefused),
            "requests": .int(stats.requests),
            "notifications": .int(stats.notifications),
            "errors": .int(stats.errors),
            "lines_too_long": .int(stats.linesTooLong),
            "events": .int(stats.events),
            "event_bytes": .int(stats.eventBytes),
            "resyncs": .int(stats.resyncs),
            "slow_clients_dropped": .int(stats.slowClientsDropped),
            "sounds_played": .int(stats.soundsPlayed),
            "sounds_failed": .int(stats.soundsFailed),
            "request_latency": stats.handling.json(),
            "journal": .obj(["entries": .int(store.entries), "appends": .int(store.appends), "writes": .int(store.writes),
                             "error": .optional(store.lastError)]),
            "audio": audio.statsJSON(),
        ])
    }
}

/// State changes applied in the current loop turn, from any number of clients, whose
/// journal lines are not yet written (group commit). Until `Server.commitBatch` nothing of them has left the
/// process — replies and events are only queued, sounds held back — so a failed
/// write can still undo them. `marks` remembers where each touched queue stood.
struct Batch {
    private(set) var open = false
    private(set) var epoch: UInt64 = 0
    private(set) var stateBefore = BarState.defaultBar
    var effects: [Effect] = []
    private(set) var marks: [(Connection, Int)] = []
    /// Changes staged, and those of them a client asked for (the rest are timers').
    private(set) var count = 0
    private(set) var clientChanges = 0

    /// Opens the group with the state before its first change if it is not open, and
    /// marks `c`'s queue: a change is about to be staged for it.
    @inline(__always)
    mutating func join(state: @autoclosure () -> BarState, requester c: Connection?) {
        if !open {
            open = true
            epoch &+= 1
            stateBefore = state()
        }
        if let c { mark(c) }
    }

    /// Remembers how much `c` had queued before the batch first touched it.
    @inline(__always)
    mutating func mark(_ c: Connection) {
        guard c.batchEpoch != epoch else { return }
        c.batchEpoch = epoch
        c.batchMark = marks.count
        marks.append((c, c.out.count))
    }

    /// Where `c`'s queue stood when the open batch first touched it, if it did.
    func position(of c: Connection) -> Int? {
        guard open, c.batchEpoch == epoch else { return nil }
        return marks[c.batchMark].1
    }

    /// `c`'s queue was rearranged (a slow subscriber's events dropped, its replies kept):
    /// its mark now stands at `position`.
    mutating func move(_ c: Connection, to position: Int) {
        guard open, c.batchEpoch == epoch else { return }
        marks[c.batchMark].1 = min(position, c.out.count)
    }

    /// Counts a change staged for `c` (marked by `join`; nil: a timer).
    @inline(__always)
    mutating func staged(from c: Connection?) {
        count += 1
        if c != nil { clientChanges += 1 }
    }

    /// The ids of the replies among queued lines. Past a mark these are the replies to
    /// the group's changes: whatever does not stage a change commits the group before
    /// it answers (`Server.handle`, `execute`, `applyStateCommand`).
    static func replyIDs(_ queued: ArraySlice<UInt8>) -> [JSON] {
        queued.split(separator: 0x0A).compactMap { line in
            guard Connection.isReply(line), let reply = try? JSON.parse(line) else { return nil }
            return reply["id"]
        }
    }

    mutating func close() {
        open = false
        count = 0
        clientChanges = 0
        effects.removeAll(keepingCapacity: true)
        marks.removeAll(keepingCapacity: true)
    }
}
