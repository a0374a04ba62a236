import Glibc
import Synchronization
import TabBarSystem

/// A program started with `posix_spawn` for a test: no descriptor of the test process but
/// the three standard ones reaches it, and its exit is read with `waitpid`.
///
/// Foundation's `Process` on Linux learns of a child's exit through a socket the child
/// inherits and a run loop; a descriptor leaked into another child, or a missed wake-up,
/// leaves `waitUntilExit` waiting for a process that has long exited (seen here: a suite
/// stuck for minutes on a defunct `tabbarctl`). `waitpid` cannot miss it.
package final class ChildProcess: Sendable {
    package let processIdentifier: pid_t
    private let exit = Mutex<Int32?>(nil)

    /// Starts `executable` with `arguments` (argv[0] is the executable). `environment` nil
    /// keeps this process's. `stdin`/`stdout`/`stderr`: descriptors to give the child (nil:
    /// stdin from /dev/null, stdout and stderr this process's).
    package init(_ executable: String, _ arguments: [String], environment: [String: String]? = nil,
                 stdout: Int32? = nil, stderr: Int32? = nil) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        if let stdout { posix_spawn_file_actions_adddup2(&actions, stdout, 1) }
        if let stderr { posix_spawn_file_actions_adddup2(&actions, stderr, 2) }
        closeInheritedDescriptors(&actions)
        let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for p in argv { free(p) } }
        var envp: [UnsafeMutablePointer<CChar>?] = []
        if let environment { envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil] }
        defer { for p in envp { free(p) } }
        var pid: pid_t = 0
        let r = environment == nil
            ? posix_spawn(&pid, executable, &actions, nil, argv, environ)
            : envp.withUnsafeMutableBufferPointer { posix_spawn(&pid, executable, &actions, nil, argv, $0.baseAddress) }
        guard r == 0 else { throw HarnessError("cannot start \(executable): \(String(cString: strerror(r)))") }
        processIdentifier = pid
    }

    /// Whether it still runs (reaps it once it has exited).
    package var isRunning: Bool { reap(blocking: false) == nil }

    /// Waits for it to exit.
    package func waitUntilExit() { _ = reap(blocking: true) }

    /// Its exit status, or the signal that ended it (as Foundation's `Process` says it); waits.
    package var terminationStatus: Int32 { reap(blocking: true) ?? -1 }

    private func reap(blocking: Bool) -> Int32? {
        exit.withLock { known -> Int32? in
            if let known { return known }
            var status: Int32 = 0
            let r = try? Sys.waitpid(processIdentifier, &status, blocking ? 0 : WNOHANG)
            guard r == processIdentifier else { return nil }
            let code = status & 0x7f == 0 ? (status >> 8) & 0xff : status & 0x7f
            known = code
            return code
        }
    }
}

/// Runs `executable` to its end: its exit status, stdout and stderr (read together, so a
/// child that fills one pipe never blocks).
package func runCapturing(_ executable: String, _ arguments: [String],
                          environment: [String: String]? = nil) throws -> (status: Int32, stdout: String, stderr: String) {
    let out = try closeOnExecPipe()
    let err: [Int32]
    do { err = try closeOnExecPipe() } catch {
        try? Sys.close(out[0]); try? Sys.close(out[1])
        throw error
    }
    let child: ChildProcess
    do {
        child = try ChildProcess(executable, arguments, environment: environment, stdout: out[1], stderr: err[1])
    } catch {
        for fd in out + err { try? Sys.close(fd) }
        throw error
    }
    try? Sys.close(out[1]); try? Sys.close(err[1])  // (the child's ends: it has its own copies)
    var bytes: [[UInt8]] = [[], []]
    var fds = [pollfd(fd: out[0], events: Int16(POLLIN), revents: 0), pollfd(fd: err[0], events: Int16(POLLIN), revents: 0)]
    var chunk = [UInt8](repeating: 0, count: 65536)
    while fds.contains(where: { $0.fd >= 0 }) {
        guard (try? Sys.poll(&fds, timeoutMs: -1)) != nil else { break }
        for i in 0..<2 where fds[i].fd >= 0 && fds[i].revents != 0 {
            // (Blocking pipes: a read either has bytes, or the end, or fails.)
            if case .done(let n)? = try? Sys.read(fds[i].fd, into: &chunk), n > 0 {
                bytes[i] += chunk[0..<n]
            } else {
                try? Sys.close(fds[i].fd)
                fds[i].fd = -1
            }
        }
    }
    for f in fds where f.fd >= 0 { try? Sys.close(f.fd) }
    return (child.terminationStatus, String(decoding: bytes[0], as: UTF8.self), String(decoding: bytes[1], as: UTF8.self))
}

/// A pipe ([read, write]) whose ends no exec'd program inherits unless given to it.
package func closeOnExecPipe() throws -> [Int32] {
    var p: [Int32] = [0, 0]
    guard pipe(&p) == 0 else { throw HarnessError("pipe: \(String(cString: strerror(errno)))") }
    do throws(Errno) {
        for fd in p { try Sys.setCloseOnExec(fd) }
    } catch {
        for fd in p { try? Sys.close(fd) }
        throw HarnessError("pipe: cannot make it close-on-exec: \(error)")
    }
    return p
}

/// Adds to `actions` the closing of every descriptor from 3 up in the child, so that no
/// socket or pipe of this process (another child's, a connection) outlives it there.
package func closeInheritedDescriptors(_ actions: inout posix_spawn_file_actions_t) {
    typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    if let sym = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") {  // glibc 2.34+
        _ = unsafeBitCast(sym, to: CloseFrom.self)(&actions, 3)
        return
    }
    guard let d = opendir("/proc/self/fd") else { return }
    defer { closedir(d) }
    let own = dirfd(d)
    while let e = readdir(d) {
        let name = withUnsafePointer(to: e.pointee.d_name) { String(cString: UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self)) }
        if let fd = Int32(name), fd > 2, fd != own { posix_spawn_file_actions_addclose(&actions, fd) }
    }
}
