import Foundation
import Glibc
import Synchronization
import Testing
import TabBarCore
import TabBarTesting

/// Where the built products are (`make test` sets TABBARD_BIN_DIR).
enum Paths {
    static let packageRoot: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url.path
    }()
    static let binDir: String = ProcessInfo.processInfo.environment["TABBARD_BIN_DIR"] ?? packageRoot + "/.build/debug"
    static let tabbard = binDir + "/tabbard"
    static let tabbarctl = binDir + "/tabbarctl"
    static let sounds = packageRoot + "/Sounds"
}

struct TestFailure: Error, CustomStringConvertible {
    var description: String
    init(_ d: String) { description = d }
}

/// A daemon on a private socket and state, started by the product's own test harness
/// (`TabBarTesting.HeadlessDaemon`: the null sink, the manual clock, a capture of its stream,
/// one subscribed connection of its own), with no configuration file unless the test gives one.
/// What a test's needs fit; `Daemon` below starts one with other flags, a real clock, or on a
/// directory a test keeps across restarts.
func privateDaemon(_ arguments: [String] = []) throws -> HeadlessDaemon {
    try HeadlessDaemon(binary: Paths.tabbard, sounds: Paths.sounds, arguments: ["--no-config"] + arguments)
}

/// A real `tabbard` process on a temporary socket and state file, on the real clock, with
/// any flags, environment and directory (kept across restarts).
final class Daemon {
    let dir: String
    let socket: String
    let state: String
    let process: ChildProcess
    /// stderr is read all along (a thread), so a daemon that logs a lot never blocks on a full pipe.
    private let stderrSink = StderrSink()

    init(extraArgs: [String] = [], dir existing: String? = nil, environment: [String: String] = [:]) throws {
        dir = existing ?? FileManager.default.temporaryDirectory.appendingPathComponent("tabbard-e2e-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        socket = dir + "/sock"
        state = dir + "/state.json"
        let sounds = extraArgs.contains("--sounds") ? [] : ["--sounds", Paths.sounds]
        // No config file unless the test gives one: a user's or /etc's must not change the tests.
        let config = extraArgs.contains { $0.hasPrefix("--config") } ? [] : ["--no-config"]
        let arguments = ["--socket", socket, "--state", state, "--audio", "null"] + sounds + config + extraArgs
        var env = ProcessInfo.processInfo.environment
        for (k, v) in environment { env[k] = v }
        let err = try closeOnExecPipe()
        defer { close(err[1]) }
        process = try ChildProcess(Paths.tabbard, arguments, environment: env, stderr: err[1])
        stderrSink.start(err[0])
        try waitUntilListening()
    }

    /// What the daemon has written to stderr so far.
    func stderrSoFar() -> String { stderrSink.text }

    /// Polls until a connection succeeds (bounded), or the process died.
    func waitUntilListening(timeout: Double = 10) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if !process.isRunning { throw TestFailure("tabbard exited early: \(readStderr())") }
            if let c = try? RawClient(path: socket, readHello: false) { c.close(); return }
            usleep(5_000)
        }
        throw TestFailure("tabbard did not listen within \(timeout) s")
    }

    /// SIGTERM, wait, return the exit status.
    @discardableResult
    func stop() -> Int32 {
        if process.isRunning {
            kill(process.processIdentifier, SIGTERM)
            process.waitUntilExit()
        }
        return process.terminationStatus
    }

    func kill9() {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// stderr so far; all of it once the daemon has exited.
    func readStderr() -> String {
        if !process.isRunning { stderrSink.waitForEOF() }
        return stderrSoFar()
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }
}

/// A value shared between a test's threads, behind a lock.
final class SharedValue<T: Sendable>: Sendable {
    private let value: Mutex<T>
    init(_ v: T) { value = Mutex(v) }
    func load() -> T { value.withLock { $0 } }
    func store(_ v: T) { value.withLock { $0 = v } }
    func withLock<R: Sendable>(_ body: (inout T) -> R) -> R { value.withLock { body(&$0) } }
}

/// Reads a pipe to its end on a thread of its own, keeping what came.
final class StderrSink: Sendable {
    private let bytes = Mutex<[UInt8]>([])
    private let done = DispatchSemaphore(value: 0)

    func start(_ fd: Int32) {
        Thread.detachNewThread { [self] in
            var chunk = [UInt8](repeating: 0, count: 65536)
            while true {
                let n = read(fd, &chunk, chunk.count)
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { break }
                bytes.withLock { $0.append(contentsOf: chunk[..<n]) }
            }
            done.signal()
        }
    }

    var text: String {
        String(decoding: bytes.withLock { $0 }, as: UTF8.self)
    }

    func waitForEOF() {
        done.wait()
        done.signal()
    }
}

/// A client that speaks raw lines, as an outside client written from the contract would.
final class RawClient {
    private(set) var fd: Int32
    private var buffer: [UInt8] = []
    private(set) var hello: JSON?
    private var nextID = 1

    init(path: String, readHello: Bool = true) throws {
        fd = try connectSocket(path)
        if readHello {
            guard let h = try readJSON(), h["method"] == .string("hello") else { throw TestFailure("no hello") }
            hello = h
        }
    }

    func close() {
        if fd >= 0 { Glibc.close(fd) }
        fd = -1
    }
    deinit { close() }

    func send(_ line: String) throws {
        try sendBytes(Array(line.utf8))
    }

    func sendBytes(_ bytes: [UInt8]) throws {
        var off = 0
        while off < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + off, $0.count - off, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { throw TestFailure("send failed: \(String(cString: strerror(errno)))") }
            off += n
        }
    }

    func shutdownWrite() { Glibc.shutdown(fd, Int32(SHUT_WR)) }

    /// The next line, or nil at EOF. Throws on timeout.
    func readLine(timeout: Double = 10) throws -> String? {
        try readBufferedLine(fd: fd, buffer: &buffer, timeout: timeout)
    }

    func readJSON(timeout: Double = 10) throws -> JSON? {
        guard let line = try readLine(timeout: timeout) else { return nil }
        return try JSON.parse(line)
    }

    /// Whether anything arrives within `ms` (for "nothing was sent" checks after a later reply proves ordering).
    func hasPendingData() -> Bool {
        if !buffer.isEmpty { return true }
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&p, 1, 0) > 0
    }

    /// Sends a request and returns its reply, collecting events that came first.
    func call(_ method: String, _ params: String = "{}", events: inout [JSON]) throws -> JSON {
        let id = nextID
        nextID += 1
        try send(#"{"jsonrpc":"2.0","id":\#(id),"method":"\#(method)","params":\#(params)}"# + "\n")
        while true {
            guard let m = try readJSON() else { throw TestFailure("connection closed before the reply to \(method)") }
            if m["id"] == .int(id) { return m }
            events.append(m)
        }
    }

    func call(_ method: String, _ params: String = "{}") throws -> JSON {
        var ignored: [JSON] = []
        return try call(method, params, events: &ignored)
    }
}

/// A program with its stdout and stderr on pipes (read as lines with `LineReader`, or to the end).
final class Piped {
    let process: ChildProcess
    let stdout: FileHandle
    let stderr: FileHandle

    init(_ executable: String, _ arguments: [String], environment: [String: String]? = nil) throws {
        let o = try closeOnExecPipe(), e = try closeOnExecPipe()
        defer { close(o[1]); close(e[1]) }
        process = try ChildProcess(executable, arguments, environment: environment, stdout: o[1], stderr: e[1])
        stdout = FileHandle(fileDescriptor: o[0], closeOnDealloc: true)
        stderr = FileHandle(fileDescriptor: e[0], closeOnDealloc: true)
    }
}

/// Runs tabbarctl and returns (status, stdout, stderr).
func tabbarctl(_ args: [String], socket: String) throws -> (Int32, String, String) {
    let r = try runCapturing(Paths.tabbarctl, ["--socket", socket] + args)
    return (r.status, r.stdout, r.stderr)
}

/// Reads one `\n`-terminated line from `fd` through `buffer`, waiting at most
/// `timeout` seconds. Returns nil at EOF; throws on timeout or error.
func readBufferedLine(fd: Int32, buffer: inout [UInt8], timeout: Double) throws -> String? {
    let deadline = Date().addingTimeInterval(timeout)
    while true {
        if let nl = buffer.firstIndex(of: 0x0A) {
            let line = String(decoding: buffer[..<nl], as: UTF8.self)
            buffer.removeSubrange(...nl)
            return line
        }
        // What already arrived counts even when the deadline has passed meanwhile (a test
        // thread that got no CPU for a while): the socket is looked at once more first.
        let left = deadline.timeIntervalSinceNow
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        if poll(&p, 1, left <= 0 ? 0 : Int32(left * 1000) + 1) == 0 {
            if left <= 0 { throw TestFailure("timed out waiting for a line") }
            continue
        }
        var chunk = [UInt8](repeating: 0, count: 65536)
        let n = read(fd, &chunk, chunk.count)
        if n == 0 { return nil }
        if n < 0 { throw TestFailure("read failed: \(String(cString: strerror(errno)))") }
        buffer.append(contentsOf: chunk[..<n])
    }
}
