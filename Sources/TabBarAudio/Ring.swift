import Synchronization

/// A bounded single-producer single-consumer queue: `push` and `pop` never block
/// and never allocate. One side must be one thread at a time (callers serialise
/// producers among themselves, never against the consumer).
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
        if t - h >= capacity { return false }
        (buffer + (t & mask)).initialize(to: e)
        tail.store(t + 1, ordering: .releasing)
        return true
    }

    func pop() -> Element? {
        let h = head.load(ordering: .relaxed)
        let t = tail.load(ordering: .acquiring)
        if h == t { return nil }
        let e = (buffer + (h & mask)).move()
        head.store(h + 1, ordering: .releasing)
        return e
    }

    var isEmpty: Bool { head.load(ordering: .acquiring) == tail.load(ordering: .acquiring) }
}
