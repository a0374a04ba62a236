@preconcurrency import Glibc
import TabBarCore

/// The reducer's timers (show/hide phases, front-end animations): it asks for them as
/// `Effect.timer` data; the loop sleeps no longer than the earliest, then feeds each due
/// one back as `Command.timerFired`, journaled and published like any other change.
extension Server {
    /// The clock the reducer is given: CLOCK_MONOTONIC in ms.
    static func nowMs() -> Int64 { Int64(Posix.monotonicNs() / 1_000_000) }

    /// Milliseconds until the earliest timer (0 when one is due), nil when there is none.
    func timerTimeoutMs() -> Int? {
        guard let earliest = timers.values.min() else { return nil }
        return Int(max(0, earliest - Server.nowMs()))
    }

    /// Fires every due timer, earliest first.
    func fireDueTimers() {
        while true {
            let now = Server.nowMs()
            guard let (key, due) = timers.min(by: { $0.value < $1.value }), due <= now else { return }
            timers[key] = nil
            _ = applyStateCommand(.timerFired(key), method: "timer.fired", params: key.json)
        }
    }
}
