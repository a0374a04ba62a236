/// A byte-level recogniser for the commonest request line,
/// `{"jsonrpc":"2.0","id":N,"method":"tab.select","params":{"index":I,"source":"program"}}`
/// (members in any order, JSON white space between tokens), so that the server can
/// handle it without building a `JSON` tree.
///
/// It accepts only lines whose slow-path handling it can reproduce byte for byte:
/// the id is a plain integer literal (any length) or a string of printable ASCII
/// without escapes; params hold `tab` (a printable-ASCII id without escapes, within
/// `maxIDLength`) or `index` (an integer of at most 15 digits), and optionally
/// `source` (`"user"` or `"program"`). Anything else — `if_seq`, unknown or
/// duplicate members, nulls, escapes, non-ASCII, fractions, notifications, a
/// missing or different `jsonrpc` — returns nil and the line takes the slow path
/// (`Envelope.decode` → `Methods.command`), which also produces every error.
public struct FastSelect: Equatable, Sendable {
    /// The id token as it appears in the line (a number literal, or a string with its quotes).
    public var id: Range<Int>
    /// The tab's id in the line, without its quotes, when the params name `tab`; else `index`
    /// says which tab. (Ranges and integers only: the value is copied and dropped for free.)
    public var tab: Range<Int>?
    public var index: Int
    public var source: Source
    /// The params object as the line spells it, braces included.
    public var params: Range<Int>
    /// Whether `params` holds no white space, so that it is already what `JSON.write` writes.
    public var paramsCompact: Bool
    /// The raw value tokens of the params members, in the order they came (for the journal).
    public var members: [(key: Key, value: Range<Int>)] { (0..<memberCount).map { member($0) } }
    var key0 = Key.tab, key1 = Key.tab
    var value0 = 0..<0, value1 = 0..<0
    var memberCount = 0

    @inline(__always) func member(_ k: Int) -> (key: Key, value: Range<Int>) { k == 0 ? (key0, value0) : (key1, value1) }

    public enum Key: Equatable, Sendable { case tab, index, source }

    public static func == (a: FastSelect, b: FastSelect) -> Bool {
        a.id == b.id && a.tab == b.tab && a.index == b.index && a.source == b.source && a.params == b.params
            && a.paramsCompact == b.paramsCompact && a.memberCount == b.memberCount
            && zip(a.members, b.members).allSatisfy { $0.key == $1.key && $0.value == $1.value }
    }

    init() {
        id = 0..<0
        index = 0
        source = .user
        params = 0..<0
        paramsCompact = false
    }

    /// The tab the line names, as the slow path decodes it.
    public func ref(_ line: UnsafeBufferPointer<UInt8>) -> TabRef {
        guard let tab else { return .index(index) }
        return .id(String(decoding: UnsafeBufferPointer(rebasing: line[tab]), as: UTF8.self))
    }

    /// The command the slow path would decode from this line.
    public func command(_ line: UnsafeBufferPointer<UInt8>) -> Command { .select(ref(line), ifSeq: nil, source: source) }

    /// The id as the slow path's `JSON` value.
    public func idJSON(_ line: UnsafeBufferPointer<UInt8>) -> JSON {
        if line[id.lowerBound] == UInt8(ascii: "\"") {
            return .string(String(decoding: UnsafeBufferPointer(rebasing: line[(id.lowerBound + 1)..<(id.upperBound - 1)]), as: UTF8.self))
        }
        return .number(String(decoding: UnsafeBufferPointer(rebasing: line[id]), as: UTF8.self))
    }

    /// Appends the id exactly as `JSON.write` would write `idJSON`.
    @inline(__always)
    public func writeID(_ line: UnsafeBufferPointer<UInt8>, into out: inout [UInt8]) {
        out.append(contentsOf: UnsafeBufferPointer(rebasing: line[id]))
    }

    /// Appends the params object exactly as `JSON.write` writes the parsed params.
    public func writeParams(_ line: UnsafeBufferPointer<UInt8>, into out: inout [UInt8]) {
        // Written without white space, the params are at most as long as in the line.
        let bytes = [UInt8](unsafeUninitializedCapacity: params.count) { buf, n in
            var w = ByteWriter(base: buf.baseAddress!, capacity: buf.count)
            writeParams(line, into: &w)
            n = w.count
        }
        out.append(contentsOf: bytes)
    }

    /// `writeParams` into a `ByteWriter`: the line's own bytes when they are compact.
    @inline(__always)
    public func writeParams(_ line: UnsafeBufferPointer<UInt8>, into w: inout ByteWriter) {
        if paramsCompact {
            w.put(UnsafeBufferPointer(rebasing: line[params]))
            return
        }
        w.put(UInt8(ascii: "{"))
        for k in 0..<memberCount {
            if k > 0 { w.put(UInt8(ascii: ",")) }
            let m = member(k)
            switch m.key {
            case .tab: w.put(#""tab":"#)
            case .index: w.put(#""index":"#)
            case .source: w.put(#""source":"#)
            }
            w.put(UnsafeBufferPointer(rebasing: line[m.value]))
        }
        w.put(UInt8(ascii: "}"))
    }

    /// Recognises the line, or returns nil (slow path).
    public static func scan(_ b: UnsafeBufferPointer<UInt8>, maxIDLength: Int) -> FastSelect? {
        var r = blank
        return scan(b, maxIDLength: maxIDLength, into: &r) ? r : nil
    }

    /// `scan` into `r` (which it overwrites): whether the line was recognised.
    @inline(__always)
    public static func scan(_ b: UnsafeBufferPointer<UInt8>, maxIDLength: Int, into r: inout FastSelect) -> Bool {
        var s = Scanner(b: b)
        r = FastSelect()
        if s.canonical(into: &r, maxIDLength: maxIDLength) { return true }
        s.i = 0
        r = FastSelect()
        return s.request(into: &r, maxIDLength: maxIDLength)
    }

    /// Recognises a journal line of a `tab.select` as `PlainSelect.writeJournal` and the
    /// general path write it, `{"seq":N,"method":"tab.select","params":{…}}`, into `r`
    /// (`id` left empty); returns its seq, or nil (parse the line as JSON instead).
    public static func scanJournal(_ b: UnsafeBufferPointer<UInt8>, maxIDLength: Int, into r: inout FastSelect) -> UInt64? {
        var s = Scanner(b: b)
        r = FastSelect()
        guard s.literal(#"{"seq":"#), let seq = s.integer(), b[seq.lowerBound] != UInt8(ascii: "-"), seq.count <= 18,
              s.literal(#","method":"tab.select","params":"#), s.params(into: &r, maxIDLength: maxIDLength),
              s.i == b.count - 1, b[s.i] == UInt8(ascii: "}") else { return nil }
        var v: UInt64 = 0
        for j in seq { v = v &* 10 &+ UInt64(b[j] &- 0x30) }
        return v
    }

    /// A value to scan into.
    public static var blank: FastSelect { FastSelect() }

    /// Reads the line left to right once. A key is told by its first letter and then
    /// matched as a whole literal, quotes included, as are the fixed values (which is
    /// what reading a plain string and comparing it decides).
    struct Scanner {
        let b: UnsafeBufferPointer<UInt8>
        var i = 0

        @inline(__always) mutating func space() {
            while i < b.count {
                let c = b[i]
                if c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09 { i += 1 } else { return }
            }
        }

        @inline(__always) mutating func eat(_ c: UInt8) -> Bool {
            space()
            guard i < b.count, b[i] == c else { return false }
            i += 1
            return true
        }

        /// Whether `lit` comes next (no white space skipped); if so, skips it.
        @inline(__always) mutating func literal(_ lit: StaticString) -> Bool {
            let n = lit.utf8CodeUnitCount
            guard b.count - i >= n, let base = b.baseAddress else { return false }
            let p = UnsafeRawPointer(base + i), q = UnsafeRawPointer(lit.utf8Start)
            var k = 0
            while k + 8 <= n {
                if p.loadUnaligned(fromByteOffset: k, as: UInt64.self) != q.loadUnaligned(fromByteOffset: k, as: UInt64.self) { return false }
                k += 8
            }
            if k + 4 <= n {
                if p.loadUnaligned(fromByteOffset: k, as: UInt32.self) != q.loadUnaligned(fromByteOffset: k, as: UInt32.self) { return false }
                k += 4
            }
            while k < n {
                if p.load(fromByteOffset: k, as: UInt8.self) != q.load(fromByteOffset: k, as: UInt8.self) { return false }
                k += 1
            }
            i += n
            return true
        }

        /// After white space: a key's opening quote, and the key's first letter (0 if none).
        @inline(__always) mutating func keyLetter() -> UInt8 {
            space()
            guard b.count - i >= 2, b[i] == 0x22 else { return 0 }
            return b[i + 1]
        }

        /// A string of printable ASCII without escapes; returns the range including quotes.
        @inline(__always) mutating func plainString() -> Range<Int>? {
            space()
            guard i < b.count, b[i] == 0x22 else { return nil }
            let start = i
            i += 1
            while i < b.count {
                let c = b[i]
                if c == 0x22 { i += 1; return start..<i }
                if c < 0x20 || c > 0x7E || c == 0x5C { return nil }
                i += 1
            }
            return nil
        }

        /// `-?(0|[1-9][0-9]*)` followed by a delimiter; returns its range.
        @inline(__always) mutating func integer() -> Range<Int>? {
            space()
            let start = i
            if i < b.count && b[i] == UInt8(ascii: "-") { i += 1 }
            let digits = i
            while i < b.count, b[i] &- 0x30 < 10 { i += 1 }
            if i == digits { return nil }
            if b[digits] == 0x30 && i - digits > 1 { return nil }
            if i < b.count {
                let c = b[i]
                guard c == UInt8(ascii: ",") || c == UInt8(ascii: "}") || c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09 else { return nil }
            }
            return start..<i
        }

        /// The members in the order the contract's examples write them, without white space
        /// (`{"jsonrpc":"2.0","id":…,"method":"tab.select","params":{…}}`): the constant
        /// stretches are compared eight bytes at a time. false: read it as `request` does.
        mutating func canonical(into r: inout FastSelect, maxIDLength: Int) -> Bool {
            guard literal(#"{"jsonrpc":"2.0","id":"#), i < b.count,
                  let id = b[i] == 0x22 ? plainString() : integer() else { return false }
            r.id = id
            guard literal(#","method":"tab.select","params":"#), quickParams(into: &r, maxIDLength: maxIDLength) else { return false }
            return i == b.count - 1 && b[i] == UInt8(ascii: "}")
        }

        /// An `index` value: an integer of at most 15 digits; its token and its value.
        @inline(__always) mutating func indexValue() -> (token: Range<Int>, value: Int)? {
            guard let v = integer() else { return nil }
            let negative = b[v.lowerBound] == UInt8(ascii: "-")
            guard v.count - (negative ? 1 : 0) <= 15 else { return nil }
            var k = 0
            for j in (v.lowerBound + (negative ? 1 : 0))..<v.upperBound { k = k &* 10 &+ Int(b[j] &- 0x30) }
            return (v, negative ? -k : k)
        }

        /// A `tab` value: a plain string of 1…`maxIDLength` bytes; its token, quotes included.
        @inline(__always) mutating func tabValue(maxIDLength: Int) -> Range<Int>? {
            guard let v = plainString(), v.count >= 3, v.count - 2 <= maxIDLength else { return nil }
            return v
        }

        /// The commonest params whole — `{"index":I}` or `{"tab":"T"}`, then `}` or
        /// `,"source":"program"}` / `,"source":"user"}` — else `params`, from the start.
        mutating func quickParams(into r: inout FastSelect, maxIDLength: Int) -> Bool {
            let start = i
            var compactLength: Int
            if literal(#"{"index":"#) {
                guard let (v, index) = indexValue() else { return false }
                r.index = index
                r.key0 = .index
                r.value0 = v
                compactLength = 9 + v.count
            } else if literal(#"{"tab":"#) {
                guard let v = tabValue(maxIDLength: maxIDLength) else { return false }
                r.tab = (v.lowerBound + 1)..<(v.upperBound - 1)
                r.key0 = .tab
                r.value0 = v
                compactLength = 7 + v.count
            } else {
                return params(into: &r, maxIDLength: maxIDLength)
            }
            if literal("}") {
                r.memberCount = 1
                compactLength += 1
            } else if literal(#","source":"program"}"#) {
                r.source = .program
                (r.key1, r.value1) = (.source, (i - 10)..<(i - 1))
                r.memberCount = 2
                compactLength += 20
            } else if literal(#","source":"user"}"#) {
                r.source = .user
                (r.key1, r.value1) = (.source, (i - 7)..<(i - 1))
                r.memberCount = 2
                compactLength += 17
            } else {
                i = start
                r.tab = nil
                r.index = 0
                return params(into: &r, maxIDLength: maxIDLength)
            }
            r.params = start..<i
            r.paramsCompact = i - start == compactLength
            return true
        }

        mutating func request(into r: inout FastSelect, maxIDLength: Int) -> Bool {
            guard eat(UInt8(ascii: "{")) else { return false }
            var seen: UInt8 = 0  // id 1, jsonrpc 2, method 4, params 8
            repeat {
                switch keyLetter() {
                case UInt8(ascii: "j"):
                    guard seen & 2 == 0, literal(#""jsonrpc""#), eat(UInt8(ascii: ":")) else { return false }
                    space()
                    guard literal(#""2.0""#) else { return false }
                    seen |= 2
                case UInt8(ascii: "i"):
                    guard seen & 1 == 0, literal(#""id""#), eat(UInt8(ascii: ":")) else { return false }
                    space()
                    guard i < b.count, let id = b[i] == 0x22 ? plainString() : integer() else { return false }
                    r.id = id
                    seen |= 1
                case UInt8(ascii: "m"):
                    guard seen & 4 == 0, literal(#""method""#), eat(UInt8(ascii: ":")) else { return false }
                    space()
                    guard literal(#""tab.select""#) else { return false }
                    seen |= 4
                case UInt8(ascii: "p"):
                    guard seen & 8 == 0, literal(#""params""#), eat(UInt8(ascii: ":")),
                          params(into: &r, maxIDLength: maxIDLength) else { return false }
                    seen |= 8
                default:
                    return false
                }
            } while eat(UInt8(ascii: ","))
            guard eat(UInt8(ascii: "}")) else { return false }
            space()
            return i == b.count && seen == 15
        }

        mutating func params(into r: inout FastSelect, maxIDLength: Int) -> Bool {
            guard eat(UInt8(ascii: "{")) else { return false }
            let start = i - 1
            var n = 0
            var named = false, sawSource = false
            var compactLength = 2  // the braces
            repeat {
                let key: Key
                let value: Range<Int>
                switch keyLetter() {
                case UInt8(ascii: "t"):
                    guard !named, literal(#""tab""#), eat(UInt8(ascii: ":")), let v = tabValue(maxIDLength: maxIDLength) else { return false }
                    named = true
                    r.tab = (v.lowerBound + 1)..<(v.upperBound - 1)
                    (key, value) = (.tab, v)
                    compactLength += 6
                case UInt8(ascii: "i"):
                    guard !named, literal(#""index""#), eat(UInt8(ascii: ":")), let (v, index) = indexValue() else { return false }
                    named = true
                    r.index = index
                    (key, value) = (.index, v)
                    compactLength += 8
                case UInt8(ascii: "s"):
                    guard !sawSource, literal(#""source""#), eat(UInt8(ascii: ":")) else { return false }
                    sawSource = true
                    space()
                    let from = i
                    if literal(#""user""#) { r.source = .user } else if literal(#""program""#) { r.source = .program } else { return false }
                    (key, value) = (.source, from..<i)
                    compactLength += 9
                default:
                    return false
                }
                compactLength += value.count + (n > 0 ? 1 : 0)
                if n == 0 {
                    r.key0 = key
                    r.value0 = value
                } else {
                    r.key1 = key
                    r.value1 = value
                }
                n += 1
            } while eat(UInt8(ascii: ","))
            guard eat(UInt8(ascii: "}")), named else { return false }
            r.memberCount = n
            r.params = start..<i
            r.paramsCompact = i - start == compactLength
            return true
        }
    }
}
