import Glibc
import Testing
@testable import TabBarAudio

/// Runs `body` on a thread of its own; `join` waits for it.
private final class TestThread: @unchecked Sendable {
    private var thread = pthread_t()
    private let body: () -> Void
    init(_ body: @escaping () -> Void) {
        self.body = body
        let box = Unmanaged.passRetained(self)
        let r = pthread_create(&thread, nil, { arg in
            let t = Unmanaged<TestThread>.fromOpaque(arg!).takeRetainedValue()
            t.body()
            return nil
        }, box.toOpaque())
        precondition(r == 0, "pthread_create failed")
    }
    func join() { pthread_join(thread, nil) }
}

private final class WeakSound {
    weak var sound: Sound?
    init(_ s: Sound) { sound = s }
}

/// A sound of `frames` frames in the standard format, every sample `value`.
private func flatSound(_ name: String, frames: Int, value: Float = 0.25) -> Sound {
    Sound(name: name, samples: [Float](repeating: value, count: frames * 2), format: .standard)
}

/// The hand-off of clicks to the audio thread and of its reports back: the lock-free rings,
/// and how a sound outlives its voices without a retain per click (SoundLifetime.swift).
@Suite(.serialized) struct ClicksTests {
    /// One producer thread, one consumer thread, a ring of 8: every element arrives once, in
    /// order, whole (its two words agree: the consumer never reads a slot before its write
    /// is published, nor the producer overwrites one not yet read).
    @Test func theRingHandsEveryElementOverInOrderBetweenTwoThreads() {
        struct Item { var n: Int; var check: UInt64 }
        final class Tally: @unchecked Sendable { var bad = 0, empties = 0 }
        let ring = SPSCRing<Item>(capacity: 8)
        let count = 300_000
        let tally = Tally()  // (the consumer's; read after `join`)
        let consumer = TestThread {
            var next = 0
            while next < count {
                guard let item = ring.pop() else { tally.empties += 1; sched_yield(); continue }
                if item.n != next || item.check != UInt64(truncatingIfNeeded: item.n) &* 0x9E37_79B9_7F4A_7C15 {
                    tally.bad += 1
                }
                next = item.n + 1
            }
        }
        var fulls = 0
        for n in 0..<count {
            let item = Item(n: n, check: UInt64(truncatingIfNeeded: n) &* 0x9E37_79B9_7F4A_7C15)
            while !ring.push(item) { fulls += 1; sched_yield() }
        }
        consumer.join()
        #expect(tally.bad == 0)
        #expect(ring.isEmpty)
        #expect(ring.pop() == nil)
        // (The two threads met at both ends: the ring was found full, and empty.)
        #expect(fulls > 0 && tally.empties > 0)
    }

    /// A sound the caller made and dropped lives while its voice plays and until its report is
    /// drained, then is freed: the engine keeps no sound the bank does not hold.
    @Test func aSoundNotInTheBankLivesUntilItsVoiceIsLetGoThenIsFreed() throws {
        let sink = NullSink(format: .standard, periodFrames: 256, captureFrames: 96000)
        let engine = AudioEngine(sink: sink, bank: SoundBank(format: .standard), idleTimeout: 0.05, log: { _, _ in })
        try engine.start()
        defer { engine.shutdown() }
        var weak: WeakSound!
        var voice: UInt32 = 0
        let frames = 24000  // 0.5 s
        do {
            let s = flatSound("adhoc", frames: frames)
            weak = WeakSound(s)
            guard case .started(let v) = engine.play(s, gain: 0.5, requestedAt: monotonicNanos()) else {
                Issue.record("play failed"); return
            }
            voice = v
        }
        #expect(weak.sound != nil, "freed while its voice was queued")
        let reports = collectReports(engine, count: 1)
        #expect(reports.map(\.voice) == [voice] && reports.first?.name == "adhoc")
        // Drained while its voice still sounds: still kept.
        usleep(50_000)
        engine.drainReports { _ in }
        #expect(weak.sound != nil, "freed while its voice was playing")
        // Heard bit-exact at the sink.
        let start = Int(reports.first?.startFrame ?? 0) * 2
        #expect(eventually { sink.captured.count >= start + frames * 2 })
        let cap = sink.captured
        #expect(cap.count >= start + frames * 2 && cap[start..<(start + frames * 2)].allSatisfy { $0 == 0.125 })
        #expect(eventually {
            engine.drainReports { _ in }
            return weak.sound == nil
        }, "still kept after the audio thread let go of it")
        #expect(engine.loop.pointee.kept.entries.isEmpty)
    }

    /// A sound of the bank stays kept (a run of taps finds it first, with no retain), and the
    /// sounds of a replaced bank are freed once their voices have played.
    @Test func aBankSoundStaysKeptAndAReplacedBanksSoundsAreFreed() throws {
        let sink = NullSink(format: .standard, periodFrames: 256)
        var weak: WeakSound!
        let engine: AudioEngine
        do {
            let click = flatSound("click", frames: 480)
            weak = WeakSound(click)
            engine = AudioEngine(sink: sink, bank: SoundBank(format: .standard, sounds: [click]), idleTimeout: 0.05, log: { _, _ in })
            try engine.start()
            for _ in 0..<20 { _ = engine.play(click, gain: 1, requestedAt: monotonicNanos()) }
        }
        defer { engine.shutdown() }
        #expect(collectReports(engine, count: 20).count == 20)
        #expect(eventually { sink.streamStops >= 1 })
        engine.drainReports { _ in }
        #expect(engine.loop.pointee.kept.entries.count == 1, "one entry for twenty clicks of one sound")
        #expect(weak.sound != nil)
        engine.replaceBank(SoundBank(format: .standard))
        #expect(eventually {
            engine.drainReports { _ in }
            return weak.sound == nil
        }, "a replaced bank's sound is still kept")
    }

    /// The state loop (this thread) plays sounds it drops at once, many distinct ones, and
    /// drains as it goes, while the audio thread plays, steals and reports them: every report
    /// it drains names a sound still alive (none was let go while a report of it was in the
    /// ring: `oldestHeld` is read before the pops), and in the end every one is freed.
    @Test func reportsNeverOutliveTheirSoundsUnderLoad() throws {
        let sink = NullSink(format: .standard, periodFrames: 64)
        let engine = AudioEngine(sink: sink, bank: SoundBank(format: .standard), voices: 4, idleTimeout: 0.05,
                                 queueCapacity: 16, log: { _, _ in })
        try engine.start()
        defer { engine.shutdown() }
        var weaks: [UInt32: WeakSound] = [:]
        var names: [UInt32: String] = [:]
        var dead = 0, reports = 0, wrongName = 0
        func drain() {
            engine.drainReports { r in
                reports += 1
                if weaks[r.voice]?.sound == nil { dead += 1 }
                if names[r.voice] != r.name { wrongName += 1 }
            }
        }
        for i in 0..<3000 {
            do {
                let s = flatSound("s\(i % 50)", frames: 32 + (i % 7) * 64)
                if case .started(let v) = engine.play(s, gain: 1, requestedAt: monotonicNanos()) {
                    weaks[v] = WeakSound(s)
                    names[v] = s.name
                }
            }
            if i % 3 == 0 { drain() }
            if i % 64 == 0 { usleep(200) }
        }
        #expect(eventually {
            drain()
            return weaks.values.allSatisfy { $0.sound == nil }
        }, "sounds still kept after every voice was let go")
        #expect(reports > 0)
        #expect(dead == 0, "reports drained after their sound was let go")
        #expect(wrongName == 0)
    }

    /// Voice numbers wrap: "older" is serial-number order.
    @Test func voiceOrderSurvivesTheWrap() {
        #expect(isBefore(1, 2))
        #expect(!isBefore(2, 2))
        #expect(!isBefore(3, 2))
        #expect(isBefore(UInt32.max, 0))
        #expect(isBefore(UInt32.max - 5, 3))
        #expect(!isBefore(3, UInt32.max - 5))
    }
}
