@preconcurrency import Glibc
import Testing
@testable import TabBarServer

/// The systemd glue in-process: socket activation (`sd_listen_fds`, socket validation)
/// and the STATUS= rate limit.
///
/// Clearing LISTEN_* is checked in exit tests (a child process each, so setting the
/// variables cannot disturb other tests). Those use cases where `sd_listen_fds` leaves fd 3
/// alone: in the test runner fd 3 belongs to the runtime (an epoll instance), so putting
/// a socket there would race with it. The inherited-socket path itself (fd 3, LISTEN_PID
/// ours) runs for real under `systemd-socket-activate` in EndToEndTests/SystemdTests.swift.
@Suite struct SystemdGlueTests {
    // MARK: Socket activation

    @Test func anotherProcesssLISTEN_PIDIsIgnoredAndTheVariablesAreCleared() async {
        await #expect(processExitsWith: .success) {
            exit(SystemdGlueTests.activation(pid: getppid(), fds: "1"))
        }
    }

    @Test func aBadLISTEN_FDSIsAnErrorAndTheVariablesAreCleared() async {
        await #expect(processExitsWith: .success) {
            exit(SystemdGlueTests.activation(pid: getpid(), fds: "0", refused: true))
        }
    }

    @Test func withoutLISTEN_FDSThereIsNoInheritedSocket() throws {
        // Nothing in this process sets LISTEN_*; sd_listen_fds must say "none" and not touch fd 3.
        guard getenv("LISTEN_FDS") == nil else { return }
        #expect(try Systemd.inheritedListener() == nil)
    }

    /// Sets LISTEN_PID/LISTEN_FDS/LISTEN_FDNAMES, calls `Systemd.inheritedListener()`, which must
    /// find no socket (or, `refused`, throw) and clear all three. Returns 0, or a code naming what went wrong.
    static func activation(pid: pid_t, fds: String, refused: Bool = false) -> Int32 {
        setenv("LISTEN_PID", String(pid), 1)
        setenv("LISTEN_FDS", fds, 1)
        setenv("LISTEN_FDNAMES", "tabbard.socket", 1)
        let before = fd3()
        do {
            if try Systemd.inheritedListener() != nil { return 20 }
            if refused { return 21 }
        } catch {
            if !refused { return 24 }
            if !error.message.contains("LISTEN_FDS=\(fds) is not valid") { return 25 }
        }
        // Not ours: left as it was. fd 3 belongs to the test runtime, whose threads may close
        // and reopen it meanwhile (the exit test's child runs them too): only a change of the
        // flags of the same open file is a change made here.
        let after = fd3()
        if after.flags != before.flags && after.file == before.file { return 22 }
        for name in ["LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES"] where getenv(name) != nil { return 23 }
        return 0
    }

    /// fd 3's descriptor flags and the open file behind it (device and inode; nil: not open).
    static func fd3() -> (flags: Int32, file: [UInt64]?) {
        var st = stat()
        let file: [UInt64]? = fstat(3, &st) == 0 ? [UInt64(st.st_dev), UInt64(st.st_ino)] : nil
        return (fcntl(3, F_GETFD), file)
    }

    @Test func aListeningUnixStreamSocketIsAdopted() throws {
        let (dir, fd) = try SystemdGlueTests.unixSocket(SOCK_STREAM, listening: true)
        defer { close(fd); unlink(dir + "/sock"); rmdir(dir) }
        try Systemd.adoptListener(fd)
        #expect(fcntl(fd, F_GETFL) & O_NONBLOCK != 0)
        #expect(fcntl(fd, F_GETFD) & FD_CLOEXEC != 0)
    }

    @Test(arguments: [(SOCK_DGRAM, false), (SOCK_STREAM, false), (SOCK_SEQPACKET, true)])
    func otherSocketsAreRefused(type: __socket_type, listening: Bool) throws {
        let (dir, fd) = try SystemdGlueTests.unixSocket(type, listening: listening)
        defer { close(fd); unlink(dir + "/sock"); rmdir(dir) }
        #expect(throws: ServerError.self) { try Systemd.adoptListener(fd) }
        do { try Systemd.adoptListener(fd) } catch {
            #expect(error.message.contains("not a listening AF_UNIX stream socket"))
        }
    }

    @Test func aListeningTCPSocketIsRefused() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(fd >= 0)
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = UInt32(0x7f00_0001).bigEndian
        let bound = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        try #require(bound == 0 && listen(fd, 4) == 0)
        #expect(throws: ServerError.self) { try Systemd.adoptListener(fd) }
    }

    static func unixSocket(_ type: __socket_type, listening: Bool) throws -> (String, Int32) {
        let dir = String(cString: mkdtemp(strdup("/tmp/tabbard-glue-XXXXXX"))!)
        let fd = socket(AF_UNIX, Int32(type.rawValue), 0)
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &addr.sun_path) { raw in
            for (k, b) in (dir + "/sock").utf8.enumerated() { raw[k] = b }
        }
        let r = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard fd >= 0, r == 0, !listening || listen(fd, 4) == 0 else { throw ServerError("socket setup: \(Errno())") }
        return (dir, fd)
    }

    @Test func boundPathNamesTheSocketFile() throws {
        let dir = String(cString: mkdtemp(strdup("/tmp/tabbard-glue-XXXXXX"))!)
        defer { rmdir(dir) }
        let fd = try Listener.bind(path: dir + "/sock")
        defer { close(fd); unlink(dir + "/sock") }
        #expect(Systemd.boundPath(fd) == dir + "/sock")
    }

    @Test func reloadingCarriesMONOTONIC_USEC() {
        let m = Systemd.reloadingMessage(status: "Reloading sounds", nowNs: 12_345_678_901)
        #expect(m.split(separator: "\n") == ["RELOADING=1", "MONOTONIC_USEC=12345678", "STATUS=Reloading sounds"])
    }

    // MARK: STATUS= rate limit

    typealias Key = StatusNotifier.Key
    let idle = Key(clients: 0, subscribed: 0, sounds: 6, audioOK: true)
    let one = Key(clients: 1, subscribed: 0, sounds: 6, audioOK: true)
    let s: UInt64 = 1_000_000_000

    @Test func statusIsSentWhenSomethingChangedAtMostOncePerInterval() {
        var n = StatusNotifier(enabled: true, minIntervalNs: s, pollIntervalNs: 5 * s)
        n.sent(idle, nowNs: 10 * s)                        // READY=1 with STATUS=
        #expect(!n.due(idle, nowNs: 10 * s + 1))           // nothing changed
        #expect(!n.due(one, nowNs: 10 * s + s / 2))        // changed, but too soon
        #expect(n.deadline(one, nowNs: 10 * s + s / 2) == 11 * s)  // so the loop comes back then
        #expect(n.due(one, nowNs: 11 * s))
        n.sent(one, nowNs: 11 * s)
        #expect(!n.due(one, nowNs: 30 * s))                // same facts: never again
        // Unchanged: the loop still wakes every poll interval to look at the audio device.
        n.polled(nowNs: 12 * s)
        #expect(n.deadline(one, nowNs: 12 * s) == 17 * s)
        let broken = Key(clients: 1, subscribed: 0, sounds: 6, audioOK: false)
        #expect(n.due(broken, nowNs: 17 * s))
    }

    @Test func withoutANotifySocketNothingIsDueOrScheduled() {
        var n = StatusNotifier(enabled: false)
        n.sent(idle, nowNs: 0)
        #expect(!n.due(one, nowNs: 100 * s))
        #expect(n.deadline(one, nowNs: 100 * s) == nil)
    }
}
