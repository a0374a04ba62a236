import Glibc
import TabBarCore
@_spi(Harness) import TabBarClient
import Synchronization
import TabBarSystem

/// A 16-bit PCM WAV file, as libsndfile writes the daemon's capture (and as `Sounds/` holds).
public struct WAVFile: Sendable {
    /// Frames per second.
    public var rate: Int
    /// Samples per frame.
    public var channels: Int
    /// Interleaved samples.
    public var samples: [Int16]

    /// Reads `path`; throws `HarnessError` for anything but 16-bit PCM WAV.
    public static func read(_ path: String) throws -> WAVFile {
        let b = try readAll(path)
        func u32(_ o: Int) -> Int { Int(b[o]) | Int(b[o + 1]) << 8 | Int(b[o + 2]) << 16 | Int(b[o + 3]) << 24 }
        func u16(_ o: Int) -> Int { Int(b[o]) | Int(b[o + 1]) << 8 }
        guard b.count >= 12, Array(b[0..<4]) == Array("RIFF".utf8), Array(b[8..<12]) == Array("WAVE".utf8) else {
            throw HarnessError("\(path) is no WAV file")
        }
        var off = 12
        var rate = 0, channels = 0, bits = 0
        while off + 8 <= b.count {
            let id = String(decoding: b[off..<off + 4], as: UTF8.self)
            let size = u32(off + 4)
            let body = off + 8
            if id == "fmt ", body + 16 <= b.count {
                channels = u16(body + 2)
                rate = u32(body + 4)
                bits = u16(body + 14)
            } else if id == "data" {
                guard bits == 16, channels > 0 else { throw HarnessError("\(path): not 16-bit PCM (bits \(bits), channels \(channels))") }
                let end = min(body + size, b.count)
                var s = [Int16](repeating: 0, count: (end - body) / 2)
                for i in 0..<s.count { s[i] = Int16(bitPattern: UInt16(u16(body + 2 * i))) }
                return WAVFile(rate: rate, channels: channels, samples: s)
            }
            off = body + size + (size & 1)
        }
        throw HarnessError("\(path) has no data chunk")
    }
}

func readAll(_ path: String) throws -> [UInt8] {
    do throws(Errno) {
        let fd = try Sys.open(path, O_RDONLY | O_CLOEXEC)
        defer { try? Sys.close(fd) }  // (read-only: nothing to lose)
        return try Sys.readAll(fd, limit: .max)
    } catch {
        throw HarnessError("cannot read \(path): \(error)")
    }
}

/// Milliseconds on the one monotonic clock (`MonotonicClock`).
func monotonicMs() -> Int64 { MonotonicClock.milliseconds() }

extension HeadlessDaemon {
    static func env(_ name: String) -> String? {
        guard let v = getenv(name) else { return nil }
        let s = String(cString: v)
        return s.isEmpty ? nil : s
    }

    static func tempRoot() -> String { env("TMPDIR") ?? "/tmp" }

    /// The tabbard package's root, from where this file was compiled (a path dependency, or
    /// SwiftPM's checkout of it): its `Sounds/` and, once built, its `.build/*/tabbard`.
    static let packageRoot: String = {
        var path = #filePath  // …/Sources/TabBarTesting/Support.swift
        for _ in 0..<3 { if let slash = path.lastIndex(of: "/") { path = String(path[..<slash]) } }
        return path
    }()

    /// Where `shippedSounds` looks, in order.
    static var soundPlaces: [String] {
        [packageRoot + "/Sounds", "/usr/share/tabbard/sounds", "/usr/local/share/tabbard/sounds"]
    }

    /// The sounds tabbard ships: the package's `Sounds/`, else the installed
    /// `/usr/share/tabbard/sounds` (or `/usr/local/share/tabbard/sounds`); nil if none is there.
    public static var shippedSounds: String? {
        soundPlaces.first { access($0 + "/click.wav", R_OK) == 0 }
    }

    /// The `tabbard` executable a `HeadlessDaemon` starts: `$TABBARD_BIN_DIR/tabbard`, else
    /// `tabbard` next to the running test (a dependent package that built the `tabbard`
    /// product: `swift build --product tabbard`), else in the tabbard package's own
    /// `.build/debug` or `.build/release`, else on `PATH`. Throws one line saying what to do
    /// when none is there.
    public static func locateDaemon() throws -> String {
        if let dir = env("TABBARD_BIN_DIR") {
            guard access(dir + "/tabbard", X_OK) == 0 else {
                throw HarnessError("TABBARD_BIN_DIR is \(dir) but there is no executable \(dir)/tabbard: build it (swift build --product tabbard) or unset TABBARD_BIN_DIR")
            }
            return dir + "/tabbard"
        }
        var places: [String] = []
        var buf = [CChar](repeating: 0, count: 4096)
        let n = readlink("/proc/self/exe", &buf, buf.count - 1)
        if n > 0 {
            var exe = String(decoding: buf[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            // The test bundle may sit in a directory (.xctest/…) inside the bin dir: look up a few levels.
            for _ in 0..<3 {
                guard let slash = exe.lastIndex(of: "/") else { break }
                exe = String(exe[..<slash])
                places.append(exe)
            }
        }
        places += [packageRoot + "/.build/debug", packageRoot + "/.build/release"]
        if let path = env("PATH") { places += path.split(separator: ":").map(String.init) }
        for dir in places where access(dir + "/tabbard", X_OK) == 0 { return dir + "/tabbard" }
        throw HarnessError("cannot find the tabbard executable (not beside this test, in \(packageRoot)/.build or on PATH): run `swift build --product tabbard` in your package, or set TABBARD_BIN_DIR to the directory that holds tabbard")
    }

    /// posix_spawnp with stdin from /dev/null and stdout+stderr to `log`.
    static func spawn(_ exe: String, _ args: [String], log: String) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, log, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 2, 1)
        closeInheritedDescriptors(&actions)
        let argv: [UnsafeMutablePointer<CChar>?] = args.map { strdup($0) } + [nil]
        defer { for p in argv { free(p) } }
        var pid: pid_t = 0
        let r = posix_spawnp(&pid, exe, &actions, nil, argv, environ)
        guard r == 0 else {
            throw HarnessError("cannot start \(exe): \(String(cString: strerror(r))) (pass binary:, or set TABBARD_BIN_DIR to the directory that holds tabbard)")
        }
        return pid
    }

    /// Connects once the daemon listens; fails with its log if it exits first.
    static func connect(_ path: String, pid: pid_t, timeoutMs: Int, log: String) throws -> TabBar {
        let deadline = monotonicMs() + Int64(timeoutMs)
        while true {
            var status: Int32 = 0
            if (try? Sys.waitpid(pid, &status, WNOHANG)) == pid {
                let text = (try? readAll(log)).map { String(decoding: $0, as: UTF8.self) } ?? ""
                throw HarnessError("tabbard exited before it listened: \(text)")
            }
            if access(path, F_OK) == 0,
               let c = try? TabBar.connectNow(path: path, options: .init(timeout: .milliseconds(timeoutMs))) { return c }
            if monotonicMs() > deadline { throw HarnessError("tabbard did not listen on \(path) within \(timeoutMs) ms") }
            usleep(5_000)
        }
    }

    /// Removes `dir` and everything in it (the daemon's files: no subdirectories beyond one level).
    static func removeTree(_ dir: String) {
        guard let d = opendir(dir) else { return }
        while let e = readdir(d) {
            let name = withUnsafePointer(to: e.pointee.d_name) { String(cString: UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self)) }
            if name == "." || name == ".." { continue }
            let p = dir + "/" + name
            do throws(Errno) { try Sys.unlink(p) } catch { if error.code == EISDIR { removeTree(p) } }
        }
        closedir(d)
        rmdir(dir)
    }
}

extension HeadlessDaemon {
    /// Runs `body` as a task on `bar`'s own I/O thread (`TabBar.executor`) and waits for it
    /// here: the harness is synchronous, and may be called from any thread, one of the
    /// cooperative pool's included, since what it waits for runs on no pool thread.
    static func blocking<T: Sendable>(_ bar: TabBar, _ body: @escaping @Sendable (TabBar) async throws -> T) throws -> T {
        let r = Rendezvous<T>()
        sem_init(&r.done, 0, 0)
        defer { sem_destroy(&r.done) }
        Task.detached(executorPreference: bar.executor) {
            do { r.result = .success(try await body(bar)) } catch { r.result = .failure(error) }
            sem_post(&r.done)
        }
        while sem_wait(&r.done) != 0 {}
        return try r.result!.get()
    }
}

/// A result handed from the task that makes it to the thread that waits for it.
// Sendable because `result` is written once, by the task, before its `sem_post`, and read by the
// waiter only after its `sem_wait` returned: the semaphore orders the two.
private final class Rendezvous<T>: @unchecked Sendable {
    var done = sem_t()
    var result: Result<T, any Error>?
}

/// The lines the harness's connection received (its `messages()`), handed over from the
/// connection's thread to the test's: a queue, and a descriptor that wakes the waiter.
final class Inbox: Sendable {
    private struct Queue {
        var lines: [JSON] = []
        /// Why the lines ended (the connection was closed or lost).
        var end: (any Error)?
    }
    private let queue = Mutex(Queue())
    private let wakeup = Wakeup()

    /// Takes `bar`'s lines from now on, on its own thread, until they end.
    func follow(_ bar: TabBar) {
        let lines = bar.messages()
        Task.detached(executorPreference: bar.executor) { [self] in
            do {
                for try await m in lines { push(m.json) }
                finish(ClientError.closed)
            } catch {
                finish(error)
            }
        }
    }

    private func push(_ m: JSON) {
        queue.withLock { $0.lines.append(m) }
        wakeup.wake()
    }

    private func finish(_ error: any Error) {
        queue.withLock { $0.end = error }
        wakeup.wake()
    }

    /// The lines received so far, oldest first (none left after).
    func take() -> [JSON] {
        queue.withLock { q in
            let l = q.lines
            q.lines = []
            return l
        }
    }

    /// Waits up to `ms` for a line; throws why they ended once they have (and none is left).
    func wait(ms: Int) throws {
        let deadline = monotonicMs() + Int64(ms)
        while true {
            let (some, end) = queue.withLock { q in (!q.lines.isEmpty, q.end) }
            if some { return }
            if let end { throw end }
            let left = deadline - monotonicMs()
            if left <= 0 { return }
            var fds = [pollfd(fd: wakeup.fd, events: Int16(POLLIN), revents: 0)]
            if (try? Sys.poll(&fds, timeoutMs: Int32(left))) ?? 0 > 0 { wakeup.drain() }
        }
    }
}
