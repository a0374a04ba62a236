import TabBarCore

/// The systemd watchdog and `STATUS=`: when the next `WATCHDOG=1` ping is due (half of
/// WATCHDOG_USEC, sent from the state loop: a stuck loop stops the pings and systemd
/// restarts us), and what `STATUS=` last said (`StatusNotifier`).
struct Watchdog {
    /// Between two pings; nil when systemd does not watch us.
    private(set) var intervalNs: UInt64?
    private(set) var nextNs: UInt64 = 0
    private(set) var status = StatusNotifier(enabled: Systemd.notifySocketSet)

    /// Reads WATCHDOG_USEC; the first ping is due at once.
    mutating func start() {
        if let usec = Systemd.watchdogUsec() {
            intervalNs = usec * 1000 / 2
            nextNs = MonotonicClock.nanoseconds()
        }
    }

    /// Milliseconds until a ping or a `STATUS=` update is due (0: now), nil when none is.
    func timeoutMs(now: UInt64, _ key: @autoclosure () -> StatusNotifier.Key) -> Int? {
        var timeout: Int?
        if intervalNs != nil {
            timeout = nextNs > now ? Int((nextNs - now) / 1_000_000) + 1 : 0
        }
        if status.enabled, let due = status.deadline(key(), nowNs: now) {
            let ms = due > now ? Int((due - now) / 1_000_000) + 1 : 0
            timeout = min(timeout ?? ms, ms)
        }
        return timeout
    }

    /// Sends what is due: the ping, and `STATUS=` when what it reports changed.
    mutating func tick(now: UInt64, _ key: () -> StatusNotifier.Key, line: () -> String) {
        if let interval = intervalNs, now >= nextNs {
            Systemd.notify("WATCHDOG=1")
            nextNs = now + interval
        }
        if status.enabled {
            let key = key()
            if status.due(key, nowNs: now) {
                Systemd.notify("STATUS=\(line())")
                status.sent(key, nowNs: now)
            }
            status.polled(nowNs: now)
        }
    }

    /// `READY=1` (start-up, end of a reload) with the current `STATUS=`.
    mutating func ready(_ key: StatusNotifier.Key, line: String) {
        Systemd.notify("READY=1\nSTATUS=\(line)")
        status.sent(key, nowNs: MonotonicClock.nanoseconds())
    }
}
