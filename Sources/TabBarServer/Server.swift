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
    let epfd: Int32
    let listenFD: Int32
    let ownsSocketPath: Bool
    let signalFD: Int32
    /// A descriptor held in reserve: out of descriptors, it is closed to accept the waiting
    /// client and tell it why it is turned away (`acceptClients`), then taken again.
    var spareFD: Int32 = -1
    /// The clients and who subscribed (`ClientTable`).
    var clients = ClientTable()
    var stats = ServerStats()
    /// Log lines a peer can cause at will, each kind rate-limited (LogLimit.swift).
    var peerLogs = PeerLogs()
    var running = true
    var watchdogIntervalNs: UInt64?
    var nextWatchdogNs: UInt64 = 0
    var status = StatusNotifier(enabled: Systemd.notifySocketSet)
    let helloLine: [UInt8]
    var readBuffer = [UInt8](repeating: 0, count: 65536)
    /// The line being handled, read in place (reused for every line).
    let requestDoc = JSONDocument()
    /// The configured bar's params when a `bar.configure {"initial":true}` asks for them.
    let initialDoc = JSONDocument()
    /// Where a reply or an event line is encoded (reused; an event once for all its subscribers).
    var scratch = ByteBuffer(capacity: 8192)
    deinit { scratch.free() }
    /// Time the line being handled was read (CLOCK_MONOTONIC ns).
    var lineReadNs: UInt64 = 0
    /// State changes applied but not yet in the journal (group commit: one write per loop turn, whatever the number of clients).
    var batch = Batch()
    /// What the reducer makes of a command (reused: its arrays keep their memory).
    var outcome = Outcome(reply: .success(.none))
    /// Timers the reducer asked for (`Effect.timer`): key → due time in ms (see Timers.swift).
    var timers: [TimerKey: Int64] = [:]
    /// The reducer's clock: real, or manual (`--clock manual`, Timers.swift).
    var clock: DaemonClock

    /// Sets everything up: state restored, sounds loaded, socket listening.
    public init(config: ServerConfig) throws {
        self.config = config
        clock = DaemonClock(mode: config.clock)
        stats.startedNs = MonotonicClock.nanoseconds()
        // The socket first: a daemon that finds another one live must not touch its state.
        let listener: Int32, owned: Bool
        if let fd = try Systemd.inheritedListener() {
            (listener, owned) = (fd, false)
            Log.info("Using the socket passed by systemd", ["fd": String(fd), "path": Systemd.boundPath(fd) ?? "?"])
        } else {
            (listener, owned) = (try Listener.bind(path: config.socketPath), true)
        }
        listenFD = listener
        ownsSocketPath = owned
        store = StateStore(path: config.statePath, compactEvery: config.compactEvery, fsyncIntervalMs: config.fsyncIntervalMs,
                           compactIntervalMs: config.compactIntervalMs)
        do {
            try store.lock()
        } catch {
            close(listener)
            if owned { unlink(config.socketPath) }
            throw error
        }
        do {
            reducer = try store.load(initial: config.initialBar, limits: config.limits, sounds: config.soundMap,
                                     initialFrom: config.origins["bar"] == nil ? nil : "config \(config.configFile ?? "") bar")
            reducer.settle()
        } catch {
            close(listener)
            if owned { unlink(config.socketPath) }
            throw ServerError("cannot use the state file \(config.statePath): \(error)")
        }
        audio = AudioService(config: config)
        do { try audio.startConfiguredCapture() } catch {
            close(listener)
            if owned { unlink(config.socketPath) }
            throw error
        }
        epfd = epoll_create1(Int32(EPOLL_CLOEXEC))
        var mask = sigset_t()
        sigemptyset(&mask)
        for s in [SIGTERM, SIGINT, SIGHUP] { sigaddset(&mask, s) }
        signalFD = signalfd(-1, &mask, Int32(SFD_CLOEXEC | SFD_NONBLOCK))
        spareFD = open("/dev/null", O_RDONLY | O_CLOEXEC)
        // Without these the daemon could neither wait nor be stopped by SIGTERM.
        if epfd < 0 || signalFD < 0 || spareFD < 0 {
            let e = Errno()
            close(listener)
            if owned { unlink(config.socketPath) }
            throw ServerError("cannot set up the event loop: \(e) (is the descriptor limit, RLIMIT_NOFILE, too low?)")
        }
        let hello: JSON = .obj([
            "server": .string("tabbard"), "version": .string(Server.version), "protocol": .int(1),
            "max_line": .int(config.maxLine), "features": .array(Methods.names.map { .string($0) }),
        ])
        helloLine = Wire.notification("hello", hello)
        guard watch(listenFD, EPOLLIN.rawValue), watch(signalFD, EPOLLIN.rawValue),
              audio.reportFD < 0 || watch(audio.reportFD, EPOLLIN.rawValue) else {
            close(listener)
            if owned { unlink(config.socketPath) }
            throw ServerError("cannot set up the event loop: epoll_ctl failed (see the error above)")
        }
        if let usec = Systemd.watchdogUsec() {
            watchdogIntervalNs = usec * 1000 / 2
            nextWatchdogNs = MonotonicClock.nanoseconds()
        }
    }

    /// Adds `fd` to the epoll set; false (logged) when the kernel refuses (ENOMEM, or ENOSPC: fs.epoll.max_user_watches).
    @discardableResult
    func watch(_ fd: Int32, _ events: UInt32) -> Bool {
        do throws(Errno) { try Sys.epollControl(epfd, EPOLL_CTL_ADD, fd, events: events) } catch {
            Log.error("Cannot watch a descriptor (epoll_ctl)", ["fd": String(fd), "error": "\(error)"])
            return false
        }
        return true
    }

    func rewatch(_ c: Connection) {
        let events = (c.readPaused || c.readClosed ? 0 : EPOLLIN.rawValue) | (c.pollingOut ? EPOLLOUT.rawValue : 0)
        do throws(Errno) { try Sys.epollControl(epfd, EPOLL_CTL_MOD, c.fd, events: events) } catch {
            Log.error("Cannot change what is watched of a client (epoll_ctl)", ["client": String(c.id), "error": "\(error)"])
        }
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
        Systemd.notify("READY=1\nSTATUS=\(statusLine)")
        status.sent(statusKey, nowNs: MonotonicClock.nanoseconds())
    }

    /// Runs until SIGTERM/SIGINT. Returns the exit status.
    public func run() -> Int32 {
        Log.notice("tabbard \(Server.version) ready", ["socket": ownsSocketPath ? config.socketPath : "(systemd) " + (Systemd.boundPath(listenFD) ?? "?"),
                                                        "state": config.statePath, "audio": audio.statusSummary])
        // Socket listening, state restored, sounds loaded: clients are served from here on.
        notifyReady()
        var events = [epoll_event](repeating: epoll_event(), count: 128)
        while running {
            let n: Int
            do throws(Errno) { n = try Sys.epollWait(epfd, &events, timeoutMs: nextTimeoutMs()) } catch {
                Log.error("epoll_wait failed", ["error": error.description])
                break
            }
            let now = MonotonicClock.nanoseconds()
            for k in 0..<n {
                let fd = events[k].data.fd
                let ev = events[k].events
                if fd == listenFD {
                    acceptClients(now: now)
                } else if fd == signalFD {
                    commitBatch()
                    handleSignals()
                } else if fd == audio.reportFD {
                    commitBatch()  // sound.played is no part of the group
                    publishSoundReports()
                } else if let c = clients.byFD[fd] {
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
        if let interval = watchdogIntervalNs {
            let ms = nextWatchdogNs > now ? Int((nextWatchdogNs - now) / 1_000_000) + 1 : 0
            timeout = timeout < 0 ? ms : min(timeout, ms)
            _ = interval
        }
        if status.enabled, let due = status.deadline(statusKey, nowNs: now) {
            let ms = due > now ? Int((due - now) / 1_000_000) + 1 : 0
            timeout = timeout < 0 ? ms : min(timeout, ms)
        }
        if clients.byFD.values.contains(where: { $0.queued > 0 }) {
            timeout = timeout < 0 ? 1000 : min(timeout, 1000)
        }
        if let due = peerLogs.flushDueNs {
            let ms = due > now ? Int((due - now) / 1_000_000) + 1 : 0
            timeout = timeout < 0 ? ms : min(timeout, ms)
        }
        if let ms = timerTimeoutMs() { timeout = timeout < 0 ? ms : min(timeout, ms) }
        if !store.compacting, let due = store.compactionDueNs {
            let ms = due > now ? Int((due - now) / 1_000_000) + 1 : 0
            timeout = timeout < 0 ? ms : min(timeout, ms)
        }
        return Int32(timeout)
    }

    func periodic(now: UInt64) {
        _ = store.tick(nowNs: now)
        if let interval = watchdogIntervalNs, now >= nextWatchdogNs {
            // Sent from the state loop: a stuck loop stops the pings and systemd restarts us.
            Systemd.notify("WATCHDOG=1")
            nextWatchdogNs = now + interval
        }
        if status.enabled {
            let key = statusKey
            if status.due(key, nowNs: now) {
                Systemd.notify("STATUS=\(statusLine)")
                status.sent(key, nowNs: now)
            }
            status.polled(nowNs: now)
        }
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
        var info = signalfd_siginfo()
        while case .done(MemoryLayout<signalfd_siginfo>.size)? = try? withUnsafeMutableBytes(of: &info, { try Sys.read(signalFD, into: $0) }) {
            switch Int32(info.ssi_signo) {
            case SIGHUP:
                // Clients stay connected and the state is untouched (Reload.swift).
                reloadConfiguration()
            default:
                Log.notice("Stopping", ["signal": String(info.ssi_signo)])
                running = false
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
        close(listenFD)
        if ownsSocketPath { unlink(config.socketPath) }
        endCapture()  // the capture ends at the clock's time; what plays out after is not in it
        audio.nullSink?.clock?.release()  // voices still sounding play out without waiting for the clock
        audio.shutdown()
        Log.notice("Stopped", ["seq": String(reducer.state.seq)])
    }
}
