import TabBarCore

/// A fixed ring of recent latency samples (ns); percentiles on demand, no allocation to record.
struct LatencyRing {
    private var samples: [UInt64]
    private var next = 0
    private(set) var count = 0
    private(set) var max: UInt64 = 0

    /// `capacity` is rounded up to a power of two (the index wraps with a mask, not a division).
    init(capacity: Int = 8192) {
        var n = 1
        while n < capacity { n <<= 1 }
        samples = [UInt64](repeating: 0, count: n)
    }

    mutating func record(_ ns: UInt64) {
        samples[next] = ns
        next = (next &+ 1) & (samples.count &- 1)
        count += 1
        if ns > max { max = ns }
    }

    /// `record` of `n` samples of one value (the answers of one run of a group commit,
    /// whose lines were read together and whose replies are queued together).
    mutating func record(_ ns: UInt64, count n: Int) {
        guard n > 0 else { return }
        var k = next
        samples.withUnsafeMutableBufferPointer { s in
            for _ in 0..<n {
                s[k] = ns
                k = (k &+ 1) & (s.count &- 1)
            }
        }
        next = k
        count += n
        if ns > max { max = ns }
    }

    /// p50/p90/p99/max in microseconds over the retained samples.
    func json() -> JSON {
        let n = min(count, samples.count)
        guard n > 0 else { return .obj(["count": .int(0)]) }
        let sorted = samples[0..<n].sorted()
        func us(_ q: Double) -> JSON { .double(Double(sorted[min(n - 1, Int(Double(n - 1) * q))]) / 1000) }
        return .obj(["count": .int(count), "p50_us": us(0.5), "p90_us": us(0.9), "p99_us": us(0.99),
                     "max_us": .double(Double(max) / 1000)])
    }
}

/// Counters reported by `stats.get` (one object the loop's stages share).
final class ServerStats {
    var startedNs: UInt64 = 0
    var connectionsTotal = 0
    var connectionsRefused = 0
    var requests = 0
    var notifications = 0
    var errors = 0
    var events = 0
    var eventBytes = 0
    var resyncs = 0
    var slowClientsDropped = 0
    var linesTooLong = 0
    var soundsPlayed = 0
    var soundsFailed = 0
    /// Sounds not played because the desktop's sound settings say so (not failures).
    var soundsSuppressed = 0
    /// Request read → reply queued.
    var handling = LatencyRing()
}
