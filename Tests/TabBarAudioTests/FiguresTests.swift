import Glibc
import Testing
@testable import TabBarAudio

/// Behaviour under load, with the measured figures printed (timing is reported, never asserted).
@Suite(.serialized) struct FiguresTests {
    private func click(_ dir: TempDir, seconds: String = "0.012", gain: String = "-6") -> Sound {
        sox(dir.file("click.wav"), [seconds, "sine", "2600", "gain", gain])
        return try! SoundBank.loadSound(name: "click", path: dir.file("click.wav"), format: .standard)
    }

    /// Clicks every 7 ms (never aligned with the 5.33 ms period) through ALSA's `null` PCM.
    @Test func latencyThroughAlsaNull() throws {
        let dir = TempDir()
        defer { dir.cleanup() }
        let c = click(dir)
        let engine = AudioEngine(sink: AlsaSink(device: "null", format: .standard, periodFrames: 256),
                                 bank: SoundBank(format: .standard, sounds: [c]), log: { _, _ in })
        try engine.start()
        defer { engine.shutdown() }
        var reports: [VoiceReport] = []
        var worstPlay: UInt64 = 0
        for i in 0..<200 {
            // Half of them from idle (stream stopped), half into a running stream.
            let t0 = monotonicNanos()
            #expect(engine.play(c, gain: 1, requestedAt: t0) != .unavailable(""))
            worstPlay = max(worstPlay, monotonicNanos() - t0)
            reports += collectReports(engine, count: 1)
            var ts = timespec(tv_sec: 0, tv_nsec: i % 2 == 0 ? 7_000_000 : 1_000_000)
            nanosleep(&ts, nil)
        }
        #expect(reports.count == 200)
        let s = engine.statsJSON()
        print("FIGURES alsa-null: p50=\(s["latency_p50_us"]!.text)us p99=\(s["latency_p99_us"]!.text)us max=\(s["latency_max_us"]!.text)us frames_ahead_p50=\(s["frames_ahead_p50"]!.text) play()_max=\(worstPlay / 1000)us xruns=\(s["xruns"]!.text)")
    }

    /// Fifty overlapping clicks in 100 ms: all start, none queue behind another, the output stays under the ceiling.
    @Test func fiftyOverlappingClicks() throws {
        let dir = TempDir()
        defer { dir.cleanup() }
        // Half-second clicks: the 50 plays (2 ms apart, 100 ms when the machine is idle) overlap
        // more than the 16 voices even when a loaded machine stretches the loop to 500 ms.
        // (0.05 s clicks needed 17 plays within 50 ms: with the sleeps stretched to ~5 ms
        // under load, no voice was ever stolen and the test failed.)
        let c = click(dir, seconds: "0.5", gain: "-3")
        let sink = NullSink(format: .standard, periodFrames: 256, captureFrames: 48000)
        let engine = AudioEngine(sink: sink, bank: SoundBank(format: .standard, sounds: [c]), voices: 16, log: { _, _ in })
        try engine.start()
        defer { engine.shutdown() }
        var worstPlay: UInt64 = 0
        for _ in 0..<50 {
            let t0 = monotonicNanos()
            guard case .started = engine.play(c, gain: 1, requestedAt: t0) else { Issue.record("refused"); return }
            worstPlay = max(worstPlay, monotonicNanos() - t0)
            var ts = timespec(tv_sec: 0, tv_nsec: 2_000_000)
            nanosleep(&ts, nil)
        }
        // Every click starts: 50 start reports (a stolen voice adds a failure report of its
        // own, and how many of those are drained with them depends on timing).
        var started = 0
        let deadline = monotonicNanos() + 30_000_000_000
        while started < 50 && monotonicNanos() < deadline {
            started += collectReports(engine, count: 1).filter { $0.failure == nil }.count
        }
        #expect(started == 50)
        #expect(eventually { sink.captured.count == 48000 * 2 })
        let cap = sink.captured
        #expect(cap.allSatisfy { abs($0) <= 1 })
        #expect(engine.statsJSON()["voices_stolen"]?.intValue ?? 0 > 0)
        let peak = cap.map { abs($0) }.max() ?? 0
        let s = engine.statsJSON()
        print("FIGURES 50 clicks/100ms: peak=\(peak) p50=\(s["latency_p50_us"]!.text)us p99=\(s["latency_p99_us"]!.text)us max=\(s["latency_max_us"]!.text)us play()_max=\(worstPlay / 1000)us stolen=\(s["voices_stolen"]!.text)")
    }

    @Test func conversionCost() throws {
        var t = monotonicNanos()
        let theme = SoundTheme()
        let path = try #require(theme.lookup("bell"))
        let decoded = try Decoder.decode(path: path)
        let decodeNs = monotonicNanos() - t
        for q in [Converter.Quality.best, .medium, .fastest, .linear] {
            t = monotonicNanos()
            let out = try Converter.resample(decoded.samples, channels: decoded.format.channels,
                                             from: decoded.format.rate, to: 48000, path: path, quality: q)
            let ns = monotonicNanos() - t
            #expect(abs(out.count / 2 - decoded.frames * 48000 / 44100) <= 2)
            print("FIGURES resample bell.oga \(decoded.frames) frames 44.1k→48k stereo \(q): \(ns / 1000) us (decode \(decodeNs / 1000) us)")
        }
    }
}
