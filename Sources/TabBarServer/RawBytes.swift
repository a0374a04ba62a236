import TabBarCore

/// A growable byte buffer (the
/// journal lines of a group commit). Its first `reserved` bytes are kept free for a
/// header written last (`JournalGroup.writeHeader`). Owned by one object, which calls `free`.
struct RawBytes {
    private(set) var base: UnsafeMutablePointer<UInt8>
    private(set) var capacity: Int
    private(set) var count: Int
    let initialCapacity: Int
    let reserved: Int

    init(capacity: Int, reserved: Int = 0) {
        base = .allocate(capacity: capacity)
        self.capacity = capacity
        initialCapacity = capacity
        self.reserved = reserved
        count = reserved
    }

    /// What was appended (after the reserved room).
    var bytes: UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(start: base + reserved, count: count - reserved) }

    /// Makes room for `n` more bytes.
    @inline(__always)
    mutating func reserve(_ n: Int) {
        if capacity - count < n { grow(to: count + n) }
    }

    private mutating func grow(to needed: Int) {
        var cap = capacity * 2
        while cap < needed { cap *= 2 }
        let p = UnsafeMutablePointer<UInt8>.allocate(capacity: cap)
        p.update(from: base, count: count)
        base.deallocate()
        base = p
        capacity = cap
    }

    mutating func append(_ b: UnsafeBufferPointer<UInt8>) {
        guard let p = b.baseAddress, !b.isEmpty else { return }
        reserve(b.count)
        (base + count).update(from: p, count: b.count)
        count += b.count
    }

    mutating func append(_ a: [UInt8]) {
        a.withUnsafeBufferPointer { append($0) }
    }

    /// Empties it (down to the reserved room); memory a burst made it grow to goes back.
    mutating func removeAll() {
        count = reserved
        if capacity > 16 * initialCapacity {
            base.deallocate()
            base = .allocate(capacity: initialCapacity)
            capacity = initialCapacity
        }
    }

    func free() { base.deallocate() }
}
