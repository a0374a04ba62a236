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
    public var ref: TabRef
    /// The raw value tokens of the params members, in the order they came (for the journal).
    public var members: [(key: Key, value: Range<Int>)] { (0..<memberCount).map { member($0) } }
    public var source: Source
    var m0: (key: Key, value: Range<Int>) = (.tab, 0..<0)
    var m1: (key: Key, value: Range<Int>) = (.tab, 0..<0)
    var m2: (key: Key, value: Range<Int>) = (.tab, 0..<0)
    var memberCount = 0

    @inline(__always) func member(_ k: Int) -> (key: Key, value: Range<Int>) { k == 0 ? m0 : k == 1 ? m1 : m2 }
    mutating func setMember(_ k: Int, _ m: (key: Key, value: Range<Int>)) {
        switch k {
        case 0: m0 = m
        case 1: m1 = m
        default: m2 = m
        }
    }

    public enum Key: Equatable, Sendable { case tab, index, source }

    public static func == (a: FastSelect, b: FastSelect) -> Bool {
        a.id == b.id && a.ref == b.ref && a.source == b.source && a.memberCount == b.memberCount
            && zip(a.members, b.members).allSatisfy { $0.key == $1.key && $0.value == $1.value }
    }

    init(id: Range<Int>, ref: TabRef, source: Source) {
        self.id = id
        self.ref = ref
        self.source = source
    }

    /// The command the slow path would decode from this line.
    public var command: Command { .select(ref, ifSeq: nil, source: source) }

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
        out.append(UInt8(ascii: "{"))
        for k in 0..<memberCount {
            if k > 0 { out.append(UInt8(ascii: ",")) }
            let m = member(k)
            switch m.key {
            case .tab: out.append(contentsOf: FastSelect.tabKey)
            case .index: out.append(contentsOf: FastSelect.indexKey)
            case .source: out.append(contentsOf: FastSelect.sourceKey)
            }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: line[m.value]))
        }
        out.append(UInt8(ascii: "}"))
    }

    static let tabKey: [UInt8] = Array(#""tab":"#.utf8)
    static let indexKey: [UInt8] = Array(#""index":"#.utf8)
    static let sourceKey: [UInt8] = Array(#""source":"#.utf8)

    /// Recognises the line, or returns nil (slow path).
    public static func scan(_ b: UnsafeBufferPointer<UInt8>, maxIDLength: Int) -> FastSelect? {
        var s = Scanner(b: b)
        return s.request(maxIDLength: maxIDLength)
    }

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

        /// A string of printable ASCII without escapes; returns the range including quotes.
        mutating func plainString() -> Range<Int>? {
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
        mutating func integer() -> Range<Int>? {
            space()
            let start = i
            if i < b.count && b[i] == UInt8(ascii: "-") { i += 1 }
            let digits = i
            while i < b.count, b[i] >= 0x30, b[i] <= 0x39 { i += 1 }
            if i == digits { return nil }
            if b[digits] == 0x30 && i - digits > 1 { return nil }
            if i - start > 64 { return nil }  // JSON.parse refuses longer number literals
            if i < b.count {
                let c = b[i]
                guard c == UInt8(ascii: ",") || c == UInt8(ascii: "}") || c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09 else { return nil }
            }
            return start..<i
        }

        func equals(_ r: Range<Int>, _ lit: StaticString) -> Bool {
            guard r.count == lit.utf8CodeUnitCount else { return false }
            let p = lit.utf8Start
            for k in 0..<r.count where b[r.lowerBound + k] != p[k] { return false }
            return true
        }

        mutating func request(maxIDLength: Int) -> FastSelect? {
            guard eat(UInt8(ascii: "{")) else { return nil }
            var id: Range<Int>?
            var sawVersion = false, sawMethod = false
            var result: FastSelect?
            var first = true
            while true {
                if !first { guard eat(UInt8(ascii: ",")) else { break } }
                first = false
                guard let key = plainString(), eat(UInt8(ascii: ":")) else { return nil }
                if equals(key, "\"id\"") {
                    guard id == nil else { return nil }
                    space()
                    guard i < b.count else { return nil }
                    id = b[i] == 0x22 ? plainString() : integer()
                    if id == nil { return nil }
                } else if equals(key, "\"jsonrpc\"") {
                    guard !sawVersion, let v = plainString(), equals(v, "\"2.0\"") else { return nil }
                    sawVersion = true
                } else if equals(key, "\"method\"") {
                    guard !sawMethod, let v = plainString(), equals(v, "\"tab.select\"") else { return nil }
                    sawMethod = true
                } else if equals(key, "\"params\"") {
                    guard result == nil, let p = params(maxIDLength: maxIDLength) else { return nil }
                    result = p
                } else {
                    return nil
                }
            }
            guard eat(UInt8(ascii: "}")) else { return nil }
            space()
            guard i == b.count, sawVersion, sawMethod, let id, var r = result else { return nil }
            r.id = id
            return r
        }

        mutating func params(maxIDLength: Int) -> FastSelect? {
            guard eat(UInt8(ascii: "{")) else { return nil }
            var r = FastSelect(id: 0..<0, ref: .index(0), source: .user)
            var n = 0
            var ref: TabRef?
            var source: Source?
            var sawSource = false
            while n < 3 {
                if n > 0 { guard eat(UInt8(ascii: ",")) else { break } }
                guard let key = plainString(), eat(UInt8(ascii: ":")) else { return nil }
                if equals(key, "\"tab\"") || equals(key, "\"index\"") {
                    guard ref == nil else { return nil }
                    if key.count == 5 {
                        guard let v = plainString(), v.count >= 3, v.count - 2 <= maxIDLength else { return nil }
                        ref = .id(String(decoding: UnsafeBufferPointer(rebasing: b[(v.lowerBound + 1)..<(v.upperBound - 1)]), as: UTF8.self))
                        r.setMember(n, (.tab, v))
                    } else {
                        guard let v = integer() else { return nil }
                        let digits = b[v.lowerBound] == UInt8(ascii: "-") ? v.count - 1 : v.count
                        guard digits <= 15 else { return nil }
                        var k = 0
                        for j in (v.upperBound - digits)..<v.upperBound { k = k * 10 + Int(b[j] - 0x30) }
                        ref = .index(b[v.lowerBound] == UInt8(ascii: "-") ? -k : k)
                        r.setMember(n, (.index, v))
                    }
                } else if equals(key, "\"source\"") {
                    guard !sawSource, let v = plainString() else { return nil }
                    if equals(v, "\"user\"") { source = .user } else if equals(v, "\"program\"") { source = .program } else { return nil }
                    sawSource = true
                    r.setMember(n, (.source, v))
                } else {
                    return nil
                }
                n += 1
            }
            guard eat(UInt8(ascii: "}")), let ref else { return nil }
            r.ref = ref
            r.source = source ?? .user
            r.memberCount = n
            return r
        }
    }
}
