import Glibc
import Synchronization
import Testing
@testable import TabBarAudio

/// A clock-paced sink that supports `standby` (like `AlsaSink`) and counts the calls.
final class StandbySink: AudioSink, Sendable {
    let format = PCMFormat.standard
    let periodFrames = 128
    let bufferFrames = 4096
    var deviceName: String { "standby" }
    var pacing: StreamPacing { .clock }
    var xruns: Int { state.withLock { $0.pacer.underruns } }
    var canStandby: Bool { true }
    private struct State {
        var pacer = ClockPacer(rate: 48000)
        var standbys = 0, starts = 0
        /// Every frame written, interleaved (what the device would play, standbys cut out).
        var out: [Float] = []
    }
    private let state = Mutex(State())
    init() {}
    var standbys: Int { state.withLock { $0.standbys } }
    var written: [Float] { state.withLock { $0.out } }
    func open() throws {}
    func start() throws { state.withLock { $0.starts += 1 } }
    func queuedFrames() throws -> Int { state.withLock { $0.pacer.queued() } }
    func wait(lowWater: Int, wakeFD: Int32, timeoutNanos: UInt64?) throws -> Bool {
        var t = state.withLock { $0.pacer.nanosUntil(queued: lowWater) }
        if let limit = timeoutNanos { t = min(t, limit) }
        return pollReadable(wakeFD, timeoutNanos: t)
    }
    func write(_ samples: UnsafePointer<Float>, frames: Int) throws {
        state.withLock { s in
            s.pacer.wrote(frames)
            for i in 0..<frames * 2 { s.out.append(samples[i]) }
        }
    }
    func standby() -> Bool {
        state.withLock { s in
            s.pacer.reset()
            s.standbys += 1
        }
        return true
    }
    func stop() {}
    func close() {}
}

/// A test sink that is a `StandbySink` with some of its behaviour replaced: what it does not
/// define itself goes to `base`.
protocol StandbySinkVariant: AudioSink {
    var base: StandbySink { get }
}

extension StandbySinkVariant {
    var format: PCMFormat { base.format }
    var periodFrames: Int { base.periodFrames }
    var bufferFrames: Int { base.bufferFrames }
    var deviceName: String { base.deviceName }
    var pacing: StreamPacing { base.pacing }
    var xruns: Int { base.xruns }
    var canStandby: Bool { base.canStandby }
    var standbys: Int { base.standbys }
    func open() throws { try base.open() }
    func start() throws { try base.start() }
    func queuedFrames() throws -> Int { try base.queuedFrames() }
    func wait(lowWater: Int, wakeFD: Int32, timeoutNanos: UInt64?) throws -> Bool {
        try base.wait(lowWater: lowWater, wakeFD: wakeFD, timeoutNanos: timeoutNanos)
    }
    func write(_ samples: UnsafePointer<Float>, frames: Int) throws { try base.write(samples, frames: frames) }
    func standby() -> Bool { base.standby() }
    func stop() { base.stop() }
    func close() { base.close() }
}

/// A device-paced sink that accepts writes but never plays them (a stream nobody linked).
final class StallSink: AudioSink, Sendable {
    let format = PCMFormat.standard
    let periodFrames = 128
    let bufferFrames = 4096
    var deviceName: String { "stall" }
    var pacing: StreamPacing { .device }
    var xruns: Int { 0 }
    private let queued = Mutex(0)
    private let openCount = Atomic<Int>(0)
    var opens: Int { openCount.load(ordering: .acquiring) }
    func open() throws { openCount.add(1, ordering: .releasing); queued.withLock { $0 = 0 } }
    func start() throws {}
    func queuedFrames() throws -> Int { queued.withLock { $0 } }
    func wait(lowWater: Int, wakeFD: Int32, timeoutNanos: UInt64?) throws -> Bool {
        pollReadable(wakeFD, timeoutNanos: timeoutNanos ?? 10_000_000)
    }
    func write(_ samples: UnsafePointer<Float>, frames: Int) throws { queued.withLock { $0 += frames } }
    func stop() {}
    func close() {}
}

@Suite(.serialized) struct StreamTests {
    private func tone(_ name: String, seconds: Double) -> Sound {
        Sound(name: name, samples: [Float](repeating: 0.05, count: Int(seconds * 48000) * 2), format: .standard)
    }

    @Test func aClickAfterTheLastVoiceIsNotQueuedBehindSilence() throws {
        let sink = StandbySink()
        // Shorter than one write (period + pull = 256 frames): no real underrun can cut it, so
        // any xrun counted would be the expected run-out before standby.
        let click = tone("click", seconds: 0.004)
        let engine = AudioEngine(sink: sink, bank: SoundBank(format: .standard, sounds: [click]), log: { _, _ in })
        try engine.start()
        defer { engine.shutdown() }
        _ = engine.play(click, gain: 1, requestedAt: monotonicNanos())
        #expect(collectReports(engine, count: 1).count == 1)
        // Once the click has played the engine writes no silence after it: the queue runs
        // out and the stream waits prepared (well before the 2 s idle stop).
        #expect(eventually { engine.deviceState == "standby" })
        #expect(sink.standbys == 1)
        // The next click is the first thing the device takes: nothing queued ahead of it.
        _ = engine.play(click, gain: 1, requestedAt: monotonicNanos())
        let r = collectReports(engine, count: 1)
        #expect(r.first?.framesAhead == 0)
        #expect(r.first?.failure == nil)
        let stats = engine.statsJSON()
        #expect(stats["xruns"]?.intValue == 0, "the queue running out before standby is no xrun")
        #expect(stats["stream_starts"]?.intValue == 1)
        #expect(stats["standbys"]?.intValue ?? 0 >= 1)
    }

    /// Two loud clicks at once make the limiter cut in; once the stream has stood by for a
    /// while, the next single click must come out exactly as the file has it (the limiter
    /// released over the pause). Before, the gain stayed just below 1 across pauses and every
    /// later click at the sink was 0.998–0.9999 of itself, not bit-exact.
    @Test func aClickAfterAPauseIsNotScaledByAnEarlierOverlap() throws {
        let sink = StandbySink()
        let frames = 576
        var samples = [Float](repeating: 0, count: frames * 2)
        for i in 0..<frames { samples[2 * i] = 0.7 * Float(sin(Double(i) * 0.3)); samples[2 * i + 1] = samples[2 * i] }
        let click = Sound(name: "click", samples: samples, format: .standard)
        let engine = AudioEngine(sink: sink, bank: SoundBank(format: .standard, sounds: [click]), log: { _, _ in })
        try engine.start()
        defer { engine.shutdown() }
        let pair = [engine.play(click, gain: 1, requestedAt: monotonicNanos()),
                    engine.play(click, gain: 1, requestedAt: monotonicNanos())].compactMap(voice)
        #expect(firstReports(engine, for: pair).map(\.failure) == [nil, nil], "both overlapping clicks start")
        #expect(eventually { engine.deviceState == "standby" })
        let before = sink.written.count
        // The stimulus: a 1 s pause in standby (20 release time constants).
        var pause = timespec(tv_sec: 1, tv_nsec: 0), left = timespec()
        while nanosleep(&pause, &left) != 0 { pause = left }
        let third = try #require(voice(engine.play(click, gain: 1, requestedAt: monotonicNanos())))
        #expect(firstReports(engine, for: [third]).map(\.failure) == [nil], "the click after the pause starts")
        #expect(eventually { sink.written.count >= before + frames * 2 })
        let after = Array(sink.written[before..<(before + frames * 2)])
        let off = zip(after, samples).filter { $0 != $1 }.count
        #expect(off == 0, "\(off) of \(frames * 2) samples differ from the file; first \(after.first ?? 0) vs \(samples.first ?? 0) at frame 1: \(after[2]) vs \(samples[2])")
    }

    /// The same across the idle stop: the silence counts from the standby before it, so a
    /// click just after the stop (two overlapping clicks, a 1 s pause in standby, the stop)
    /// is exact too.
    @Test func aClickJustAfterTheIdleStopIsNotScaledByAnEarlierOverlap() throws {
        let sink = StandbySink()
        let frames = 576
        var samples = [Float](repeating: 0, count: frames * 2)
        for i in 0..<frames { samples[2 * i] = 0.7 * Float(sin(Double(i) * 0.3)); samples[2 * i + 1] = samples[2 * i] }
        let click = Sound(name: "click", samples: samples, format: .standard)
        let engine = AudioEngine(sink: sink, bank: SoundBank(format: .standard, sounds: [click]), idleTimeout: 1, log: { _, _ in })
        try engine.start()
        defer { engine.shutdown() }
        let pair = [engine.play(click, gain: 1, requestedAt: monotonicNanos()),
                    engine.play(click, gain: 1, requestedAt: monotonicNanos())].compactMap(voice)
        #expect(firstReports(engine, for: pair).map(\.failure) == [nil, nil], "both overlapping clicks start")
        #expect(eventually(seconds: 10) { engine.deviceState == "idle" })
        let before = sink.written.count
        let third = try #require(voice(engine.play(click, gain: 1, requestedAt: monotonicNanos())))
        #expect(firstReports(engine, for: [third]).map(\.failure) == [nil], "the click after the pause starts")
        #expect(eventually { sink.written.count >= before + frames * 2 })
        let after = Array(sink.written[before..<(before + frames * 2)])
        #expect(zip(after, samples).filter { $0 != $1 }.count == 0)
    }

    @Test func theLimiterReleasesOverSilenceItDidNotProcess() {
        var l = SoftLimiter()
        var loud: [Float] = [1.6, 1.6, 0, 0]
        l.process(&loud, channels: 2)
        #expect(l.gain < 0.7)
        l.elapse(frames: 480)          // 10 ms: part of the way back
        #expect(l.gain > 0.65 && l.gain < 0.7)
        l.elapse(frames: 48000)        // 1 s: back at unity, so what follows passes bit-exact
        #expect(l.gain == 1)
    }

    @Test func theAtSinkEstimateCountsWhatIsQueuedAhead() throws {
        // Paced by a manual clock, so that the queue ahead of the click is what the engine
        // keeps, not what a loaded machine's scheduler left of it (with the real clock a
        // starved audio thread let the queue run dry: framesAhead 0 at load 4.7).
        let clock = ManualClock()
        let sink = NullSink(format: .standard, clock: clock)
        let long = tone("long", seconds: 0.5), click = tone("click", seconds: 0.01)
        let engine = AudioEngine(sink: sink, bank: SoundBank(format: .standard, sounds: [long, click]),
                                 idleTimeout: 1e9, log: { _, _ in })
        try engine.start()
        defer { clock.release(); engine.shutdown() }  // as the server does: the long sound plays out
        clock.set(ms: 10)
        #expect(clock.settle(queued: false))
        guard case .started = engine.play(long, gain: 1, requestedAt: monotonicNanos()) else {
            Issue.record("the long sound was not accepted"); return
        }
        #expect(clock.settle(queued: true))
        guard case .started(let v) = engine.play(click, gain: 1, requestedAt: monotonicNanos()) else {
            Issue.record("the click was not accepted"); return
        }
        #expect(clock.settle(queued: true))
        let r = try #require(firstReports(engine, for: [v]).first)
        // Behind the long sound's queued frames: heard later than it was written, by that much.
        #expect(r.framesAhead > 0)
        let aheadNs = UInt64(r.framesAhead) * 1_000_000_000 / 48000
        #expect(r.sinkLatencyNs >= r.latencyNs + aheadNs)
        let stats = engine.statsJSON()
        #expect(stats["sink_latency_p50_us"]?.doubleValue ?? 0 > stats["latency_p50_us"]?.doubleValue ?? 0)
    }

    @Test func aStreamThatTakesNothingIsReopenedAndItsVoiceReported() throws {
        let logs = LogCollector()
        let sink = StallSink()
        let click = tone("click", seconds: 0.01)
        let engine = AudioEngine(sink: sink, bank: SoundBank(format: .standard, sounds: [click]), log: logs.log)
        try engine.start()
        defer { engine.shutdown() }
        guard case .started(let v) = engine.play(click, gain: 1, requestedAt: monotonicNanos()) else {
            Issue.record("not accepted"); return
        }
        // Accepted, written, never played: reported (not silently lost), and the device reopened.
        let reports = collectReports(engine, count: 2, seconds: 10)
        let failed = reports.filter { $0.failure != nil }
        #expect(failed.map(\.voice) == [v])
        #expect(failed.first?.failure?.contains("no session manager linked the stream") == true)
        #expect(logs.contains(.warning, "audio stream made no progress"))
        #expect(eventually(seconds: 10) { sink.opens >= 2 })
        let stats = engine.statsJSON()
        #expect(stats["stalls"]?.intValue == 1)
        #expect(stats["voices_failed"]?.intValue == 1)
    }

    @Test func autoPlaysIntoTheNullSinkAndSwitchesWhenTheDeviceOpens() throws {
        let logs = LogCollector()
        let device = FaultSink()
        device.unplug()
        let sink = FallbackSink(primary: device, standin: NullSink(), retryInterval: 0, log: logs.log)
        let status = sink.status
        let click = tone("click", seconds: 0.01)
        let engine = AudioEngine(sink: sink, bank: SoundBank(format: .standard, sounds: [click]), idleTimeout: 0.05, log: logs.log)
        try engine.start()
        defer { engine.shutdown() }
        #expect(engine.isAvailable, "the null sink stands in")
        #expect(status.usingStandin)
        #expect(logs.contains(.warning, "playing into the null sink"))
        _ = engine.play(click, gain: 1, requestedAt: monotonicNanos())
        #expect(collectReports(engine, count: 1).count == 1)
        #expect(device.snapshot.records.isEmpty)
        #expect(eventually { engine.deviceState == "idle" || engine.deviceState == "standby" })

        // The device appears: the next sound opens it and is written to it.
        device.plug()
        guard case .started(let v) = engine.play(click, gain: 1, requestedAt: monotonicNanos()) else {
            Issue.record("not accepted"); return
        }
        #expect(collectReports(engine, count: 1).map(\.voice) == [v])
        #expect(eventually { device.wasWritten(voice: v) })
        #expect(!status.usingStandin)
        #expect(logs.contains(.notice, "sounds are heard again"))
    }

    @Test func openFailuresSayWhatIsTrue() {
        #expect(AlsaSink.openReason("snd_pcm_open", -EHOSTDOWN).hasPrefix("the sound server is not running (snd_pcm_open: "))
        #expect(AlsaSink.openReason("snd_pcm_open", -ECONNREFUSED).hasPrefix("the sound server is not running"))
        #expect(AlsaSink.openReason("snd_pcm_open", -ENOENT).hasPrefix("no sound card (snd_pcm_open: "))
        #expect(AlsaSink.openReason("snd_pcm_open", -EINVAL) == "snd_pcm_open: Invalid argument")
    }

    @Test func realtimeIsGrantedOrRefusedWithAReason() {
        let logs = LogCollector()
        let (outcome, policy) = onThread { (Realtime.request(priority: 10, log: logs.log), sched_getscheduler(0)) }
        switch outcome {
        case .rtkit(let policy, let p):
            // tests/rtkit covers this path with a real rtkit-daemon; here it means no CAP_SYS_NICE.
            #expect(p > 0 && (policy & 0xff == SCHED_RR || policy & 0xff == SCHED_FIFO))
            #expect(logs.contains(.info, "audio thread runs \(Realtime.policyName(policy)) priority=\(p)"))
        case .direct(let p):
            #expect(p > 0)
            #expect(policy & 0xff == SCHED_FIFO, "granted but the thread is not SCHED_FIFO")
            #expect(logs.contains(.info, "audio thread runs SCHED_FIFO"))
        case .refused(let why):
            #expect(why.hasPrefix("sched_setscheduler "))
            #expect(logs.contains(.warning, "audio thread stays at normal priority"))
        case .off:
            Issue.record("priority 10 was not asked for")
        }
        #expect(Realtime.request(priority: 0, log: logs.log) == .off)
    }
}

/// `StandbySink` whose audio thread stalls 20 ms right after the first write that follows each
/// standby: the machine stalled for longer than that write lasts (a VM's stolen time, seen on
/// the PipeWire rig as a click cut at the end of its first write). `startRaces`: the replays of
/// PipeWire's start race (AlsaStartRace.swift) it says it made, as `AlsaSink` would count them.
final class StallAfterFirstWriteSink: StandbySinkVariant, Sendable {
    let base = StandbySink()
    let startRaces: Int
    private let first = Mutex((pending: true, sizes: [Int]()))
    init(startRaces: Int = 0) { self.startRaces = startRaces }
    var firstWrites: [Int] { first.withLock { $0.sizes } }
    func write(_ samples: UnsafePointer<Float>, frames: Int) throws {
        try base.write(samples, frames: frames)
        let stall = first.withLock { s -> Bool in
            guard s.pending else { return false }
            s.pending = false
            s.sizes.append(frames)
            return true
        }
        if stall { var ts = timespec(tv_sec: 0, tv_nsec: 20_000_000); nanosleep(&ts, nil) }
    }
    func standby() -> Bool {
        first.withLock { $0.pending = true }
        return base.standby()
    }
}

@Suite(.serialized) struct FirstWriteTests {
    private func play(seconds: Double) throws -> (firstWrite: Int?, failures: [String?], xruns: Int?) {
        let sink = StallAfterFirstWriteSink()
        let sound = Sound(name: "s", samples: [Float](repeating: 0.05, count: Int(seconds * 48000) * 2), format: .standard)
        let engine = AudioEngine(sink: sink, bank: SoundBank(format: .standard, sounds: [sound]), log: { _, _ in })
        try engine.start()
        defer { engine.shutdown() }
        let standbys = sink.standbys
        let v = try #require(voice(engine.play(sound, gain: 1, requestedAt: monotonicNanos())))
        #expect(eventually { sink.standbys > standbys }, "played out, and the stream stood by")
        var failures: [String?] = []
        engine.drainReports { r in if r.voice == v { failures.append(r.failure) } }
        return (sink.firstWrites.last, failures, engine.statsJSON()["xruns"]?.intValue)
    }

    /// A click (12 ms) is written whole in its first write, so a stall of the audio thread right
    /// after it (20 ms, longer than the queue's pull + a period lasts) cannot cut it: it plays
    /// out, and the stream running dry after it is the expected run-out, not damage.
    @Test func aClickIsWrittenWholeSoAStallAfterItsFirstWriteCannotCutIt() throws {
        let r = try play(seconds: 0.012)
        #expect(r.firstWrite == 576, "the whole click")
        #expect(r.failures == [nil], "started, never failed: \(r.failures)")
        #expect(r.xruns == 0)
    }

    /// The stream that ran dry after the click (the 20 ms stall outlasts its 12 ms) is the
    /// expected run-out: `run_out_xruns`, not `xruns`. The sink's start-race replays reach
    /// `stats.get` as `start_races` once the stream stands by.
    @Test func theRunOutAndTheStartRacesAreCountedApart() throws {
        let sink = StallAfterFirstWriteSink(startRaces: 3)
        let click = Sound(name: "click", samples: [Float](repeating: 0.05, count: 576 * 2), format: .standard)
        let engine = AudioEngine(sink: sink, bank: SoundBank(format: .standard, sounds: [click]), log: { _, _ in })
        try engine.start()
        defer { engine.shutdown() }
        let standbys = sink.standbys
        _ = try #require(voice(engine.play(click, gain: 1, requestedAt: monotonicNanos())))
        #expect(eventually { sink.standbys > standbys })
        let stats = engine.statsJSON()
        #expect((stats["run_out_xruns"]?.intValue ?? 0) >= 1, "\(stats)")
        #expect(stats["xruns"]?.intValue == 0)
        #expect(stats["start_races"]?.intValue == 3)
    }

    /// A longer sound (40 ms) still gets the queue's size first (pull + a period: 256 frames
    /// here), and the same stall cuts it: that is reported, not hidden.
    @Test func aLongerSoundGetsTheQueueFirstAndTheStallIsReported() throws {
        let r = try play(seconds: 0.04)
        #expect(r.firstWrite == 256, "pull + a period, not the whole sound")
        #expect(r.failures.count == 2 && r.failures.first == .some(nil), "started, then failed: \(r.failures)")
        #expect(r.failures.last??.hasPrefix("an underrun") == true, "\(r.failures)")
        #expect((r.xruns ?? 0) >= 1, "counted (a loaded machine can stall the thread again)")
    }
}
