@preconcurrency import Glibc
import CBench

/// CLOCK_MONOTONIC in nanoseconds (the shim uses the same clock).
@inline(__always)
func nowNs() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
}

func sleepMs(_ ms: Double) {
    var ts = timespec(tv_sec: Int(ms / 1000), tv_nsec: Int((ms.truncatingRemainder(dividingBy: 1000)) * 1_000_000))
    var rem = timespec()
    while nanosleep(&ts, &rem) != 0 && errno == EINTR { ts = rem }
}

struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ d: String) { description = d }
}

func errnoString(_ e: Int32 = errno) -> String { String(cString: strerror(e)) }

// MARK: - CPU pinning

/// Pins the calling thread to one CPU (what `taskset -c CPU` does for a process).
/// Children spawned afterwards inherit the mask, threads they start too.
func pinThread(cpu: Int) {
    if bench_pin_thread(Int32(cpu)) != 0 {
        fputs("bench: sched_setaffinity(cpu \(cpu)) failed: \(errnoString())\n", stderr)
    }
}

func onlineCPUs() -> Int { Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))) }

// MARK: - Processes

/// A child process started with posix_spawn.
final class Child {
    let pid: pid_t
    let name: String
    private(set) var exited = false
    private(set) var status: Int32 = 0

    init(pid: pid_t, name: String) {
        self.pid = pid
        self.name = name
    }

    /// Sends `sig` and waits up to `timeoutMs` for the exit (SIGKILL after that).
    func stop(_ sig: Int32 = SIGTERM, timeoutMs: Int = 3000) {
        guard !exited else { return }
        kill(pid, sig)
        let deadline = nowNs() + UInt64(timeoutMs) * 1_000_000
        while nowNs() < deadline {
            if poll() { return }
            sleepMs(1)
        }
        kill(pid, SIGKILL)
        wait()
    }

    /// Non-blocking check; true once it has exited.
    func poll() -> Bool {
        guard !exited else { return true }
        var st: Int32 = 0
        let r = waitpid(pid, &st, WNOHANG)
        if r == pid { exited = true; status = st }
        return exited
    }

    func wait() {
        guard !exited else { return }
        var st: Int32 = 0
        while waitpid(pid, &st, 0) < 0 && errno == EINTR {}
        exited = true
        status = st
    }
}

/// Starts `argv[0]` (searched in PATH when it has no slash) with `env` added to
/// (or replacing in) this environment; stdin from /dev/null, stdout and stderr
/// to `logPath` (or /dev/null). With `stdio`, the child's stdin and stdout are
/// those fds instead (stderr still goes to the log). The child inherits this
/// thread's CPU mask.
func spawn(_ argv: [String], env: [String: String] = [:], unset: [String] = [], logPath: String? = nil,
           stdio: (stdin: Int32, stdout: Int32)? = nil) throws -> Child {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    let log = logPath ?? "/dev/null"
    if let stdio {
        posix_spawn_file_actions_adddup2(&actions, stdio.stdin, 0)
        posix_spawn_file_actions_adddup2(&actions, stdio.stdout, 1)
        posix_spawn_file_actions_addopen(&actions, 2, log, O_WRONLY | O_CREAT | O_APPEND, 0o644)
    } else {
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, log, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
    }

    var environment: [String] = []
    var p = environ
    while let entry = p.pointee {
        let s = String(cString: entry)
        let key = String(s.prefix { $0 != "=" })
        if env[key] == nil && !unset.contains(key) { environment.append(s) }
        p += 1
    }
    for (k, v) in env { environment.append("\(k)=\(v)") }

    let cargv = argv.map { strdup($0) } + [nil]
    let cenv = environment.map { strdup($0) } + [nil]
    defer {
        for c in cargv { free(c) }
        for c in cenv { free(c) }
    }
    var pid: pid_t = 0
    let r: Int32 = argv[0].contains("/")
        ? posix_spawn(&pid, argv[0], &actions, nil, cargv, cenv)
        : posix_spawnp(&pid, argv[0], &actions, nil, cargv, cenv)
    if r != 0 { throw BenchError("cannot start \(argv[0]): \(errnoString(r))") }
    return Child(pid: pid, name: argv[0])
}

// MARK: - /proc

/// Reads a small /proc file as text ("" when unreadable).
func readText(_ path: String) -> String {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return "" }
    defer { close(fd) }
    var out: [UInt8] = []
    var buf = [UInt8](repeating: 0, count: 8192)
    while true {
        let n = buf.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if n <= 0 { break }
        out.append(contentsOf: buf[0..<n])
    }
    return String(decoding: out, as: UTF8.self)
}

/// A `Key:   value kB` field of /proc/PID/status, as an integer.
func statusField(_ text: String, _ key: String) -> Int? {
    for line in text.split(separator: "\n") where line.hasPrefix(key + ":") {
        let rest = line.dropFirst(key.count + 1).split(whereSeparator: { $0 == " " || $0 == "\t" })
        if let first = rest.first { return Int(first) }
    }
    return nil
}

extension Substring {
    func trimmingCharacters(in set: String) -> String {
        var s = self
        while let f = s.first, set.contains(f) { s = s.dropFirst() }
        while let l = s.last, set.contains(l) { s = s.dropLast() }
        return String(s)
    }
}

/// Resident set size of `pid`, its high-water mark, and its proportional set size
/// (shared library pages divided among the processes mapping them), in kB.
func rssKB(_ pid: pid_t) -> (rss: Int, hwm: Int, pss: Int) {
    let t = readText("/proc/\(pid)/status")
    let p = readText("/proc/\(pid)/smaps_rollup")
    return (statusField(t, "VmRSS") ?? 0, statusField(t, "VmHWM") ?? 0, statusField(p, "Pss") ?? 0)
}

/// Summed over every thread of `pid`: context switches and on-CPU time.
struct ProcUsage {
    var voluntary = 0
    var involuntary = 0
    var cpuNs: UInt64 = 0
    var threads = 0

    static func of(_ pid: pid_t) -> ProcUsage {
        var u = ProcUsage()
        guard let dir = opendir("/proc/\(pid)/task") else { return u }
        defer { closedir(dir) }
        while let e = readdir(dir) {
            let name = withUnsafeBytes(of: e.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            guard let tid = Int(name) else { continue }
            let st = readText("/proc/\(pid)/task/\(tid)/status")
            u.voluntary += statusField(st, "voluntary_ctxt_switches") ?? 0
            u.involuntary += statusField(st, "nonvoluntary_ctxt_switches") ?? 0
            // schedstat: on-CPU ns, run-queue wait ns, timeslices.
            let ss = readText("/proc/\(pid)/task/\(tid)/schedstat").split(separator: " ")
            if let first = ss.first, let ns = UInt64(first) { u.cpuNs += ns }
            u.threads += 1
        }
        return u
    }
}

/// `Cpus_allowed_list` of every thread of `pid`, to show the pinning really held.
func cpusAllowed(_ pid: pid_t) -> String {
    var lists: Set<String> = []
    guard let dir = opendir("/proc/\(pid)/task") else { return "?" }
    defer { closedir(dir) }
    while let e = readdir(dir) {
        let name = withUnsafeBytes(of: e.pointee.d_name) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        guard Int(name) != nil else { continue }
        let st = readText("/proc/\(pid)/task/\(name)/status")
        for line in st.split(separator: "\n") where line.hasPrefix("Cpus_allowed_list:") {
            lists.insert(line.dropFirst("Cpus_allowed_list:".count).trimmingCharacters(in: "\t "))
        }
    }
    return lists.sorted().joined(separator: ",")
}

// MARK: - Sockets

/// A blocking AF_UNIX stream connection; nil when nothing listens (yet).
func connectUnix(_ path: String) -> Int32? {
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { return nil }
    var addr = unixAddress(path)
    let r = withUnsafePointer(to: &addr) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
    }
    if r != 0 {
        close(fd)
        return nil
    }
    return fd
}

/// Binds a datagram socket for NOTIFY_SOCKET.
func bindDatagram(_ path: String) throws -> Int32 {
    unlink(path)
    let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
    var addr = unixAddress(path)
    let r = withUnsafePointer(to: &addr) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
    }
    if r != 0 { throw BenchError("cannot bind \(path): \(errnoString())") }
    return fd
}

func setNonBlocking(_ fd: Int32, _ on: Bool = true) {
    let flags = fcntl(fd, F_GETFL)
    _ = fcntl(fd, F_SETFL, on ? flags | O_NONBLOCK : flags & ~O_NONBLOCK)
}

/// Writes everything (blocking fd).
func writeAll(_ fd: Int32, _ p: UnsafeRawPointer, _ n: Int) throws {
    var off = 0
    while off < n {
        let w = send(fd, p + off, n - off, Int32(MSG_NOSIGNAL))
        if w > 0 { off += w; continue }
        if w < 0 && errno == EINTR { continue }
        if w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
            var pfd = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            _ = Glibc.poll(&pfd, 1, 1000)
            continue
        }
        throw BenchError("write failed: \(errnoString())")
    }
}

func writeAll(_ fd: Int32, _ bytes: [UInt8]) throws {
    try bytes.withUnsafeBytes { try writeAll(fd, $0.baseAddress!, $0.count) }
}

/// Counts newlines in `p[0..<n]` (memchr-fast).
@inline(__always)
func countNewlines(_ p: UnsafeRawPointer, _ n: Int) -> Int {
    var count = 0
    var cur = p
    var left = n
    while left > 0, let hit = memchr(cur, 0x0A, left) {
        count += 1
        let used = UnsafeRawPointer(hit) - cur + 1
        cur += used
        left -= used
    }
    return count
}

/// Reads from a blocking fd until `lines` newlines arrived; returns the bytes read
/// (the benchmark's own small-message path, one buffer, no parsing).
final class LineReader {
    let fd: Int32
    var buf = [UInt8](repeating: 0, count: 1 << 20)

    init(fd: Int32) { self.fd = fd }

    /// Blocks until `lines` more newlines were read. Returns false on EOF/error or timeout.
    func waitLines(_ lines: Int, timeoutMs: Int32 = 10_000) -> Bool {
        var got = 0
        while got < lines {
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let r = Glibc.poll(&pfd, 1, timeoutMs)
            if r == 0 { return false }
            if r < 0 { if errno == EINTR { continue }; return false }
            let n = buf.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n <= 0 { if n < 0 && (errno == EINTR || errno == EAGAIN) { continue }; return false }
            got += buf.withUnsafeBytes { countNewlines($0.baseAddress!, n) }
        }
        return true
    }

    /// Reads one whole line and returns it (for setup: hello, subscribe replies).
    var pending: [UInt8] = []
    func readLine(timeoutMs: Int32 = 10_000) -> String? {
        while true {
            if let nl = pending.firstIndex(of: 0x0A) {
                let line = String(decoding: pending[..<nl], as: UTF8.self)
                pending.removeSubrange(...nl)
                return line
            }
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let r = Glibc.poll(&pfd, 1, timeoutMs)
            if r <= 0 { if r < 0 && errno == EINTR { continue }; return nil }
            let n = buf.withUnsafeMutableBytes { read(fd, $0.baseAddress, 65536) }
            if n <= 0 { if n < 0 && (errno == EINTR || errno == EAGAIN) { continue }; return nil }
            pending.append(contentsOf: buf[0..<n])
        }
    }
}

/// Whole-machine CPU ticks from /proc/stat: (busy, total).
func machineTicks() -> (busy: UInt64, total: UInt64) {
    let first = readText("/proc/stat").split(separator: "\n").first ?? ""
    let f = first.split(separator: " ").dropFirst().compactMap { UInt64($0) }
    guard f.count >= 8 else { return (0, 0) }
    let idle = f[3] + f[4]  // idle + iowait
    let total = f.prefix(8).reduce(0, +)
    return (total - idle, total)
}

/// Percent of all CPUs busy between two samples.
func busyPercent(_ a: (busy: UInt64, total: UInt64), _ b: (busy: UInt64, total: UInt64)) -> Double {
    let t = b.total &- a.total
    return t == 0 ? 0 : 100 * Double(b.busy &- a.busy) / Double(t)
}

/// A `sockaddr_un` for `path` (cut to fit `sun_path`).
func unixAddress(_ path: String) -> sockaddr_un {
    var addr = sockaddr_un()
    addr.sun_family = sa_family_t(AF_UNIX)
    let bytes = Array(path.utf8)
    withUnsafeMutableBytes(of: &addr.sun_path) { raw in
        for (i, b) in bytes.enumerated() where i < raw.count - 1 { raw[i] = b }
    }
    return addr
}
