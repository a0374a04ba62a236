@preconcurrency import Glibc
import TabBarCore
import TabBarAudio
import CSystemd

/// The daemon: one epoll loop that owns the state, the clients and the journal.
/// Audio runs on its own thread (`AudioEngine`); the two meet through a
/// non-blocking queue and an eventfd.
public final class Server {
    public static let version = "0.1.0"

    var config: ServerConfig
    /// How the configuration was built, for a reload (SIGHUP); nil: reloads re-read only the sounds.
    public var configSource: ConfigSource?
    var reducer: Reducer
    let store: StateStore
    let audio: AudioService
    /// The listening socket, the epoll set, the signalfd, the spare descriptor, `running` (EventLoop.swift).
    let loop: EventLoop
    /// The clients and who subscribed (`ClientTable`).
    var clients = ClientTable()
    var stats = ServerStats()
    /// Log lines a peer can cause at will, each kind rate-limited (LogLimit.swift).
    var peerLogs = PeerLogs()
    /// The systemd watchdog's pings and `STATUS=` (Watchdog.swift).
    var watchdog = Watchdog()
    let helloLine: [UInt8]
    /// The buffers and documents every line is read, decoded and answered in (Workspace.swift).
    let work = Workspace()
    /// State changes applied but not yet in the journal (group commit: one write per loop turn, whatever the number of clients).
    let batch = Batch()
    /// Timers the reducer asked for (`Effect.timer`) and the clock they run on (Timers.swift).
    var timers: Timers

    /// Sets everything up: state restored, sounds loaded, socket listening.
    public init(config: ServerConfig) throws {
        self.config = config
        timers = Timers(clock: config.clock)
        stats.startedNs = MonotonicClock.nanoseconds()
        // The socket first: a daemon that finds another one live must not touch its state.
        let loop = try EventLoop(socketPath: config.socketPath)
        self.loop = loop
        store = StateStore(path: config.statePath, compactEvery: config.compactEvery, fsyncIntervalMs: config.fsyncIntervalMs,
                           compactIntervalMs: config.compactIntervalMs)
        do {
            try store.lock()
        } catch {
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
        helloLine = Wire.notification("hello", hello)
        guard loop.watch(loop.listenFD, EPOLLIN.rawValue), loop.watch(loop.signalFD, EPOLLIN.rawValue),
              audio.reportFD < 0 || loop.watch(audio.reportFD, EPOLLIN.rawValue) else {
            loop.closeListener(socketPath: config.socketPath)
            throw ServerError("cannot set up the event loop: epoll_ctl failed (see the error above)")
        }
        watchdog.start()
    }

    /// What `STATUS=` says, e.g. "Serving 3 clients (1 subscribed); 6 sounds, audio null ok".
    var statusLine: String {
        "Serving \(clients.byFD.count) client\(clients.byFD.count == 1 ? "" : "s") (\(clients.subscribers.count) subscribed); \(audio.availabilitySummary)"
    }

    var statusKey: StatusNotifier.Key {
        .init(clients: clients.byFD.count, subscribed: clients.subscribers.count, sounds: audio.bank.sounds.count, audioOK: audio.deviceOK)
    }

    /// `READY=1` (start-up, end of a reload) with the current `STATUS=`.
    func notifyReady() {
        watchdog.ready(statusKey, line: statusLine)
    }

    /// Runs until SIGTERM/SIGINT. Returns the exit status.
    public func run() -> Int32 {
        Log.notice("tabbard \(Server.version) ready", ["socket": loop.ownsSocketPath ? config.socketPath : "(systemd) " + (Systemd.boundPath(loop.listenFD) ?? "?"),
                                                        "state": config.statePath, "audio": audio.statusSummary])
        // Socket listening, state restored, sounds loaded: clients are served from here on.
        notifyReady()
        var events = [epoll_event](repeating: epoll_event(), count: 128)
        while loop.running {
            let n: Int
            do throws(Errno) { n = try Sys.epollWait(loop.epfd, &events, timeoutMs: nextTimeoutMs()) } catch {
                Log.error("epoll_wait failed", ["error": error.description])
                break
            }
            let now = MonotonicClock.nanoseconds()
            for k in 0..<n {
                let fd = events[k].data.fd
                let ev = events[k].events
                if fd == loop.listenFD {
                    acceptClients(now: now)
                } else if fd == loop.signalFD {
                    commitBatch()
                    handleSignals()
                } else if fd == audio.reportFD {
                    commitBatch()  // sound.played is no part of the group
                    publishSoundReports()
                } else if let c = clients.connection(fd: fd) {
                    if ev & (EPOLLIN.rawValue | EPOLLHUP.rawValue | EPOLLERR.rawValue | EPOLLRDHUP.rawValue) != 0 {
                        readFrom(c, now: now)
                    }
                    if ev & EPOLLOUT.rawValue != 0 { markDirty(c) }
                }
            }
            fireDueTimers()
            flushDirty(now: now)
            periodic(now: now)
        }
        shutdown()
        return 0
    }

    func nextTimeoutMs() -> Int32 {
        var timeout: Int = -1
        let now = MonotonicClock.nanoseconds()
        if let ms = store.tick(nowNs: now) { timeout = ms }
        if let ms = watchdog.timeoutMs(now: now, statusKey) { timeout = timeout < 0 ? ms : min(timeout, ms) }
        if clients.waitingToWrite > 0 {
            timeout = timeout < 0 ? 1000 : min(timeout, 1000)
        }
        if let due = peerLogs.flushDueNs {
            let ms = due > now ? Int((due - now) / 1_000_000) + 1 : 0
            timeout = timeout < 0 ? ms : min(timeout, ms)
        }
        if let ms = timers.timeoutMs() { timeout = timeout < 0 ? ms : min(timeout, ms) }
        if !store.compacting, let due = store.compactionDueNs {
            let ms = due > now ? Int((due - now) / 1_000_000) + 1 : 0
            timeout = timeout < 0 ? ms : min(timeout, ms)
        }
        return Int32(timeout)
    }

    func periodic(now: UInt64) {
        _ = store.tick(nowNs: now)
        // Sent from the state loop: a stuck loop stops the pings and systemd restarts us.
        watchdog.tick(now: now, { statusKey }, line: { statusLine })
        peerLogs.flush(nowNs: now)
        store.finishCompaction(wait: false)
        if store.needsCompaction && !store.compacting {
            // In the background: the loop only renames the journal (StateStore.startCompaction).
            do { try store.startCompaction(reducer.state, limits: reducer.limits) } catch {
                store.compactionFailed()
                Log.error("Compacting the state failed; the journal keeps growing", ["error": "\(error)"])
            }
        }
        // Clients that stopped reading their replies.
        guard clients.waitingToWrite > 0 else { return }
        let limitNs = UInt64(config.writeTimeoutMs) * 1_000_000
        for c in clients.byFD.values where c.queued > 0 && now > c.lastProgressNs + limitNs {
            peerLogs.write(.slow, .warning, "Disconnecting a client that does not read its replies", [
                "client": String(c.id), "pid": String(c.pid), "uid": String(c.uid), "queued_bytes": String(c.queued)], nowNs: now)
            stats.slowClientsDropped += 1
            drop(c)
        }
    }

    // MARK: Signals and shutdown

    func handleSignals() {
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

    func shutdown() {
        // Order: STOPPING=1, server.stopping to subscribers, state flushed, socket closed.
        Systemd.notify("STOPPING=1\nSTATUS=Stopping: saving the state")
        broadcast(Event("server.stopping", .obj([:])))
        let now = MonotonicClock.nanoseconds()
        for c in clients.byFD.values { _ = c.flush(now: now) }
        for c in Array(clients.byFD.values) { drop(c) }
        do { try store.compact(reducer.state, limits: reducer.limits) } catch {
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
        Log.notice("Stopped", ["seq": String(reducer.state.seq)])
    }
}
