/// A growable byte buffer that every encoder writes into (replies, events, journal lines):
/// unchecked pointer writes, one capacity check per piece. Its first `reserved` bytes are
/// kept free for a header written last (`JournalGroup.writeHeader`). It owns its memory and
/// cannot be copied (`~Copyable`): its one owner frees it when it goes.
public struct ByteBuffer: ~Copyable {
    public private(set) var base: UnsafeMutablePointer<UInt8>
    public private(set) var capacity: Int
    public private(set) var count: Int
    let initialCapacity: Int
    let reserved: Int

    public init(capacity: Int = 1024, reserved: Int = 0) {
        base = .allocate(capacity: capacity)
        self.capacity = capacity
        initialCapacity = capacity
        self.reserved = reserved
        count = reserved
    }

    /// What was written (after the reserved room).
    public var bytes: UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(start: base + reserved, count: count - reserved) }

    /// A copy of what was written.
    public var array: [UInt8] { Array(bytes) }

    /// What `body` writes, as an array (tests and tools; the server writes into buffers it keeps).
    public static func collect(_ body: (inout ByteBuffer) -> Void) -> [UInt8] {
        var o = ByteBuffer()
        body(&o)
        return o.array
    }

    /// Makes room for `n` more bytes.
    @inline(__always)
    public mutating func reserve(_ n: Int) {
        if capacity &- count < n { grow(to: count + n) }
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

    @inline(__always)
    public mutating func append(_ b: UnsafeBufferPointer<UInt8>) {
        reserve(b.count)
        uncheckedAppend(b)
    }

    /// `append` in room already reserved.
    @inline(__always)
    mutating func uncheckedAppend(_ b: UnsafeBufferPointer<UInt8>) {
        guard let p = b.baseAddress, !b.isEmpty else { return }
        let n = b.count
        assert(capacity &- count >= n)
        if n <= 16 {
            ByteBuffer.copyShort(p, n, to: base + count)
        } else if n <= 32 {
            // (17…32 bytes, a request's params mostly: the first 16 and the last 16, overlapping.
            // The source ends where the room begins at the latest, so neither copy's source is
            // written by the other.)
            ByteBuffer.copyShort(p, 16, to: base + count)
            ByteBuffer.copyShort(p + (n &- 16), 16, to: base + count + (n &- 16))
        } else {
            UnsafeMutableRawPointer(base + count).copyMemory(from: p, byteCount: n)
        }
        count &+= n
    }

    /// Copies `n` (1…16) bytes with a few overlapping loads and stores that cover every
    /// byte (the ids, names and numbers most appends are), not a `memmove` call. Every load
    /// comes before every store: the two ranges may overlap.
    @inline(__always)
    static func copyShort(_ p: UnsafePointer<UInt8>, _ n: Int, to out: UnsafeMutablePointer<UInt8>) {
        let q = UnsafeMutableRawPointer(out)
        if n >= 8 {
            let a = UnsafeRawPointer(p).loadUnaligned(as: UInt64.self)
            let b = UnsafeRawPointer(p + n - 8).loadUnaligned(as: UInt64.self)
            q.storeBytes(of: a, as: UInt64.self)
            q.storeBytes(of: b, toByteOffset: n - 8, as: UInt64.self)
        } else if n >= 4 {
            let a = UnsafeRawPointer(p).loadUnaligned(as: UInt32.self)
            let b = UnsafeRawPointer(p + n - 4).loadUnaligned(as: UInt32.self)
            q.storeBytes(of: a, as: UInt32.self)
            q.storeBytes(of: b, toByteOffset: n - 4, as: UInt32.self)
        } else {
            let a = p[0], b = p[n >> 1], c = p[n - 1]
            out[0] = a
            out[n >> 1] = b
            out[n - 1] = c
        }
    }

    public mutating func append(_ a: [UInt8]) {
        a.withUnsafeBufferPointer { append($0) }
    }

    @inline(__always)
    public mutating func append(_ byte: UInt8) {
        reserve(1)
        base[count] = byte
        count += 1
    }

    /// Empties it (down to the reserved room); memory a burst made it grow to goes back.
    public mutating func removeAll() {
        count = reserved
        if capacity > 16 * initialCapacity {
            base.deallocate()
            base = .allocate(capacity: initialCapacity)
            capacity = initialCapacity
        }
    }

    deinit { base.deallocate() }

    // A buffer used as a queue (a connection's output, Transport.swift); offsets are into
    // `bytes`, what was written after the reserved room.

    /// The written byte at offset `i`.
    @inline(__always)
    public subscript(i: Int) -> UInt8 { base[reserved + i] }

    /// Drops what was written from offset `n` on.
    public mutating func truncate(to n: Int) {
        precondition(n >= 0 && reserved + n <= count)
        count = reserved + n
    }

    /// Drops the first `n` written bytes; the rest move down.
    public mutating func removeFirst(_ n: Int) {
        precondition(n >= 0 && reserved + n <= count)
        let rest = count - reserved - n
        if rest > 0 { (base + reserved).update(from: base + reserved + n, count: rest) }
        count = reserved + rest
    }
}

/// The pieces every encoder writes with.
extension ByteBuffer {
    /// `s`'s bytes (a literal).
    @inline(__always) public mutating func put(_ s: StaticString) {
        let n = s.utf8CodeUnitCount
        reserve(n)
        UnsafeMutableRawPointer(base + count).copyMemory(from: s.utf8Start, byteCount: n)
        count += n
    }

    @inline(__always) mutating func seqHead(_ seq: UInt64) {
        put(#"{"seq":"#)
        uint(seq)
    }

    /// The decimal digits of `v`.
    @inline(__always) public mutating func uint(_ v: UInt64) {
        reserve(20)
        uncheckedUInt(v)
    }

    /// `uint` in room already reserved (20 bytes).
    @inline(__always) mutating func uncheckedUInt(_ v: UInt64) {
        assert(capacity &- count >= 20)
        if v < 10 {
            base[count] = UInt8(truncatingIfNeeded: v) &+ 0x30
            count &+= 1
            return
        }
        // Eight digits at a time, each block computed in one word (`digits`) and stored
        // whole: the first block without its leading zeros, the others as they are.
        if v < 100_000_000 { return uncheckedDigits(ByteBuffer.digits(v), leading: true) }
        if v < 10_000_000_000_000_000 {
            let high = v / 100_000_000
            uncheckedDigits(ByteBuffer.digits(high), leading: true)
            uncheckedDigits(ByteBuffer.digits(v &- high &* 100_000_000), leading: false)
        } else {
            let high = v / 10_000_000_000_000_000, rest = v &- high &* 10_000_000_000_000_000
            let middle = rest / 100_000_000
            uncheckedDigits(ByteBuffer.digits(high), leading: true)
            uncheckedDigits(ByteBuffer.digits(middle), leading: false)
            uncheckedDigits(ByteBuffer.digits(rest &- middle &* 100_000_000), leading: false)
        }
    }

    /// The eight decimal digits of `v` (below 10^8, leading zeros included) as the values
    /// 0…9 of a word's bytes, the first digit in the lowest byte (the first in memory):
    /// split into two halves of four digits, those into two of two, those into digits, each
    /// step on all the parts at once (every part has room in its lane: no carry crosses).
    /// A step puts quotient q and remainder x - q·d of each lane side by side, as
    /// x·2^w - q·(d·2^w - 1): the quotient stays where the part was, the remainder goes up.
    @inline(__always) static func digits(_ v: UInt64) -> UInt64 {
        let high = v / 10_000
        var x = (v &<< 32) &- high &* (10_000 << 32 - 1)              // 2 lanes of 32 bits: 0…9999
        let hundreds = ((x &* 10_486) &>> 20) & 0x0000_007F_0000_007F  // x / 100 (exact below 43,699)
        x = (x &<< 16) &- hundreds &* (100 << 16 - 1)                  // 4 lanes of 16 bits: 0…99
        let tens = ((x &* 103) &>> 10) & 0x000F_000F_000F_000F         // x / 10 (exact below 179)
        return (x &<< 8) &- tens &* (10 << 8 - 1)                      // 8 lanes of 8 bits: 0…9
    }

    /// Stores a block of `digits` (8 bytes; room reserved), without its leading zeros if
    /// `leading` (the block is then not 0).
    @inline(__always) private mutating func uncheckedDigits(_ digits: UInt64, leading: Bool) {
        let zeros = leading ? digits.trailingZeroBitCount & ~7 : 0  // (bits: 8 per leading zero)
        let ascii = (digits &>> UInt64(zeros)) | 0x3030_3030_3030_3030
        UnsafeMutableRawPointer(base + count).storeBytes(of: ascii.littleEndian, as: UInt64.self)
        count &+= 8 &- zeros &>> 3
    }

    @inline(__always) public mutating func int(_ v: Int) {
        if v < 0 { append(UInt8(ascii: "-")) }
        uint(UInt64(v.magnitude))
    }

    /// `s` as a quoted JSON string.
    public mutating func string(_ s: String) {
        if s.utf8.withContiguousStorageIfAvailable({ quoted($0) }) == nil {
            var copy = s
            copy.withUTF8 { quoted($0) }
        }
    }

    /// `bytes` (UTF-8) quoted and escaped: copied whole unless a byte needs an escape
    /// (found eight at a time).
    mutating func quoted(_ bytes: UnsafeBufferPointer<UInt8>) {
        if bytes.count <= 16, quotedShort(bytes) { return }
        reserve(bytes.count + 2)
        base[count] = UInt8(ascii: "\"")
        count += 1
        var i = 0
        let n = bytes.count
        if let p = bytes.baseAddress {
            while i + 8 <= n {
                if ByteBuffer.anySpecial(UnsafeRawPointer(p + i).loadUnaligned(as: UInt64.self)) { break }
                i += 8
            }
        }
        // The tail (or a short string): copied as it is checked, while nothing needs an escape.
        if let p = bytes.baseAddress {
            while i < n && !JSON.needsEscape(p[i]) { i += 1 }
            if i == n {
                (base + count).update(from: p, count: n)
                count += n
                base[count] = UInt8(ascii: "\"")
                count += 1
                return
            }
        }
        var run = 0
        while i < n {
            let byte = bytes[i]
            if !JSON.needsEscape(byte) { i += 1; continue }
            if i > run { append(UnsafeBufferPointer(rebasing: bytes[run..<i])) }
            escape(byte)
            i += 1
            run = i
        }
        if n > run { append(UnsafeBufferPointer(rebasing: bytes[run...])) }
        append(UInt8(ascii: "\""))
    }

    /// `quoted` of a string of at most 16 bytes that needs no escape (ids, names, method
    /// names: most strings written): checked with a few overlapping loads that cover every
    /// byte and copied by `copyShort`, no loop, no `memmove` call. Returns false, having
    /// written nothing, when a byte needs an escape.
    @inline(__always)
    private mutating func quotedShort(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        let n = bytes.count
        guard let p = bytes.baseAddress, n > 0 else {
            put(#""""#)
            return true
        }
        let raw = UnsafeRawPointer(p)
        let special = n >= 8
            ? ByteBuffer.anySpecial(raw.loadUnaligned(as: UInt64.self))
                || ByteBuffer.anySpecial(raw.loadUnaligned(fromByteOffset: n - 8, as: UInt64.self))
            : n >= 4
            ? ByteBuffer.anySpecial(UInt64(raw.loadUnaligned(as: UInt32.self))
                                    | UInt64(raw.loadUnaligned(fromByteOffset: n - 4, as: UInt32.self)) << 32)
            : JSON.needsEscape(p[0]) || JSON.needsEscape(p[n >> 1]) || JSON.needsEscape(p[n - 1])
        if special { return false }
        reserve(n + 2)
        base[count] = UInt8(ascii: "\"")
        ByteBuffer.copyShort(p, n, to: base + count + 1)
        base[count + n + 1] = UInt8(ascii: "\"")
        count += n + 2
        return true
    }

    /// Whether any of the eight bytes of `w` needs an escape: a quote, a backslash, DEL, or
    /// a control byte (below 0x20). (Exact for "any"; which byte it is, it does not say.)
    @inline(__always)
    static func anySpecial(_ w: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        @inline(__always) func zeroByte(_ x: UInt64) -> UInt64 { (x &- ones) & ~x & highs }
        return (zeroByte(w ^ (ones &* 0x22)) | zeroByte(w ^ (ones &* 0x5C)) | zeroByte(w ^ (ones &* 0x7F))
            | ((w &- ones &* 0x20) & ~w & highs)) != 0
    }

    /// `s`'s bytes as they are (enum raw values, method names, number literals). (Read in
    /// place: a mutable copy for `withUTF8` counted a reference, and released it.)
    @inline(__always) mutating func utf8(_ s: String) {
        if s.utf8.withContiguousStorageIfAvailable({ append($0) }) == nil {
            var copy = s
            copy.withUTF8 { append($0) }
        }
    }

    /// A request's id (its JSON text).
    mutating func id(_ id: RequestID) {
        switch id.storage {
        case .integer(let n): int(Int(n))
        case .text(let t): utf8(t)
        }
    }

    @inline(__always) mutating func optional(_ s: String?) {
        if let s { string(s) } else { put("null") }
    }
    @inline(__always) public mutating func bool(_ b: Bool) { if b { put("true") } else { put("false") } }
    @inline(__always) mutating func source(_ s: Source) { if s == .user { put(#""user""#) } else { put(#""program""#) } }
    /// As `JSON.double` writes it.
    public mutating func double(_ v: Double) { json(JSON.double(v)) }
    /// A JSON-RPC request line, its newline included (the clients' requests; no `id`: a
    /// notification); `params` writes the params' value (nil: none).
    public mutating func request(id: Int?, method: String, params: ((inout ByteBuffer) -> Void)?) {
        put(#"{"jsonrpc":"2.0","#)
        if let id {
            put(#""id":"#)
            int(id)
            append(UInt8(ascii: ","))
        }
        put(#""method":"#)
        string(method)
        if let params {
            put(#","params":"#)
            params(&self)
        }
        put("}\n")
    }

    /// A `JSON` value's compact text (the server's own answers, the state document).
    public mutating func json(_ j: JSON) {
        switch j {
        case .null: put("null")
        case .bool(let b): bool(b)
        case .number(let text): utf8(text)
        case .string(let s): string(s)
        case .array(let values):
            append(UInt8(ascii: "["))
            for (i, v) in values.enumerated() {
                if i > 0 { append(UInt8(ascii: ",")) }
                json(v)
            }
            append(UInt8(ascii: "]"))
        case .object(let members):
            append(UInt8(ascii: "{"))
            for (i, m) in members.enumerated() {
                if i > 0 { append(UInt8(ascii: ",")) }
                string(m.key)
                append(UInt8(ascii: ":"))
                json(m.value)
            }
            append(UInt8(ascii: "}"))
        }
    }

    /// The escape of a byte that `JSON.needsEscape`.
    private mutating func escape(_ byte: UInt8) {
        switch byte {
        case UInt8(ascii: "\""): put(#"\""#)
        case UInt8(ascii: "\\"): put(#"\\"#)
        case 0x0A: put(#"\n"#)
        case 0x0D: put(#"\r"#)
        case 0x09: put(#"\t"#)
        default:
            let hex: StaticString = "0123456789abcdef"
            put(#"\u00"#)
            append(hex.utf8Start[Int(byte >> 4)])
            append(hex.utf8Start[Int(byte & 0xF)])
        }
    }
}
