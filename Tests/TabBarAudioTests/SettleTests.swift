import Glibc
import Synchronization
import Testing
@testable import TabBarAudio

/// How `AlsaSink.settle` reads what the sound server takes a cycle from the queue's steps
/// (times in ns, frames); the figures are what PipeWire 0.3.65's plugin did on the rig.
struct SettleTests {
    private func steps(_ frames: Int, everyMs ms: Double, count: Int = 4) -> [(UInt64, Int)] {
        (0..<count).map { (UInt64(Double($0) * ms * 1e6), frames) }
    }

    /// Min-quantum 1024, `avail_min` 128: the plugin hands 1024 frames every other 21.3 ms cycle.
    /// That is a 1024-frame quantum, not a 2048-frame one (which made the stream ask for a
    /// 2048-frame latency and the graph run 42.6 ms cycles).
    @Test func aStepLargerThanAvailMinIsTheQuantum() {
        #expect(AlsaSink.pull(steps: steps(1024, everyMs: 42.6), availMin: 128, rate: 48000) == 1024)
    }

    /// The server took `avail_min` frames per longer cycle: the cycle is the pull.
    @Test func aLongerCycleThanTheStepIsThePull() {
        #expect(AlsaSink.pull(steps: steps(256, everyMs: 21.3), availMin: 256, rate: 48000) == 1024)
    }

    /// When a waiting click may end the settle: at min-quantum 1024 the second step shows the
    /// quantum; at PipeWire's defaults with another stream at 1024 the first interval spans
    /// the graph's switch to 128 (seen: 128 at 0 and at 21.4 ms) and reads as 1024 — only the
    /// later ones tell 128, so all four are waited for.
    @Test func theQuantumIsSeenEarlyOnlyWhenAStepShowsIt() {
        #expect(AlsaSink.quantumSeen(steps: steps(1024, everyMs: 42.6, count: 2), availMin: 128))
        #expect(!AlsaSink.quantumSeen(steps: steps(1024, everyMs: 42.6, count: 1), availMin: 128))
        let joining: [(UInt64, Int)] = [(0, 128), (21_467_000, 128)]
        #expect(!AlsaSink.quantumSeen(steps: joining, availMin: 128))
        #expect(AlsaSink.pull(steps: joining, availMin: 128, rate: 48000) == 1024, "what two steps would have said")
        let four = joining + [(24_140_000, 128), (26_810_000, 128)]
        #expect(AlsaSink.pull(steps: four, availMin: 128, rate: 48000) == 128)
    }

    /// The graph runs at the stream's own latency: one period a cycle.
    @Test func oneStepPerCycleOfAvailMin() {
        #expect(AlsaSink.pull(steps: steps(128, everyMs: 2.67), availMin: 128, rate: 48000) == 128)
    }

    /// Min-quantum 1024 under load: the plugin handed a quantum over in two pieces 0.6 ms apart
    /// (the settles seen: 640 then 384 frames, cut there by a waiting click — pull 384, the first
    /// click cut at frame 384 with an xrun; and 128 then 896). They are one step: the pull is the
    /// quantum, and a waiting click does not end the settle until a second whole step shows it.
    @Test func aQuantumHandedOverInPiecesIsOneStep() {
        let gap = AlsaSink.pieceGap(availMin: 128, rate: 48000)
        let split: [(UInt64, Int)] = [(0, 640), (644_000, 384)]
        #expect(AlsaSink.merged(split, within: gap).map { $0.1 } == [1024])
        #expect(!AlsaSink.quantumSeen(steps: AlsaSink.merged(split, within: gap), availMin: 128),
                "one whole step does not tell the pull yet")
        let later: [(UInt64, Int)] = [(0, 128), (593_000, 896), (42_700_000, 640), (43_300_000, 384)]
        let steps = AlsaSink.merged(later, within: gap)
        #expect(steps.map { $0.1 } == [1024, 1024])
        #expect(AlsaSink.quantumSeen(steps: steps, availMin: 128))
        #expect(AlsaSink.pull(steps: steps, availMin: 128, rate: 48000) == 1024)
        // Cycles of one period are never merged (2.67 ms apart at 128 frames).
        #expect(AlsaSink.merged(self.steps(128, everyMs: 2.67), within: gap).count == 4)
    }
}

/// `StandbySink`, but device-paced (frames leave at the clock's rate), and its `settle` takes
/// as long as the slowest real one (no session manager: 1 s and more) unless a sound is
/// waiting; either way it measures a 256-frame pull (a real one cut short has seen two steps).
final class SlowSettleSink: StandbySinkVariant, Sendable {
    let base = StandbySink()
    var pacing: StreamPacing { .device }
    private let calls = Mutex((settles: 0, cut: 0, pull: 0))
    var settles: Int { calls.withLock { $0.settles } }
    var cutShort: Int { calls.withLock { $0.cut } }
    var pullFrames: Int { calls.withLock { $0.pull } }
    func settle(wakeFD: Int32) {
        calls.withLock { $0.settles += 1 }
        if pollReadable(wakeFD, timeoutNanos: 30_000_000_000) { calls.withLock { $0.cut += 1 } }
        calls.withLock { $0.pull = 256 }
    }
    /// The size of the first write after each stream start: the queue the engine keeps.
    private let starts = Mutex((pending: false, firstWrites: [Int]()))
    var firstWrites: [Int] { starts.withLock { $0.firstWrites } }
    func start() throws {
        try base.start()
        starts.withLock { $0.pending = true }
    }
    func write(_ samples: UnsafePointer<Float>, frames: Int) throws {
        try base.write(samples, frames: frames)
        starts.withLock { if $0.pending { $0.pending = false; $0.firstWrites.append(frames) } }
    }
}

@Suite struct SettleInterruptTests {
    /// A click requested while the freshly opened device is being measured does not wait for
    /// the whole measurement (before, about 0.1 s on PipeWire, 1.5 s when no session manager
    /// links the stream): the engine hands the sink its wake eventfd, the sink stops as soon
    /// as it knows the pull, and the click plays with the queue sized by it. The device is
    /// measured once per open, not again when the stream idles.
    @Test func aClickDuringTheSettleEndsItAndPlaysWithTheMeasuredQueue() throws {
        let sink = SlowSettleSink()
        // 40 ms: longer than a sound written whole at once (`AudioEngine.wholeSoundSeconds`), so its
        // first write is the queue.
        let click = Sound(name: "click", samples: [Float](repeating: 0.05, count: 1920 * 2), format: .standard)
        let engine = AudioEngine(sink: sink, bank: SoundBank(format: .standard, sounds: [click]), idleTimeout: 0.05,
                                 log: { _, _ in })
        try engine.start()
        defer { engine.shutdown() }
        #expect(eventually { sink.settles == 1 }, "the audio thread measures the device it opened")
        let v = try #require(voice(engine.play(click, gain: 1, requestedAt: monotonicNanos())))
        // 5 s, far less than the settle would have taken: the click did not wait for it.
        #expect(firstReports(engine, for: [v]).map(\.failure) == [nil], "the click starts while the settle was pending")
        #expect(sink.cutShort == 1)
        #expect(sink.firstWrites == [256 + 128], "the queue is the measured pull + a period")
        #expect(eventually { engine.deviceState == "idle" })
        let w = try #require(voice(engine.play(click, gain: 1, requestedAt: monotonicNanos())))
        #expect(firstReports(engine, for: [w]).map(\.failure) == [nil])
        #expect(sink.settles == 1, "measured once per open, not at every idle")
    }
}
