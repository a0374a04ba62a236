import Glibc
import Testing
@testable import TabBarAudio

/// The null sink paced by a `ManualClock`: frames move only with the clock, voices start
/// at `t × 48 + 32`, and the capture is the mix as 16-bit samples with the silence in between.
@Suite(.serialized) struct ManualClockTests {
    @Test func voicesStartAtTheClocksFrameAndTheCaptureHoldsTheSilenceBetween() throws {
        let dir = TempDir()
        defer { dir.cleanup() }
        sox(dir.file("tick.wav"), ["0.01", "sine", "1000", "gain", "-6"])
        let tick = try SoundBank.loadSound(name: "tick", path: dir.file("tick.wav"), format: .standard)
        let clock = ManualClock()
        let sink = NullSink(format: .standard, clock: clock)
        #expect(sink.periodFrames == ManualClock.periodFrames && sink.pacing == .manual)
        let engine = AudioEngine(sink: sink, bank: SoundBank(format: .standard, sounds: [tick]), idleTimeout: 1e9, log: { _, _ in })
        try engine.start()
        defer { engine.shutdown() }
        _ = try sink.startCapture(path: dir.file("out.wav"))

        func play(at ms: Int64) throws {
            clock.set(ms: ms)
            #expect(clock.settle(queued: false))
            guard case .started = engine.play(tick, gain: 1, requestedAt: 0) else { Issue.record("play failed"); return }
            #expect(clock.settle(queued: true))
        }
        try play(at: 10)
        let afterFirst = sink.position
        try play(at: 100)
        clock.set(ms: 300)
        #expect(clock.settle(queued: false))
        // Nothing renders while the clock stands still.
        let still = sink.position
        usleep(20_000)
        #expect(sink.position == still)
        #expect(still >= 300 * 48 && still <= 300 * 48 + Int64(sink.bufferFrames))
        #expect(afterFirst < 100 * 48)

        var reports: [VoiceReport] = []
        engine.drainReports { reports.append($0) }
        let first: Int64 = 10 * 48 + 32, second: Int64 = 100 * 48 + 32
        #expect(reports.map(\.startFrame) == [first, second])
        let done = try #require(try sink.stopCapture())
        #expect(done.firstFrame == 0 && done.frames == still)

        let samples = s16(Array(readBytes(dir.file("out.wav")).dropFirst(44)))
        #expect(samples.count == Int(still) * 2)
        let expected = tick.samples.map(floatToS16)  // stereo already (loaded into the device format)
        for start in [Int(first), Int(second)] {
            let got = Array(samples[(start * 2)..<(start * 2 + expected.count)])
            #expect(got == expected)
        }
        let lead: Bool = samples[0..<Int(first) * 2].allSatisfy { $0 == 0 }
        #expect(lead)
        let gap: Range<Int> = (Int(first) * 2 + expected.count)..<(Int(second) * 2)
        let silent: Bool = samples[gap].allSatisfy { $0 == 0 }
        #expect(silent)
    }
}
