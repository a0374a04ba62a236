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

/// The hand-off of clicks to the audio thread and of its reports back: the lock-free rings.
@Suite struct ClicksRingTests {
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
}
