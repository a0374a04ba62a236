/// The requests in flight, by id (`Core.State.waiters`): what a `[Int: Element]` does, for
/// ids handed out one after another (`Core.nextID`). An id's slot is `id % 256`, so the
/// requests of a window of up to 256 ids are found, added and removed without hashing; an
/// older request still waiting when a newer id needs its slot moves to a dictionary (a slow
/// reply among many quick ones), so memory stays bounded whatever is in flight.
struct Waiters<Element> {
    static var slotCount: Int { 256 }
    private var slots: [(id: Int, element: Element)?] = Array(repeating: nil, count: Waiters.slotCount)
    /// Requests that gave their slot to a newer id.
    private var older: [Int: Element] = [:]
    private(set) var count = 0

    var isEmpty: Bool { count == 0 }

    private static func slot(_ id: Int) -> Int { id & (slotCount - 1) }

    /// Adds `element` for `id` (an id not in the table).
    mutating func insert(_ element: Element, for id: Int) {
        let i = Self.slot(id)
        if let moved = slots[i] { older[moved.id] = moved.element }
        slots[i] = (id, element)
        count += 1
    }

    /// Removes and returns the element of `id`, if there is one.
    mutating func remove(_ id: Int) -> Element? {
        let i = Self.slot(id)
        if let s = slots[i], s.id == id {
            slots[i] = nil
            count -= 1
            return s.element
        }
        guard !older.isEmpty, let e = older.removeValue(forKey: id) else { return nil }
        count -= 1
        return e
    }

    /// Removes and returns the elements for which `isDue` holds.
    mutating func remove(where isDue: (Element) -> Bool) -> [(id: Int, element: Element)] {
        var out: [(id: Int, element: Element)] = []
        guard count > 0 else { return out }
        for i in slots.indices {
            if let s = slots[i], isDue(s.element) {
                out.append(s)
                slots[i] = nil
            }
        }
        for (id, e) in older where isDue(e) {
            out.append((id, e))
            older[id] = nil
        }
        count -= out.count
        return out
    }

    /// Empties it; returns what it held.
    mutating func removeAll() -> [Element] {
        remove(where: { _ in true }).map(\.element)
    }
}
