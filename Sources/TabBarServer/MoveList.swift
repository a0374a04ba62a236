/// A list whose elements are moved in and moved out, never copied and never left behind as
/// placeholders: what a group commit stages (`Batch`). Appending moves a value in; `take`
/// moves element `k` out; once every element was taken, `forgetTaken` empties the list
/// without destroying anything (each taken value was destroyed by whoever took it), and
/// `removeAll` destroys what is still in it. Its memory is kept from group to group.
///
/// (An `Array` of an enum with a "taken" case cost, per element, a placeholder written in,
/// then read back and destroyed through the enum's value witnesses when the array was
/// emptied.) One owner: a final class, the server's `Batch` holds the only reference.
final class MoveList<Element> {
    private var base: UnsafeMutablePointer<Element>
    private var capacity: Int
    /// Elements in the list, taken or not.
    private(set) var count = 0
    /// How many of the first elements were taken (moved out) by `take`.
    private var taken = 0

    init(capacity: Int = 64) {
        self.capacity = capacity
        base = .allocate(capacity: capacity)
    }

    deinit {
        removeAll()
        base.deallocate()
    }

    var isEmpty: Bool { count == 0 }

    @inline(__always)
    func append(_ element: consuming Element) {
        if count == capacity { grow() }
        (base + count).initialize(to: element)
        count += 1
    }

    private func grow() {
        let bigger = UnsafeMutablePointer<Element>.allocate(capacity: capacity * 2)
        bigger.moveInitialize(from: base, count: count)
        base.deallocate()
        base = bigger
        capacity *= 2
    }

    /// Element `k`, moved out. Elements are taken in order, each once (`k` is the number
    /// taken so far).
    @inline(__always)
    func take(_ k: Int) -> Element {
        precondition(k == taken && k < count)
        taken += 1
        return (base + k).move()
    }

    /// Element `k`, read in place (not taken).
    @inline(__always)
    subscript(k: Int) -> Element {
        precondition(k >= taken && k < count)
        return base[k]
    }

    /// Empties the list once everything in it was taken.
    @inline(__always)
    func forgetTaken() {
        precondition(taken == count)
        count = 0
        taken = 0
    }

    /// Destroys what was not taken and empties the list.
    func removeAll() {
        if count > taken { (base + taken).deinitialize(count: count - taken) }  // (a call even for none)
        count = 0
        taken = 0
    }
}
