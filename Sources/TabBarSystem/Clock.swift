@preconcurrency import Glibc

/// The one monotonic clock (CLOCK_MONOTONIC) of the project: the daemon's loop, timers,
/// fsync and compaction pacing, the audio engine's `requestedAt`, the clients' deadlines
/// and the tests' waits all read it here. It never goes back and does not count
/// suspend; only differences between two readings mean anything.
public enum MonotonicClock {
    /// Nanoseconds since an arbitrary point (boot).
    @inlinable @inline(__always)
    public static func nanoseconds() -> UInt64 {
        var ts = timespec()
        // Cannot fail: CLOCK_MONOTONIC exists on every Linux and `ts` is valid memory.
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
    }

    /// Whole milliseconds, for deadlines counted in ms.
    @inlinable
    public static func milliseconds() -> Int64 { Int64(nanoseconds() / 1_000_000) }
}
