@preconcurrency import Glibc
import CBench

/// The requests the state-path measurements send, of one of two kinds, each a real state
/// change. `select`: `tab.select` alternating between the first two tabs, `source: program`
/// so that it does not click — clicks are measured on their own. `touch`: a tap as a front
/// end sends it, which clicks as a tap does. Fixed length, so `n` lines are one contiguous slice.
enum Requests {
    enum Kind: String, CaseIterable {
        case select, touch
    }

    static func select(index: Int, source: String = "program") -> String {
        #"{"jsonrpc":"2.0","id":100000,"method":"tab.select","params":{"index":\#(index),"source":"\#(source)"}}"# + "\n"
    }

    /// A tap as a front end sends it: `touch` down then up on the first tab (`tab` 0) or
    /// the second, each a state change (the highlight, then the commit, which clicks).
    /// Padded so that every line has the same length.
    static func touch(_ phase: String, tab: Int) -> String {
        let x = tab == 0 ? "37.50" : "112.5"
        let pad = phase == "up" ? "  " : ""
        return #"{"jsonrpc":"2.0","id":100000,"method":"touch","params":{"phase":"\#(phase)",\#(pad)"x":\#(x),"y":20}}"# + "\n"
    }

    /// `tabbard-bench --load … --request touch`: the kind the `--load` figures send.
    nonisolated(unsafe) static var loadKind = Kind.select

    /// The lines of one cycle: select tab 0, tab 1; or tap tab 0, tab 1 (down, up each).
    static func cycle(_ kind: Kind) -> [String] {
        switch kind {
        case .select: return [select(index: 0), select(index: 1)]
        case .touch: return [touch("down", tab: 0), touch("up", tab: 0), touch("down", tab: 1), touch("up", tab: 1)]
        }
    }

    /// 128 lines of a kind repeating its cycle (any run of up to 124 lines starting at line
    /// `k % period` keeps it), its period and its line length.
    struct Ring {
        let bytes: [UInt8]
        let period: Int
        let lineLength: Int

        init(_ kind: Kind) {
            let c = cycle(kind)
            var out: [UInt8] = []
            for k in 0..<128 { out.append(contentsOf: c[k % c.count].utf8) }
            bytes = out
            period = c.count
            lineLength = c[0].utf8.count
        }
    }

    static let rings: [Kind: Ring] = Dictionary(uniqueKeysWithValues: Kind.allCases.map { ($0, Ring($0)) })

    static let subscribe = Array(#"{"jsonrpc":"2.0","id":1,"method":"subscribe"}"#.utf8) + [0x0A]
}

/// Connects and reads the greeting (both servers send one line first).
func openClient(_ socket: String) throws -> (Int32, LineReader) {
    guard let fd = connectUnix(socket) else { throw BenchError("cannot connect to \(socket): \(errnoString())") }
    let r = LineReader(fd: fd)
    guard r.readLine() != nil else { throw BenchError("no greeting from \(socket)") }
    return (fd, r)
}

// MARK: - Sequential round trip

/// `n` sequential request → reply round trips (after `warmup` unrecorded ones) of `kind`, in ns.
func roundTrips(socket: String, n: Int, warmup: Int, kind: Requests.Kind) throws -> [UInt64] {
    let (fd, _) = try openClient(socket)
    defer { close(fd) }
    var samples = [UInt64]()
    samples.reserveCapacity(n)
    var buf = [UInt8](repeating: 0, count: 4096)
    let requests = Requests.rings[kind]!
    let len = requests.lineLength
    try requests.bytes.withUnsafeBytes { ring in
        try buf.withUnsafeMutableBytes { b in
            for k in 0..<(warmup + n) {
                let t0 = nowNs()
                let line = ring.baseAddress! + (k % requests.period) * len
                var off = 0
                while off < len {
                    let w = send(fd, line + off, len - off, Int32(MSG_NOSIGNAL))
                    if w <= 0 { if errno == EINTR { continue }; throw BenchError("send: \(errnoString())") }
                    off += w
                }
                // The reply is one line; read until its newline, waiting for it with poll as
                // the project's client does (TabBarClient's reader thread; event loops alike). A
                // read that blocks is woken by the server's own read of the request too (the
                // socket's write space, for a sender that waits): on one CPU, two context
                // switches more per round trip, which no event-loop client pays (docs/PERFORMANCE.md).
                var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                while true {
                    if poll(&p, 1, -1) < 0 { if errno == EINTR { continue }; throw BenchError("poll: \(errnoString())") }
                    let r = read(fd, b.baseAddress, b.count)
                    if r <= 0 { if r < 0 && errno == EINTR { continue }; throw BenchError("connection closed during round trips") }
                    if memchr(b.baseAddress!, 0x0A, r) != nil { break }
                }
                let t1 = nowNs()
                if k >= warmup { samples.append(t1 - t0) }
            }
        }
    }
    return samples
}

// MARK: - Pipelined throughput

/// `clients` connections, each keeping `window` requests of `kind` in flight (every reply
/// read is answered by one more request, sent in one write per read). Returns replies per
/// second over `seconds` (after `warmupSeconds`) and the requests sent in total.
func pipelined(socket: String, clients: Int, window: Int, seconds: Double, warmupSeconds: Double,
               kind: Requests.Kind) throws -> (rate: Double, total: Int) {
    var fds: [Int32] = []
    defer { for fd in fds { close(fd) } }
    for _ in 0..<clients { fds.append(try openClient(socket).0) }
    let requests = Requests.rings[kind]!
    let len = requests.lineLength
    var sentPer = [Int](repeating: 0, count: clients)
    var donePer = [Int](repeating: 0, count: clients)
    var buf = [UInt8](repeating: 0, count: 1 << 16)
    let ep = epoll_create1(Int32(EPOLL_CLOEXEC))
    defer { close(ep) }
    for (i, fd) in fds.enumerated() {
        var ev = epoll_event()
        ev.events = EPOLLIN.rawValue
        ev.data.u64 = UInt64(i)
        epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev)
    }
    func sendLines(_ i: Int, _ k: Int) throws {
        guard k > 0 else { return }
        try requests.bytes.withUnsafeBytes { ring in
            try writeAll(fds[i], ring.baseAddress! + (sentPer[i] % requests.period) * len, k * len)
        }
        sentPer[i] += k
    }
    for i in 0..<clients { try sendLines(i, window) }
    let start = nowNs()
    let measureFrom = start + UInt64(warmupSeconds * 1e9)
    let end = measureFrom + UInt64(seconds * 1e9)
    var counted = 0
    var tFirst: UInt64 = 0
    var events = [epoll_event](repeating: epoll_event(), count: 64)
    while true {
        let ready: Int
        if clients == 1 {
            ready = 1
            events[0].data.u64 = 0
        } else {
            ready = Int(events.withUnsafeMutableBufferPointer { epoll_wait(ep, $0.baseAddress, 64, 1000) })
            if ready < 0 { if errno == EINTR { continue }; throw BenchError("epoll_wait: \(errnoString())") }
        }
        var got = 0
        let t = nowNs()
        let last = t >= end
        for e in 0..<ready {
            let i = Int(events[e].data.u64)
            let n = buf.withUnsafeMutableBytes { read(fds[i], $0.baseAddress, $0.count) }
            if n <= 0 {
                if n < 0 && (errno == EINTR || errno == EAGAIN) { continue }
                throw BenchError("connection closed during the pipelined run")
            }
            let k = buf.withUnsafeBytes { countNewlines($0.baseAddress!, n) }
            donePer[i] += k
            got += k
            if !last { try sendLines(i, k) }
        }
        if tFirst == 0 {
            if t >= measureFrom { tFirst = nowNs() }
        } else {
            counted += got
        }
        if last {
            let rate = Double(counted) / (Double(nowNs() - tFirst) / 1e9)
            // Drain what is still in flight so the server is quiet for the next run.
            try drain(fds: fds, sent: sentPer, done: &donePer, buf: &buf)
            return (rate, sentPer.reduce(0, +))
        }
    }
}

private func drain(fds: [Int32], sent: [Int], done: inout [Int], buf: inout [UInt8]) throws {
    for (i, fd) in fds.enumerated() {
        while done[i] < sent[i] {
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            if Glibc.poll(&pfd, 1, 5000) <= 0 { throw BenchError("replies stopped coming while draining") }
            let n = buf.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n <= 0 { if n < 0 && (errno == EINTR || errno == EAGAIN) { continue }; throw BenchError("closed while draining") }
            done[i] += buf.withUnsafeBytes { countNewlines($0.baseAddress!, n) }
        }
    }
}

// MARK: - Fan-out

/// `subscribers` subscribed connections and one control connection: each sample is
/// the time from sending one `tab.select` to the moment the last subscriber has read
/// its event line.
///
/// With `spin` the reader busy-polls (epoll_wait with a zero timeout) instead of
/// sleeping, so that its own wake-ups (an IPI per socket when it runs on another
/// CPU) are not counted as the server's fan-out time. Never spin on the server's CPU.
func fanout(socket: String, subscribers: Int, iterations: Int, warmup: Int, spin: Bool = false) throws -> [UInt64] {
    let (control, _) = try openClient(socket)
    var subs: [Int32] = []
    defer {
        close(control)
        for fd in subs { close(fd) }
    }
    for _ in 0..<subscribers {
        let (fd, reader) = try openClient(socket)
        subs.append(fd)
        try writeAll(fd, Requests.subscribe)
        guard let reply = reader.readLine(), reply.contains("\"result\"") else {
            throw BenchError("subscribe failed on \(socket) (subscriber \(subs.count))")
        }
        setNonBlocking(fd)
    }
    let ep = epoll_create1(Int32(EPOLL_CLOEXEC))
    defer { close(ep) }
    for (i, fd) in subs.enumerated() {
        var ev = epoll_event()
        ev.events = EPOLLIN.rawValue
        ev.data.u64 = UInt64(i)
        epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev)
    }
    var got = [Bool](repeating: false, count: subscribers)
    var buf = [UInt8](repeating: 0, count: 1 << 16)
    var events = [epoll_event](repeating: epoll_event(), count: 1024)
    var samples: [UInt64] = []
    let controlReader = LineReader(fd: control)
    for k in 0..<(warmup + iterations) {
        for i in 0..<subscribers { got[i] = false }
        var remaining = subscribers
        let line = Array(Requests.select(index: k % 2).utf8)
        let t0 = nowNs()
        try writeAll(control, line)
        var tLast: UInt64 = 0
        let giveUp = t0 + 5_000_000_000
        while remaining > 0 {
            let n = Int(events.withUnsafeMutableBufferPointer { epoll_wait(ep, $0.baseAddress, Int32($0.count), spin ? 0 : 5000) })
            if n < 0 { if errno == EINTR { continue }; throw BenchError("epoll_wait: \(errnoString())") }
            if n == 0 && (!spin || nowNs() > giveUp) { throw BenchError("fan-out: \(remaining) of \(subscribers) subscribers got nothing within 5 s") }
            for e in 0..<n {
                let i = Int(events[e].data.u64)
                let r = buf.withUnsafeMutableBytes { read(subs[i], $0.baseAddress, $0.count) }
                if r <= 0 { if r < 0 && (errno == EAGAIN || errno == EINTR) { continue }; throw BenchError("a subscriber was disconnected") }
                if !got[i] && buf.withUnsafeBytes({ countNewlines($0.baseAddress!, r) }) > 0 {
                    got[i] = true
                    remaining -= 1
                }
            }
            tLast = nowNs()
        }
        if k >= warmup { samples.append(tLast - t0) }
        guard controlReader.waitLines(1) else { throw BenchError("no reply on the control connection") }
    }
    return samples
}

// MARK: - Clicks through the preload shim

/// Reads onset lines that the shim writes into a FIFO.
final class OnsetPipe {
    let path: String
    let fd: Int32
    private var pending: [UInt8] = []

    struct Onset {
        var pid: Int32
        var t: UInt64
        var frames: Int
        var firstFrame: Int
    }

    init(path: String) throws {
        self.path = path
        unlink(path)
        if mkfifo(path, 0o600) != 0 { throw BenchError("mkfifo \(path): \(errnoString())") }
        // Open for reading first (non-blocking): the shim's non-blocking open for writing needs a reader.
        fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        if fd < 0 { throw BenchError("open \(path): \(errnoString())") }
    }

    deinit {
        close(fd)
        unlink(path)
    }

    /// Every onset that has arrived so far.
    func drain() -> [Onset] {
        var buf = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = buf.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n <= 0 { break }
            pending.append(contentsOf: buf[0..<n])
        }
        var out: [Onset] = []
        while let nl = pending.firstIndex(of: 0x0A) {
            let parts = String(decoding: pending[..<nl], as: UTF8.self).split(separator: " ")
            pending.removeSubrange(...nl)
            if parts.count == 5, parts[0] == "onset", let pid = Int32(parts[1]), let t = UInt64(parts[2]),
               let f = Int(parts[3]), let ff = Int(parts[4]) {
                out.append(Onset(pid: pid, t: t, frames: f, firstFrame: ff))
            }
        }
        return out
    }

    /// The first onset at or after `t0` (from `pid` when given), waiting up to `timeoutMs`.
    func wait(after t0: UInt64, pid: Int32? = nil, timeoutMs: Int = 500) -> Onset? {
        let deadline = nowNs() + UInt64(timeoutMs) * 1_000_000
        while true {
            for o in drain() where o.t >= t0 && (pid == nil || o.pid == pid!) { return o }
            let now = nowNs()
            if now >= deadline { return nil }
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            _ = Glibc.poll(&pfd, 1, Int32(max(1, (deadline - now) / 1_000_000)))
        }
    }
}

/// Clicks on a daemon whose ALSA sink runs under the shim: `tab.select` (source
/// user, so it clicks), spaced `spacingMs` apart with random jitter (so the request
/// lands at every phase of the audio period). Samples: request sent → onset, in ns.
func clicks(socket: String, onsets: OnsetPipe, count: Int, spacingMs: ClosedRange<Double>) throws -> (samples: [UInt64], missed: Int) {
    let (fd, reader) = try openClient(socket)
    defer { close(fd) }
    var samples: [UInt64] = []
    var missed = 0
    _ = onsets.drain()
    var rng = SystemRandomNumberGenerator()
    for k in 0..<count {
        sleepMs(Double.random(in: spacingMs, using: &rng))
        _ = onsets.drain()
        let line = Array(Requests.select(index: k % 2, source: "user").utf8)
        let t0 = nowNs()
        try writeAll(fd, line)
        if let o = onsets.wait(after: t0) {
            samples.append(o.t - t0)
        } else {
            missed += 1
        }
        guard let reply = reader.readLine(), reply.contains("\"result\"") else {
            throw BenchError("tab.select (click) failed")
        }
    }
    return (samples, missed)
}

/// `aplay -D null FILE` per event, under the shim: process start → onset, in ns.
/// aplay inherits the calling thread's CPU mask, so it is pinned like the daemon.
func aplayClicks(wav: String, shim: String, onsets: OnsetPipe, count: Int, serverCPU: Int, clientCPU: Int) throws -> (samples: [UInt64], missed: Int) {
    var samples: [UInt64] = []
    var missed = 0
    for _ in 0..<count {
        _ = onsets.drain()
        pinThread(cpu: serverCPU)
        let t0 = nowNs()
        let child = try spawn(["aplay", "-q", "-D", "null", wav], env: ["LD_PRELOAD": shim, "CLICKSHIM_OUT": onsets.path])
        pinThread(cpu: clientCPU)
        if let o = onsets.wait(after: t0, pid: child.pid, timeoutMs: 2000) {
            samples.append(o.t - t0)
        } else {
            missed += 1
        }
        child.wait()
        sleepMs(5)
    }
    return (samples, missed)
}

// MARK: - Start-up

struct StartupSample {
    var socketNs: UInt64
    var readyNs: UInt64?
}

/// Starts a server, measures spawn → READY=1 (when `notifyPath` is given) and spawn →
/// the socket answering (greeting read), then stops it.
func startupOnce(argv: [String], socket: String, notifyPath: String?, logPath: String, serverCPU: Int, clientCPU: Int) throws -> StartupSample {
    var notifyFD: Int32 = -1
    if let notifyPath { notifyFD = try bindDatagram(notifyPath) }
    defer { if notifyFD >= 0 { close(notifyFD); unlink(notifyPath!) } }
    unlink(socket)
    var env: [String: String] = [:]
    if let notifyPath { env["NOTIFY_SOCKET"] = notifyPath }
    pinThread(cpu: serverCPU)
    let t0 = nowNs()
    let child = try spawn(argv, env: env, unset: ["LISTEN_FDS", "LISTEN_PID", "LISTEN_FDNAMES", "WATCHDOG_USEC"], logPath: logPath)
    pinThread(cpu: clientCPU)
    defer { child.stop() }
    var ready: UInt64?
    var answered: UInt64?
    var buf = [UInt8](repeating: 0, count: 4096)
    let deadline = t0 + 10_000_000_000
    while answered == nil || (notifyFD >= 0 && ready == nil) {
        if nowNs() > deadline { throw BenchError("\(argv[0]) did not become ready within 10 s (see \(logPath))") }
        if child.poll() { throw BenchError("\(argv[0]) exited during start-up (see \(logPath))") }
        if notifyFD >= 0 && ready == nil {
            let n = buf.withUnsafeMutableBytes { recv(notifyFD, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if n > 0 && String(decoding: buf[0..<n], as: UTF8.self).contains("READY=1") { ready = nowNs() - t0 }
        }
        if answered == nil, let fd = connectUnix(socket) {
            let r = LineReader(fd: fd)
            if r.readLine(timeoutMs: 5000) != nil { answered = nowNs() - t0 }
            close(fd)
            continue
        }
        var ts = timespec(tv_sec: 0, tv_nsec: 50_000)
        nanosleep(&ts, nil)
    }
    return StartupSample(socketNs: answered!, readyNs: ready)
}

// MARK: - Idle

struct IdleFigure {
    var name: String
    var seconds: Double
    var voluntary: Int
    var involuntary: Int
    var cpuMs: Double
    var threads: Int
    var wakeupsPerSecond: Double { Double(voluntary) / seconds }
}

/// Context switches and CPU time of each process over `seconds` with no clients.
func idleCost(_ procs: [(String, pid_t)], seconds: Double) -> [IdleFigure] {
    let before = procs.map { ProcUsage.of($0.1) }
    let t0 = nowNs()
    sleepMs(seconds * 1000)
    let elapsed = Double(nowNs() - t0) / 1e9
    return procs.enumerated().map { k, p in
        let a = before[k], b = ProcUsage.of(p.1)
        return IdleFigure(name: p.0, seconds: elapsed, voluntary: b.voluntary - a.voluntary,
                          involuntary: b.involuntary - a.involuntary,
                          cpuMs: Double(b.cpuNs &- a.cpuNs) / 1e6, threads: b.threads)
    }
}

// MARK: - feedbackd reference

/// What the feedbackd reference measured, or why it could not run.
struct FeedbackdFigures {
    var samples: [UInt64] = []     // TriggerFeedback sent → the shim's onset in feedbackd, ns
    var roundTrips: [UInt64] = []  // TriggerFeedback sent → its reply read (the D-Bus call), ns
    var missed = 0
    var event = ""
    var version = ""
    var error: String?
}

/// feedbackd (org.sigxcpu.Feedback) on a private session bus, playing through
/// libcanberra's ALSA backend on ALSA's `null` PCM under the same shim.
///
/// - `dbus-daemon` with a config of its own: a Unix socket in `tmp`, no service
///   directories (so nothing is ever auto-started with the wrong environment);
/// - `/usr/libexec/feedbackd` with `LD_PRELOAD` = the shim, `ALSA_CONFIG_PATH` =
///   only a file that makes `pcm.!default` ALSA's `null` (not after alsa.conf: its hooks
///   load /etc/alsa/conf.d, where pipewire-alsa's 99-pipewire-default.conf makes
///   `default` PipeWire whatever a later file says, and libcanberra then failed with
///   "IO error" on a machine with no PipeWire running), `CANBERRA_DRIVER=alsa`,
///   `GSETTINGS_BACKEND=memory` (profile `full`, the schema default; nothing written
///   to the user's dconf);
/// - `fbdclient` (bench/fbdclient): one long-lived sd-bus connection that calls
///   `TriggerFeedback(app_id, event, {}, -1)` and reports CLOCK_MONOTONIC right
///   before the call is sent and when its reply is read. It stays connected because
///   feedbackd ends the events of a caller that leaves the bus (a one-shot
///   `gdbus call` cancels its own sound).
///
/// Each sample: call sent → the first non-silent buffer feedbackd hands to
/// snd_pcm_writei; then the bench waits for `FeedbackEnded` (on `null` the whole
/// sound is written at once, so that is a few ms) and sleeps `spacingMs`.
/// The servers (dbus-daemon, feedbackd) are pinned to `serverCPU`, the client to `clientCPU`.
func feedbackdClicks(tmp: String, shim: String, client: String, onsets: OnsetPipe, event: String, count: Int, warmup: Int,
                     spacingMs: ClosedRange<Double>, serverCPU: Int, clientCPU: Int, children: inout [Child]) -> FeedbackdFigures {
    var fig = FeedbackdFigures()
    fig.event = event
    fig.version = commandOutput("dpkg-query -W -f='${Version}' feedbackd 2>/dev/null")
    let feedbackd = "/usr/libexec/feedbackd"
    for (what, path) in [("feedbackd", feedbackd), ("fbdclient", client)] where access(path, X_OK) != 0 {
        fig.error = "\(what) is not installed at \(path)" + (what == "feedbackd" ? " (apt-get install feedbackd)" : " (run `make bench`, which builds it)")
        return fig
    }
    if commandOutput("command -v dbus-daemon").isEmpty {
        fig.error = "dbus-daemon is not installed (apt-get install dbus)"
        return fig
    }
    let busPath = "\(tmp)/fbd-bus"
    let address = "unix:path=\(busPath)"
    writeFile("\(tmp)/fbd-bus.conf", """
        <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
        <busconfig>
          <type>session</type>
          <listen>\(address)</listen>
          <auth>EXTERNAL</auth>
          <policy context="default">
            <allow send_destination="*" eavesdrop="true"/>
            <allow eavesdrop="true"/>
            <allow own="*"/>
          </policy>
        </busconfig>

        """)
    writeFile("\(tmp)/fbd-asound.conf", "pcm.!default { type null }\n")

    pinThread(cpu: serverCPU)
    defer { pinThread(cpu: clientCPU) }
    guard let bus = try? spawn(["dbus-daemon", "--config-file=\(tmp)/fbd-bus.conf", "--nofork", "--nopidfile"],
                               logPath: "\(tmp)/fbd-dbus.log") else {
        fig.error = "cannot start dbus-daemon"
        return fig
    }
    children.append(bus)
    let deadline = nowNs() + 5_000_000_000
    while access(busPath, F_OK) != 0 {
        if bus.poll() || nowNs() > deadline {
            fig.error = "dbus-daemon did not listen on \(busPath): " + readText("\(tmp)/fbd-dbus.log").replacingNewlines()
            return fig
        }
        sleepMs(1)
    }
    let env = ["DBUS_SESSION_BUS_ADDRESS": address, "LD_PRELOAD": shim, "CLICKSHIM_OUT": onsets.path,
               "ALSA_CONFIG_PATH": "\(tmp)/fbd-asound.conf",
               "CANBERRA_DRIVER": "alsa", "GSETTINGS_BACKEND": "memory"]
    guard let fbd = try? spawn([feedbackd], env: env, unset: ["DBUS_SYSTEM_BUS_ADDRESS"], logPath: "\(tmp)/feedbackd.log") else {
        fig.error = "cannot start \(feedbackd)"
        return fig
    }
    children.append(fbd)

    // The client: its stdin and stdout are one end of a socket pair (writeAll uses send()).
    var pair: [Int32] = [-1, -1]
    guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0 else {
        fig.error = "socketpair: \(errnoString())"
        return fig
    }
    for fd in pair { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
    pinThread(cpu: clientCPU)
    let cli: Child
    do {
        cli = try spawn([client, address, "tabbard.bench"], logPath: "\(tmp)/fbdclient.log", stdio: (pair[1], pair[1]))
    } catch {
        close(pair[0]); close(pair[1])
        fig.error = "\(error)"
        return fig
    }
    close(pair[1])
    children.append(cli)
    let cmd = pair[0]
    let reader = LineReader(fd: cmd)
    defer { close(cmd); cli.stop() }
    func send(_ line: String) -> Bool { (try? writeAll(cmd, Array((line + "\n").utf8))) != nil }

    guard let ready = reader.readLine(timeoutMs: 12_000), ready == "ready" else {
        let why = fbd.poll() ? "feedbackd exited at start (status \(fbd.status))" : "the client did not get ready"
        fig.error = why + "; feedbackd.log: " + String(readText("\(tmp)/feedbackd.log").suffix(300)).replacingNewlines()
        return fig
    }
    var rng = SystemRandomNumberGenerator()
    var k = 0
    while k < warmup + count {
        _ = onsets.drain()
        guard send("trigger \(event)"), let reply = reader.readLine(timeoutMs: 6000) else {
            fig.error = "the feedbackd client stopped answering" + (fbd.poll() ? " (feedbackd exited, status \(fbd.status))" : "")
            return fig
        }
        let parts = reply.split(separator: " ")
        guard parts.count == 4, parts[0] == "ok", let t0 = UInt64(parts[1]), let t1 = UInt64(parts[2]) else {
            fig.error = "TriggerFeedback failed: \(reply)"
            return fig
        }
        let onset = onsets.wait(after: t0, pid: fbd.pid, timeoutMs: 2000)
        if k >= warmup {
            fig.roundTrips.append(t1 - t0)
            if let o = onset { fig.samples.append(o.t - t0) } else { fig.missed += 1 }
        }
        // Let the sound finish (FeedbackEnded) before the next one: one stream at a time.
        _ = send("wait \(parts[3]) 3000")
        _ = reader.readLine(timeoutMs: 6000)
        sleepMs(Double.random(in: spacingMs, using: &rng))
        k += 1
        if k == warmup + 5 && fig.samples.isEmpty {
            fig.error = "no sound reached ALSA in 5 events (\(event)); feedbackd.log: "
                + String(readText("\(tmp)/feedbackd.log").suffix(300)).replacingNewlines()
            return fig
        }
    }
    return fig
}
