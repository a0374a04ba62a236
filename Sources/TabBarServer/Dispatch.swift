@preconcurrency import Glibc
import TabBarCore

extension Server {
    /// Handles one framed line from a client: decode, dispatch, reply, publish.
    func handle(_ unit: LineFramer.Line, from c: Connection) {
        guard !c.closed else { return }
        let line: UnsafeBufferPointer<UInt8>
        switch unit {
        case .tooLong:
            stats.linesTooLong += 1
            stats.errors += 1
            Wire.error(id: .null, .lineTooLong(limit: config.maxLine), into: &c.out)
            return
        case .line(let l): line = l
        }
        let request: Request
        switch Envelope.decode(line) {
        case .failure(let rejection):
            stats.errors += 1
            if !rejection.silent { Wire.error(id: rejection.id, rejection.error, into: &c.out) }
            return
        case .success(let r): request = r
        }
        if request.id == nil { stats.notifications += 1 } else { stats.requests += 1 }
        let result = execute(request, from: c)
        if let id = request.id {
            switch result {
            case .success(let value): Wire.result(id: id, value, into: &c.out)
            case .failure(let error):
                stats.errors += 1
                Wire.error(id: id, error, into: &c.out)
            }
            stats.handling.record(Posix.monotonicNs() &- lineReadNs)
        }
    }

    /// Runs a request; state commands go through the reducer and the journal.
    func execute(_ request: Request, from c: Connection) -> Result<JSON, RPCError> {
        let command: Command
        switch Methods.command(for: request, limits: reducer.limits) {
        case .failure(let e): return .failure(e)
        case .success(let cmd): command = cmd
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
        default:
            return applyStateCommand(command, request: request)
        }
    }

    func applyStateCommand(_ command: Command, request: Request) -> Result<JSON, RPCError> {
        applyStateCommand(command, method: request.method, params: request.params)
    }

    /// Runs a state command through the reducer at the loop's clock; journals the change
    /// (as the outcome says, else as `method`/`params`), publishes its events, runs its effects.
    func applyStateCommand(_ command: Command, method: String, params: JSON?) -> Result<JSON, RPCError> {
        let before = reducer.state
        let outcome = reducer.reduce(command, at: Server.nowMs())
        if reducer.state.seq != before.seq {
            // Durable before acknowledged: the journal line is written before the reply is queued.
            do {
                let entry = outcome.journal ?? JournalEntry(method, params)
                try store.append(seq: reducer.state.seq, method: entry.method, params: entry.params)
            } catch {
                reducer.state = before
                Log.error("Could not record a change; refused it", ["error": "\(error)", "file": store.journalPath])
                return .failure(RPCError(code: -32008, kind: "storage_failed",
                                         message: "The change was not made: the state could not be saved (\(error)). Free disk space or check \(store.journalPath); reads and sounds still work."))
            }
            for e in outcome.events { broadcast(e) }
        }
        for effect in outcome.effects {
            switch effect {
            case let .play(name, gain, _):
                switch audio.play(name: name, gain: gain, requestedAt: lineReadNs) {
                case .success: stats.soundsPlayed += 1
                case .failure(let e):
                    stats.soundsFailed += 1
                    Log.debug("Feedback sound not played", ["sound": name, "reason": e.message])
                }
            case let .timer(key, atMs):
                timers[key] = atMs
            case let .cancelTimer(key):
                timers[key] = nil
            }
        }
        return outcome.reply
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
            "journal": .obj(["entries": .int(store.entries), "appends": .int(store.appends),
                             "error": .optional(store.lastError)]),
            "audio": audio.statsJSON(),
        ])
    }
}
