import Synchronization
import TabBarCore

/// What the last `AudioEngine.latencyWindow` voices that started measured (latencies in ns,
/// frames ahead), in rings of that size, and the largest latencies ever seen. The front's
/// (`AudioEngine.drainReports` adds, `statsJSON` reads).
struct StartFigures {
    private var latencies = [UInt64](repeating: 0, count: AudioEngine.latencyWindow)
    private var sinkLatencies = [UInt64](repeating: 0, count: AudioEngine.latencyWindow)
    private var aheads = [Int](repeating: 0, count: AudioEngine.latencyWindow)
    /// Voices ever added (the rings hold the last `AudioEngine.latencyWindow` of them).
    private(set) var count = 0
    private(set) var maxLatency: UInt64 = 0
    private(set) var maxSinkLatency: UInt64 = 0

    mutating func add(latency: UInt64, sinkLatency: UInt64, ahead: Int) {
        let i = count % AudioEngine.latencyWindow
        latencies[i] = latency
        sinkLatencies[i] = sinkLatency
        aheads[i] = ahead
        count += 1
        maxLatency = max(maxLatency, latency)
        maxSinkLatency = max(maxSinkLatency, sinkLatency)
    }

    /// How many the rings hold.
    var stored: Int { min(count, AudioEngine.latencyWindow) }

    /// The figures the rings hold, each sorted.
    func sorted() -> (latencies: [UInt64], sinkLatencies: [UInt64], aheads: [Int]) {
        (latencies.prefix(stored).sorted(), sinkLatencies.prefix(stored).sorted(), aheads.prefix(stored).sorted())
    }
}

extension AudioEngine {
    /// Counters and latency figures (latencies in µs over the last `latencyWindow` voices).
    ///
    /// `latency_*_us`: request read → first frame handed to the sink (`snd_pcm_writei`).
    /// `sink_latency_*_us`: request read → first frame estimated at the listener (the write
    /// time plus `snd_pcm_delay`, which includes a sound server's delay). See docs/AUDIO.md.
    public func statsJSON() -> JSON {
        let d = shared.device.withLock { $0 }
        let (figures, soundCount) = front.withLock { ($0.figures, $0.bank.sounds.count) }
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
        let fmt = format
        let periodUs = Double(d.periodFrames) * 1e6 / Double(max(fmt.rate, 1))
        var m: [JSON.Member] = []
        func add(_ k: String, _ v: JSON) { m.append(JSON.Member(k, v)) }
        func count(_ k: String, _ a: borrowing Atomic<Int>) { add(k, .int(a.load(ordering: .relaxed))) }
        func latencies(_ name: String, _ sorted: [UInt64], max: UInt64) {
            add("\(name)_p50_us", us(pct(sorted, 0.5)))
            add("\(name)_p99_us", us(pct(sorted, 0.99)))
            add("\(name)_max_us", figures.count > 0 ? .double((Double(max) / 10).rounded() / 100) : .null)
        }
        add("device", .string(d.deviceName))
        add("state", .string(deviceState))
        add("pacing", .string(d.pacing?.rawValue ?? ""))
        add("rate", .int(fmt.rate))
        add("channels", .int(fmt.channels))
        add("period_frames", .int(d.periodFrames))
        add("period_us", .double((periodUs * 10).rounded() / 10))
        add("buffer_frames", .int(d.bufferFrames))
        count("pull_frames", shared.counters.pullFrames)
        add("voices", .int(voiceCount))
        add("sounds", .int(soundCount))
        count("voices_played", shared.counters.played)
        count("voices_failed", shared.counters.failed)
        count("voices_stolen", shared.counters.stolen)
        count("voices_restarted", shared.counters.restarted)
        count("queue_full", shared.counters.queueFull)
        count("reports_dropped", shared.counters.reportsDropped)
        add("latency_samples", .int(figures.stored))
        latencies("latency", lat, max: figures.maxLatency)
        latencies("sink_latency", sinkLat, max: figures.maxSinkLatency)
        add("frames_ahead_p50", pct(aheadSorted, 0.5))
        add("frames_ahead_max", aheadSorted.last.map { JSON.int($0) } ?? .null)
        count("xruns", shared.counters.xruns)
        count("start_races", shared.counters.startRaces)
        count("run_out_xruns", shared.counters.runOutXruns)
        count("stream_starts", shared.counters.streamStarts)
        count("stream_stops", shared.counters.streamStops)
        count("idle_reopens", shared.counters.idleReopens)
        count("standbys", shared.counters.standbys)
        count("stalls", shared.counters.stalls)
        count("wakeups", shared.counters.wakeups)
        count("thread_wakes", shared.counters.threadWakes)
        count("chunks_written", shared.counters.chunks)
        count("frames_written", shared.counters.frames)
        count("errors", shared.counters.errors)
        count("open_failures", shared.counters.openFailures)
        add("last_error", d.lastError.isEmpty ? .null : .string(d.lastError))
        return .object(m)
    }
}
