/// A limit on one kind of log line that a peer can cause at will (a refused client, a
/// client dropped for not reading, a disconnect): at most `burst` lines per `intervalNs`.
/// The lines over the limit are counted, not written; once the interval is over, one
/// line says how many were suppressed — before the next line of that kind, or from the
/// loop's periodic work if none comes (`flush`). Without it, a peer that connects in a
/// loop fills stderr — a journal's rate limit, or a pipe nobody reads (the daemon then
/// blocks writing it) — one line per attempt. Loop thread only.
struct LogLimit {
    /// What the summary line names, e.g. "Refused a client".
    let what: String
    let burst: Int
    let intervalNs: UInt64
    private(set) var windowStartNs: UInt64 = 0
    private(set) var written = 0
    private(set) var suppressed = 0
    /// The priority of the lines suppressed (the summary has it too).
    private var suppressedPriority = Priority.debug
    private var started = false
    /// Where lines go (`Log.write`; a test's recorder).
    var emit: (Priority, String, KeyValuePairs<String, String>) -> Void = Log.write

    init(_ what: String, burst: Int = 10, intervalNs: UInt64 = 10_000_000_000) {
        self.what = what
        self.burst = burst
        self.intervalNs = intervalNs
    }

    /// Writes the line unless this interval's burst is used up; then counts it. The message
    /// and its fields are made only for a line that is written (a suppressed one is counted).
    mutating func write(_ p: Priority, _ message: @autoclosure () -> String,
                        _ meta: @autoclosure () -> KeyValuePairs<String, String> = [:], nowNs: UInt64) {
        guard p <= Log.level else { return }
        flush(nowNs: nowNs)
        if !started || nowNs >= windowStartNs + intervalNs {
            started = true
            windowStartNs = nowNs
            written = 0
        }
        if written < burst {
            written += 1
            emit(p, message(), meta())
        } else {
            suppressed += 1
            suppressedPriority = min(suppressedPriority, p)
        }
    }

    /// Once the interval is over: says how many lines it suppressed (if any).
    mutating func flush(nowNs: UInt64) {
        guard suppressed > 0, nowNs >= windowStartNs + intervalNs else { return }
        let seconds = Double((nowNs - windowStartNs) / 1_000_000) / 1000
        emit(suppressedPriority, "Suppressed \(suppressed) log line\(suppressed == 1 ? "" : "s") like \"\(what)\" (more than \(burst) in \(intervalNs / 1_000_000_000) s)",
                    ["suppressed": String(suppressed), "seconds": String(seconds)])
        suppressed = 0
        suppressedPriority = .debug
        // A new interval starts at the next line.
        windowStartNs = 0
        started = false
    }

    /// When the loop must wake up to `flush` (nil: nothing is suppressed).
    var flushDueNs: UInt64? { suppressed > 0 ? windowStartNs + intervalNs : nil }
}

/// The daemon's limited log lines, one limit per kind (one object the loop's stages share).
final class PeerLogs {
    enum Kind: Int, CaseIterable {
        case refused, full, outOfFDs, slow, behind, connected, disconnected, journal, feedback, soundFailed
    }

    private var limits: [LogLimit] = Kind.allCases.map { kind in
        switch kind {
        case .refused: LogLimit("Refused a client")
        case .full: LogLimit("Refused a client: max_clients reached")
        case .outOfFDs: LogLimit("Out of file descriptors; not accepting for now")
        case .slow: LogLimit("Disconnecting a client that does not read its replies")
        case .behind: LogLimit("Subscriber fell behind; sending state.resync")
        case .connected: LogLimit("Client connected")
        case .disconnected: LogLimit("Client disconnected")
        case .journal: LogLimit("Could not record changes; refused")
        case .feedback: LogLimit("Feedback sound not played")
        case .soundFailed: LogLimit("Sound failed")
        }
    }

    /// How many kinds have suppressed lines not yet said: while none has, the loop's
    /// `flush` and `flushDueNs` at every turn look at no limit.
    private var suppressing = 0

    /// Writes a line of `kind`, within that kind's limit (its text made only if it is written).
    func write(_ kind: Kind, _ p: Priority, _ message: @autoclosure () -> String,
                        _ meta: @autoclosure () -> KeyValuePairs<String, String> = [:], nowNs: UInt64) {
        let was = limits[kind.rawValue].suppressed > 0
        limits[kind.rawValue].write(p, message(), meta(), nowNs: nowNs)
        if (limits[kind.rawValue].suppressed > 0) != was { suppressing += was ? -1 : 1 }
    }

    /// Says what was suppressed in intervals that are over.
    func flush(nowNs: UInt64) {
        guard suppressing > 0 else { return }
        suppressing = 0
        for k in limits.indices {
            limits[k].flush(nowNs: nowNs)
            if limits[k].suppressed > 0 { suppressing += 1 }
        }
    }

    /// The earliest time a suppressed count is due (nil: none).
    var flushDueNs: UInt64? {
        // (Without making an array: it is asked at every loop turn.)
        guard suppressing > 0 else { return nil }
        var due: UInt64?
        for k in limits.indices {
            if let d = limits[k].flushDueNs, d < due ?? .max { due = d }
        }
        return due
    }
}
