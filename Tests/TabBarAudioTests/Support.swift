import Glibc
import Synchronization
@testable import TabBarAudio

/// A fresh temporary directory, removed by `cleanup()`.
struct TempDir {
    let path: String
    init() {
        var template = Array("/tmp/tabbard-audio-XXXXXX".utf8CString)
        let p = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        path = String(cString: p!)
    }
    func file(_ name: String) -> String { path + "/" + name }
    func cleanup() { _ = run("/bin/rm", ["-rf", path]) }
}

/// Runs a program, returns its exit status.
@discardableResult
func run(_ program: String, _ args: [String]) -> Int32 {
    var pid = pid_t()
    let argv: [UnsafeMutablePointer<CChar>?] = ([program] + args).map { strdup($0) } + [nil]
    defer { for a in argv { free(a) } }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
    defer { posix_spawn_file_actions_destroy(&actions) }
    guard posix_spawn(&pid, program, &actions, nil, argv, environ) == 0 else { return -1 }
    var status: Int32 = 0
    waitpid(pid, &status, 0)
    return (status >> 8) & 0xff
}

/// Makes a WAV with sox: `synth` arguments after the output name.
func sox(_ out: String, rate: Int = 48000, channels: Int = 1, _ synth: [String]) {
    let r = run("/usr/bin/sox", ["-n", "-r", "\(rate)", "-c", "\(channels)", "-b", "16", "-e", "signed-integer", out, "synth"] + synth)
    precondition(r == 0, "sox failed for \(out)")
}

func writeBytes(_ path: String, _ bytes: [UInt8]) {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    precondition(fd >= 0)
    _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    close(fd)
}

func readBytes(_ path: String) -> [UInt8] {
    let fd = open(path, O_RDONLY)
    guard fd >= 0 else { return [] }
    defer { close(fd) }
    var out: [UInt8] = []
    var buf = [UInt8](repeating: 0, count: 65536)
    while true {
        let n = buf.withUnsafeMutableBytes { read(fd, $0.baseAddress, 65536) }
        if n <= 0 { break }
        out.append(contentsOf: buf[0..<n])
    }
    return out
}

/// Little-endian S16 samples of a raw capture.
func s16(_ bytes: [UInt8]) -> [Int16] {
    stride(from: 0, to: bytes.count - 1, by: 2).map { Int16(bitPattern: UInt16(bytes[$0]) | UInt16(bytes[$0 + 1]) << 8) }
}

/// Collects log lines.
final class LogCollector: Sendable {
    private let lines = Mutex<[(LogLevel, String)]>([])
    var log: AudioLog { { [self] level, text in lines.withLock { $0.append((level, text)) } } }
    var all: [(LogLevel, String)] { lines.withLock { $0 } }
    func contains(_ level: LogLevel, _ part: String) -> Bool {
        all.contains { $0.0 == level && $0.1.contains(part) }
    }
}

/// Waits until `fd` is readable (false on timeout) — the engine's report eventfd.
func waitReadable(_ fd: Int32, seconds: Double = 5) -> Bool {
    var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
    return poll(&p, 1, Int32(seconds * 1000)) > 0
}

/// Drains reports until `count` arrived (or the deadline passes).
func collectReports(_ engine: AudioEngine, count: Int, seconds: Double = 5) -> [VoiceReport] {
    var out: [VoiceReport] = []
    let deadline = monotonicNanos() + UInt64(seconds * 1e9)
    while out.count < count && monotonicNanos() < deadline {
        if waitReadable(engine.reportFD, seconds: 0.2) { engine.drainReports { out.append($0) } }
    }
    return out
}

/// The first report of each of `voices` (in the order given), waiting up to `seconds`.
/// Reports of other voices — such as an underrun reported for an earlier click when the
/// machine is loaded, which is true and expected — are not these voices' outcome and are
/// left out; a voice with no report within the time is missing from the result.
func firstReports(_ engine: AudioEngine, for voices: [UInt32], seconds: Double = 5) -> [VoiceReport] {
    var first: [UInt32: VoiceReport] = [:]
    let deadline = monotonicNanos() + UInt64(seconds * 1e9)
    while first.count < voices.count && monotonicNanos() < deadline {
        if waitReadable(engine.reportFD, seconds: 0.2) {
            engine.drainReports { r in
                if voices.contains(r.voice) && first[r.voice] == nil { first[r.voice] = r }
            }
        }
    }
    return voices.compactMap { first[$0] }
}

/// The voice a play was given (nil when it was refused).
func voice(_ result: AudioEngine.PlayResult) -> UInt32? {
    if case .started(let v) = result { return v }
    return nil
}

/// Waits for a condition that the engine reaches on its own (bounded; the assertion is on the condition).
func eventually(seconds: Double = 5, _ cond: () -> Bool) -> Bool {
    let deadline = monotonicNanos() + UInt64(seconds * 1e9)
    while monotonicNanos() < deadline {
        if cond() { return true }
        usleep(1000)
    }
    return cond()
}

/// A thread's voluntary context switches (from /proc), or nil.
func voluntarySwitches(tid: Int32) -> Int? {
    let status = String(decoding: readBytes("/proc/self/task/\(tid)/status"), as: UTF8.self)
    for line in status.split(separator: "\n") where line.hasPrefix("voluntary_ctxt_switches:") {
        return Int(line.split(separator: ":")[1].trimmingCharacters())
    }
    return nil
}

/// Whether thread `tid` is blocked in `ppoll` (the audio thread's wait while idle): the first
/// field of /proc/self/task/TID/syscall, which the kernel fills only while the thread sleeps
/// in a system call.
func blockedInPoll(tid: Int32) -> Bool {
    let text = String(decoding: readBytes("/proc/self/task/\(tid)/syscall"), as: UTF8.self)
    guard let n = text.split(separator: " ").first.flatMap({ Int($0) }) else { return false }
    #if arch(x86_64)
    return n == 271   // __NR_ppoll
    #else
    return n == 73    // __NR_ppoll (aarch64)
    #endif
}

/// Runs `body` on a thread of its own and returns what it returned, once that thread ended.
func onThread<T: Sendable>(_ body: sending @escaping () -> T) -> T {
    let result = Locked<T?>(nil)
    let thread = try! spawnThread { let v = body(); result.set(v) }.get()
    pthread_join(thread, nil)
    return result.value!
}

/// A value several threads read and write, behind a lock.
final class Locked<T: Sendable>: Sendable {
    private let m: Mutex<T>
    init(_ value: T) { m = Mutex(value) }
    var value: T { m.withLock { $0 } }
    func set(_ v: T) { m.withLock { $0 = v } }
    func update<R: Sendable>(_ body: (inout T) -> R) -> R { m.withLock { body(&$0) } }
}
