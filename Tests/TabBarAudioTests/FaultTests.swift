import Glibc
import Testing
@testable import TabBarAudio

/// Audio faults injected through `FaultSink` while the engine runs (issue 6, item 5):
/// the device lost while playing (and coming back), an xrun. Every wait polls an
/// observable condition with a deadline.
@Suite(.serialized) struct FaultTests {
    private func tone(_ name: String, seconds: Double) -> Sound {
        let frames = Int(seconds * 48000)
        return Sound(name: name, samples: [Float](repeating: 0.05, count: frames * 2), format: .standard)
    }

    @Test func deviceLostWhilePlayingIsReportedAndRecoversWhenBack() throws {
        let logs = LogCollector()
        let sink = FaultSink()
        var long = tone("long", seconds: 5)
        let click = tone("click", seconds: 0.05)
        let engine = AudioEngine(sink: sink, bank: SoundBank(format: .standard, sounds: [click]), shutdownGrace: 0,
                                 log: logs.log)
        try engine.start()
        defer { engine.shutdown() }

        // Clicks playing over a long sound.
        let l = try #require(voice(engine.play(long, gain: 1, requestedAt: monotonicNanos())))
        let c = try #require(voice(engine.play(click, gain: 1, requestedAt: monotonicNanos())))
        #expect(collectReports(engine, count: 2).count == 2)
        #expect(eventually { sink.wasWritten(voice: l) && sink.wasWritten(voice: c) })
        #expect(engine.deviceState == "playing")

        // The device disappears mid-stream.
        let unpluggedAt = monotonicNanos()
        sink.unplug()
        let lost = "unavailable: \(FaultSink.lostReason)"
        #expect(eventually { engine.deviceState == lost })
        #expect(!engine.isAvailable)
        #expect(engine.play(click, gain: 1, requestedAt: monotonicNanos()) == .unavailable(lost))
        var stats = engine.statsJSON()
        #expect(stats["state"]?.stringValue == lost)
        #expect(stats["errors"]?.intValue == 1)
        #expect(stats["last_error"]?.stringValue == FaultSink.lostReason)
        #expect(logs.contains(.error, "audio device failed device=fault reason=\"\(FaultSink.lostReason)\""))
        // The voices cut by the loss hand their sounds back to the state loop at once
        // (reportFD readable), so a reload never keeps a replaced sound alive.
        // Each voice the loss cut is reported failed (sound.failed), naming the device's reason.
        let failed = collectReports(engine, count: 2).filter { $0.failure != nil }
        #expect(Set(failed.map(\.voice)) == [l, c])
        #expect(failed.allSatisfy { $0.failure == "the audio device was lost before the sound was played: \(FaultSink.lostReason)" })
        #expect(engine.statsJSON()["voices_failed"]?.intValue == 2)
        engine.drainReports { _ in }
        #expect(isKnownUniquelyReferenced(&long), "the engine still holds the cut voice's sound")

        // Re-opened soon because a client asked for a sound (the refused play above), then
        // with back-off (0.25 s, then 0.5 s, …) while nobody asks and the device stays away.
        #expect(eventually(seconds: 5) { sink.snapshot.openAttempts.count >= 4 })
        let attempts = sink.snapshot.openAttempts
        let asked = Double(attempts[1] &- unpluggedAt) / 1e9
        let first = Double(attempts[2] &- attempts[1]) / 1e9
        let second = Double(attempts[3] &- attempts[2]) / 1e9
        #expect(asked < 0.25, "retry after a refused play came after \(asked) s")
        #expect(first >= 0.2, "first unasked retry after \(first) s")
        #expect(second >= 0.45 && second > first, "second retry after \(second) s, first \(first) s")
        stats = engine.statsJSON()
        #expect(stats["open_failures"]?.intValue ?? 0 >= 2)
        #expect(stats["last_error"]?.stringValue == FaultSink.openReason)
        #expect(engine.deviceState == "unavailable: \(FaultSink.openReason)")
        #expect(logs.contains(.error, "audio device unavailable device=fault reason=\"\(FaultSink.openReason)\""))

        // The device is back: the next retry opens it and a later click really reaches it.
        sink.plug()
        #expect(eventually(seconds: 10) { engine.deviceState == "idle" })
        #expect(sink.snapshot.opens == 2)
        let again = try #require(voice(engine.play(click, gain: 1, requestedAt: monotonicNanos())))
        let reports = collectReports(engine, count: 1)
        #expect(reports.map(\.voice) == [again])
        #expect(eventually { sink.wasWritten(voice: again) })
        #expect(engine.deviceState == "playing")
        stats = engine.statsJSON()
        #expect(stats["errors"]?.intValue == 1)
        #expect(stats["voices_played"]?.intValue == 3)
    }

    @Test func deviceLostWhileIdleIsFoundAtTheNextClickAndRecovers() throws {
        let sink = FaultSink()
        let click = tone("click", seconds: 0.01)
        let engine = AudioEngine(sink: sink, bank: SoundBank(format: .standard, sounds: [click]), idleTimeout: 0.05, log: { _, _ in })
        try engine.start()
        defer { engine.shutdown() }
        _ = engine.play(click, gain: 1, requestedAt: monotonicNanos())
        #expect(collectReports(engine, count: 1).count == 1)
        #expect(eventually { engine.deviceState == "idle" })

        sink.unplug()
        // The engine cannot know before it touches the device: this click is accepted, then
        // reported failed (never silently lost).
        let lost = try #require(voice(engine.play(click, gain: 1, requestedAt: monotonicNanos())))
        let failed = collectReports(engine, count: 1)
        #expect(failed.map(\.voice) == [lost])
        #expect(failed.first?.failure?.hasPrefix("the audio device was lost") == true)
        #expect(eventually { engine.deviceState == "unavailable: \(FaultSink.lostReason)" })
        #expect(engine.statsJSON()["errors"]?.intValue == 1)

        sink.plug()
        #expect(eventually(seconds: 10) { engine.deviceState == "idle" })
        let v = try #require(voice(engine.play(click, gain: 1, requestedAt: monotonicNanos())))
        #expect(collectReports(engine, count: 1).map(\.voice) == [v])
        #expect(eventually { sink.wasWritten(voice: v) })
    }

    /// The device went away between the stream's start and its first write (PipeWire killed
    /// while the stream stood by: the start succeeds, the write fails), with a click short
    /// enough to start and end in that one write — every click at min-quantum 1024, or with the
    /// cautious 1024 + period queue before the device is measured. It is reported failed.
    /// Before, a voice that ended in the failed chunk was in no list the engine looks at when
    /// it closes the device: accepted and lost without a word (tests/pipewire's ServerRestart
    /// caught it).
    @Test func aClickWholeInAFailedWriteIsReported() throws {
        let sink = FaultSink(periodFrames: 256)
        let click = tone("click", seconds: 0.005)   // 240 frames; the first write is 512
        let engine = AudioEngine(sink: sink, bank: SoundBank(format: .standard, sounds: [click]), log: { _, _ in })
        try engine.start()
        defer { engine.shutdown() }
        sink.injectLossAtNextWrite()
        let v = try #require(voice(engine.play(click, gain: 1, requestedAt: monotonicNanos())))
        let r = firstReports(engine, for: [v])
        #expect(r.first?.failure?.hasPrefix("the audio device was lost") == true, "\(r)")
        #expect(eventually { engine.deviceState.hasPrefix("unavailable: ") })
        #expect(engine.statsJSON()["voices_failed"]?.intValue == 1)
    }

    /// An underrun met by the write of a voice's last chunk (recovered inside the write, so
    /// no later look sees it, and the voice no longer sounds once that chunk is written): the
    /// voice has a hole and is reported, and the xrun is counted. Before, the drain that
    /// followed took it for the expected run-out: a damaged click, 0 xruns, no sound.failed
    /// (the occasional damaged click at the sink, docs/PERFORMANCE.md).
    @Test func anUnderrunInTheLastWriteOfAVoiceIsReported() throws {
        let sink = FaultSink(periodFrames: 128)
        let click = tone("click", seconds: 0.05)
        let engine = AudioEngine(sink: sink, bank: SoundBank(format: .standard, sounds: [click]), log: { _, _ in })
        try engine.start()
        defer { engine.shutdown() }
        sink.injectXrunAtVoiceEnd()
        let v = try #require(voice(engine.play(click, gain: 1, requestedAt: monotonicNanos())))
        let reports = collectReports(engine, count: 2)
        #expect(reports.first?.voice == v && reports.first?.failure == nil, "it started")
        let cut = reports.dropFirst().first
        #expect(cut?.voice == v)
        #expect(cut?.failure?.hasPrefix("an underrun") == true)
        #expect(eventually { engine.statsJSON()["xruns"]?.intValue == 1 })
        #expect(engine.statsJSON()["voices_failed"]?.intValue == 1)
    }

    @Test func xrunIsCountedAndPlaybackContinues() throws {
        let sink = FaultSink()
        let long = tone("long", seconds: 5), click = tone("click", seconds: 0.05)
        let engine = AudioEngine(sink: sink, bank: SoundBank(format: .standard, sounds: [long, click]), shutdownGrace: 0,
                                 log: { _, _ in })
        try engine.start()
        defer { engine.shutdown() }
        let l = try #require(voice(engine.play(long, gain: 1, requestedAt: monotonicNanos())))
        #expect(collectReports(engine, count: 1).count == 1)
        #expect(eventually { sink.wasWritten(voice: l) })
        #expect(engine.statsJSON()["xruns"]?.intValue == 0)

        sink.injectXrun()
        #expect(eventually { engine.statsJSON()["xruns"]?.intValue == 1 })
        // The long sound was sounding: the underrun cut it, and that is reported once.
        let cut = collectReports(engine, count: 1)
        #expect(cut.map(\.voice) == [l])
        #expect(cut.first?.failure?.hasPrefix("an underrun") == true)
        #expect(engine.statsJSON()["voices_failed"]?.intValue == 1)
        let after = sink.snapshot.totalWritten
        #expect(eventually { sink.snapshot.totalWritten > after + 4800 }, "the stream goes on after the xrun")
        #expect(engine.deviceState == "playing")
        let c = try #require(voice(engine.play(click, gain: 1, requestedAt: monotonicNanos())))
        #expect(collectReports(engine, count: 1).map(\.voice) == [c])
        #expect(eventually { sink.wasWritten(voice: c) })
        let stats = engine.statsJSON()
        #expect(stats["xruns"]?.intValue == 1)
        #expect(stats["errors"]?.intValue == 0)
        #expect(stats["last_error"] == .null)
        #expect(sink.snapshot.opens == 1)
    }
}
