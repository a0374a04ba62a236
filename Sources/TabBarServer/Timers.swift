@preconcurrency import Glibc
import TabBarCore

/// Which clock the daemon runs on. Wire/flag strings: `real`, `manual`.
public enum ClockMode: String, Sendable, CaseIterable {
    /// CLOCK_MONOTONIC.
    case real
    /// Virtual time from 0 that moves only by `clock.advance` (docs/HARNESS.md).
    case manual
}

/// The clock the reducer and its timers are given, in ms. The real one reads
/// CLOCK_MONOTONIC (one branch more than before); the manual one is a number the state
/// loop moves (`Server.advanceClock`).
struct DaemonClock {
    let mode: ClockMode
    /// The manual clock's time.
    var manualMs: Int64 = 0

    init(mode: ClockMode) { self.mode = mode }

    @inline(__always)
    func nowMs() -> Int64 {
        mode == .real ? Int64(MonotonicClock.nanoseconds() / 1_000_000) : manualMs
    }

    /// The time of a request whose line was read at `readNs` (CLOCK_MONOTONIC): when it was
    /// read, on the real clock (no clock read per request); the manual clock's time.
    @inline(__always)
    func ms(readAt readNs: UInt64) -> Int64 {
        mode == .real ? Int64(readNs / 1_000_000) : manualMs
    }
}

/// The reducer's timers (show/hide phases, front-end animations) and the clock they run
/// on: it asks for them as `Effect.timer` data; the loop sleeps no longer than the earliest,
/// then feeds each due one back as `Command.timerFired`, journaled and published like any
/// other change. Under the manual clock they fire only in `clock.advance`.
struct Timers {
    /// Timers the reducer asked for: key → due time in ms.
    private(set) var due: [TimerKey: Int64] = [:]
    /// The reducer's clock: real, or manual (`--clock manual`).
    private(set) var clock: DaemonClock

    init(clock: ClockMode) { self.clock = DaemonClock(mode: clock) }

    /// The clock the reducer is given (ms).
    @inline(__always)
    func nowMs() -> Int64 { clock.nowMs() }

    /// Milliseconds until the earliest timer (0 when one is due), nil when there is none
    /// (or the clock is manual: nothing is due until it is told to move).
    func timeoutMs() -> Int? {
        guard clock.mode == .real, !due.isEmpty, let earliest = due.values.min() else { return nil }
        return Int(max(0, earliest - nowMs()))
    }

    /// The earliest timer; timers due at the same ms fire in key order (visibility, then
    /// animations by id), so the order does not depend on the dictionary's hashing.
    func earliest() -> (key: TimerKey, due: Int64)? {
        var best: (key: TimerKey, due: Int64)?
        for (k, at) in due {
            if let b = best, (b.due, b.key.order) <= (at, k.order) { continue }
            best = (k, at)
        }
        return best
    }

    /// `Effect.timer`: `key` falls due at `atMs` (replacing an earlier one of that key).
    mutating func set(_ key: TimerKey, atMs: Int64) { due[key] = atMs }

    /// `Effect.cancelTimer`, or `key` fired.
    mutating func cancel(_ key: TimerKey) { due[key] = nil }

    /// Moves the manual clock to `ms`.
    mutating func setManual(ms: Int64) { clock.manualMs = ms }
}

extension Server {
    /// The clock the reducer is given (ms). (`timers.clock`, not `timers.nowMs()`: that would
    /// copy the whole part, retaining its dictionary, once per request.)
    @inline(__always)
    func nowMs() -> Int64 { timers.clock.nowMs() }

    /// Fires every due timer, earliest first (the real clock's loop turn).
    func fireDueTimers() {
        guard timers.clock.mode == .real, !timers.due.isEmpty else { return }
        while true {
            let now = nowMs()
            guard let (key, due) = timers.earliest(), due <= now else { return }
            fire(key)
        }
    }

    func fire(_ key: TimerKey) {
        timers.cancel(key)
        apply(.timerFired(key), method: nil, params: nil, id: nil, from: nil)
    }

    /// `clock.advance {ms}`: moves the manual clock by `ms`, stopping at each timer that
    /// falls due on the way (in order) to fire it at its own time; the null sink renders
    /// every frame up to each of those times before the next step.
    func advanceClock(by ms: Int) -> Result<JSON, RPCError> {
        guard timers.clock.mode == .manual else { return .failure(.clockNotManual) }
        let target = timers.clock.manualMs + Int64(ms)
        settleAudio(queued: false)
        while let (key, due) = timers.earliest(), due <= target {
            moveClock(to: max(due, timers.clock.manualMs))
            fire(key)
        }
        moveClock(to: target)
        return .success(.obj(["now_ms": .int(target)]))
    }

    private func moveClock(to ms: Int64) {
        guard ms != timers.clock.manualMs else { return }
        let step = ms - timers.clock.manualMs
        timers.setManual(ms: ms)
        audio.nullSink?.clock?.set(ms: ms)
        // Rendering takes ~2 ms per virtual second (docs/PERFORMANCE.md): allow 10 s plus 20× that.
        settleAudio(queued: false, timeoutNanos: 10_000_000_000 + UInt64(max(step, 0)) * 40_000)
    }

    /// `clock.get`.
    func clockJSON() -> JSON {
        .obj(["now_ms": .int(nowMs()), "mode": .string(timers.clock.mode.rawValue)])
    }
}

extension TimerKey {
    /// Tie-break of timers due at the same ms.
    var order: Int {
        switch self {
        case .visibility: return -1
        case .animation(let id): return id
        }
    }
}

extension RPCError {
    /// `clock.advance` on a daemon running on the real clock.
    static let clockNotManual = RPCError(
        code: -32009, kind: "clock_not_manual",
        message: "The daemon runs on the real clock; clock.advance needs tabbard --clock manual (or \"clock\": \"manual\" in its config).")
}
