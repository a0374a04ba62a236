import CALSA
import Glibc
import Synchronization
import Testing
@testable import TabBarAudio

/// `Realtime.share`: a thread of the process found by name (PipeWire's ALSA plugin's main loop,
/// `AlsaSink.pipewireLoopThread`) gets the calling thread's realtime scheduling. tests/pipewire
/// `PluginThread` checks it on the real plugin.
@Suite struct RealtimeShareTests {
    /// Runs `body` on a new thread named `name` and returns once it ran; the thread then waits
    /// until `release` is set, and is joined by `finish`.
    final class Named: @unchecked Sendable {
        let name: String
        let release = Atomic<Bool>(false)
        let tid = Atomic<Int32>(0)
        var thread = pthread_t()
        init(_ name: String) {
            self.name = name
            pthread_create(&thread, nil, { arg in
                let me = Unmanaged<Named>.fromOpaque(arg!).takeUnretainedValue()
                tabbard_set_thread_name(me.name)
                me.tid.store(Int32(tabbard_gettid()), ordering: .releasing)
                while !me.release.load(ordering: .acquiring) { usleep(1000) }
                return nil
            }, Unmanaged.passUnretained(self).toOpaque())
            while tid.load(ordering: .acquiring) == 0 { usleep(1000) }
        }
        func finish() { release.store(true, ordering: .releasing); pthread_join(thread, nil) }
    }

    /// Runs `body` on a thread of its own (joined before returning).
    func onThread(_ body: @escaping () -> Void) {
        var t = pthread_t()
        let box = Unmanaged.passRetained(Box(body))
        pthread_create(&t, nil, { arg in
            Unmanaged<Box>.fromOpaque(arg!).takeRetainedValue().body()
            return nil
        }, box.toOpaque())
        pthread_join(t, nil)
    }

    @Test func aNamedThreadGetsTheCallersRealtimeScheduling() {
        let other = Named("tabbard-t-shr")
        defer { other.finish() }
        let logs = LogCollector()
        var granted = Realtime.Outcome.off
        var shared: [(tid: Int32, outcome: Realtime.Outcome)] = []
        var mine = (policy: Int32(-1), priority: Int32(-1))
        onThread {
            granted = Realtime.request(priority: 10, log: logs.log)
            var p = sched_param()
            pthread_getschedparam(pthread_self(), &mine.policy, &p)
            mine.priority = p.sched_priority
            shared = Realtime.share(withThreadsNamed: "tabbard-t-shr", log: logs.log)
        }
        var theirs = sched_param()
        let policy = sched_getscheduler(other.tid.load(ordering: .acquiring))
        sched_getparam(other.tid.load(ordering: .acquiring), &theirs)
        switch granted {
        case .direct, .rtkit:
            #expect(shared.count == 1 && shared.first?.tid == other.tid.load(ordering: .acquiring))
            if case .refused(let why)? = shared.first?.outcome {
                Issue.record("the caller is realtime but the named thread was refused: \(why)")
            } else {
                #expect(policy == mine.policy && theirs.sched_priority == mine.priority,
                        "the named thread runs \(policy)/\(theirs.sched_priority), its caller \(mine)")
                #expect(logs.contains(.debug, "thread tabbard-t-shr tid=\(other.tid.load(ordering: .acquiring)) runs"))
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
        var raised = false
        var seen: (policy: Int32, priority: Int32)?
        var shared: [(tid: Int32, outcome: Realtime.Outcome)] = []
        onThread {
            var policy: Int32 = 0
            var p = sched_param()
            pthread_getschedparam(pthread_self(), &policy, &p)          // glibc now caches SCHED_OTHER
            self.onThread {
                var param = sched_param(sched_priority: 10)
                raised = sched_setscheduler(0, Int32(SCHED_FIFO), &param) == 0   // not through glibc's cache
                seen = Realtime.current()
                shared = Realtime.share(withThreadsNamed: "tabbard-t-shx", log: nil)
            }
        }
        let theirs = sched_getscheduler(other.tid.load(ordering: .acquiring))
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
        var shared: [(tid: Int32, outcome: Realtime.Outcome)] = [(0, .off)]
        onThread { shared = Realtime.share(withThreadsNamed: "tabbard-t-sh0", log: nil) }
        #expect(shared.isEmpty)
        #expect(sched_getscheduler(other.tid.load(ordering: .acquiring)) == Int32(SCHED_OTHER))
        #expect(Realtime.threads(named: "tabbard-t-sh0") == [other.tid.load(ordering: .acquiring)])
    }
}
