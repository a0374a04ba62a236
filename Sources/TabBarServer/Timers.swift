@preconcurrency import Glibc
import TabBarCore

/// Which clock the daemon runs on. Wire/flag strings: `real`, `manual`.
public enum ClockMode: String, Sendable, CaseIterable {
    /// CLOCK_MONOTONIC.
    case real
    /// Virtual time from 0 that moves only by `clock.advance` (docs/HARNESS.md).
    case manual
}

/// The clock the reducer and its timers are given, in ms (chosen once, at start-up, from
/// `--clock`: `RealLoopClock` or `ManualLoopClock`).
protocol LoopClock: AnyObject {
    var mode: ClockMode { get }
    /// Now.
    func nowMs() -> Int64
    /// The time of a request whose line was read at `readNs` (CLOCK_MONOTONIC).
    func ms(readAt readNs: UInt64) -> Int64
    /// Whether timers fire when their time comes (false: only when the clock is moved).
    var firesTimers: Bool { get }
}

/// CLOCK_MONOTONIC: a request happened when its line was read.
final class RealLoopClock: LoopClock {
    var mode: ClockMode { .real }
    func nowMs() -> Int64 { Int64(MonotonicClock.nanoseconds() / 1_000_000) }
    func ms(readAt readNs: UInt64) -> Int64 { Int64(readNs / 1_000_000) }
    var firesTimers: Bool { true }
}

/// Virtual time from 0 that moves only by `clock.advance` (docs/HARNESS.md).
final class ManualLoopClock: LoopClock {
    var mode: ClockMode { .manual }
    var ms: Int64 = 0
    func nowMs() -> Int64 { ms }
    func ms(readAt readNs: UInt64) -> Int64 { ms }
    var firesTimers: Bool { false }
}

/// The reducer's timers (show/hide phases, front-end animations) and the clock they run
/// on: it asks for them as `Effect.timer` data; the loop sleeps no longer than the earliest,
/// then feeds each due one back as `Command.timerFired`, journaled and published like any
/// other change. Under the manual clock they fire only in `clock.advance`.
struct Timers {
    /// Timers the reducer asked for: key → due time in ms.
    private(set) var due: [TimerKey: Int64] = [:]
    /// The reducer's clock.
    let clock: LoopClock

    init(clock mode: ClockMode) { clock = mode == .manual ? ManualLoopClock() : RealLoopClock() }

    /// The clock the reducer is given (ms).
    func nowMs() -> Int64 { clock.nowMs() }

    /// Milliseconds until the earliest timer (0 when one is due), nil when there is none
    /// (or the clock is manual: nothing is due until it is told to move).
    func timeoutMs() -> Int? {
        guard clock.firesTimers, let earliest = due.values.min() else { return nil }
        return Int(max(0, earliest - nowMs()))
    }

    /// The earliest timer; timers due at the same ms fire in key order (visibility, then
    /// animations by id), so the order does not depend on the dictionary's hashing.
    func earliest() -> (key: TimerKey, due: Int64)? {
        due.min { ($0.value, $0.key.order) < ($1.value, $1.key.order) }.map { ($0.key, $0.value) }
    }

    /// `Effect.timer`: `key` falls due at `atMs` (replacing an earlier one of that key).
    mutating func set(_ key: TimerKey, atMs: Int64) { due[key] = atMs }

    /// `Effect.cancelTimer`, or `key` fired.
    mutating func cancel(_ key: TimerKey) { due[key] = nil }
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
