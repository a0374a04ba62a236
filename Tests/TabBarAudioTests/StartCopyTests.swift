import Testing
@testable import TabBarAudio

/// What `AlsaSink` keeps of a stream's first writes through PipeWire's plugin, and when an
/// underrun is taken for the plugin's start race (AlsaStartRace.swift) rather than a real one.
/// The race itself cannot be made here (it needs the plugin's cycle to read the state between
/// `start` and RUNNING); on the rig it came about once in 670 starts (docs/AUDIO.md, "The start
/// race"; measured by a one-off script, `bench/sink/startraces.py` in git history at ecf6e54).
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
        #expect(!c.isRace(since: 0, delay: 100, cycle: 256))
    }

    /// Within half a cycle of the start, with all of the copy still ahead of the listener: the
    /// race. With less ahead, or unknown: a real underrun, recovered and reported.
    @Test func anUnderrunSoonAfterTheStartWithAllStillAheadIsTheRace() {
        var c = StartCopy(capacity: 8, frameBytes: 4, replays: 0)
        defer { c.free() }
        write(&c, frames(0, 6), started: true)
        #expect(c.isRace(since: 100, delay: 6, cycle: 256))
        #expect(c.isRace(since: 100, delay: 1030, cycle: 256))
        #expect(!c.isRace(since: 100, delay: 5, cycle: 256))
        #expect(!c.isRace(since: 100, delay: nil, cycle: 256))
        #expect(!c.isRace(since: 128, delay: 1030, cycle: 256), "half a cycle on, a copy shorter than a cycle is not told")
        c.seen(queued: 2)
        #expect(!c.isRace(since: 100, delay: 1030, cycle: 256))
    }

    /// Later than half a cycle (the look came late), a copy of at least a cycle is the race when
    /// the delay has not fallen below what it was after the last write: nothing was taken. The
    /// figures are the rig's: a race left 2176 after 2170, real underruns 128 after 576 and 700.
    @Test func aLateLookTellsTheRaceByTheDelayAfterTheLastWrite() {
        var c = StartCopy(capacity: 4096, frameBytes: 4, replays: 0)
        defer { c.free() }
        write(&c, frames(0, 576), started: true)
        c.delayAfter = 700
        #expect(!c.isRace(since: 400, delay: 128, cycle: 256), "a real underrun: the delay fell to the server's own")
        #expect(!c.isRace(since: 400, delay: 699, cycle: 256))
        #expect(c.isRace(since: 400, delay: 700, cycle: 256))
        #expect(c.isRace(since: 4000, delay: 706, cycle: 256), "however late the look")
        #expect(c.isRace(since: 400, delay: 955, cycle: 256))
        #expect(!c.isRace(since: 400, delay: 956, cycle: 256), "a cycle more: the quantum grew, a real underrun may look so")
        c.delayAfter = nil
        #expect(!c.isRace(since: 400, delay: 706, cycle: 256), "no delay after the write: not told")
        write(&c, frames(0, 1152), started: true)
        c.delayAfter = 2170
        #expect(c.isRace(since: 600, delay: 2176, cycle: 1024))
        #expect(!c.isRace(since: 1100, delay: 2176, cycle: 2048), "a copy shorter than the cycle")
    }

    @Test func freeingKeepsTheCount() {
        var c = StartCopy(capacity: 8, frameBytes: 4, replays: 3)
        c.free()
        #expect(c.bytes == nil && c.frames == 0 && c.replays == 3)
    }
}
