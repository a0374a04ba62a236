import Glibc
import Synchronization
import Testing
@testable import TabBarAudio

/// What PulseAudio's ALSA plugin plays into (pipewire-pulse 0.3.65, `module-protocol-pulse`'s
/// `stream_process`): the server takes one quantum a cycle from what has *arrived* from the
/// client; when it holds less than a quantum it plays a cycle of silence and keeps what it holds
/// (the plugin always sets `prebuf`), and the plugin ignores the server's UNDERFLOW because more
/// was written than was read. So a refill that arrives a cycle late inserts a quantum of silence
/// into the sound and nobody is told. Here writes arrive `lateness` after `write` (the plugin's
/// thread, the socket, the server's main loop), cycles are `quantum` frames of the clock, and
/// `output` is what the server played, cycle by cycle, from the first write after a standby.
final class PulseLikeSink: AudioSink, Sendable {
    let format = PCMFormat.standard
    let periodFrames = 128
    let bufferFrames = 4096
    let quantum = 256
    let lateness: UInt64 = 8_000_000
    let margin: Int
    var deviceName: String { "pulse-like" }
    var pacing: StreamPacing { .device }
    var xruns: Int { 0 }
    var canStandby: Bool { true }
    var pullFrames: Int { quantum }
    var refillMarginFrames: Int { margin }

    struct Server {
        var pending: [(at: UInt64, samples: [Float])] = []
        var held: [Float] = []          // arrived, not yet played (interleaved stereo)
        var written = 0, read = 0       // frames
        var firstCycle: UInt64 = 0      // 0: no cycle yet (nothing written since the standby)
        var cycles = 0
        var output: [Float] = []        // every cycle played since the first write (mono: left)
        var silentCycles = 0            // cycles of silence played while data was held
    }
    private let server = Mutex(Server())

    init(margin: Int) { self.margin = margin }

    private func advance(_ s: inout Server, to now: UInt64) {
        guard s.firstCycle != 0 else { return }
        let cycleNs = UInt64(quantum) * 1_000_000_000 / 48000
        while s.firstCycle + UInt64(s.cycles) * cycleNs <= now {
            let t = s.firstCycle + UInt64(s.cycles) * cycleNs
            while let p = s.pending.first, p.at <= t { s.held += p.samples; s.pending.removeFirst() }
            if s.held.count >= quantum * 2 {
                for i in 0..<quantum { s.output.append(s.held[i * 2]) }
                s.held.removeFirst(quantum * 2)
                s.read += quantum
            } else {
                if !s.held.isEmpty || !s.pending.isEmpty { s.silentCycles += 1 }
                s.output += [Float](repeating: 0, count: quantum)
            }
            s.cycles += 1
        }
    }

    /// The server's output, up to now.
    var output: [Float] { server.withLock { advance(&$0, to: monotonicNanos()); return $0.output } }

    func open() throws {}
    func start() throws {}
    func queuedFrames() throws -> Int {
        server.withLock { s in advance(&s, to: monotonicNanos()); return s.written - s.read }
    }
    func wait(lowWater: Int, wakeFD: Int32, timeoutNanos: UInt64?) throws -> Bool {
        pollReadable(wakeFD, timeoutNanos: min(timeoutNanos ?? 1_000_000, 1_000_000))
    }
    func write(_ samples: UnsafePointer<Float>, frames: Int) throws {
        let now = monotonicNanos()
        server.withLock { s in
            advance(&s, to: now)
            s.pending.append((now + lateness, Array(UnsafeBufferPointer(start: samples, count: frames * 2))))
            s.written += frames
            // The stream starts with the first write: its first cycle after the data arrived.
            if s.firstCycle == 0 { s.firstCycle = now + lateness }
        }
    }
    /// `snd_pcm_prepare`: the plugin makes a new stream; the output so far is kept.
    func standby() -> Bool {
        server.withLock { s in
            advance(&s, to: monotonicNanos())
            let out = s.output
            s = Server()
            s.output = out
        }
        return true
    }
    func stop() {}
    func close() {}
}

@Suite(.serialized) struct PulseTests {
    /// The sound as the server played it: the lengths of its runs of non-silent frames.
    private func runs(_ out: [Float]) -> [Int] {
        var runs: [Int] = [], n = 0
        for v in out {
            if v != 0 { n += 1 } else if n > 0 { runs.append(n); n = 0 }
        }
        if n > 0 { runs.append(n) }
        return runs
    }

    private func playClick(margin: Int) throws -> [Int] {
        let sink = PulseLikeSink(margin: margin)
        // click.wav's length (12 ms), a constant tone: any inserted silence splits it.
        let click = Sound(name: "click", samples: [Float](repeating: 0.05, count: 576 * 2), format: .standard)
        let engine = AudioEngine(sink: sink, bank: SoundBank(format: .standard, sounds: [click]), log: { _, _ in })
        try engine.start()
        defer { engine.shutdown() }
        for _ in 0..<3 {
            let before = runs(sink.output).count
            let standbys = engine.statsJSON()["standbys"]?.intValue ?? 0
            let v = voice(engine.play(click, gain: 1, requestedAt: monotonicNanos()))
            #expect(firstReports(engine, for: v.map { [$0] } ?? []).first?.failure == nil)
            // Played out, and the stream stood by (a new server stream for the next click).
            #expect(eventually {
                runs(sink.output).count > before && (engine.statsJSON()["standbys"]?.intValue ?? 0) > standbys
            })
        }
        return runs(sink.output)
    }

    /// Through PulseAudio's plugin a click that fits in the first write cannot get a hole: the
    /// engine keeps `refillMarginFrames` more queued there, so the whole click and the silence
    /// after it, whole quanta, reach the server at once. Without the margin, a refill later than
    /// one cycle — always, here (8 ms against 5.3 ms) — inserts silence into it: what rig_pulse
    /// runs showed at the sink when the first write was 384 frames (frame 256 of 576 silent, then
    /// the rest).
    @Test func aClickThroughPulseAudiosPluginReachesTheServerWhole() throws {
        let played = try playClick(margin: Int(AlsaSink.pulseRefillMargin * 48000))
        #expect(played == [576, 576, 576], "each click played as one run of 576 frames: \(played)")
    }

    /// The model itself: with no margin the same clicks get a hole. The first write holds the
    /// whole click (`AudioEngine.wholeSoundSeconds`), but 576 frames are not a whole number of
    /// quanta: the server plays two and holds the last 64 frames through a cycle of silence
    /// until the late refill adds to them. (Before the whole first write, the write was the queue,
    /// 384 frames, and the hole came after the first quantum.)
    @Test func withoutTheMarginALateRefillPutsAHoleInTheClick() throws {
        let played = try playClick(margin: 0)
        #expect(played.count > 3, "the clicks split by inserted silence: \(played)")
        #expect(played.first == 512, "the first split after the second quantum: \(played)")
    }
}

/// `BoundedALSA`: a call into PulseAudio's plugin that waits forever for a session manager must
/// not take the audio thread (or the daemon's start and stop) with it.
@Suite(.serialized) struct BoundedCallTests {
    @Test func aCallThatDoesNotReturnIsGivenUpAndClosedWhenItDoes() {
        var fds: [Int32] = [-1, -1]
        #expect(pipe(&fds) == 0)
        let gate = fds
        defer { close(gate[0]); close(gate[1]) }
        let lateResult = Mutex<Int32?>(nil)
        let before = BoundedALSA.stuck.load(ordering: .acquiring)
        let start = monotonicNanos()
        let r = BoundedALSA.run(seconds: 0.2, {
            var v: UInt8 = 0
            _ = read(gate[0], &v, 1)       // blocks like the plugin's wait for a stream that is never linked
            return 7
        }, late: { r in lateResult.withLock { $0 = r } })
        #expect(r == nil, "the caller gets nil at the deadline")
        #expect(monotonicNanos() - start < 5_000_000_000, "and does not wait for the call")
        #expect(BoundedALSA.stuck.load(ordering: .acquiring) == before + 1, "no new call is started meanwhile")
        var one: UInt8 = 1
        _ = write(gate[1], &one, 1)          // the session manager is back: the call returns
        #expect(eventually { lateResult.withLock { $0 } == 7 }, "the helper hands the late result on (to close the PCM)")
        #expect(eventually { BoundedALSA.stuck.load(ordering: .acquiring) == before })
    }

    @Test func aCallThatReturnsInTimeGivesItsResult() {
        #expect(BoundedALSA.run(seconds: 5, { 42 }, late: { _ in Issue.record("not late") }) == 42)
    }
}

/// A clock-paced sink whose standby makes a new server stream, as through PulseAudio's plugin
/// (`standbyConfirmsLink`), and whose next standby can be made to fail: the server did not make
/// the new stream ready because no session manager linked it.
final class NextStreamSink: AudioSink, Sendable {
    let format = PCMFormat.standard
    let periodFrames = 128
    let bufferFrames = 4096
    let confirmsLink: Bool
    var deviceName: String { "next-stream" }
    var pacing: StreamPacing { .clock }
    var xruns: Int { 0 }
    var canStandby: Bool { true }
    var standbyConfirmsLink: Bool { confirmsLink }
    private let state = Mutex((standbys: 0, failNext: false, failed: 0, pacer: ClockPacer(rate: 48000)))
    var standbys: Int { state.withLock { $0.standbys } }
    var failedStandbys: Int { state.withLock { $0.failed } }
    init(confirmsLink: Bool) { self.confirmsLink = confirmsLink }
    /// The session manager goes: the next standby's stream is not made ready.
    func failNextStandby() { state.withLock { $0.failNext = true } }
    func open() throws {}
    func start() throws {}
    func queuedFrames() throws -> Int { state.withLock { $0.pacer.queued() } }
    func wait(lowWater: Int, wakeFD: Int32, timeoutNanos: UInt64?) throws -> Bool {
        var t = state.withLock { $0.pacer.nanosUntil(queued: lowWater) }
        if let limit = timeoutNanos { t = min(t, limit) }
        return pollReadable(wakeFD, timeoutNanos: t)
    }
    func write(_ samples: UnsafePointer<Float>, frames: Int) throws { state.withLock { $0.pacer.wrote(frames) } }
    func standby() -> Bool {
        state.withLock { s -> Bool in
            if s.failNext { s.failNext = false; s.failed += 1; return false }
            s.standbys += 1
            s.pacer.reset()
            return true
        }
    }
    func stop() {}
    func close() {}
}

/// Through PulseAudio's plugin the server takes a click's frames into its own buffer before it
/// plays them, and a stream nobody links (the session manager died as the click was in flight)
/// can take them too: gone from the PCM's queue, never heard (tests/pipewire
/// `PulseNoSessionManager`: 2 of 10 runs before). The next stream tells: it is made ready only
/// once a session manager links it.
@Suite(.serialized) struct UnconfirmedTests {
    private func click() -> Sound {
        Sound(name: "click", samples: [Float](repeating: 0.05, count: 576 * 2), format: .standard)
    }

    private func play(_ engine: AudioEngine, _ s: Sound) -> UInt32? {
        if case .started(let v) = engine.play(s, gain: 1, requestedAt: monotonicNanos()) { return v }
        return nil
    }

    @Test func aClickTakenBeforeTheNextStreamIsNotMadeReadyIsReported() throws {
        let sink = NextStreamSink(confirmsLink: true)
        let c = click()
        let engine = AudioEngine(sink: sink, bank: SoundBank(format: .standard, sounds: [c]), log: { _, _ in })
        try engine.start()
        defer { engine.shutdown() }
        let heard = try #require(play(engine, c))
        #expect(eventually { sink.standbys == 1 }, "the first click runs out and the next stream is ready")
        sink.failNextStandby()
        let lost = try #require(play(engine, c))
        #expect(eventually { sink.failedStandbys == 1 })
        // The stream stands by again after the failed one: what that failure reports was sent before.
        #expect(eventually { sink.standbys == 2 })
        var failed: [VoiceReport] = []
        engine.drainReports { if $0.failure != nil { failed.append($0) } }
        #expect(failed.map(\.voice) == [lost], "only the click taken before the failed stream: \(failed.map(\.voice)), not \(heard)")
        #expect(failed.first?.failure?.contains("may not have played it") == true)
    }

    @Test func whereTakenIsPlayedAFailedStandbyReportsNothing() throws {
        let sink = NextStreamSink(confirmsLink: false)
        let c = click()
        let engine = AudioEngine(sink: sink, bank: SoundBank(format: .standard, sounds: [c]), log: { _, _ in })
        try engine.start()
        defer { engine.shutdown() }
        _ = play(engine, c)
        #expect(eventually { sink.standbys == 1 })
        sink.failNextStandby()
        _ = play(engine, c)
        #expect(eventually { sink.failedStandbys == 1 })
        #expect(eventually { sink.standbys == 2 }, "the stream stands by again after the failed one")
        var failed: [VoiceReport] = []
        engine.drainReports { if $0.failure != nil { failed.append($0) } }
        #expect(failed.isEmpty)
    }
}
