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
    /// eight bytes per step (a word has a zero byte after XOR with `\n` in every byte).
    @inline(__always)
    static func newline(in chunk: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        let n = chunk.count
        var k = start
        if let base = chunk.baseAddress {
            let p = UnsafeRawPointer(base)
            let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
            let newlines: UInt64 = 0x0A0A_0A0A_0A0A_0A0A
            while n &- k >= 16 {
                let x = UInt64(littleEndian: p.loadUnaligned(fromByteOffset: k, as: UInt64.self)) ^ newlines
                let y = UInt64(littleEndian: p.loadUnaligned(fromByteOffset: k &+ 8, as: UInt64.self)) ^ newlines
                let zx = (x &- ones) & ~x & highs, zy = (y &- ones) & ~y & highs
                if zx | zy != 0 {
                    return zx != 0 ? k &+ zx.trailingZeroBitCount / 8 : k &+ 8 &+ zy.trailingZeroBitCount / 8
                }
                k &+= 16
            }
            if n &- k >= 8 {
                let x = UInt64(littleEndian: p.loadUnaligned(fromByteOffset: k, as: UInt64.self)) ^ newlines
                let zero = (x &- ones) & ~x & highs
                if zero != 0 { return k &+ zero.trailingZeroBitCount / 8 }
                k &+= 8
            }
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
