import Glibc
import Synchronization
import Testing
@testable import TabBarAudio

/// A mono 16-bit sine made by sox, loaded in `format`.
private func makeSound(_ dir: TempDir, _ name: String, seconds: String = "0.05", freq: String = "1000",
                       gainDB: String? = nil, format: PCMFormat = .standard) -> Sound {
    let path = dir.file(name + ".wav")
    var args = [seconds, "sine", freq]
    if let g = gainDB { args += ["gain", g] }
    sox(path, args)
    return try! SoundBank.loadSound(name: name, path: path, format: format)
}

/// An engine started on a null sink with a pool of `voices`, and the 1 s sound it plays
/// (voices still sounding at shutdown are cut at once).
private func startedPool(_ dir: TempDir, voices: Int) throws -> (Sound, NullSink, AudioEngine) {
    let long = makeSound(dir, "long", seconds: "1")
    let sink = NullSink(format: .standard, periodFrames: 256, recordVoices: 16)
    let engine = AudioEngine(sink: sink, bank: SoundBank(format: .standard, sounds: [long]), voices: voices,
                             shutdownGrace: 0, log: { _, _ in })
    try engine.start()
    return (long, sink, engine)
}

@Suite(.serialized) struct EngineTests {
    @Test func nullSinkRecordsVoicesAndCapturesTheMix() throws {
        let dir = TempDir()
        defer { dir.cleanup() }
        let click = makeSound(dir, "click")
        let sink = NullSink(format: .standard, periodFrames: 256, captureFrames: 48000, recordVoices: 16)
        let engine = AudioEngine(sink: sink, bank: SoundBank(format: .standard, sounds: [click]), log: { _, _ in })
        try engine.start()
        defer { engine.shutdown() }
        #expect(engine.deviceState == "idle")
        let t = monotonicNanos()
        guard case .started(let id) = engine.play(click, gain: 0.5, requestedAt: t) else {
            Issue.record("play failed"); return
        }
        let reports = collectReports(engine, count: 1)
        try #require(reports.count == 1)
        #expect(reports[0].voice == id && reports[0].name == "click")
        #expect(reports[0].latencyNs > 0)
        #expect(sink.records == [VoiceRecord(voice: id, name: "click", start: reports[0].startFrame, frames: 2400, gain: 0.5)])
        #expect(eventually { sink.captured.count >= (Int(reports[0].startFrame) + 2400) * 2 })
        let cap = sink.captured
        let start = Int(reports[0].startFrame) * 2
        for i in 0..<(2400 * 2) { #expect(cap[start + i] == click.samples[i] * 0.5) }
        #expect(engine.deviceState == "playing")
    }

    /// The daemon's null sink (headless, or standing in for a missing sound card) plays for as
    /// long as the daemon runs: it keeps a voice only when asked to, and then only the first
    /// ones. (It kept every voice it ever played: 60 MB more resident per 2.5 million clicks.)
    @Test func nullSinkKeepsOnlyTheVoicesItWasAskedToKeep() throws {
        let dir = TempDir()
        defer { dir.cleanup() }
        let click = makeSound(dir, "click", seconds: "0.005")
        for keep in [0, 3] {
            let sink = NullSink(format: .standard, periodFrames: 256, recordVoices: keep)
            let engine = AudioEngine(sink: sink, bank: SoundBank(format: .standard, sounds: [click]), log: { _, _ in })
            try engine.start()
            defer { engine.shutdown() }
            var ids: [UInt32] = []
            for _ in 0..<8 {
                guard case .started(let id) = engine.play(click, gain: 1, requestedAt: monotonicNanos()) else {
                    Issue.record("play refused"); return
                }
                ids.append(id)
                let r = firstReports(engine, for: [id])
                try #require(r.count == 1 && r[0].failure == nil, "voice \(id): \(r.first?.failure ?? "no report")")
            }
            #expect(sink.records.map(\.voice) == Array(ids.prefix(keep)), "asked to keep \(keep)")
        }
    }

    @Test func idleStopsTheStreamWithoutWakeUpsAndRestartsAtOnce() throws {
        let dir = TempDir()
        defer { dir.cleanup() }
        let click = makeSound(dir, "click", seconds: "0.01")
        let sink = NullSink(format: .standard, periodFrames: 256)
        let engine = AudioEngine(sink: sink, bank: SoundBank(format: .standard, sounds: [click]), idleTimeout: 0.05, log: { _, _ in })
        try engine.start()
        defer { engine.shutdown() }
        _ = engine.play(click, gain: 1, requestedAt: monotonicNanos())
        #expect(collectReports(engine, count: 1).count == 1)
        #expect(eventually { sink.streamStops == 1 })
        #expect(engine.deviceState == "idle")
        // Idle: the audio thread does not wake up at all.
        let before = voluntarySwitches(tid: engine.audioThreadID)
        try #require(before != nil)
        usleep(300_000)
        #expect(voluntarySwitches(tid: engine.audioThreadID) == before)
        // The next click restarts the stream.
        _ = engine.play(click, gain: 1, requestedAt: monotonicNanos())
        #expect(collectReports(engine, count: 1).count == 1)
        #expect(sink.streamStarts == 2)
    }

    @Test func fixedPoolStealsTheOldestVoice() throws {
        let dir = TempDir()
        defer { dir.cleanup() }
        let (long, _, engine) = try startedPool(dir, voices: 4)
        defer { engine.shutdown() }
        for _ in 0..<4 { _ = engine.play(long, gain: 0.1, requestedAt: monotonicNanos()) }
        #expect(collectReports(engine, count: 4).count == 4)
        for _ in 0..<2 { _ = engine.play(long, gain: 0.1, requestedAt: monotonicNanos()) }
        #expect(collectReports(engine, count: 2).count == 2)
        let stats = engine.statsJSON()
        #expect(stats["voices_played"]?.intValue == 6)
        #expect(stats["voices_stolen"]?.intValue == 2)
    }

    /// A burst of taps larger than the pool, taken at one wake-up: each voice replaced before
    /// its first frame is reported failed, with why, the last ones are heard, and every one
    /// of the burst gets its report.
    @Test func aBurstLargerThanThePoolReportsEachReplacedVoice() throws {
        let dir = TempDir()
        defer { dir.cleanup() }
        let (long, sink, engine) = try startedPool(dir, voices: 2)
        defer { engine.shutdown() }
        // Parked in its idle wait, the thread takes nothing until it is woken: the whole burst
        // is then one take, however loaded the machine.
        try #require(eventually { engine.audioThreadID != 0 && blockedInPoll(tid: engine.audioThreadID) })
        var ids: [UInt32] = []
        for _ in 0..<6 {
            guard case .started(let id) = engine.play(long, gain: 0.1, requestedAt: monotonicNanos(), wake: false) else {
                Issue.record("play refused"); return
            }
            ids.append(id)
        }
        engine.wake()
        let reports = firstReports(engine, for: ids)
        try #require(reports.count == 6, "\(reports.count) of 6 voices reported")
        for r in reports.prefix(4) {
            #expect(r.failure?.contains("replaced before it started") == true, "voice \(r.voice): \(r.failure ?? "started")")
        }
        for r in reports.suffix(2) { #expect(r.failure == nil, "voice \(r.voice): \(r.failure ?? "")") }
        #expect(sink.records.map(\.voice) == Array(ids.suffix(2)))
    }

    @Test func restartFadesTheEarlierVoice() throws {
        let dir = TempDir()
        defer { dir.cleanup() }
        let long = makeSound(dir, "long", seconds: "1")
        let sink = NullSink(format: .standard, periodFrames: 256)
        let engine = AudioEngine(sink: sink, bank: SoundBank(format: .standard, sounds: [long]), shutdownGrace: 0,
                                 log: { _, _ in })
        try engine.start()
        defer { engine.shutdown() }
        _ = engine.play(long, gain: 0.1, requestedAt: monotonicNanos(), retrigger: .restart)
        #expect(collectReports(engine, count: 1).count == 1)
        _ = engine.play(long, gain: 0.1, requestedAt: monotonicNanos(), retrigger: .restart)
        #expect(collectReports(engine, count: 1).count == 1)
        #expect(engine.statsJSON()["voices_restarted"]?.intValue == 1)
    }

    @Test func playIsRefusedForAForeignFormat() throws {
        let other = Sound(name: "mono", samples: [0.1, 0.2], format: PCMFormat(rate: 48000, channels: 1))
        let engine = AudioEngine(sink: NullSink(), bank: SoundBank(format: .standard), log: { _, _ in })
        try engine.start()
        defer { engine.shutdown() }
        guard case .unavailable(let why) = engine.play(other, gain: 1, requestedAt: monotonicNanos()) else {
            Issue.record("expected unavailable"); return
        }
        #expect(why.contains("mono"))
    }

    @Test func limiterKeepsPeaksUnderTheCeilingAndPassesQuietAudio() {
        var l = SoftLimiter(ceiling: 0.98)
        var quiet: [Float] = (0..<1000).map { Float(sin(Double($0) * 0.1)) * 0.5 }
        let original = quiet
        l.process(&quiet, channels: 2)
        #expect(quiet == original)
        var loud: [Float] = (0..<1000).map { Float(sin(Double($0) * 0.1)) * 3 }
        l.process(&loud, channels: 2)
        #expect(loud.allSatisfy { abs($0) <= l.ceiling })
        #expect(loud.contains { abs($0) > 0.9 })
    }
}

/// A sink whose device cannot be opened the first `failures` times.
final class FlakySink: AudioSink, Sendable {
    let inner = NullSink()
    let failures: Int
    private let openAttempts = Atomic<Int>(0)
    var attempts: Int { openAttempts.load(ordering: .acquiring) }
    init(failures: Int) { self.failures = failures }
    var format: PCMFormat { inner.format }
    var periodFrames: Int { inner.periodFrames }
    var bufferFrames: Int { inner.bufferFrames }
    var deviceName: String { "flaky" }
    var pacing: StreamPacing { .clock }
    var xruns: Int { 0 }
    func open() throws {
        if openAttempts.add(1, ordering: .acquiringAndReleasing).newValue <= failures { throw AudioError.deviceOpen(device: "flaky", reason: "No such device") }
        try inner.open()
    }
    func start() throws { try inner.start() }
    func queuedFrames() throws -> Int { try inner.queuedFrames() }
    func wait(lowWater: Int, wakeFD: Int32, timeoutNanos: UInt64?) throws -> Bool {
        try inner.wait(lowWater: lowWater, wakeFD: wakeFD, timeoutNanos: timeoutNanos)
    }
    func write(_ samples: UnsafePointer<Float>, frames: Int) throws { try inner.write(samples, frames: frames) }
    func stop() { inner.stop() }
    func close() { inner.close() }
}

@Suite struct RetryTests {
    @Test func unavailableDeviceIsRetriedWithBackOffAndRecovers() throws {
        let logs = LogCollector()
        let sink = FlakySink(failures: 2)
        let engine = AudioEngine(sink: sink, bank: SoundBank(format: .standard), log: logs.log)
        try engine.start()
        defer { engine.shutdown() }
        #expect(engine.deviceState == "unavailable: No such device")
        let s = Sound(name: "x", samples: [Float](repeating: 0.1, count: 200), format: .standard)
        #expect(engine.play(s, gain: 1, requestedAt: monotonicNanos()) == .unavailable("unavailable: No such device"))
        #expect(eventually(seconds: 10) { engine.deviceState == "idle" })
        #expect(sink.attempts == 3)
        #expect(engine.statsJSON()["open_failures"]?.intValue == 2)
        guard case .started = engine.play(s, gain: 1, requestedAt: monotonicNanos()) else {
            Issue.record("not playing after recovery"); return
        }
        #expect(collectReports(engine, count: 1).count == 1)
        #expect(logs.contains(.error, "audio device unavailable device=flaky reason=\"No such device\""))
        // Recovery is logged and clears last_error.
        #expect(logs.contains(.notice, "audio device open again device=flaky"))
        #expect(engine.statsJSON()["last_error"] == .null)
    }
}
