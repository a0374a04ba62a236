@preconcurrency import Glibc
import Synchronization
import Testing
import TabBarCore
import TabBarSystem
import CTabBarSystem  // (epoll)

/// TabBarSystem, the one wrapper for system calls: an interrupted call is retried, a
/// non-blocking descriptor's "would block" is a value, failures are typed `Errno`s, and the
/// clock is CLOCK_MONOTONIC.
@Suite(.serialized) struct SystemTests {
    // MARK: EINTR

    /// Signals delivered to the SIGUSR1 handler below.
    static let handled = Atomic<Int>(0)
    /// How often the read below was started.
    static let attempts = Atomic<Int>(0)
    /// Tells the helper thread to stop signalling.
    static let stop = Atomic<Bool>(false)

    @Test func aReadInterruptedByASignalIsRetriedAndGetsTheData() throws {
        var p: [Int32] = [0, 0]
        try #require(pipe(&p) == 0)
        defer { close(p[0]); close(p[1]) }
        // A handler without SA_RESTART: the kernel ends a blocked read with EINTR.
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { _ in _ = SystemTests.handled.add(1, ordering: .relaxed) }
        sigemptyset(&action.sa_mask)
        action.sa_flags = 0
        var old = sigaction()
        try #require(sigaction(SIGUSR1, &action, &old) == 0)
        defer { sigaction(SIGUSR1, &old, nil) }
        SystemTests.handled.store(0, ordering: .relaxed)
        SystemTests.attempts.store(0, ordering: .relaxed)
        SystemTests.stop.store(false, ordering: .relaxed)
        // The test runner's threads may block signals: let SIGUSR1 reach this one.
        var unblock = sigset_t(), oldMask = sigset_t()
        sigemptyset(&unblock)
        sigaddset(&unblock, SIGUSR1)
        try #require(pthread_sigmask(SIG_UNBLOCK, &unblock, &oldMask) == 0)
        defer { pthread_sigmask(SIG_SETMASK, &oldMask, nil) }

        // The helper signals this thread until the read was interrupted (a second attempt
        // began), then writes the byte the read waits for. Without the retry, the first
        // attempt's EINTR would throw.
        let helper = try Interrupter.start(target: pthread_self(), writeFD: p[1])
        var buffer = [UInt8](repeating: 0, count: 16)
        let outcome = Result { () throws(Errno) -> Int in
            try buffer.withUnsafeMutableBufferPointer { (b) throws(Errno) in
                try Sys.call { () -> Int in
                    SystemTests.attempts.add(1, ordering: .relaxed)
                    return read(p[0], b.baseAddress, b.count)
                }
            }
        }
        SystemTests.stop.store(true, ordering: .relaxed)  // (also when the read failed: no more signals)
        helper.join()
        let result = try outcome.get()
        #expect(helper.interrupted, "no signal interrupted the read within 60 s (\(SystemTests.handled.load(ordering: .relaxed)) handled)")
        #expect(SystemTests.attempts.load(ordering: .relaxed) >= 2)
        #expect(result == 1)
        #expect(buffer[0] == 0x2A)
    }

    /// Sends SIGUSR1 to a thread blocked in `read` until the read starts again, then writes one byte.
    // Sendable because its thread alone writes `interrupted`, which the test reads only after `join`.
    final class Interrupter: @unchecked Sendable {
        let target: pthread_t
        let writeFD: Int32
        private(set) var interrupted = false
        private var thread = pthread_t()

        init(target: pthread_t, writeFD: Int32) {
            self.target = target
            self.writeFD = writeFD
        }

        static func start(target: pthread_t, writeFD: Int32) throws -> Interrupter {
            let me = Interrupter(target: target, writeFD: writeFD)
            let box = Unmanaged.passRetained(me)
            let r = pthread_create(&me.thread, nil, { arg in
                Unmanaged<Interrupter>.fromOpaque(arg!).takeRetainedValue().run()
                return nil
            }, box.toOpaque())
            if r != 0 { box.release(); throw Errno(r) }
            return me
        }

        private func run() {
            let deadline = MonotonicClock.nanoseconds() + 60_000_000_000
            while MonotonicClock.nanoseconds() < deadline && !SystemTests.stop.load(ordering: .relaxed) {
                if SystemTests.attempts.load(ordering: .relaxed) >= 2 { interrupted = true; break }
                // Only once the read has started can a signal interrupt it; until then, keep trying.
                if SystemTests.attempts.load(ordering: .relaxed) == 1 { pthread_kill(target, SIGUSR1) }
                var none: [pollfd] = []
                _ = try? Sys.poll(&none, timeoutMs: 1)
            }
            var byte: UInt8 = 0x2A
            _ = write(writeFD, &byte, 1)
        }

        func join() { pthread_join(thread, nil) }
    }

    // MARK: EAGAIN is a value

    @Test func aNonBlockingSocketThatWouldBlockSaysSoAsAValue() throws {
        var sv: [Int32] = [0, 0]
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0, &sv) == 0)
        defer { close(sv[0]); close(sv[1]) }
        var buffer = [UInt8](repeating: 0, count: 4096)
        // Nothing sent yet: the read would block.
        #expect(try Sys.read(sv[1], into: &buffer) == .wouldBlock)
        // Sending until the socket is full ends in .wouldBlock too, not in a thrown EAGAIN.
        let chunk = [UInt8](repeating: 7, count: 65536)
        var sent = 0
        var last: IOResult<Int> = .done(0)
        for _ in 0..<10_000 {
            last = try Sys.send(sv[0], chunk, 0..<chunk.count)
            guard case .done(let n) = last else { break }
            sent += n
        }
        #expect(last == .wouldBlock)
        #expect(sent > 0)
        // What was sent arrives.
        #expect(try Sys.read(sv[1], into: &buffer) == .done(buffer.count))
        #expect(buffer.allSatisfy { $0 == 7 })
    }

    @Test func acceptWithNobodyWaitingWouldBlock() throws {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        try #require(fd >= 0)
        defer { close(fd) }
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)  // autobind: an abstract address of its own
        let bound = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sa_family_t>.size)) }
        }
        try #require(bound == 0 && listen(fd, 4) == 0)
        #expect(try Sys.accept(fd) == .wouldBlock)
    }

    @Test func aPeerThatIsGoneIsAnErrorNotASignal() throws {
        var sv: [Int32] = [0, 0]
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0, &sv) == 0)
        defer { close(sv[0]) }
        close(sv[1])
        // MSG_NOSIGNAL: EPIPE comes back (a SIGPIPE would end the test process).
        #expect(throws: Errno(EPIPE)) { try Sys.send(sv[0], [1, 2, 3], 0..<3) }
    }

    // MARK: Failures are typed

    @Test func aFailedRenameIsATypedError() throws {
        let dir = try #require(String(validatingCString: mkdtemp(strdup("/tmp/tabbard-systests-XXXXXX"))!))
        defer { rmdir(dir + "/target"); unlink(dir + "/file"); rmdir(dir) }
        #expect(throws: Errno(ENOENT)) { try Sys.rename(dir + "/missing", to: dir + "/other") }
        // A file over a directory: EISDIR, not a silent no-op.
        let fd = try Sys.open(dir + "/file", O_WRONLY | O_CREAT | O_CLOEXEC, mode: 0o600)
        try Sys.close(fd)
        try #require(mkdir(dir + "/target", 0o700) == 0)
        #expect(throws: Errno(EISDIR)) { try Sys.rename(dir + "/file", to: dir + "/target") }
        // And one that works moves the file.
        try Sys.rename(dir + "/file", to: dir + "/moved")
        #expect(access(dir + "/moved", F_OK) == 0)
        unlink(dir + "/moved")
    }

    @Test func aFailedEpollControlIsATypedError() throws {
        let ep = try Sys.epollCreate()
        defer { close(ep) }
        var sv: [Int32] = [0, 0]
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &sv) == 0)
        defer { close(sv[0]); close(sv[1]) }
        // Changing or removing a descriptor that was never added: ENOENT.
        #expect(throws: Errno(ENOENT)) { try Sys.epollControl(ep, EPOLL_CTL_MOD, sv[0], events: EPOLLIN.rawValue) }
        #expect(throws: Errno(ENOENT)) { try Sys.epollControl(ep, EPOLL_CTL_DEL, sv[0]) }
        try Sys.epollControl(ep, EPOLL_CTL_ADD, sv[0], events: EPOLLIN.rawValue)
        // Adding it twice: EEXIST.
        #expect(throws: Errno(EEXIST)) { try Sys.epollControl(ep, EPOLL_CTL_ADD, sv[0], events: EPOLLIN.rawValue) }
        // A regular file cannot be watched: EPERM.
        let file = try Sys.open("/proc/self/stat", O_RDONLY | O_CLOEXEC)
        defer { try? Sys.close(file) }
        #expect(throws: Errno(EPERM)) { try Sys.epollControl(ep, EPOLL_CTL_ADD, file, events: EPOLLIN.rawValue) }
        // What was added is reported ready, with its descriptor.
        _ = try Sys.send(sv[1], [1], 0..<1)
        var events = [epoll_event](repeating: epoll_event(), count: 4)
        #expect(try Sys.epollWait(ep, &events, timeoutMs: 10_000) == 1)
        #expect(events[0].data.fd == sv[0])
    }

    @Test func closeFsyncAndFlagsReportTheirFailures() throws {
        #expect(throws: Errno(EBADF)) { try Sys.close(-1) }
        #expect(throws: Errno(EBADF)) { try Sys.fdatasync(-1) }
        #expect(throws: Errno(ENOENT)) { try Sys.fsyncDirectory("/nonexistent-tabbard-dir") }
        #expect(throws: Errno(EBADF)) { try Sys.setNonBlocking(-1) }
        #expect(throws: Errno(ENOENT)) { try Sys.truncate("/nonexistent-tabbard-dir/journal", to: 0) }
        var sv: [Int32] = [0, 0]
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &sv) == 0)
        defer { close(sv[0]); close(sv[1]) }
        try Sys.setNonBlocking(sv[0])
        try Sys.setCloseOnExec(sv[0])
        #expect(fcntl(sv[0], F_GETFL) & O_NONBLOCK != 0)
        #expect(fcntl(sv[0], F_GETFD) & FD_CLOEXEC != 0)
        #expect(Errno(ENOENT).description == "No such file or directory")
    }

    // MARK: The clock

    @Test func theClockIsCLOCK_MONOTONICAndNeverGoesBack() throws {
        func raw() -> UInt64 {
            var ts = timespec()
            clock_gettime(CLOCK_MONOTONIC, &ts)
            return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
        }
        var previous = MonotonicClock.nanoseconds()
        for _ in 0..<10_000 {
            let before = raw()
            let now = MonotonicClock.nanoseconds()
            let after = raw()
            #expect(before <= now && now <= after)
            #expect(now >= previous)
            previous = now
        }
        // A wait the kernel makes last at least 20 ms is at least 20 ms on it.
        let start = MonotonicClock.nanoseconds()
        var none: [pollfd] = []
        #expect(try Sys.poll(&none, timeoutMs: 20) == 0)
        #expect(MonotonicClock.nanoseconds() - start >= 20_000_000)
        #expect(MonotonicClock.milliseconds() >= Int64(start / 1_000_000) + 20)
    }

    // MARK: storage_failed

    @Test func storageFailedIsInTheErrorTable() {
        let e = RPCError.storageFailed("No space left on device", advice: "Free disk space on the file system of /x")
        #expect(e.code == -32008)
        #expect(e.kind == "storage_failed")
        #expect(e.message == "The change was not made: the state could not be saved (No space left on device). Free disk space on the file system of /x; reads and sounds still work.")
    }
}
