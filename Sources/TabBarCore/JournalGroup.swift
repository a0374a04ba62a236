/// The journal's group framing (format 2): every `write` of the daemon's group commit is
/// one group, a header line followed by the group's entry lines:
///
///     {"journal":2,"seq":S,"entries":N,"bytes":B,"check":"0123456789abcdef"}
///     {"seq":…,"method":…,"params":…}      ← N entry lines, B bytes with their newlines
///
/// `seq` is the state's seq after the group, `check` a 64-bit check of the header's
/// numbers and the B bytes (`JournalCheck`). Groups exist so that a journal file can be
/// reused: the daemon writes a new generation of entries over the pages of an old journal
/// (rewriting cached, allocated pages costs the kernel a fraction of appending), and
/// replay must tell where the new generation ends. It ends at the first group that is not
/// a complete, checked group whose `seq` is above the previous group's: bytes left from
/// the file's previous use, or a write a crash cut short, stitched to them — neither can
/// pass the check. A group with no entries (the marker written when a generation starts)
/// may only open a file.
public enum JournalGroup {
    /// The format number in the header.
    public static let format = 2
    /// The header's first bytes; a journal line that starts with them is a group header.
    public static let prefix: [UInt8] = Array(#"{"journal":2,"#.utf8)
    /// Room a writer keeps in front of a group's lines for its header (the longest
    /// header, with 20-digit numbers, is 128 bytes).
    public static let headerRoom = 160

    public struct Header: Equatable, Sendable {
        public var seq: UInt64
        public var entries: Int
        public var bytes: Int
        public var check: UInt64

        public init(seq: UInt64, entries: Int, bytes: Int, check: UInt64) {
            self.seq = seq
            self.entries = entries
            self.bytes = bytes
            self.check = check
        }
    }

    /// The check a group's header carries: its numbers and its bytes.
    public static func check(seq: UInt64, entries: Int, body: UnsafeRawBufferPointer) -> UInt64 {
        var c = JournalCheck(seq: seq, entries: entries)
        c.update(body)
        return c.value
    }

    /// Writes the header line (newline included) so that it ends right before `end`, and
    /// returns where it starts. `end - headerRoom` must be writable.
    public static func writeHeader(_ h: Header, endingAt end: UnsafeMutablePointer<UInt8>) -> UnsafeMutablePointer<UInt8> {
        var p = end
        @inline(__always) func put(_ b: UInt8) { p -= 1; p.pointee = b }
        @inline(__always) func put(_ s: StaticString) {
            var k = s.utf8CodeUnitCount
            while k > 0 { k -= 1; put(s.utf8Start[k]) }
        }
        @inline(__always) func putNumber(_ v: UInt64) {
            var v = v
            repeat { put(UInt8(truncatingIfNeeded: v % 10) &+ 0x30); v /= 10 } while v > 0
        }
        put(UInt8(0x0A))
        put("\"}")
        let hex: StaticString = "0123456789abcdef"
        var c = h.check
        for _ in 0..<16 { put(hex.utf8Start[Int(c & 15)]); c >>= 4 }
        put(#","check":""#)
        putNumber(UInt64(h.bytes))
        put(#","bytes":"#)
        putNumber(UInt64(h.entries))
        put(#","entries":"#)
        putNumber(h.seq)
        put(#"{"journal":2,"seq":"#)
        return p
    }

    /// Reads a header line (without its newline); nil when `line` is not one, byte for
    /// byte as `writeHeader` writes it.
    public static func parseHeader(_ line: UnsafeBufferPointer<UInt8>) -> Header? {
        var i = 0
        func literal(_ s: StaticString) -> Bool {
            let n = s.utf8CodeUnitCount
            guard line.count - i >= n else { return false }
            for k in 0..<n where line[i + k] != s.utf8Start[k] { return false }
            i += n
            return true
        }
        func number() -> UInt64? {
            let start = i
            var v: UInt64 = 0
            while i < line.count, line[i] >= 0x30, line[i] <= 0x39 {
                let (m, o1) = v.multipliedReportingOverflow(by: 10)
                let (s, o2) = m.addingReportingOverflow(UInt64(line[i] - 0x30))
                if o1 || o2 { return nil }
                v = s
                i += 1
            }
            // One digit, or several without a leading zero: the only spelling writeHeader uses.
            guard i > start, i - start == 1 || line[start] != 0x30 else { return nil }
            return v
        }
        guard literal(#"{"journal":2,"seq":"#), let seq = number(),
              literal(#","entries":"#), let entries = number(), entries <= UInt64(Int.max),
              literal(#","bytes":"#), let bytes = number(), bytes <= UInt64(Int.max),
              literal(#","check":""#), line.count - i == 18 else { return nil }
        var check: UInt64 = 0
        for k in i..<(i + 16) {
            let b = line[k]
            let d: UInt8
            switch b {
            case 0x30...0x39: d = b - 0x30
            case 0x61...0x66: d = b - 0x61 + 10
            default: return nil
            }
            check = check << 4 | UInt64(d)
        }
        guard line[i + 16] == 0x22, line[i + 17] == 0x7D else { return nil }
        return Header(seq: seq, entries: Int(entries), bytes: Int(bytes), check: check)
    }
}

/// A 64-bit check over a stream of bytes fed in pieces of any size (the same value
/// however it is cut): two multiply-rotate lanes over 16-byte blocks, and a final mix.
/// It tells a group from stale or torn bytes, not from an attacker (the journal is the
/// daemon's own file, mode 0600).
public struct JournalCheck {
    private var a: UInt64
    private var b: UInt64
    private var pending: (UInt64, UInt64) = (0, 0)
    private var pendingCount = 0
    private var total: UInt64 = 0

    private static let k1: UInt64 = 0x9E37_79B9_7F4A_7C15
    private static let k2: UInt64 = 0xC2B2_AE3D_27D4_EB4F

    public init(seq: UInt64, entries: Int) {
        a = 0x243F_6A88_85A3_08D3 ^ seq
        b = 0x1319_8A2E_0370_7344 ^ UInt64(truncatingIfNeeded: entries)
    }

    @inline(__always) private mutating func block(_ w0: UInt64, _ w1: UInt64) {
        block(w0, w1, JournalCheck.k1, JournalCheck.k2)
    }

    @inline(__always) private mutating func block(_ w0: UInt64, _ w1: UInt64, _ k1: UInt64, _ k2: UInt64) {
        a = ((a ^ w0) &* k1).rotl(29)
        b = ((b ^ w1) &* k2).rotl(31)
    }

    /// `k`, as a value the optimizer cannot see: with the multipliers known, LLVM folds a
    /// rotation's left shift into the multiply before it recognises the rotation (two
    /// multiplies, a shift and an or per lane, not a multiply and a rotate). The loop over
    /// a group's blocks reads them once.
    @_optimize(none) @inline(never)
    private static func opaque(_ k: UInt64) -> UInt64 { k }

    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        var p = base
        var n = bytes.count
        total &+= UInt64(n)
        if pendingCount > 0 {
            withUnsafeMutableBytes(of: &pending) { buf in
                while n > 0 && pendingCount < 16 {
                    buf[pendingCount] = p.load(as: UInt8.self)
                    pendingCount += 1
                    p += 1
                    n -= 1
                }
            }
            guard pendingCount == 16 else { return }
            block(UInt64(littleEndian: pending.0), UInt64(littleEndian: pending.1))
            pending = (0, 0)
            pendingCount = 0
        }
        if n >= 16 {
            let k1 = JournalCheck.opaque(JournalCheck.k1), k2 = JournalCheck.opaque(JournalCheck.k2)
            repeat {
                block(UInt64(littleEndian: p.loadUnaligned(as: UInt64.self)),
                      UInt64(littleEndian: p.loadUnaligned(fromByteOffset: 8, as: UInt64.self)), k1, k2)
                p += 16
                n -= 16
            } while n >= 16
        }
        if n > 0 {
            withUnsafeMutableBytes(of: &pending) { buf in
                buf.baseAddress!.copyMemory(from: p, byteCount: n)
            }
            pendingCount = n
        }
    }

    public mutating func update(_ bytes: UnsafeBufferPointer<UInt8>) { update(UnsafeRawBufferPointer(bytes)) }

    public var value: UInt64 {
        var c = self
        if c.pendingCount > 0 { c.block(UInt64(littleEndian: c.pending.0), UInt64(littleEndian: c.pending.1)) }
        var h = c.a ^ c.b.rotl(32) ^ (c.total &* JournalCheck.k2)
        // fmix64 (MurmurHash3's finaliser)
        h ^= h >> 33
        h &*= 0xFF51_AFD7_ED55_8CCD
        h ^= h >> 33
        h &*= 0xC4CE_B9FE_1A85_EC53
        h ^= h >> 33
        return h
    }
}

extension UInt64 {
    @inline(__always) fileprivate func rotl(_ k: UInt64) -> UInt64 { (self &<< k) | (self &>> (64 &- k)) }
}

extension JournalGroup {
    /// One whole group (header and lines) as bytes: `lines` are `entries` journal lines,
    /// newlines included, and `seq` the state's seq after them. (The daemon writes its
    /// header in place, `writeHeader`; this is for tests and tools.)
    public static func group(seq: UInt64, entries: Int, lines: [UInt8]) -> [UInt8] {
        let sum = lines.withUnsafeBytes { JournalGroup.check(seq: seq, entries: entries, body: $0) }
        var room = [UInt8](repeating: 0, count: headerRoom)
        let header = room.withUnsafeMutableBufferPointer { buf -> [UInt8] in
            let end = buf.baseAddress! + buf.count
            let start = writeHeader(Header(seq: seq, entries: entries, bytes: lines.count, check: sum), endingAt: end)
            return Array(UnsafeBufferPointer(start: start, count: end - start))
        }
        return header + lines
    }
}
