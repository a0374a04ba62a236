/// Reading a request line: its top-level object's members straight from the bytes, each
/// member's value into the tape by the one grammar's parser (`Parser.value`). The
/// envelope's own object and keys make no tokens, and each key is matched once against the
/// four the envelope reads (by one word of its bytes; a key with escapes decoded first).
///
/// Accepting and refusing are the parser's: the object's structure, its keys (escapes,
/// UTF-8) and their duplicates are checked as `Parser.parse` checks them, and when the
/// reader refuses a line, the line is parsed again in full so that the error (its text
/// and offset) is the parser's own.
extension JSONDocument {
    /// Where the envelope's members' values are in the tape (-1: absent).
    struct EnvelopeMembers {
        var id = -1, method = -1, params = -1, version = -1
        /// The method's index in `Methods.all` when the reader looked its name up (a plain
        /// string: -1 if no method has it); -2: not looked up.
        var known = -2
    }

    /// Reads `text` (a copy is kept, as `parse` keeps it) as a request's envelope. nil: the
    /// text is valid JSON but not an object, parsed in full (`root`).
    @inline(__always)
    func readEnvelope(_ text: UnsafeBufferPointer<UInt8>, maxDepth: Int) throws(JSONParseError) -> EnvelopeMembers? {
        load(text)
        if let members = Parser.envelope(s, maxDepth: maxDepth) { return members }
        // Not an object, or refused: the parser's verdict and its error.
        s.pointee.tokenCount = 0
        s.pointee.slotObject = -1
        do {
            try Parser.parse(s, maxDepth: maxDepth)
        } catch {
            s.pointee.tokenCount = 0
            throw error
        }
        return nil
    }
}

extension JSONDocument.Parser {
    typealias Token = JSONDocument.Token

    /// The members of the object `s`'s text holds; nil if it is not an object or is refused
    /// (then `Parser.parse` says which, and why).
    @inline(__always)
    static func envelope(_ s: UnsafeMutablePointer<JSONDocument.Storage>, maxDepth: Int) -> JSONDocument.EnvelopeMembers? {
        do { return try readEnvelope(s, maxDepth: maxDepth) } catch { return nil }
    }

    /// `id`, `method`, `params` and `jsonrpc` with their closing quote, as the bytes of a
    /// little-endian word.
    private static let idQ: UInt64 = 0x226469, methodQ: UInt64 = 0x22646F6874656D, paramsQ: UInt64 = 0x22736D61726170, jsonrpcQ: UInt64 = 0x226370726E6F736A

    /// `"2.0"` with its quotes, as the bytes of a little-endian word.
    private static let version: UInt64 = 0x22_30_2E_32_22

    /// Other keys of the envelope, at most this many, are compared for duplicates here
    /// (more: the whole line is parsed and read as `Envelope.read(_: JSONValue)` reads it).
    static let otherKeys = 16

    @inline(__always)
    private static func readEnvelope(_ s: UnsafeMutablePointer<JSONDocument.Storage>, maxDepth: Int) throws(JSONParseError) -> JSONDocument.EnvelopeMembers? {
        let p = UnsafePointer(s.pointee.bytes.baseAddress!), n = s.pointee.count
        if n > Int(Int32.max) - padding || maxDepth < 1 { return nil }
        let i = skipSpace(p, 0)
        guard p[i] == UInt8(ascii: "{") else { return nil }
        // Read first with no room for other keys (most envelopes have none); a line with
        // one is read again from its start with room for them.
        var others = false
        if let m = try members(p, n, skipSpace(p, i &+ 1), maxDepth: maxDepth, nil, &others, s) { return m }
        if !others { return nil }
        s.pointee.slotObject = -1
        return try readWithOthers(p, n, skipSpace(p, i &+ 1), maxDepth: maxDepth, s)
    }

    /// `members` with room for `otherKeys` other keys (out of line: the common read has none).
    @inline(never)
    private static func readWithOthers(_ p: UnsafePointer<UInt8>, _ n: Int, _ i: Int, maxDepth: Int,
                                       _ s: UnsafeMutablePointer<JSONDocument.Storage>) throws(JSONParseError) -> JSONDocument.EnvelopeMembers? {
        try withUnsafeTemporaryAllocation(of: (start: Int, end: Int, kind: Token.Kind).self, capacity: otherKeys) {
            others throws(JSONParseError) in
            var needed = false
            return try members(p, n, i, maxDepth: maxDepth, others, &needed, s)
        }
    }

    /// The members of the object whose first member (or end) is at `i`. `others` holds the
    /// keys other than the four (their raw bytes' start and end, whether escaped), compared
    /// when a duplicate is possible; without it (nil), a key other than the four stops the
    /// read: nil, with `needsOthers` set.
    ///
    /// (Indices move with wrapping arithmetic: the text is shorter than 2^31 bytes.)
    @inline(__always)
    private static func members(_ p: UnsafePointer<UInt8>, _ n: Int, _ i: Int, maxDepth: Int,
                                _ others: UnsafeMutableBufferPointer<(start: Int, end: Int, kind: Token.Kind)>?,
                                _ needsOthers: inout Bool,
                                _ s: UnsafeMutablePointer<JSONDocument.Storage>) throws(JSONParseError) -> JSONDocument.EnvelopeMembers? {
        var tokens = s.pointee.tokens, capacity = s.pointee.tokenCapacity, count = 0, otherCount = 0
        var m = JSONDocument.EnvelopeMembers()
        // The fields of the method `m.known` names (looked up with its name).
        var knownFields: Fields.Entries?
        var i = i
        if p[i] == UInt8(ascii: "}") {
            i &+= 1
        } else {
            while true {
                guard p[i] == UInt8(ascii: "\"") else { return nil }
                // Which of the four (or none) the key names: the four, with their closing
                // quote, are told by one word (eight bytes can be read: zero bytes follow
                // the text); any other key is scanned, and one with escapes decoded.
                let start = i &+ 1, w = UnsafeRawPointer(p + start).loadUnaligned(as: UInt64.self)
                var slot = -1, end: Int, kind = Token.Kind.string
                if w & 0xFF_FFFF == idQ { slot = 0; end = start &+ 2 }
                else if w & 0xFF_FFFF_FFFF_FFFF == methodQ { slot = 1; end = start &+ 6 }
                else if w & 0xFF_FFFF_FFFF_FFFF == paramsQ { slot = 2; end = start &+ 6 }
                else if w == jsonrpcQ { slot = 3; end = start &+ 7 }
                else {
                    (end, kind) = try string(p, n, start)
                    if kind == .escapedString { slot = escapedSlot(UnsafeBufferPointer(start: p + start, count: end - start)) }
                }
                let length = end &- start
                if slot < 0 {
                    guard let others else { needsOthers = true; return nil }
                    // A duplicate of an earlier other key (the four are told apart by their slots).
                    if otherCount == otherKeys { return nil }
                    for o in others[0..<otherCount] where kind == .string && o.kind == .string
                        ? o.end - o.start == length && (length == 0 || memcmpEqual(p + o.start, p + start, length))
                        : decoded(o, p) == decoded((start, end, kind), p) {
                        return nil
                    }
                    others[otherCount] = (start, end, kind)
                    otherCount &+= 1
                }
                var j = skipSpace(p, end &+ 1)
                guard p[j] == UInt8(ascii: ":") else { return nil }
                j = skipSpace(p, j &+ 1)
                let at = count
                // A string or a number here (the envelope's own values), anything else by the parser.
                let c = p[j]
                if slot == 1 && m.method < 0 && c == UInt8(ascii: "\""), let (end, known) = knownMethod(p, j &+ 1, s.pointee.names) {
                    // A known method's name, found by its bytes before they are scanned (see `knownMethod`).
                    emit(Token(kind: .string, start: i32(j &+ 1), end: i32(end), next: i32(count &+ 1), count: 0), &tokens, &capacity, &count, s)
                    i = end &+ 1
                    m.known = known
                    knownFields = s.pointee.names.fields[known]
                } else if slot == 3 && UnsafeRawPointer(p + j).loadUnaligned(as: UInt64.self) & 0xFF_FFFF_FFFF == version {
                    // `"2.0"`, the one version (8 bytes can be read: zero bytes follow the text).
                    emit(Token(kind: .string, start: i32(j &+ 1), end: i32(j &+ 4), next: i32(count &+ 1), count: 0), &tokens, &capacity, &count, s)
                    i = j &+ 5
                } else if let end = try scalar(p, n, j, c, keep: false, &tokens, &capacity, &count, s) {
                    i = end
                } else if slot == 2 && c == UInt8(ascii: "{"), let fields = knownFields,
                          let end = try declaredParams(p, n, j, fields, maxDepth: maxDepth, &tokens, &capacity, &count, s) {
                    i = end
                } else {
                    count = at  // (what `declaredParams` read of a refused object)
                    i = try value(p, n, j, depth: 1, maxDepth: maxDepth, &tokens, &capacity, &count, s)
                }
                if slot == 1 && m.method < 0 && m.known == -2 {
                    // The method's name, looked up once (its params, when they follow, are read by its fields).
                    let t = tokens[at]
                    if t.kind == .string {
                        let names = s.pointee.names
                        m.known = names.index(of: UnsafeBufferPointer(start: p + Int(t.start), count: Int(t.end &- t.start)))
                        if m.known >= 0 { knownFields = names.fields[m.known] }
                    } else {
                        m.known = -2
                    }
                }
                switch slot {
                case 0: if m.id >= 0 { return nil }; m.id = at
                case 1: if m.method >= 0 { return nil }; m.method = at
                case 2: if m.params >= 0 { return nil }; m.params = at
                case 3: if m.version >= 0 { return nil }; m.version = at
                default: break
                }
                i = skipSpace(p, i)
                if p[i] == UInt8(ascii: ",") { i = skipSpace(p, i &+ 1); continue }
                guard p[i] == UInt8(ascii: "}") else { return nil }
                i &+= 1
                break
            }
        }
        i = skipSpace(p, i)
        if i != n { return nil }
        s.pointee.tokenCount = count
        return m
    }

    /// The params object at `j` (its `{`) of a method whose params accept `fields`, read
    /// straight from the bytes when every key is one of those fields, plain (no escapes) and
    /// given once: its tokens into the tape and where each field's value is into the
    /// document's slots (`Params.reading` then has nothing left to do); returns the index
    /// after it. nil: any other object (a key that is not declared, written with escapes
    /// or given twice), which the caller has the parser read from `j` again. Values other
    /// than strings and numbers are read by the parser.
    @inline(__always)
    private static func declaredParams(_ p: UnsafePointer<UInt8>, _ n: Int, _ j: Int, _ fields: Fields.Entries, maxDepth: Int,
                                       _ tokens: inout UnsafeMutablePointer<Token>, _ capacity: inout Int, _ count: inout Int,
                                       _ s: UnsafeMutablePointer<JSONDocument.Storage>) throws(JSONParseError) -> Int? {
        if maxDepth < 2 { return nil }
        let object = count
        emit(Token(kind: .object, start: i32(j), end: 0, next: 0, count: 0), &tokens, &capacity, &count, s)
        let slots = s.pointee.slots
        Fields.clearSlots(slots)
        var members = 0
        var i = skipSpace(p, j &+ 1)
        if p[i] != UInt8(ascii: "}") {
            while true {
                guard p[i] == UInt8(ascii: "\"") else { return nil }
                let start = i &+ 1
                guard let (end, word) = try declaredKeyEnd(p, n, start), case let f = fields.match(p + start, end &- start, word: word),
                      f >= 0, f < Fields.slotCount, slots[f] == 0 else { return nil }
                emit(Token(kind: .string, start: i32(start), end: i32(end), next: i32(count &+ 1), count: 0), &tokens, &capacity, &count, s)
                var v = skipSpace(p, end &+ 1)
                guard p[v] == UInt8(ascii: ":") else { return nil }
                v = skipSpace(p, v &+ 1)
                slots[f] = i32(count)
                let c = p[v]
                if let end = try scalar(p, n, v, c, keep: true, &tokens, &capacity, &count, s) {
                    i = end
                } else {
                    i = try value(p, n, v, depth: 2, maxDepth: maxDepth, &tokens, &capacity, &count, s)
                }
                members &+= 1
                i = skipSpace(p, i)
                if p[i] == UInt8(ascii: ",") { i = skipSpace(p, i &+ 1); continue }
                guard p[i] == UInt8(ascii: "}") else { return nil }
                break
            }
        }
        i &+= 1
        tokens[object].end = i32(i)
        tokens[object].next = i32(count)
        tokens[object].count = i32(members)
        s.pointee.slotFields = fields
        s.pointee.slotObject = object
        return i
    }

    /// Where the key starting at `start` (after its quote) ends, for matching it with a
    /// method's declared names: a key of up to 7 bytes ends at the first quote of its first
    /// word, unchecked — a key that is a declared name is then a plain string (no declared
    /// name has a quote, a backslash, a control or a high byte: `Fields.init`), and any
    /// other is refused (`declaredParams` returns nil and the parser reads the object);
    /// a longer key is scanned (nil: it has escapes). With the key's first word, as
    /// `Fields.word` makes it.
    @inline(__always)
    private static func declaredKeyEnd(_ p: UnsafePointer<UInt8>, _ n: Int, _ start: Int) throws(JSONParseError) -> (end: Int, word: UInt64)? {
        let ones: UInt64 = 0x0101_0101_0101_0101, w = UnsafeRawPointer(p + start).loadUnaligned(as: UInt64.self), x = w ^ (ones &* 0x22)
        // (The lowest byte that was a quote is the lowest marked: borrows only carry upwards.
        // Its mark shifted down is the bit past the key's bytes: the key's `Fields.word`.)
        let quote = (x &- ones) & ~x & 0x8080_8080_8080_8080
        if quote != 0 { return (start &+ quote.trailingZeroBitCount >> 3, w & ((quote & (0 &- quote)) >> 7 &- 1)) }
        let (end, kind) = try string(p, n, start)
        return kind == .string ? (end, Fields.word(p + start, end &- start)) : nil
    }

    /// The method whose name the string at `start` (after its opening quote) is, found by its
    /// bytes up to the first quote in its first 16, before they are scanned: a known name
    /// is a plain string (no method's name has a quote, a backslash, a control or a high
    /// byte: `MethodNames.init`), and the string ends at that quote; nil: any other string,
    /// or one that may reach the end of the text in those bytes (the second word is read only
    /// when the first has no zero byte), for the scan. With the index after the name.
    @inline(__always)
    private static func knownMethod(_ p: UnsafePointer<UInt8>, _ start: Int, _ names: MethodNames) -> (end: Int, known: Int)? {
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        @inline(__always) func zeroByte(_ x: UInt64) -> UInt64 { (x &- ones) & ~x & highs }
        let quotes: UInt64 = ones &* 0x22
        let w0: UInt64 = UnsafeRawPointer(p + start).loadUnaligned(as: UInt64.self)
        let q0: UInt64 = zeroByte(w0 ^ quotes)
        var end: Int
        if q0 != 0 {
            end = start &+ q0.trailingZeroBitCount >> 3
        } else {
            guard zeroByte(w0) == 0 else { return nil }
            let w1: UInt64 = UnsafeRawPointer(p + (start &+ 8)).loadUnaligned(as: UInt64.self)
            let q1: UInt64 = zeroByte(w1 ^ quotes)
            guard q1 != 0 else { return nil }
            end = start &+ 8 &+ q1.trailingZeroBitCount >> 3
        }
        let known = names.index(of: UnsafeBufferPointer(start: p + start, count: end &- start))
        return known >= 0 ? (end, known) : nil
    }

    /// A string or a number value starting at `j` (its first byte `c`) into the tape, without
    /// the parser's general loop (the envelope's and the declared params' values), a number's
    /// value kept in its token when `keep` (the declared params': their readers use it);
    /// returns the index after it. nil: another kind of value, for `Parser.value`.
    @inline(__always)
    private static func scalar(_ p: UnsafePointer<UInt8>, _ n: Int, _ j: Int, _ c: UInt8, keep: Bool,
                               _ tokens: inout UnsafeMutablePointer<Token>, _ capacity: inout Int, _ count: inout Int,
                               _ s: UnsafeMutablePointer<JSONDocument.Storage>) throws(JSONParseError) -> Int? {
        if c == UInt8(ascii: "\"") {
            let (end, kind) = try string(p, n, j &+ 1)
            emit(Token(kind: kind, start: i32(j &+ 1), end: i32(end), next: i32(count &+ 1), count: 0), &tokens, &capacity, &count, s)
            return end &+ 1
        }
        if c &- 0x30 < 10 || c == UInt8(ascii: "-") {
            let (end, value) = try number(p, j, keep: keep)
            emit(Token(kind: .number, start: i32(j), end: i32(end), next: i32(count &+ 1), count: value), &tokens, &capacity, &count, s)
            return end
        }
        return nil
    }

    /// The slot of a key written with escapes (`"\u0069d"` is `id`).
    @inline(never)
    private static func escapedSlot(_ raw: UnsafeBufferPointer<UInt8>) -> Int {
        switch unescape(raw) {
        case Array("id".utf8): return 0
        case Array("method".utf8): return 1
        case Array("params".utf8): return 2
        case Array("jsonrpc".utf8): return 3
        default: return -1
        }
    }

    /// The bytes key `key` stands for (escapes resolved).
    @inline(never)
    private static func decoded(_ key: (start: Int, end: Int, kind: Token.Kind), _ p: UnsafePointer<UInt8>) -> [UInt8] {
        let raw = UnsafeBufferPointer(start: p + key.start, count: key.end - key.start)
        return key.kind == .escapedString ? unescape(raw) : Array(raw)
    }
}
