import Testing
@testable import TabBarAudio

/// The missed-cycle detector (CycleGap.swift) against a model of PipeWire 0.3.65's ALSA plugin:
/// a driver cycle of `quantum` frames every `quantum / rate` seconds; the stream's data thread
/// runs some time into each cycle and takes a quantum, keeping the cycle's start (`now`) and the
/// graph's delay; `snd_pcm_delay` is the queue plus that delay plus the frames taken in the
/// cycle, less the time since the cycle started, clamped (`pcm_pipewire.c`,
/// `snd_pcm_pipewire_delay`). The audio thread looks at irregular times. Jitter is from a seeded
/// generator. On the rig the same detector saw each hole the sink wrote and nothing on intact
/// clicks (docs/AUDIO.md, "A click that restarts the graph").
struct CycleGapTests {
    static let rate = 48_000
    static let quantum = 128
    static let cycleNs = UInt64(quantum) * 1_000_000_000 / UInt64(rate)   // 2,666,666 ns

    /// A small deterministic generator (no unseeded randomness in tests).
    struct Rand {
        var s: UInt64
        mutating func next(_ below: UInt64) -> UInt64 {
            s = s &* 6364136223846793005 &+ 1442695040888963407
            return (s >> 33) % max(below, 1)
        }
    }

    /// The plugin's state after its data thread ran.
    struct Plugin {
        var hwPtr = 0          // frames taken
        var now: UInt64 = 0    // the start of the cycle it last ran in (0: not yet)
        var graphDelay = 0
        var transferred = 0
        let written: Int

        func delay(at t: UInt64) -> Int {
            let queued = written - hwPtr
            guard now != 0 else { return queued }
            let elapsed = Int((t - now) * UInt64(CycleGapTests.rate) / 1_000_000_000)
            let d = graphDelay + transferred
            return d - min(elapsed, d) + queued
        }
    }

    /// Plays `written` frames from a stream position `origin`: the data thread runs `wake(k)`
    /// ns into cycle k, or misses cycles in `missed` (it runs in the next one instead, reading
    /// that cycle's start). The audio thread looks every 0.9–1.5 ms. Returns the gaps found.
    func play(written: Int = 768, origin: Int64 = 10_000, missed: Set<Int> = [], graphDelay: Int = 256,
              driftPpm: Double = 0, seed: UInt64 = 1, wake: ((Int, inout Rand) -> UInt64)? = nil) -> [CycleGap] {
        var rand = Rand(s: seed)
        var det = CycleGapDetector(rate: Self.rate)
        det.reset(played: origin)
        var p = Plugin(written: written)
        let start: UInt64 = 5_000_000_000
        let cycle = Double(Self.cycleNs) * (1 + driftPpm / 1e6)
        // When the data thread runs in each cycle, and which cycle's start it reads.
        var runs: [(at: UInt64, cycleStart: UInt64)] = []
        var k = 0
        while runs.count * Self.quantum < written {
            let cycleStart = start + UInt64(Double(k) * cycle)
            if !missed.contains(k) {
                let w = wake?(k, &rand) ?? (50_000 + rand.next(400_000))
                runs.append((cycleStart + w, cycleStart))
            }
            k += 1
        }
        var gaps: [CycleGap] = []
        var t = start - 2_000_000
        var next = 0
        let end = runs.last!.at + 3_000_000
        while t < end {
            while next < runs.count && runs[next].at <= t {
                p.hwPtr = min(p.hwPtr + Self.quantum, written)
                p.now = runs[next].cycleStart
                p.graphDelay = graphDelay
                p.transferred = Self.quantum
                next += 1
            }
            let queued = written - p.hwPtr
            let look = ServerTiming(nanos: t, queued: queued, delay: p.delay(at: t))
            if let g = det.look(look, played: origin + Int64(p.hwPtr)) { gaps.append(g) }
            t += 900_000 + rand.next(600_000)
        }
        return gaps
    }

    @Test func aStreamThatTakesEveryCycleHasNoGap() {
        for seed in 1...50 { #expect(play(seed: UInt64(seed)).isEmpty) }
    }

    /// The data thread as late as it can be without missing the cycle (up to 95 % of it, in
    /// turns early and late): the sink got every quantum in time, so nothing is reported.
    @Test func aLateButInTimeDataThreadIsNoGap() {
        for seed in 1...50 {
            let gaps = play(written: 4096, seed: UInt64(seed)) { k, r in
                k % 2 == 0 ? r.next(100_000) : CycleGapTests.cycleNs * 95 / 100 - r.next(100_000)
            }
            #expect(gaps.isEmpty, "seed \(seed)")
        }
    }

    /// The rig's holes: the click's first 128 (256) frames, a cycle of silence, the rest.
    @Test func aMissedCycleIsOneGapOfAQuantumWhereItFell() {
        for (missed, after) in [(1, Int64(10_128)), (2, Int64(10_256)), (4, Int64(10_512))] {
            for seed in 1...20 {
                let gaps = play(missed: [missed], seed: UInt64(seed))
                #expect(gaps.count == 1, "cycle \(missed) seed \(seed)")
                guard let g = gaps.first else { continue }
                #expect(abs(g.frames - CycleGapTests.quantum) <= 4)
                #expect(g.after <= after && after < g.before, "the hole at \(after) lies between the looks \(g.after)-\(g.before)")
            }
        }
    }

    @Test func twoMissedCyclesInARowAreOneGapOfTwoQuanta() {
        let gaps = play(missed: [2, 3])
        #expect(gaps.count == 1 && abs((gaps.first?.frames ?? 0) - 2 * CycleGapTests.quantum) <= 4)
    }

    /// The stream's first cycle missed: the sound starts a cycle later, whole — not a hole.
    @Test func aMissedFirstCycleIsALaterStartNotAGap() {
        for seed in 1...20 { #expect(play(missed: [0], seed: UInt64(seed)).isEmpty) }
    }

    /// With a graph delay of 0 every look after the cycle's first frames is clamped by the
    /// plugin (delay equals the queue): those tell nothing and are skipped, not taken for a step.
    @Test func clampedLooksAreSkipped() {
        for seed in 1...20 { #expect(play(written: 2048, graphDelay: 0, seed: UInt64(seed)).isEmpty) }
    }

    /// The device's clock 200 ppm off CLOCK_MONOTONIC over a 10 s sound: no step.
    @Test func aDriftingDeviceClockIsNoGap() {
        #expect(play(written: 480_000, driftPpm: 200).isEmpty)
        #expect(play(written: 480_000, driftPpm: -200).isEmpty)
    }

    @Test func aNewRunStartsAfresh() {
        var det = CycleGapDetector(rate: CycleGapTests.rate)
        det.reset(played: 0)
        #expect(det.look(ServerTiming(nanos: 1_000_000, queued: 640, delay: 640 + 300), played: 128) == nil)
        // The next run begins 10 s later: its first look is not compared with the last run's.
        det.reset(played: 768)
        #expect(det.look(ServerTiming(nanos: 10_001_000_000, queued: 640, delay: 640 + 300), played: 896) == nil)
        #expect(det.look(ServerTiming(nanos: 10_003_666_667, queued: 512, delay: 512 + 300), played: 1024) == nil)
    }
}
