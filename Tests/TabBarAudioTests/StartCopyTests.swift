import Testing
@testable import TabBarAudio

/// What `AlsaSink` keeps of a stream's first writes through PipeWire's plugin, and when an
/// underrun is taken for the plugin's start race (AlsaStartRace.swift) rather than a real one.
/// The race itself cannot be made here (it needs the plugin's cycle to read the state between
/// `start` and RUNNING); `races` on the rig meets it about twice in 400 starts (docs/AUDIO.md).
struct StartCopyTests {
    /// Two stereo S16 frames per write, frame k holding (k, -k).
    private func frames(_ from: Int, _ n: Int) -> [Int16] {
        (from..<from + n).flatMap { [Int16($0), Int16(-$0)] }
    }

    private func kept(_ c: StartCopy) -> [Int16] {
        guard let b = c.bytes else { return [] }
        return Array(UnsafeBufferPointer(start: b.assumingMemoryBound(to: Int16.self), count: c.frames * 2))
    }

    private func write(_ c: inout StartCopy, _ samples: [Int16], started: Bool, at now: UInt64 = 0) {
        samples.withUnsafeBytes { c.wrote($0.baseAddress!, count: samples.count / 2, started: started, now: now) }
    }

    @Test func keepsEveryWriteFromTheStartUntilTheServerTakesSome() {
        var c = StartCopy(capacity: 8, frameBytes: 4, replays: 0)
        defer { c.free() }
        write(&c, frames(0, 3), started: true, at: 100)
        write(&c, frames(3, 2), started: false)
        #expect(c.frames == 5 && c.startedAt == 100)
        #expect(kept(c) == frames(0, 5))
        c.seen(queued: 5)                      // all still queued: still armed
        #expect(c.frames == 5)
        c.seen(queued: 4)                      // one frame taken: any underrun now is real
        #expect(c.frames == 0)
        write(&c, frames(5, 2), started: false)
        #expect(c.frames == 0, "nothing is kept once disarmed, until the next start")
        write(&c, frames(7, 1), started: true, at: 200)
        #expect(kept(c) == frames(7, 1) && c.startedAt == 200)
    }

    @Test func aCopyThatWouldOverflowIsDropped() {
        var c = StartCopy(capacity: 4, frameBytes: 4, replays: 0)
        defer { c.free() }
        write(&c, frames(0, 3), started: true)
        write(&c, frames(3, 2), started: false)
        #expect(c.frames == 0)
    }

    @Test func withoutABufferNothingIsKept() {
        var c = StartCopy()                    // not PipeWire's plugin: no copy
        write(&c, frames(0, 3), started: true)
        #expect(c.frames == 0)
        #expect(!c.isRace(since: 0, halfCycle: 1_000_000, delay: 100))
    }

    /// Within half a cycle of the start, with all of the copy still ahead of the listener: the
    /// race. Later, with less ahead, or unknown: a real underrun, recovered and reported.
    @Test func onlyAnUnderrunSoonAfterTheStartWithAllStillAheadIsTheRace() {
        var c = StartCopy(capacity: 8, frameBytes: 4, replays: 0)
        defer { c.free() }
        write(&c, frames(0, 6), started: true)
        let half: UInt64 = 2_666_666          // 256 frames at 48 kHz
        #expect(c.isRace(since: 1_000_000, halfCycle: half, delay: 6))
        #expect(c.isRace(since: 1_000_000, halfCycle: half, delay: 1030))
        #expect(!c.isRace(since: half, halfCycle: half, delay: 1030))
        #expect(!c.isRace(since: 1_000_000, halfCycle: half, delay: 5))
        #expect(!c.isRace(since: 1_000_000, halfCycle: half, delay: nil))
        c.seen(queued: 2)
        #expect(!c.isRace(since: 1_000_000, halfCycle: half, delay: 1030))
    }

    @Test func freeingKeepsTheCount() {
        var c = StartCopy(capacity: 8, frameBytes: 4, replays: 3)
        c.free()
        #expect(c.bytes == nil && c.frames == 0 && c.replays == 3)
    }
}
