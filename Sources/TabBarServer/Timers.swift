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
