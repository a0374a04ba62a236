import CALSA
import CSystemd
import Glibc

/// Puts the calling thread under SCHED_FIFO: directly where RLIMIT_RTPRIO (or CAP_SYS_NICE)
/// allows it, else through RTKit on the system bus (which picks the policy and caps the
/// priority; the log says what the thread got), else it stays at normal priority with one
/// warning.
public enum Realtime {
    /// PipeWire's own client threads run SCHED_FIFO 83 (its `rt.prio`, below the server's 88).
    public static let defaultPriority: Int32 = 83

    /// What `request` achieved, for logs and tests.
    public enum Outcome: Equatable, Sendable {
        case off
        case direct(priority: Int32)
        /// What RTKit made of the thread, read back from it: RTKit chooses the policy (Debian's
        /// rtkit-daemon: SCHED_RR) and caps the priority (its `MaxRealtimePriority`, 20 by default).
        case rtkit(policy: Int32, priority: Int32)
        case refused(String)
    }

    /// "SCHED_FIFO", "SCHED_RR", or the number.
    static func policyName(_ policy: Int32) -> String {
        switch policy & 0xff {
        case Int32(SCHED_FIFO): return "SCHED_FIFO"
        case Int32(SCHED_RR): return "SCHED_RR"
        case let p: return "scheduling policy \(p)"
        }
    }

    /// Asks for SCHED_FIFO at `priority` (0 = off) for the calling thread, and logs the outcome.
    @discardableResult
    public static func request(priority: Int32, log: AudioLog) -> Outcome {
        guard priority > 0 else { return .off }
        let outcome = apply(priority: priority)
        switch outcome {
        case .off: break
        case .direct(let p): log(.info, "audio thread runs SCHED_FIFO priority=\(p)")
        case .rtkit(let policy, let p):
            let capped = p < priority ? "; realtime_priority \(priority) is above RTKit's maximum" : ""
            log(.info, "audio thread runs \(policyName(policy)) priority=\(p) (granted by RTKit\(capped))")
        case .refused(let why):
            log(.warning, "audio thread stays at normal priority (realtime_priority \(priority) refused: \(why)); clicks may break up under heavy load")
        }
        return outcome
    }

    /// Gives every thread of this process named `name` that runs at normal priority the calling
    /// thread's realtime policy and priority (nothing when the caller has none): directly where
    /// allowed, else through RTKit. For PipeWire's ALSA plugin (`AlsaSink.pipewireLoopThread`):
    /// its main-loop thread completes the server's Start after an idle stop, and at normal priority
    /// it lost that race to the server's first cycle about half the time (docs/AUDIO.md, "The
    /// first cycle after idle").
    /// Returns each thread's id and what it got (`.refused` when it stayed as it was).
    @discardableResult
    static func share(withThreadsNamed name: String, log: AudioLog?) -> [(tid: Int32, outcome: Outcome)] {
        guard let (policy, priority) = current() else { return [] }
        guard policy == Int32(SCHED_FIFO) || policy == Int32(SCHED_RR) else { return [] }
        var out: [(tid: Int32, outcome: Outcome)] = []
        for tid in threads(named: name) where sched_getscheduler(tid) & 0xff == Int32(SCHED_OTHER) {
            var param = sched_param(sched_priority: priority)
            let outcome: Outcome
            if sched_setscheduler(tid, policy, &param) == 0 {
                outcome = .direct(priority: priority)
            } else {
                let direct = errno == EPERM ? "EPERM" : String(cString: strerror(errno))
                var why = [CChar](repeating: 0, count: 256)
                let granted = systemBus ? tabbard_rtkit_make_realtime(UInt64(tid), priority, &why, Int32(why.count)) : 0
                outcome = granted > 0 ? .rtkit(policy: sched_getscheduler(tid), priority: granted)
                    : .refused("sched_setscheduler \(direct); RTKit: \(systemBus ? String(cString: why) : "no system bus")")
            }
            switch outcome {
            case .refused(let why):
                log?(.warning, "thread \(name) tid=\(tid) stays at normal priority (\(why)); a click after idle may wait one more cycle")
            default:
                log?(.debug, "thread \(name) tid=\(tid) runs \(policyName(policy)) priority=\(priority) like the audio thread")
            }
            out.append((tid, outcome))
        }
        return out
    }

    /// The calling thread's policy (without SCHED_RESET_ON_FORK, which RTKit's grants carry) and
    /// priority, as the kernel has them. Not `pthread_getschedparam`: glibc caches what it last
    /// read or set, a new thread inherits its creator's cache, and RTKit changes the thread from
    /// outside — the cache then said SCHED_OTHER for a thread RTKit had made SCHED_RR, and the
    /// plugin's thread was never raised (tests/rtkit `PluginThread`).
    static func current() -> (policy: Int32, priority: Int32)? {
        let policy = sched_getscheduler(0)
        var param = sched_param()
        guard policy >= 0, sched_getparam(0, &param) == 0 else { return nil }
        return (policy & 0xff, param.sched_priority)
    }

    /// Whether there is a system bus to ask RTKit on (none in a container or a sandbox: do not even try).
    static var systemBus: Bool {
        getenv("DBUS_SYSTEM_BUS_ADDRESS") != nil || access("/run/dbus/system_bus_socket", F_OK) == 0
    }

    /// The ids of this process's threads whose name (`/proc/self/task/TID/comm`) is `name`.
    static func threads(named name: String) -> [Int32] {
        guard let dir = opendir("/proc/self/task") else { return [] }
        defer { closedir(dir) }
        var found: [Int32] = []
        while let entry = readdir(dir) {
            let tidName = withUnsafeBytes(of: entry.pointee.d_name) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
            guard let tid = Int32(tidName), let f = fopen("/proc/self/task/\(tid)/comm", "r") else { continue }
            var buf = [CChar](repeating: 0, count: 64)
            let line = fgets(&buf, Int32(buf.count), f) != nil ? String(cString: buf) : ""
            fclose(f)
            if (line.hasSuffix("\n") ? String(line.dropLast()) : line) == name { found.append(tid) }
        }
        return found
    }

    static func apply(priority: Int32) -> Outcome {
        let lo = sched_get_priority_min(SCHED_FIFO), hi = sched_get_priority_max(SCHED_FIFO)
        var want = min(max(priority, lo), hi)
        // An unprivileged process may go up to its RLIMIT_RTPRIO.
        let lim = tabbard_rtprio_limit()
        if getuid() != 0, lim > 0, lim < Int(want) { want = Int32(lim) }
        var param = sched_param(sched_priority: want)
        let r = pthread_setschedparam(pthread_self(), Int32(SCHED_FIFO), &param)
        if r == 0 { return .direct(priority: want) }
        let direct = r == EPERM ? "EPERM" : String(cString: strerror(r))
        // RTKit lives on the system bus; without one (a container, a sandbox) do not even try.
        guard systemBus else { return .refused("sched_setscheduler \(direct); RTKit: no system bus") }
        // RTKit insists on a bounded RLIMIT_RTTIME (a runaway realtime thread gets SIGXCPU).
        _ = tabbard_bound_rttime(200_000)
        var why = [CChar](repeating: 0, count: 256)
        let granted = tabbard_rtkit_make_realtime(UInt64(tabbard_gettid()), priority, &why, Int32(why.count))
        if granted > 0 {
            // What the thread now runs at, as the kernel has it (not what was asked for).
            let (policy, now) = current() ?? (-1, granted)
            return .rtkit(policy: policy, priority: now)
        }
        return .refused("sched_setscheduler \(direct); \(String(cString: why))")
    }
}
