import Synchronization

/// A bounded single-producer single-consumer queue: `push` and `pop` never block
/// and never allocate, and take no lock. Each side must be one thread at a time: the engine's
/// front uses its ends under its lock, the audio thread the other ends.
///
/// Ordering: each index is written by one side only. `push` writes the slot, then stores
/// `tail` with release; `pop` loads `tail` with acquire before it reads the slot, so it reads
/// the element whole. `pop` moves the slot out, then stores `head` with release; `push` loads
/// `head` with acquire before it writes a slot, so it never overwrites one still being read.
/// Each side's own index is read relaxed (only it writes it). The indices only grow (Int: no
/// wrap in practice); a slot is `index & mask`. (ClicksRingTests hammers it from two threads.)
// Sendable because each end is used by one thread at a time (the contract above) and the two ends
// meet only through the acquire/release `head`/`tail`, which hand a slot over whole.
final class SPSCRing<Element>: @unchecked Sendable {
    private let buffer: UnsafeMutablePointer<Element>
    private let mask: Int
    let capacity: Int
    private let head = Atomic<Int>(0)   // next slot to read (consumer owns)
    private let tail = Atomic<Int>(0)   // next slot to write (producer owns)

    init(capacity requested: Int) {
        var cap = 2
        while cap < requested { cap <<= 1 }
        capacity = cap
        mask = cap - 1
        buffer = .allocate(capacity: cap)
    }

    deinit {
        while pop() != nil {}
        buffer.deallocate()
    }

    /// False when full (the element is not stored).
    @discardableResult
    func push(_ e: Element) -> Bool {
        let t = tail.load(ordering: .relaxed)
        let h = head.load(ordering: .acquiring)
        if t &- h >= capacity { return false }
        (buffer + (t & mask)).initialize(to: e)
        tail.store(t &+ 1, ordering: .releasing)
        return true
    }

    func pop() -> Element? {
        let h = head.load(ordering: .relaxed)
        let t = tail.load(ordering: .acquiring)
        if h == t { return nil }
        let e = (buffer + (h & mask)).move()
        head.store(h &+ 1, ordering: .releasing)
        return e
    }

    var isEmpty: Bool { head.load(ordering: .acquiring) == tail.load(ordering: .acquiring) }
}
