@preconcurrency import Glibc
import TabBarCore
import TabBarAudio
import CSystemd

// The state loop: one thread owns the state, the clients and the journal. One loop turn:
//
//   epoll_wait (until the next deadline: timer, fsync, watchdog, log flush, compaction)
//        │
//        ├─ listener ─────► Transport.acceptClients ──► hello queued
//        ├─ client ───────► Transport.read ──► LineFramer ──► lines
//        │                                                    │
//        │                        Dispatcher.dispatch: bytes ─┴─► Command | refusal
//        │                                          │
//        │          ┌───── StateCommand ────────────┴──── ServerCommand ─────┐
//        │          ▼                                                        ▼
//        │   Committer.submit: Reducer.reduce                     commit what is staged,
//        │   (State × Command → State', reply, events,            then `serve` (reads only
//        │    effects), staged with its journal line              committed state); reply queued
//        │          │
//        ├─ timers ─┘ (a timer's step is committed at once)
//        ├─ audio reports ─► sound.played / sound.failed to subscribers
//        ├─ signalfd ─────► SIGHUP reload, SIGTERM/SIGINT stop
//        ▼
//   endTurn: Committer.commit ── one journal write for the whole turn
//        │    ├─ written: events → Transport.publish, replies → queues, effects → AudioService.play
//        │    └─ refused: state restored, events dropped, replies → storage_failed
//        ├─ Transport.flushDirty: write the queues (back-pressure, slow subscribers → state.resync)
//        └─ AudioService.wakeIfDue: the audio thread mixes the turn's clicks → ALSA
//
// Commit points, all of them: the end of a turn; before a server command; before what is
// published outside a group (sound reports, server.stopping); a timer's step.

/// The daemon: the state loop above, its stages (`Transport`, `Dispatcher`, `Committer`,
/// `AudioService`) and its housekeeping (fsync, compaction, watchdog, slow clients).
public final class Server: TransportDelegate {
    public static let version = "0.1.0"
    /// `rpc.discover`'s answer: the protocol as OpenRPC (made once).
    static let openRPC = OpenRPC.document(version: version)

    var config: ServerConfig
    /// How the configuration was built, for a reload (SIGHUP); nil: reloads re-read only the sounds.
    public var configSource: ConfigSource?
    let loop: EventLoop
    let transport: Transport
    let dispatcher: Dispatcher
    let committer: Committer
    let audio: AudioService
    /// The desktop's sound settings, followed on a helper thread (DesktopSettings.swift); nil: not followed.
    var desktop: DesktopSettingsWatcher?
    let stats = ServerStats()
    /// Log lines a peer can cause at will, each kind rate-limited (LogLimit.swift).
    let peerLogs = PeerLogs()
    /// The systemd watchdog's pings and `STATUS=` (Watchdog.swift).
    var watchdog = Watchdog()
    /// Timers the reducer asked for (`Effect.timer`) and the clock they run on (Timers.swift).
    var timers: Timers

    var store: StateStore { committer.store }
    var state: BarState { committer.state }

    /// Sets everything up: state restored, sounds loaded, socket listening.
    public init(config: ServerConfig) throws {
        self.config = config
        timers = Timers(clock: config.clock)
        stats.startedNs = MonotonicClock.nanoseconds()
        // The socket first: a daemon that finds another one live must not touch its state.
        let loop = try EventLoop(socketPath: config.socketPath)
        self.loop = loop
        let store = StateStore(path: config.statePath, compactEvery: config.compactEvery, fsyncIntervalMs: config.fsyncIntervalMs,
                               compactIntervalMs: config.compactIntervalMs)
        var reducer: Reducer
        do { try store.lock() } catch {
            loop.closeListener(socketPath: config.socketPath)
            throw error
        }
        do {
            reducer = try store.load(initial: config.initialBar, limits: config.limits, sounds: config.soundMap,
                                     initialFrom: config.origins["bar"] == nil ? nil : "config \(config.configFile ?? "") bar")
            reducer.settle()
        } catch {
            loop.closeListener(socketPath: config.socketPath)
            throw ServerError("cannot use the state file \(config.statePath): \(error)")
        }
        committer = Committer(reducer: reducer, store: store, stats: stats)
        dispatcher = Dispatcher(maxLine: config.maxLine, initialBar: Server.configureParams(config.initialBar, limits: config.limits))
        audio = AudioService(config: config)
        do { try audio.startConfiguredCapture() } catch {
            loop.closeListener(socketPath: config.socketPath)
            throw error
        }
        // Without these the daemon could neither wait nor be stopped by SIGTERM.
        if !loop.open() {
            let e = Errno()
            loop.closeListener(socketPath: config.socketPath)
            throw ServerError("cannot set up the event loop: \(e) (is the descriptor limit, RLIMIT_NOFILE, too low?)")
        }
        let hello: JSON = .obj([
            "server": .string("tabbard"), "version": .string(Server.version), "protocol": .int(1),
            "max_line": .int(config.maxLine), "features": .array(Methods.names.map { .string($0) }),
        ])
        transport = Transport(loop: loop, config: config, stats: stats, peerLogs: peerLogs, hello: Wire.notification("hello", hello))
        transport.delegate = self
        guard loop.watch(loop.listenFD, EPOLLIN.rawValue), loop.watch(loop.signalFD, EPOLLIN.rawValue),
              audio.reportFD < 0 || loop.watch(audio.reportFD, EPOLLIN.rawValue),
              audio.loadFD < 0 || loop.watch(audio.loadFD, EPOLLIN.rawValue) else {
            loop.closeListener(socketPath: config.socketPath)
            throw ServerError("cannot set up the event loop: epoll_ctl failed (see the error above)")
        }
        followDesktopSounds()
        watchdog.start()
    }

    // MARK: The loop

    /// Runs until SIGTERM/SIGINT. Returns the exit status.
    public func run() -> Int32 {
        Log.notice("tabbard \(Server.version) ready", ["socket": loop.ownsSocketPath ? config.socketPath : "(systemd) " + (Systemd.boundPath(loop.listenFD) ?? "?"),
                                                        "state": config.statePath, "audio": audio.statusSummary])
        // Socket listening, state restored, sounds loaded: clients are served from here on.
        notifyReady()
        var ready = [epoll_event](repeating: epoll_event(), count: 128)
        while loop.running {
            let n: Int
            do throws(Errno) { n = try Sys.epollWait(loop.epfd, &ready, timeoutMs: timeoutMs()) } catch {
                Log.error("epoll_wait failed", ["error": error.description])
                break
            }
            let now = MonotonicClock.nanoseconds()
            for event in ready[0..<n] { handle(event, now: now) }
            fireDueTimers()
            endTurn(now: now)
            housekeeping(now: now)
        }
        shutdown()
        return 0
    }

    /// One ready descriptor.
    private func handle(_ event: epoll_event, now: UInt64) {
        let fd = event.data.fd
        if fd == loop.listenFD {
            transport.acceptClients(now: now)
        } else if fd == loop.signalFD {
            deliverStaged()
            handleSignals()
        } else if fd == audio.reportFD {
            deliverStaged()
            publishSoundReports()
        } else if fd == audio.loadFD {
            deliverStaged()
            audio.applyLoaded()  // SoundLoading.swift
        } else if fd == desktop?.fd {
            applyDesktopSounds()
        } else if let c = transport.connection(fd: fd) {
            if c.held && event.events & (EPOLLHUP.rawValue | EPOLLERR.rawValue) != 0 { transport.drop(c); return }
            if event.events & (EPOLLIN.rawValue | EPOLLHUP.rawValue | EPOLLERR.rawValue | EPOLLRDHUP.rawValue) != 0 {
                transport.read(c, now: now)
            }
            if event.events & EPOLLOUT.rawValue != 0 { transport.markDirty(c) }
        }
    }

    /// The end of a loop turn: the turn's changes written with one journal write and
    /// delivered, every queue flushed, the audio thread woken for the turn's clicks.
    func endTurn(now: UInt64) {
        repeat {
            deliverStaged()
            transport.flushDirty(now: now)
        } while committer.hasStaged
        audio.wakeIfDue(now: now)
    }

    // MARK: One line

    /// A framed line from a client: dispatched, then staged (a state command) or served.
    func received(_ line: LineFramer.Line, from c: Connection, readNs: UInt64) {
        guard !c.closed else { return }
        if c.held { keepHeld(line, from: c, readNs: readNs); return }
        if case .tooLong = line { stats.linesTooLong += 1 }
        switch dispatcher.dispatch(line, limits: committer.limits) {
        case let .refused(error, id, isRequest):
            if let isRequest { if isRequest { stats.requests += 1 } else { stats.notifications += 1 } }
            guard let id else { stats.errors += 1; return }
            committer.stage(reply: .failure(error), to: .init(connection: c, id: id, readNs: readNs))
        case let .command(command, method, params, id):
            if id == nil { stats.notifications += 1 } else { stats.requests += 1 }
            switch consume command {
            case .state(let command):
                committer.eventsWanted = transport.subscriberCount > 0
                let answered = committer.submit(command, at: timers.clock.ms(readAt: readNs), method: method, params: params,
                                                reply: id.map { .init(connection: c, id: $0, readNs: readNs) })
                if id == nil && !answered { stats.errors += 1 }
            case .server(let command):
                // A server command reads only committed state: what is staged goes first.
                deliverStaged()
                if let id, holdIfWaiting(command, from: c, id: id, readNs: readNs) { return }
                let result = serve(command, from: c, readNs: readNs)
                if let id {
                    transport.queueReply(to: c, id: id, result, readNs: readNs, now: MonotonicClock.nanoseconds())
                } else if case .failure = result {
                    stats.errors += 1
                }
            }
        }
    }

    /// Commits what is staged and delivers it: events to subscribers, replies to their
    /// connections, in the order they were made; then the effects. False when the journal
    /// write refused the group.
    @discardableResult
    func deliverStaged() -> Bool {
        guard committer.hasStaged else { return true }
        let now = MonotonicClock.nanoseconds()
        transport.publishingGroup = true
        let done = committer.commit { delivery in
            switch delivery {
            case let .event(name, line): transport.publish(name, line: line)
            case let .reply(to, result): transport.queueReply(to: to.connection, id: to.id, result, readNs: to.readNs, now: now)
            }
        }
        transport.publishingGroup = false
        if let why = done.refusedBecause {
            peerLogs.write(.journal, .error, "Could not record \(done.changes == 1 ? "a change" : "\(done.changes) changes"); refused",
                           ["error": why, "file": store.journalPath], nowNs: MonotonicClock.nanoseconds())
        }
        run(done.effects)
        return done.refusedBecause == nil
    }

    /// Runs a committed group's effects: sounds are queued, and the audio thread is woken for
    /// them after the turn's replies have left (`AudioService.wakeIfDue`).
    private func run(_ effects: [Effect]) {
        var played = 0
        for effect in effects {
            switch effect {
            case let .play(name, gain, _):
                if audio.bank.sound(named: name) == nil && audio.isPending(name) {
                    playWhenLoaded(name, gain: gain, requestedAt: MonotonicClock.nanoseconds())
                    continue
                }
                switch audio.play(name: name, gain: gain, requestedAt: MonotonicClock.nanoseconds()) {
                case .success:
                    stats.soundsPlayed += 1
                    played += 1
                case .failure(.suppressed(let why)):
                    soundSuppressed(name, why)
                case .failure(let e):
                    stats.soundsFailed += 1
                    peerLogs.write(.feedback, .debug, "Feedback sound not played", ["sound": name, "reason": e.error.message], nowNs: MonotonicClock.nanoseconds())
                }
            case let .timer(key, atMs):
                timers.set(key, atMs: atMs)
            case let .cancelTimer(key):
                timers.cancel(key)
            }
        }
        if played > 0 { audio.wakeAfterReplies(clicks: played) { settleAudio(queued: true) } }
    }

    /// Broadcasts `sound.played` for each voice the audio thread reported started, and
    /// `sound.failed` for each accepted voice that was not heard intact.
    func publishSoundReports() {
        let now = MonotonicClock.nanoseconds()  // (once per drain, not per failed voice)
        audio.drainReports({ voice, name, frame in
            transport.publish(SoundEvent.played(voice: voice, name: name, frame: frame))
        }, failed: { voice, name, reason in
            // (The log line's fields are made only if it is written.)
            peerLogs.write(.soundFailed, .warning, "Sound failed", ["voice": String(voice), "name": name, "reason": reason], nowNs: now)
            transport.publish(SoundEvent.failed(voice: voice, name: name, reason: reason))
        })
    }

    /// The `state.resync` line for a subscriber that fell behind.
    func resyncLine() -> [UInt8] {
        Wire.notification("state.resync", .obj(["seq": .int(state.seq), "state": state.json(limits: committer.limits)]))
    }

    // MARK: Server commands

    /// Runs a method the server handles itself (it never changes the state).
    func serve(_ command: ServerCommand, from c: Connection, readNs: UInt64) -> Result<Reply, RPCError> {
        switch command {
        case .ping:
            return .success(.empty)
        case .stateGet:
            return .success(.state(seq: state.seq, state, committer.limits))
        case .soundList:
            return .success(.json(.obj(["sounds": .array(audio.soundList()), "failed": .array(audio.failedList()),
                                        "loading": .bool(audio.load != nil)])))
        case .soundReload:
            // (A request is held until the new bank is in: `holdIfWaiting`; a notification only starts it.)
            audio.reload { _ in }
            return .success(.empty)
        case .soundPlay(let name):
            let gain = state.feedback.profile == .silent ? 0 : state.feedback.volume
            switch audio.play(name: name, gain: gain, requestedAt: readNs) {
            case .success(let voice):
                stats.soundsPlayed += 1
                audio.wakeAfterReplies { settleAudio(queued: true) }
                return .success(.json(.obj(["voice": .int(voice)])))
            case .failure(.suppressed(let why)):
                soundSuppressed(name, why)
                return .success(.json(.obj(["voice": .null, "suppressed": .string(why)])))
            case .failure(let e):
                stats.soundsFailed += 1
                return .failure(e.error)
            }
        case .subscribe(let topics):
            transport.subscribe(c, topics: topics)
            return .success(.state(seq: state.seq, state, committer.limits))
        case .unsubscribe:
            transport.unsubscribe(c)
            return .success(.empty)
        case .statsGet:
            return .success(.json(statsJSON()))
        case .discover:
            return .success(.json(Server.openRPC))
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
            "seq": .int(state.seq),
            "uptime_ms": .int((now - stats.startedNs) / 1_000_000),
            "clients": .int(transport.connectionCount),
            "subscribers": .int(transport.subscriberCount),
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
            "sounds_suppressed": .int(stats.soundsSuppressed),
            "request_latency": stats.handling.json(),
            "journal": .obj(["entries": .int(store.entries), "appends": .int(store.appends), "writes": .int(store.writes),
                             "error": .optional(store.lastError)]),
            "audio": audio.statsJSON(),
        ])
    }

    // MARK: Timers

    /// Fires every due timer, earliest first (on the real clock; the manual one fires them in `clock.advance`).
    func fireDueTimers() {
        guard timers.clock.firesTimers else { return }
        while let (key, due) = timers.earliest(), due <= timers.nowMs() { fire(key) }
    }

    /// A timer's step: run, journaled and published like any change, and committed at
    /// once so that its effects run at its own time.
    func fire(_ key: TimerKey) {
        timers.cancel(key)
        committer.eventsWanted = transport.subscriberCount > 0
        committer.submit(.timerFired(key), at: timers.nowMs(), method: "timer.fired", params: nil, reply: nil)
        deliverStaged()
    }

    // MARK: Housekeeping

    /// How long the loop may sleep: until the earliest of its deadlines (-1: none).
    private func timeoutMs() -> Int32 {
        let now = MonotonicClock.nanoseconds()
        var deadlines: [Int] = []
        if let due = store.fsyncDueNs { deadlines.append(Self.ms(until: due, now)) }
        if let ms = watchdog.timeoutMs(now: now, statusKey) { deadlines.append(ms) }
        if transport.waitingToWrite { deadlines.append(1000) }  // to find clients that stopped reading
        if let due = peerLogs.flushDueNs { deadlines.append(Self.ms(until: due, now)) }
        if let due = audio.wakeDueNs { deadlines.append(Self.ms(until: due, now)) }
        if let ms = timers.timeoutMs() { deadlines.append(ms) }
        if !store.compacting, let due = store.compactionDueNs { deadlines.append(Self.ms(until: due, now)) }
        return Int32(deadlines.min() ?? -1)
    }

    private static func ms(until due: UInt64, _ now: UInt64) -> Int {
        due > now ? Int((due - now) / 1_000_000) + 1 : 0
    }

    /// What the loop does after each turn: the journal's fsync when due, the watchdog's
    /// ping, suppressed log counts, compaction, and clients that stopped reading.
    private func housekeeping(now: UInt64) {
        store.syncIfDue(nowNs: now)
        // Sent from the state loop: a stuck loop stops the pings and systemd restarts us.
        watchdog.tick(now: now, { statusKey }, line: { statusLine })
        peerLogs.flush(nowNs: now)
        store.finishCompaction(wait: false)
        if store.needsCompaction && !store.compacting {
            // In the background: the loop only renames the journal (StateStore.startCompaction).
            do { try store.startCompaction(state, limits: committer.limits) } catch {
                store.compactionFailed()
                Log.error("Compacting the state failed; the journal keeps growing", ["error": "\(error)"])
            }
        }
        transport.dropStalledClients(now: now)
        returnFreedMemory()
    }

    /// The most clients connected at once since memory was last given back.
    private var clientPeak = 0

    /// Gives the memory of clients that left back to the system (`malloc_trim`) once the
    /// number connected falls to a quarter of a peak of at least 64: without it, the heap that
    /// 1,000 subscribers grew stays the daemon's after they left.
    private func returnFreedMemory() {
        let n = transport.connectionCount
        clientPeak = max(clientPeak, n)
        guard clientPeak >= 64 && n <= clientPeak / 4 else { return }
        clientPeak = n
        malloc_trim(0)
    }

    /// What `STATUS=` says, e.g. "Serving 3 clients (1 subscribed); 6 sounds, audio null ok".
    var statusLine: String {
        let n = transport.connectionCount
        return "Serving \(n) client\(n == 1 ? "" : "s") (\(transport.subscriberCount) subscribed); \(audio.availabilitySummary)"
    }

    var statusKey: StatusNotifier.Key {
        .init(clients: transport.connectionCount, subscribed: transport.subscriberCount, sounds: audio.bank.sounds.count, audioOK: audio.deviceOK)
    }

    /// `READY=1` (start-up, end of a reload) with the current `STATUS=`.
    func notifyReady() {
        watchdog.ready(statusKey, line: statusLine)
    }

    // MARK: Signals and shutdown

    private func handleSignals() {
        while let signo = loop.nextSignal() {
            switch Int32(signo) {
            case SIGHUP:
                // Clients stay connected and the state is untouched (Reload.swift).
                reloadConfiguration()
            default:
                Log.notice("Stopping", ["signal": String(signo)])
                loop.running = false
            }
        }
    }

    private func shutdown() {
        // Order: STOPPING=1, server.stopping to subscribers, state flushed, socket closed.
        Systemd.notify("STOPPING=1\nSTATUS=Stopping: saving the state")
        deliverStaged()
        transport.publish(Event("server.stopping", .obj([:])))
        transport.closeAll()
        do { try store.compact(state, limits: committer.limits) } catch {
            if let why = store.unreachable() {
                Log.error("Could not write the final snapshot, and \(why): changes since then are lost", ["error": "\(error)", "advice": store.advice])
            } else {
                Log.error("Could not write the final snapshot; the journal holds every acknowledged change", ["error": "\(error)", "advice": store.advice])
            }
        }
        loop.closeListener(socketPath: config.socketPath)
        endCapture()  // the capture ends at the clock's time; what plays out after is not in it
        audio.nullSink?.clock?.release()  // voices still sounding play out without waiting for the clock
        audio.shutdown()
        desktop?.stop()
        Log.notice("Stopped", ["seq": String(state.seq)])
    }
}
