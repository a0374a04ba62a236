import CALSA
import Glibc
import Synchronization
import Testing
@testable import TabBarAudio

/// `Realtime.share`: a thread of the process found by name (PipeWire's ALSA plugin's main loop,
/// `AlsaSink.pipewireLoopThread`) gets the calling thread's realtime scheduling. tests/pipewire
/// `PluginThread` checks it on the real plugin.
@Suite struct RealtimeShareTests {
    /// A thread named `name` that runs until `finish`: it blocks on an eventfd, and its id is
    /// known once `init` returns.
    final class Named: Sendable {
        let tid: Int32
        private let release = tabbard_eventfd()
        private let thread: pthread_t
        init(_ name: String) {
            let started = Locked<Int32>(0)
            let ready = tabbard_eventfd()
            let release = self.release
            thread = try! spawnThread {
                tabbard_set_thread_name(name)
                started.set(Int32(tabbard_gettid()))
                notify(ready)
                _ = pollReadable(release, timeoutNanos: nil)
            }.get()
            _ = pollReadable(ready, timeoutNanos: nil)
            close(ready)
            tid = started.value
        }
        func finish() {
            notify(release)
            pthread_join(thread, nil)
            close(release)
        }
    }

    @Test func aNamedThreadGetsTheCallersRealtimeScheduling() {
        let other = Named("tabbard-t-shr")
        defer { other.finish() }
        let logs = LogCollector()
        let (granted, mine, shared) = onThread {
            let granted = Realtime.request(priority: 10, log: logs.log)
            var policy: Int32 = -1
            var p = sched_param()
            pthread_getschedparam(pthread_self(), &policy, &p)
            let mine = (policy: policy, priority: p.sched_priority)
            return (granted, mine, Realtime.share(withThreadsNamed: "tabbard-t-shr", log: logs.log))
        }
        var theirs = sched_param()
        let policy = sched_getscheduler(other.tid)
        sched_getparam(other.tid, &theirs)
        switch granted {
        case .direct, .rtkit:
            #expect(shared.count == 1 && shared.first?.tid == other.tid)
            if case .refused(let why)? = shared.first?.outcome {
                Issue.record("the caller is realtime but the named thread was refused: \(why)")
            } else {
                #expect(policy == mine.policy && theirs.sched_priority == mine.priority,
                        "the named thread runs \(policy)/\(theirs.sched_priority), its caller \(mine)")
                #expect(logs.contains(.debug, "thread tabbard-t-shr tid=\(other.tid) runs"))
            }
        case .refused, .off:
            // No realtime here (no privilege): there is nothing to share, and nothing changes.
            #expect(shared.isEmpty)
            #expect(policy == Int32(SCHED_OTHER))
        }
    }

    /// RTKit changes a thread's scheduling from outside. glibc's `pthread_getschedparam` answers
    /// from a cache filled by the last read or set, and a new thread inherits its creator's: the
    /// audio thread, made SCHED_RR by RTKit, read itself as SCHED_OTHER, logged "policy 0", and
    /// never raised the plugin's thread (found by tests/rtkit `PluginThread`). The thread here is
    /// raised by `sched_setscheduler` on its id, as RTKit does it, after its creator filled the cache.
    @Test func aCallerRaisedFromOutsideIsReadAsTheKernelHasIt() {
        let other = Named("tabbard-t-shx")
        defer { other.finish() }
        let (raised, seen, shared) = onThread {
            var policy: Int32 = 0
            var p = sched_param()
            pthread_getschedparam(pthread_self(), &policy, &p)          // glibc now caches SCHED_OTHER
            return onThread {
                var param = sched_param(sched_priority: 10)
                let raised = sched_setscheduler(0, Int32(SCHED_FIFO), &param) == 0   // not through glibc's cache
                return (raised, Realtime.current(), Realtime.share(withThreadsNamed: "tabbard-t-shx", log: nil))
            }
        }
        let theirs = sched_getscheduler(other.tid)
        if raised {
            #expect(seen?.policy == Int32(SCHED_FIFO) && seen?.priority == 10, "read back as \(String(describing: seen))")
            #expect(shared.count == 1 && theirs == Int32(SCHED_FIFO), "the named thread runs policy \(theirs): \(shared)")
        } else {
            // No privilege to raise a thread here: nothing is shared.
            #expect(seen?.policy == Int32(SCHED_OTHER) && shared.isEmpty && theirs == Int32(SCHED_OTHER))
        }
    }

    @Test func aCallerAtNormalPriorityChangesNothing() {
        let other = Named("tabbard-t-sh0")
        defer { other.finish() }
        let shared = onThread { Realtime.share(withThreadsNamed: "tabbard-t-sh0", log: nil) }
        #expect(shared.isEmpty)
        #expect(sched_getscheduler(other.tid) == Int32(SCHED_OTHER))
        #expect(Realtime.threads(named: "tabbard-t-sh0") == [other.tid])
    }
}
