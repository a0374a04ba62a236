/// Writes one line into memory its caller owns, without allocating. When the line
/// does not fit, `failed` is set and the caller drops the line (and takes the general
/// encoder instead). Ids that would need a JSON escape never get here: the plain
/// select index refuses them when it is built.
public struct ByteWriter {
    public let base: UnsafeMutablePointer<UInt8>
    public let capacity: Int
    public private(set) var count = 0
    public private(set) var failed = false

    public init(base: UnsafeMutablePointer<UInt8>, capacity: Int) {
        self.base = base
        self.capacity = capacity
    }

    /// What was written.
    public var bytes: UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(start: base, count: count) }

    /// Whether `n` more bytes fit; if not, the writer has failed. (What is written after
    /// a failure is never used: the caller drops the whole line.)
    @inline(__always) mutating func room(_ n: Int) -> Bool {
        if capacity &- count < n {
            failed = true
            return false
        }
        return true
    }

    /// Copies `n` bytes; short runs (the common case: keys, ids, digits) with a few
    /// overlapping word moves instead of a call to `memcpy`.
    @inline(__always) static func copy(_ dst: UnsafeMutablePointer<UInt8>, _ src: UnsafePointer<UInt8>, _ n: Int) {
        let d = UnsafeMutableRawPointer(dst), s = UnsafeRawPointer(src)
        @inline(__always) func move8(_ at: Int) {
            d.storeBytes(of: s.loadUnaligned(fromByteOffset: at, as: UInt64.self), toByteOffset: at, as: UInt64.self)
        }
        switch n {
        case 8...16:
            move8(0)
            move8(n - 8)
        case 17...32:
            move8(0)
            move8(8)
            move8(n - 16)
            move8(n - 8)
        case 4..<8:
            d.storeBytes(of: s.loadUnaligned(as: UInt32.self), as: UInt32.self)
            d.storeBytes(of: s.loadUnaligned(fromByteOffset: n - 4, as: UInt32.self), toByteOffset: n - 4, as: UInt32.self)
        case 0..<4:
            for k in 0..<n { dst[k] = src[k] }
        default:
            dst.update(from: src, count: n)
        }
    }

    @inline(__always) public mutating func put(_ s: StaticString) {
        let n = s.utf8CodeUnitCount
        guard room(n) else { return }
        ByteWriter.copy(base + count, s.utf8Start, n)
        count += n
    }

    @inline(__always) public mutating func put(_ b: UnsafeBufferPointer<UInt8>) {
        guard room(b.count), let p = b.baseAddress else { return }
        ByteWriter.copy(base + count, p, b.count)
        count += b.count
    }

    @inline(__always) public mutating func put(_ byte: UInt8) {
        guard room(1) else { return }
        base[count] = byte
        count += 1
    }

    @inline(__always) public mutating func put(_ d: Digits) {
        var d = d
        guard room(d.count) else { return }
        let n = d.count
        withUnsafeBytes(of: &d.bytes) { ByteWriter.copy(base + count, $0.baseAddress!.assumingMemoryBound(to: UInt8.self) + (24 - n), n) }
        count += n
    }
}

/// The decimal digits of a number, formatted once for the several lines that carry it.
public struct Digits: Equatable {
    /// Right-aligned ASCII digits.
    var bytes: (UInt64, UInt64, UInt64) = (0, 0, 0)
    public private(set) var count = 0
    public private(set) var value: UInt64 = 0

    public static func == (a: Digits, b: Digits) -> Bool {
        a.count == b.count && a.value == b.value && a.bytes == b.bytes
    }

    /// The digits of `v`: counted up from these when `v` is one more (the next seq).
    @inline(__always)
    public func next(_ v: UInt64) -> Digits {
        guard v == value &+ 1, count > 0 else { return Digits(v) }
        #if _endian(little)
        // Nine times in ten only the last digit (the top byte of the last word) moves.
        if bytes.2 >> 56 != 0x39 {
            var d = self
            d.value = v
            d.bytes.2 &+= 1 << 56
            return d
        }
        #endif
        var d = self
        d.value = v
        var carry = true
        withUnsafeMutableBytes(of: &d.bytes) { b in
            var k = 23
            while carry && k >= 24 - count {
                if b[k] == 0x39 {
                    b[k] = 0x30
                    k -= 1
                } else {
                    b[k] += 1
                    carry = false
                }
            }
        }
        return carry ? Digits(v) : d  // 9…9 + 1 has one digit more
    }

    /// No digits yet (`next` formats afresh).
    public init() {}

    public init(_ v: UInt64) {
        var x = v
        var n = 0
        withUnsafeMutableBytes(of: &bytes) { d in
            repeat {
                n += 1
                d[24 - n] = UInt8(truncatingIfNeeded: x % 10) &+ 0x30
                x /= 10
            } while x > 0
        }
        count = n
        value = v
    }
}

/// What the plain select path needs to know about the bar, by item index and without
/// a `String`: each item's id as a JSON string, whether a plain select may commit it,
/// and which tabs are selected and previous. Built from a state (`init(_:)`), kept up
/// to date by `committed` for the plain selects it plans; any other change to the state
/// makes it stale, and its owner builds it again.
public struct PlainSelectIndex {
    /// The ids' JSON strings, quotes included, one after the other.
    var idBytes: [UInt8] = []
    var idRanges: [Range<Int>] = []
    /// Per item: a plain select may commit it (an enabled tab without an animation style
    /// whose id needs no escape).
    var committable: [Bool] = []
    /// Per item: it has no animation style (no deselect cue when a plain select leaves it).
    var quiet: [Bool] = []
    /// Indices of the selected and previous tabs: -1 for none, -2 for one whose id cannot
    /// be written byte for byte (a plain select that would write it is not plain).
    public private(set) var selected = -1
    public private(set) var previous = -1
    /// Nothing may take the plain path: a scroll hide reason is pending (or nothing is built).
    var blocked = true

    public init() {}

    public init(_ state: BarState) {
        let style = state.settings.animation
        var plainID: [Bool] = []
        for item in state.items {
            let start = idBytes.count
            var plain = true
            idBytes.append(0x22)
            for byte in item.id.utf8 {
                if byte < 0x20 || byte == 0x22 || byte == 0x5C || byte == 0x7F { plain = false }
                idBytes.append(byte)
            }
            idBytes.append(0x22)
            idRanges.append(start..<idBytes.count)
            plainID.append(plain)
            let isQuiet = (item.animation ?? style) == .none
            quiet.append(isQuiet)
            committable.append(plain && isQuiet && item.kind == .tab && item.enabled)
        }
        func index(_ id: String?) -> Int {
            guard let id else { return -1 }
            guard let k = state.index(of: id), plainID[k] else { return -2 }
            return k
        }
        selected = index(state.selected)
        previous = index(state.previous)
        blocked = state.visibility.reasons.contains(.scroll)
    }

    /// The plain select of the tab `fast` names in `line` at seq `seq`, or nil (the
    /// general path): the same decision as `Reducer.plainSelectTarget`, from the index.
    /// (This and the writers change nothing; `mutating` only so that an index kept in a
    /// class property is used in place instead of being copied for the call.)
    @inline(__always)
    public mutating func plan(_ fast: FastSelect, _ line: UnsafeBufferPointer<UInt8>, seq: UInt64) -> PlainPlan? {
        guard !blocked else { return nil }
        var k = fast.index
        if let tab = fast.tab {
            k = -1
            let n = tab.count + 2
            for (i, r) in idRanges.enumerated() where r.count == n {
                if idBytes.withUnsafeBufferPointer({ memEqual($0.baseAddress! + r.lowerBound + 1, line.baseAddress! + tab.lowerBound, tab.count) }) {
                    k = i
                    break
                }
            }
        }
        guard k >= 0, k < committable.count, committable[k] else { return nil }
        let reselected = k == selected
        let newPrevious = reselected ? previous : selected
        guard newPrevious != -2, reselected || selected < 0 || quiet[selected] else { return nil }
        return PlainPlan(k: k, seq: seq, selected: k, previous: newPrevious, reselected: reselected)
    }

    /// `plan` was committed: the selection moved.
    public mutating func committed(_ plan: PlainPlan) {
        selected = plan.selected
        previous = plan.previous
    }

    /// Writes item `k`'s id as a JSON string.
    @inline(__always)
    func putID(_ k: Int, into w: inout ByteWriter) {
        let r = idRanges[k]
        idBytes.withUnsafeBufferPointer { w.put(UnsafeBufferPointer(rebasing: $0[r])) }
    }

    /// Writes `k`'s id, or `null` for -1.
    @inline(__always)
    func putOptionalID(_ k: Int, into w: inout ByteWriter) {
        if k >= 0 { putID(k, into: &w) } else { w.put("null") }
    }

    /// The reply line of `plan`.
    public mutating func writeReply(_ plan: PlainPlan, _ fast: FastSelect, _ line: UnsafeBufferPointer<UInt8>, into w: inout ByteWriter) {
        w.put(#"{"jsonrpc":"2.0","id":"#)
        w.put(UnsafeBufferPointer(rebasing: line[fast.id]))
        w.put(#","result":{"seq":"#)
        w.put(plan.seqDigits)
        w.put(#","selected":"#)
        putID(plan.selected, into: &w)
        w.put(#","previous":"#)
        putOptionalID(plan.previous, into: &w)
        w.put(plan.reselected ? #","reselected":true}}\#n"# : #","reselected":false}}\#n"#)
    }

    /// The event line of `plan`, `tab.selected` or `tab.reselected`; returns its method.
    public mutating func writeEvent(_ plan: PlainPlan, source: Source, into w: inout ByteWriter) -> String {
        if plan.reselected {
            w.put(#"{"jsonrpc":"2.0","method":"tab.reselected","params":{"seq":"#)
        } else {
            w.put(#"{"jsonrpc":"2.0","method":"tab.selected","params":{"seq":"#)
        }
        w.put(plan.seqDigits)
        w.put(#","tab":"#)
        putID(plan.selected, into: &w)
        if !plan.reselected {
            w.put(#","previous":"#)
            putOptionalID(plan.previous, into: &w)
        }
        w.put(source == .user ? #","source":"user"}}\#n"# : #","source":"program"}}\#n"#)
        return plan.reselected ? "tab.reselected" : "tab.selected"
    }
}

@inline(__always)
func memEqual(_ a: UnsafePointer<UInt8>, _ b: UnsafePointer<UInt8>, _ n: Int) -> Bool {
    var k = 0
    while k < n {
        if a[k] != b[k] { return false }
        k += 1
    }
    return true
}

/// A plain select, by item index: what its reply, event and journal line say, written
/// straight from the index and the request line — the same bytes the general path's
/// `JSON` trees produce (`FastPathTests` compare the two).
public struct PlainPlan {
    public var k: Int
    public var seq: UInt64
    /// Indices of the selected and previous tabs once committed (-1: none).
    public var selected: Int
    public var previous: Int
    public var reselected: Bool
    /// `seq` in decimal (`Digits.next` makes it from the last one's).
    public var seqDigits = Digits()

    /// The journal line, `{"seq":…,"method":"tab.select","params":{…}}`, with the params
    /// as the request spelled them (`FastSelect.writeParams`).
    public func writeJournal(_ fast: FastSelect, _ line: UnsafeBufferPointer<UInt8>, into w: inout ByteWriter) {
        w.put(#"{"seq":"#)
        w.put(seqDigits)
        w.put(#","method":"tab.select","params":"#)
        fast.writeParams(line, into: &w)
        w.put("}\n")
    }
}
