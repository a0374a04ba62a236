import Synchronization
import TabBarCore

/// What the last `AudioEngine.latencyWindow` voices that started measured (latencies in ns,
/// frames ahead), in rings allocated once, and the largest latencies ever seen. State loop only
/// (`AudioEngine.drainReports` adds, `statsJSON` reads): a started voice costs three stores.
struct StartFigures {
    private let latencies: UnsafeMutablePointer<UInt64>
    private let sinkLatencies: UnsafeMutablePointer<UInt64>
    private let aheads: UnsafeMutablePointer<Int>
    /// Voices ever added (the rings hold the last `AudioEngine.latencyWindow` of them).
    private(set) var count = 0
    private(set) var maxLatency: UInt64 = 0
    private(set) var maxSinkLatency: UInt64 = 0

    init() {
        latencies = .allocate(capacity: AudioEngine.latencyWindow)
        sinkLatencies = .allocate(capacity: AudioEngine.latencyWindow)
        aheads = .allocate(capacity: AudioEngine.latencyWindow)
    }

    func deallocate() {
        latencies.deallocate()
        sinkLatencies.deallocate()
        aheads.deallocate()
    }

    @inline(__always)
    mutating func add(latency: UInt64, sinkLatency: UInt64, ahead: Int) {
        let i = count & (AudioEngine.latencyWindow - 1)
        latencies[i] = latency
        sinkLatencies[i] = sinkLatency
        aheads[i] = ahead
        count &+= 1
        if latency > maxLatency { maxLatency = latency }
        if sinkLatency > maxSinkLatency { maxSinkLatency = sinkLatency }
    }

    /// How many the rings hold.
    var stored: Int { Swift.min(count, AudioEngine.latencyWindow) }

    /// The figures the rings hold, each sorted.
    func sorted() -> (latencies: [UInt64], sinkLatencies: [UInt64], aheads: [Int]) {
        let n = stored
        return (UnsafeBufferPointer(start: latencies, count: n).sorted(),
                UnsafeBufferPointer(start: sinkLatencies, count: n).sorted(),
                UnsafeBufferPointer(start: aheads, count: n).sorted())
    }
}

extension AudioEngine {
    /// Counters and latency figures (latencies in µs over the last `latencyWindow` voices).
    ///
    /// `latency_*_us`: request read → first frame handed to the sink (`snd_pcm_writei`).
    /// `sink_latency_*_us`: request read → first frame estimated at the listener (the write
    /// time plus `snd_pcm_delay`, which includes a sound server's delay). See docs/AUDIO.md.
    public func statsJSON() -> JSON {
        let d = device.withLock { $0 }
        let (lat, sinkLat, aheadSorted) = figures.sorted()
        func pct<T: BinaryInteger>(_ a: [T], _ p: Double) -> JSON {
            guard !a.isEmpty else { return .null }
            let i = min(a.count - 1, Int((p * Double(a.count - 1)).rounded()))
            return .double(Double(a[i]))
        }
        func us(_ v: JSON) -> JSON {
            if case .number(let t) = v, let x = Double(t) { return .double((x / 10).rounded() / 100) }
            return .null
        }
        let fmt = sink.format
        let periodUs = Double(d.periodFrames) * 1e6 / Double(max(fmt.rate, 1))
        var m: [JSON.Member] = []
        func add(_ k: String, _ v: JSON) { m.append(JSON.Member(k, v)) }
        func count(_ k: String, _ a: borrowing Atomic<Int>) { add(k, .int(a.load(ordering: .relaxed))) }
        func latencies(_ name: String, _ sorted: [UInt64], max: UInt64) {
            add("\(name)_p50_us", us(pct(sorted, 0.5)))
            add("\(name)_p99_us", us(pct(sorted, 0.99)))
            add("\(name)_max_us", figures.count > 0 ? .double((Double(max) / 10).rounded() / 100) : .null)
        }
        add("device", .string(sink.deviceName))
        add("state", .string(deviceState))
        add("pacing", .string(d.pacing?.rawValue ?? ""))
        add("rate", .int(fmt.rate))
        add("channels", .int(fmt.channels))
        add("period_frames", .int(d.periodFrames))
        add("period_us", .double((periodUs * 10).rounded() / 10))
        add("buffer_frames", .int(d.bufferFrames))
        count("pull_frames", counters.pullFrames)
        add("voices", .int(voiceCount))
        add("sounds", .int(bank.sounds.count))
        count("voices_played", counters.played)
        count("voices_failed", counters.failed)
        count("voices_stolen", counters.stolen)
        count("voices_restarted", counters.restarted)
        count("queue_full", counters.queueFull)
        count("reports_dropped", counters.reportsDropped)
        add("latency_samples", .int(figures.stored))
        latencies("latency", lat, max: figures.maxLatency)
        latencies("sink_latency", sinkLat, max: figures.maxSinkLatency)
        add("frames_ahead_p50", pct(aheadSorted, 0.5))
        add("frames_ahead_max", aheadSorted.last.map { JSON.int($0) } ?? .null)
        count("xruns", counters.xruns)
        count("start_races", counters.startRaces)
        count("run_out_xruns", counters.runOutXruns)
        count("stream_starts", counters.streamStarts)
        count("stream_stops", counters.streamStops)
        count("standbys", counters.standbys)
        count("stalls", counters.stalls)
        count("wakeups", counters.wakeups)
        count("thread_wakes", counters.threadWakes)
        count("chunks_written", counters.chunks)
        count("frames_written", counters.frames)
        count("errors", counters.errors)
        count("open_failures", counters.openFailures)
        add("last_error", d.lastError.isEmpty ? .null : .string(d.lastError))
        return .object(m)
    }
}
