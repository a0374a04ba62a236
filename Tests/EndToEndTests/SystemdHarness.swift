import Foundation
import Glibc
import TabBarTesting

// Helpers for SystemdTests: a notify socket of the test's own and a socket-activated daemon.

/// A datagram socket standing in for systemd's notify socket.
final class NotifySocket {
    struct Message {
        var text: String
        /// CLOCK_MONOTONIC seconds when the test read it.
        var at: Double
        var fields: [String: String] {
            var f: [String: String] = [:]
            for line in text.split(separator: "\n") {
                guard let eq = line.firstIndex(of: "=") else { continue }
                f[String(line[..<eq])] = String(line[line.index(after: eq)...])
            }
            return f
        }
    }

    let path: String
    private let fd: Int32
    private(set) var messages: [Message] = []
    private var cursor = 0
    var texts: [String] { messages.map(\.text) }

    init(path: String) throws {
        self.path = path
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var addr = ActivatedDaemon.address(path)
        let r = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        if r != 0 { throw TestFailure("bind \(path): \(String(cString: strerror(errno)))") }
    }

    deinit {
        close(fd)
        unlink(path)
    }

    /// Reads one datagram, waiting at most `timeout` seconds; records it.
    func next(timeout: Double) -> Message? {
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&p, 1, Int32(timeout * 1000)) > 0 else { return nil }
        var buf = [UInt8](repeating: 0, count: 65536)
        let n = recv(fd, &buf, buf.count, 0)
        guard n > 0 else { return nil }
        let m = Message(text: String(decoding: buf[..<n], as: UTF8.self), at: ActivatedDaemon.now())
        messages.append(m)
        return m
    }

    /// Reads everything that arrives within `timeout` (and whatever is already queued).
    func collect(timeout: Double) {
        let deadline = ActivatedDaemon.now() + timeout
        while next(timeout: max(0, deadline - ActivatedDaemon.now())) != nil {}
    }

    /// Reads messages as they arrive until `done` holds for all of them (true), or `timeout` passes (false).
    func readUntil(timeout: Double, _ done: ([Message]) -> Bool) -> Bool {
        let deadline = ActivatedDaemon.now() + timeout
        while !done(messages) {
            let left = deadline - ActivatedDaemon.now()
            if next(timeout: max(0, left)) == nil && left <= 0 { return done(messages) }
        }
        return true
    }

    /// The first message after the previous `wait` that satisfies `match`, reading until it arrives.
    func wait(timeout: Double, _ match: (Message) -> Bool) throws -> Message {
        let deadline = ActivatedDaemon.now() + timeout
        while true {
            while cursor < messages.count {
                let m = messages[cursor]
                cursor += 1
                if match(m) { return m }
            }
            let left = deadline - ActivatedDaemon.now()
            // Past the deadline, what is already queued still counts (the test thread may
            // have had no CPU for a while): one look without waiting, then fail.
            if left <= 0 && next(timeout: 0) == nil {
                throw TestFailure("no matching notify message within \(timeout) s; got \(texts)")
            }
            if left > 0 { _ = next(timeout: left) }
        }
    }
}

/// `systemd-socket-activate --listen=SOCK -E NOTIFY_SOCKET=… [-E WATCHDOG_USEC=…] tabbard …`.
/// The activator execs tabbard in place, so `pid` is the daemon's once it has started.
///
/// Spawned with posix_spawn, not Foundation's `Process`: `Process` notices a child's exit by
/// EOF on a socket the child inherits, then calls a blocking `waitpid` on its one manager
/// thread. The activator closes that socket before exec'ing tabbard, so the manager thread
/// would block until the daemon exits, and every other `Process` in the test run (other
/// suites' daemons, tabbarctl) would wait with it.
final class ActivatedDaemon {
    static let activator = "/usr/bin/systemd-socket-activate"
    let dir: String
    let socket: String
    let state: String
    let notify: NotifySocket
    private(set) var pid: pid_t = 0
    private var exitStatus: Int32?
    private let stderrFile: String

    init(watchdogUsec: UInt64? = nil, activatorArgs: [String] = []) throws {
        guard FileManager.default.isExecutableFile(atPath: ActivatedDaemon.activator) else {
            throw TestFailure("\(ActivatedDaemon.activator) is missing: apt-get install systemd (make deps does)")
        }
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("tabbard-sd-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        socket = dir + "/sock"
        state = dir + "/state.json"
        stderrFile = dir + "/stderr"
        notify = try NotifySocket(path: dir + "/notify")
        var args = [ActivatedDaemon.activator] + activatorArgs + ["--listen=\(socket)", "-E", "NOTIFY_SOCKET=\(notify.path)"]
        if let watchdogUsec { args += ["-E", "WATCHDOG_USEC=\(watchdogUsec)"] }
        args += [Paths.tabbard, "--state", state, "--audio", "null", "--sounds", Paths.sounds]
        pid = try ActivatedDaemon.spawn(args, stderr: stderrFile)
    }

    /// posix_spawn with stdin/stdout on /dev/null, stderr to a file (nobody has to drain it),
    /// every other fd closed, default signal dispositions and an empty signal mask.
    static func spawn(_ args: [String], stderr path: String) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        closeInheritedDescriptors(&actions)
        var attr = posix_spawnattr_t()
        posix_spawnattr_init(&attr)
        defer { posix_spawnattr_destroy(&attr) }
        var empty = sigset_t(), all = sigset_t()
        sigemptyset(&empty)
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attr, &empty)
        posix_spawnattr_setsigdefault(&attr, &all)
        posix_spawnattr_setflags(&attr, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let argv = args.map { strdup($0) } + [nil]
        defer { for a in argv { free(a) } }
        var pid: pid_t = 0
        let r = posix_spawn(&pid, args[0], &actions, &attr, argv, environ)
        if r != 0 { throw TestFailure("posix_spawn \(args[0]): \(String(cString: strerror(r)))") }
        return pid
    }

    /// Whether the process still runs (reaps it once it has exited).
    var isRunning: Bool {
        if exitStatus != nil { return false }
        var status: Int32 = 0
        let r = waitpid(pid, &status, WNOHANG)
        if r == pid {
            exitStatus = status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
            return false
        }
        return r == 0
    }

    static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    static func address(_ path: String) -> sockaddr_un {
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &addr.sun_path) { raw in
            for (k, b) in path.utf8.enumerated() { raw[k] = b }
        }
        return addr
    }

    /// Until the activator has bound the socket (bounded).
    func waitForSocketFile(timeout: Double = 10) throws {
        let deadline = ActivatedDaemon.now() + timeout
        var st = stat()
        while ActivatedDaemon.now() < deadline {
            if !isRunning { throw TestFailure("systemd-socket-activate exited: \(stderr())") }
            if lstat(socket, &st) == 0 && stderr().contains("Listening on") { return }
            usleep(5_000)
        }
        throw TestFailure("systemd-socket-activate did not listen on \(socket) within \(timeout) s")
    }

    /// Connects (retrying while the socket is not yet listening) and reads the hello.
    func connect(timeout: Double = 10) throws -> RawClient {
        let deadline = ActivatedDaemon.now() + timeout
        while true {
            do { return try RawClient(path: socket) } catch {
                if ActivatedDaemon.now() > deadline || !isRunning { throw error }
                usleep(10_000)
            }
        }
    }

    /// The daemon's main (loop) thread as the scheduler saw it: CPU time and time spent
    /// runnable but waiting for a CPU (/proc/PID/schedstat, seconds), and its state letter.
    func scheduling() -> (cpu: Double, waited: Double, state: String) {
        let sched = ((try? String(contentsOfFile: "/proc/\(pid)/task/\(pid)/schedstat", encoding: .utf8)) ?? "").split(separator: " ")
        let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
        let state = stat.lastIndex(of: ")").map { String(stat[stat.index($0, offsetBy: 2)]) } ?? "?"
        guard sched.count >= 2, let cpu = Double(sched[0]), let wait = Double(sched[1]) else { return (0, 0, state) }
        return (cpu / 1e9, wait / 1e9, state)
    }

    func comm() -> String {
        ((try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8)) ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
    }

    func exe() -> String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/exe")) ?? ""
    }

    /// Processes whose parent is `pid`.
    static func children(of pid: pid_t) -> [pid_t] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { Int32($0) }.filter { p in
            guard let stat = try? String(contentsOfFile: "/proc/\(p)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { return false }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            return fields.count > 1 && Int32(fields[1]) == pid
        }
    }

    func stderr() -> String {
        (try? String(contentsOfFile: stderrFile, encoding: .utf8)) ?? ""
    }

    /// The exit status (128+N for signal N), or nil if it did not exit within `timeout` (then it is killed).
    func waitForExit(timeout: Double) -> Int32? {
        let deadline = ActivatedDaemon.now() + timeout
        while isRunning && ActivatedDaemon.now() < deadline { usleep(5_000) }
        if isRunning {
            kill(pid, SIGKILL)
            var status: Int32 = 0
            waitpid(pid, &status, 0)
            exitStatus = -1
            return nil
        }
        return exitStatus
    }

    /// SIGTERM and the exit status (nil: did not exit within 10 s).
    func stop() -> Int32? {
        guard isRunning else { return exitStatus }
        kill(pid, SIGTERM)
        return waitForExit(timeout: 10)
    }

    func cleanUp() {
        if isRunning { _ = waitForExit(timeout: 0) }
        try? FileManager.default.removeItem(atPath: dir)
    }
}
