import Glibc
import Synchronization
import Testing
@testable import TabBarAudio

/// The hand-off of clicks to the audio thread and of its reports back: the lock-free rings.
@Suite struct ClicksRingTests {
    /// One producer thread, one consumer thread, a ring of 8: every element arrives once, in
    /// order, whole (its two words agree: the consumer never reads a slot before its write
    /// is published, nor the producer overwrites one not yet read).
    @Test func theRingHandsEveryElementOverInOrderBetweenTwoThreads() {
        // What the consumer found: elements out of order or torn, and times it found the ring empty.
        let tally = Locked((bad: 0, empties: 0))
        struct Item { var n: Int; var check: UInt64 }
        let ring = SPSCRing<Item>(capacity: 8)
        let count = 300_000
        let consumer = try! spawnThread {
            var next = 0, bad = 0, empties = 0
            while next < count {
                guard let item = ring.pop() else { empties += 1; sched_yield(); continue }
                if item.n != next || item.check != UInt64(truncatingIfNeeded: item.n) &* 0x9E37_79B9_7F4A_7C15 {
                    bad += 1
                }
                next = item.n + 1
            }
            tally.set((bad, empties))
        }.get()
        var fulls = 0
        for n in 0..<count {
            let item = Item(n: n, check: UInt64(truncatingIfNeeded: n) &* 0x9E37_79B9_7F4A_7C15)
            while !ring.push(item) { fulls += 1; sched_yield() }
        }
        pthread_join(consumer, nil)
        let (bad, empties) = tally.value
        #expect(bad == 0)
        #expect(ring.isEmpty)
        #expect(ring.pop() == nil)
        // (The two threads met at both ends: the ring was found full, and empty.)
        #expect(fulls > 0 && empties > 0)
    }
}
