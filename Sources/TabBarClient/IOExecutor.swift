import Glibc
import Synchronization
import TabBarSystem

/// The connection's own I/O thread as a `TaskExecutor` (`TabBar.executor`): a task that
/// prefers it runs its nonisolated code on the thread that reads the socket, so a reply
/// resumes its caller on the thread that read it (no second thread woken), and the
/// requests its tasks make in one turn go out together (`Core.chunk` bytes a `send`).
///
/// The thread runs the queued jobs between reads: code that runs on it should not block
/// (a blocked job holds up every reply of the connection). Once the connection is closed
/// for good, jobs go to the global concurrent executor.
final class IOExecutor: TaskExecutor {
    struct Queue {
        var jobs: [UnownedJob] = []
        /// The thread waits in `poll`: a new job must wake it.
        var polling = false
        /// The thread has ended: jobs go to the global executor.
        var gone = false
    }

    let queue = Mutex(Queue())
    /// The I/O thread's array that `runQueued` swaps with the queue's (reused: no allocation
    /// a turn). Only that thread touches it.
    nonisolated(unsafe) private var running: [UnownedJob] = []
    /// The I/O thread (`pthread_self`), 0 before it started.
    let thread = Atomic<UInt>(0)
    /// Wakes the thread from its `poll`.
    let wakeup: Wakeup

    init(wakeup: Wakeup) { self.wakeup = wakeup }

    func enqueue(_ job: consuming ExecutorJob) {
        let unowned = UnownedJob(job)
        let forward: Bool = queue.withLock { q in
            if q.gone { return true }
            q.jobs.append(unowned)
            if q.polling {
                q.polling = false
                wakeup.wake()
            }
            return false
        }
        if forward { globalConcurrentExecutor.enqueue(ExecutorJob(unowned)) }
    }

    /// Whether the caller runs on the I/O thread.
    var isCurrent: Bool { thread.load(ordering: .relaxed) == UInt(pthread_self()) }

    /// Runs the jobs queued now (not those they queue: the socket is read between).
    /// Returns whether any ran.
    @discardableResult
    func runQueued() -> Bool {
        var jobs = running
        running = []
        queue.withLock { q in
            if !q.jobs.isEmpty { swap(&q.jobs, &jobs) }
        }
        let ran = !jobs.isEmpty
        if ran {
            let me = asUnownedTaskExecutor()
            for job in jobs { job.runSynchronously(on: me) }
            jobs.removeAll(keepingCapacity: true)
        }
        running = jobs
        return ran
    }

    /// Polls `fds` (the wake pipe among them) for up to `timeoutMs` (-1: no limit), or
    /// not at all when jobs are waiting. Returns `poll`'s count (0 on timeout or error).
    func poll(_ fds: inout [pollfd], timeoutMs: Int32) -> Int {
        let mayWait = queue.withLock { q -> Bool in
            if !q.jobs.isEmpty { return false }
            q.polling = true
            return true
        }
        let n = (try? Sys.poll(&fds, timeoutMs: mayWait ? timeoutMs : 0)) ?? 0
        if mayWait { queue.withLock { $0.polling = false } }
        return n
    }

    /// The thread ends: what is queued and what comes later runs on the global executor.
    func retire() {
        let jobs: [UnownedJob] = queue.withLock { q in
            q.gone = true
            let j = q.jobs
            q.jobs = []
            return j
        }
        for job in jobs { globalConcurrentExecutor.enqueue(ExecutorJob(job)) }
    }
}
