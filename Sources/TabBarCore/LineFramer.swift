/// Splits a byte stream into lines of at most `maxLine` bytes.
///
/// Complete lines in the fed chunk are handed out without copying; only a
/// partial tail is kept, and it is never rescanned. `\r\n` is accepted and
/// blank lines are skipped. A line longer than `maxLine` is reported once as
/// `.tooLong` and the rest of it is discarded up to its newline.
public struct LineFramer: Sendable {
    /// One framed unit.
    public enum Line {
        case line(UnsafeBufferPointer<UInt8>)
        case tooLong
    }

    public let maxLine: Int
    /// Bytes of an unfinished line.
    public private(set) var pending: [UInt8] = []
    /// Inside an overlong line whose newline has not come yet.
    public private(set) var discarding = false

    public init(maxLine: Int = 65536) {
        self.maxLine = maxLine
    }

    /// Feeds a chunk; `handle` is called for each complete line, in order.
    public mutating func feed(_ chunk: UnsafeBufferPointer<UInt8>, _ handle: (Line) -> Void) {
        var start = 0
        let n = chunk.count
        while start < n {
            // Find the next newline (a scan of the new bytes only).
            let nl = LineFramer.newline(in: chunk, from: start)
            if nl == n {
                // No newline: keep the tail, unless it makes the line too long.
                if discarding { return }
                let tail = n - start
                // One byte of slack: a line of exactly maxLine bytes may still be followed by "\r".
                if pending.count + tail > maxLine + 1 {
                    pending.removeAll(keepingCapacity: pending.capacity <= 4096)
                    discarding = true
                    handle(.tooLong)
                } else {
                    pending.append(contentsOf: UnsafeBufferPointer(rebasing: chunk[start..<n]))
                }
                return
            }
            if discarding {
                discarding = false
            } else if pending.isEmpty {
                emit(UnsafeBufferPointer(rebasing: chunk[start..<nl]), handle)
            } else {
                pending.append(contentsOf: UnsafeBufferPointer(rebasing: chunk[start..<nl]))
                let line = pending
                pending.removeAll(keepingCapacity: pending.capacity <= 4096)
                line.withUnsafeBufferPointer { emit($0, handle) }
            }
            start = nl + 1
        }
    }

    /// The index of the first `\n` in `chunk` at or after `start`, or `chunk.count`:
    /// thirty-two bytes per step, sixteen compared at once (a vector compare, its mask read
    /// as two words whose first set byte is the newline's).
    @inline(__always)
    static func newline(in chunk: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        let n = chunk.count
        var k = start
        if let base = chunk.baseAddress, n &- k >= 16 {
            let newlines = SIMD16<UInt8>(repeating: 0x0A)
            @inline(__always) func mask(_ at: UnsafePointer<UInt8>) -> SIMD2<UInt64> {
                unsafeBitCast(UnsafeRawPointer(at).loadUnaligned(as: SIMD16<UInt8>.self) .== newlines, to: SIMD2<UInt64>.self)
            }
            @inline(__always) func first(_ m: SIMD2<UInt64>, _ at: UnsafePointer<UInt8>) -> Int {
                (at - base) &+ (m[0] != 0 ? m[0].trailingZeroBitCount / 8 : 8 &+ m[1].trailingZeroBitCount / 8)
            }
            var q = base + k
            let end = base + n
            while end - q >= 32 {
                let a = mask(q), b = mask(q + 16)
                let any = a | b
                if any[0] | any[1] != 0 {
                    return a[0] | a[1] != 0 ? first(a, q) : first(b, q + 16)
                }
                q += 32
            }
            if end - q >= 16 {
                let a = mask(q)
                if a[0] | a[1] != 0 { return first(a, q) }
                q += 16
            }
            k = q - base
        }
        while k < n && chunk[k] != 0x0A { k += 1 }
        return k
    }

    /// Convenience for tests and small inputs.
    public mutating func feed(_ bytes: [UInt8], _ handle: (Line) -> Void) {
        bytes.withUnsafeBufferPointer { feed($0, handle) }
    }

    /// At end of input: a final line without a newline still counts.
    public mutating func finish(_ handle: (Line) -> Void) {
        if discarding {
            discarding = false
            return
        }
        guard !pending.isEmpty else { return }
        let line = pending
        pending = []
        line.withUnsafeBufferPointer { emit($0, handle) }
    }

    private func emit(_ raw: UnsafeBufferPointer<UInt8>, _ handle: (Line) -> Void) {
        var end = raw.count
        if end > 0 && raw[end - 1] == 0x0D { end -= 1 }
        if end > maxLine {
            handle(.tooLong)
            return
        }
        var blank = true
        for k in 0..<end where raw[k] != 0x20 && raw[k] != 0x09 && raw[k] != 0x0D {
            blank = false
            break
        }
        if blank { return }
        handle(.line(UnsafeBufferPointer(rebasing: raw[0..<end])))
    }
}
