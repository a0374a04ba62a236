@preconcurrency import Glibc
import TabBarCore

/// One path for every request: the line is read in place (`JSONDocument`), its method's
/// declaration (`Methods`) decodes the params into a typed command, and the command goes to
/// whoever its type names — the reducer for a `StateCommand` (`apply`, GroupCommit.swift),
/// the server for a `ServerCommand` (`serve`). Replies are encoded from typed values.
extension Server {
    /// Handles one framed line from a client: decode, dispatch, reply, publish.
    func handle(_ unit: LineFramer.Line, from c: Connection) {
        guard !c.closed else { return }
        let line: UnsafeBufferPointer<UInt8>
        switch unit {
        case .tooLong:
            answer(id: .null, .failure(.lineTooLong(limit: config.maxLine)), to: c)
            stats.linesTooLong += 1
            return
        case .line(let l): line = l
        }
        let request: Request
        do throws(Envelope.Rejection) { request = try work.request(in: line) } catch {
            if error.silent {
                stats.errors += 1
            } else {
                answer(id: error.id, .failure(error.error), to: c)
            }
            return
        }
        let id = request.id
        if case .none = id { stats.notifications += 1 } else { stats.requests += 1 }
        // (The method's name is read only when the envelope did not find it in the table:
        // a copy of it is a reference counted and released.)
        let index: Int
        if let known = request.methodIndex {
            index = known
        } else {
            let method = request.method
            guard let k = work.methods.firstIndex(where: { $0.name == method }) else {
                return answer(id: id, .failure(.methodNotFound(method)), to: c)
            }
            index = k
        }
        let given = request.params
        // bar.configure {"initial":true}: InitialBar.swift
        let params = initialBarParams(index, given) ?? given
        // (Its declaration is borrowed from the table without a reference count — the table
        // lives as long as the process; a copy retained and released it. The params as the
        // envelope read them are a trivial value: nothing to check, count or destroy.)
        let p = Params(request: params), limits = reducer.limits
        work.specs[index]._withUnsafeGuaranteedRef { spec in
            let command: Command
            do throws(RPCError) { command = try spec.decode(p, limits) } catch {
                return answer(id: id, .failure(error), to: c)
            }
            // (Consumed: the state command is moved out to `apply`, which consumes it. A
            // `Command` switched on in place was destroyed after its case through its value
            // witness, some 80 instructions a request.)
            switch consume command {
            case .state(let cmd):
                apply(cmd, method: index, params: params, id: id, from: c)
            case .server(let cmd):
                // They read state or stats: let them see only changes that are in the journal.
                commitBatch()
                answer(id: id, serve(cmd, from: c), to: c)
            }
        }
    }

    /// Queues the reply to a request that staged no change (nil id: a notification, no
    /// reply): anything staged is committed first, so replies leave in request order.
    func answer(id: RequestID?, _ result: Result<Reply, RPCError>, to c: Connection) {
        commitBatch()
        if case .failure = result { stats.errors += 1 }
        guard let id else { return }
        c.queueReply(id: id, result)
        stats.handling.record(MonotonicClock.nanoseconds() &- work.lineReadNs)
    }

    /// Runs a method the server handles itself.
    func serve(_ command: ServerCommand, from c: Connection) -> Result<Reply, RPCError> {
        switch command {
        case .ping:
            return .success(.empty)
        case .stateGet:
            return .success(.state(seq: reducer.state.seq, reducer.state, reducer.limits))
        case .soundList:
            return .success(.json(.obj(["sounds": .array(audio.soundList())])))
        case .soundReload:
            let failures = audio.reload()
            return .success(.json(.obj(["sounds": .int(audio.bank.sounds.count),
                                        "failures": .array(failures.map { .obj(["source": .string($0.0), "reason": .string($0.1)]) })])))
        case .soundPlay(let name):
            let r = audio.play(name: name, gain: reducer.state.feedback.profile == .silent ? 0 : reducer.state.feedback.volume,
                               requestedAt: work.lineReadNs)
            switch r {
            case .success(let voice):
                stats.soundsPlayed += 1
                settleAudio(queued: true)
                return .success(.json(.obj(["voice": .int(voice)])))
            case .failure(let e):
                stats.soundsFailed += 1
                return .failure(e.error)
            }
        case .subscribe(let topics):
            // (Never inside a group: while nobody subscribed, its events were not staged.)
            assert(!batch.open)
            if !c.subscribed {
                c.subscribed = true
                clients.subscribers.append(c)
            }
            c.topics = topics
            return .success(.state(seq: reducer.state.seq, reducer.state, reducer.limits))
        case .unsubscribe:
            if c.subscribed {
                c.subscribed = false
                clients.subscribers.removeAll { $0 === c }
            }
            return .success(.empty)
        case .statsGet:
            return .success(.json(statsJSON()))
        case .clockAdvance(let ms):
            return advanceClock(by: ms).map(Reply.json)
        case .clockGet:
            return .success(.json(clockJSON()))
        case .captureStart(let path):
            return startCapture(path).map(Reply.json)
        case .captureStop:
            return stopCapture().map(Reply.json)
        }
    }

    func statsJSON() -> JSON {
        let now = MonotonicClock.nanoseconds()
        return .obj([
            "seq": .int(reducer.state.seq),
            "uptime_ms": .int((now - stats.startedNs) / 1_000_000),
            "clients": .int(clients.byFD.count),
            "subscribers": .int(clients.subscribers.count),
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
