import Glibc
import Testing
@testable import TabBarAudio

/// Real ALSA path without hardware: the `file` plugin over `null` captures what was written.
@Suite(.serialized) struct AlsaTests {
    private func sound(_ dir: TempDir, _ name: String, _ args: [String]) -> Sound {
        sox(dir.file(name + ".wav"), args)
        return try! SoundBank.loadSound(name: name, path: dir.file(name + ".wav"), format: .standard)
    }

    @Test func capturedBytesAreTheDecodedClick() throws {
        let dir = TempDir()
        defer { dir.cleanup() }
        let click = sound(dir, "click", ["0.05", "sine", "1000", "gain", "-6"])
        let out = dir.file("capture.raw")
        let logs = LogCollector()
        let sink = AlsaSink(device: "file:'\(out)',raw", format: .standard, periodFrames: 256, log: logs.log)
        let engine = AudioEngine(sink: sink, bank: SoundBank(format: .standard, sounds: [click]), log: logs.log)
        try engine.start()
        #expect(engine.deviceState == "idle")
        _ = engine.play(click, gain: 1, requestedAt: monotonicNanos())
        let reports = collectReports(engine, count: 1)
        try #require(reports.count == 1)
        // The file plugin takes every write at once: the sink paces by the clock.
        #expect(eventually { engine.statsJSON()["pacing"]?.stringValue == "clock" })
        engine.shutdown()
        let captured = s16(readBytes(out))
        let start = Int(reports[0].startFrame) * 2
        try #require(captured.count >= start + click.samples.count)
        let expected = click.samples.map(floatToS16)
        let same = Array(captured[start..<(start + expected.count)]) == expected
        #expect(same)
        #expect(captured[0..<start].allSatisfy { $0 == 0 })
        #expect(captured[(start + expected.count)...].allSatisfy { $0 == 0 })
    }

    @Test func overlappingClicksGiveTheirLimitedSum() throws {
        let dir = TempDir()
        defer { dir.cleanup() }
        let a = sound(dir, "a", ["0.1", "sine", "440", "gain", "-1"])
        let b = sound(dir, "b", ["0.1", "square", "300", "gain", "-2"])
        let out = dir.file("capture.raw")
        let sink = AlsaSink(device: "file:'\(out)',raw", format: .standard, periodFrames: 256)
        let engine = AudioEngine(sink: sink, bank: SoundBank(format: .standard, sounds: [a, b]), log: { _, _ in })
        try engine.start()
        _ = engine.play(a, gain: 1, requestedAt: monotonicNanos())
        _ = engine.play(b, gain: 1, requestedAt: monotonicNanos())
        let reports = collectReports(engine, count: 2)
        try #require(reports.count == 2)
        engine.shutdown()
        let captured = s16(readBytes(out))
        // Expected: both sounds summed at their reported start frames, through the same limiter.
        let total = captured.count / 2
        #expect(total >= Int(reports.map(\.startFrame).max()!) + a.frames)
        var mix = [Float](repeating: 0, count: total * 2)
        for (r, s) in zip(reports.sorted { $0.voice < $1.voice }, [a, b]) {
            let start = Int(r.startFrame) * 2
            for i in 0..<s.samples.count where start + i < mix.count { mix[start + i] += s.samples[i] }
        }
        #expect(reports.map(\.startFrame).max()! < Int64(a.frames))  // they really overlap
        #expect(mix.contains { abs($0) > 1 })                         // and the sum would clip
        var limiter = SoftLimiter()
        limiter.process(&mix, channels: 2)
        let expected = mix.map(floatToS16)
        let same = captured == expected
        #expect(same)
        #expect(captured.allSatisfy { abs(Int($0)) <= Int(32768 * limiter.ceiling) + 1 })
    }

    @Test func missingDeviceIsUnavailableWithTheReasonAndNoStderrChatter() throws {
        let logs = LogCollector()
        let sink = AlsaSink(device: "hw:7", format: .standard, periodFrames: 256, log: logs.log)
        let engine = AudioEngine(sink: sink, bank: SoundBank(format: .standard), log: logs.log)
        try engine.start()
        defer { engine.shutdown() }
        // What is true, then the call: no such card here.
        #expect(engine.deviceState.hasPrefix("unavailable: no sound card (snd_pcm_open"))
        let s = Sound(name: "x", samples: [0, 0], format: .standard)
        guard case .unavailable(let why) = engine.play(s, gain: 1, requestedAt: monotonicNanos()) else {
            Issue.record("expected unavailable"); return
        }
        #expect(why.contains("unavailable"))
        #expect(logs.contains(.error, "audio device unavailable device=hw:7"))
        #expect(logs.contains(.debug, "alsa-lib:"))  // routed into our log at debug level, not stderr
        #expect(engine.statsJSON()["open_failures"]?.intValue ?? 0 >= 1)
    }
}
