/// A value inside a `JSONDocument`, read in place: no tree is built. Valid while its
/// document is alive and holds the text it was read from: a value does not keep its
/// document alive (that would be a reference count per value read); whoever made the
/// document does (`Request.owner`, `Params.owner`, the server's reused documents).
public struct JSONValue: Sendable {
    public let doc: JSONDocument.Tape
    public let index: Int

    @inline(__always) init(_ doc: JSONDocument.Tape, _ index: Int) {
        self.doc = doc
        self.index = index
    }

    @inline(__always) var token: JSONDocument.Token { doc.tokens[index] }
    public var kind: JSONDocument.Token.Kind { token.kind }

    /// The value's own text, as it appears in the document.
    public var raw: UnsafeBufferPointer<UInt8> {
        let t = token
        let s = t.kind == .string || t.kind == .escapedString ? Int(t.start) - 1 : Int(t.start)
        let e = t.kind == .string || t.kind == .escapedString ? Int(t.end) + 1 : Int(t.end)
        return UnsafeBufferPointer(start: doc.bytes.baseAddress! + s, count: e - s)
    }

    public var isNull: Bool { kind == .null }

    /// A string's raw bytes between its quotes (escapes as written).
    public var inner: UnsafeBufferPointer<UInt8> {
        let t = token
        return UnsafeBufferPointer(start: doc.bytes.baseAddress! + Int(t.start), count: Int(t.end - t.start))
    }
    public var isString: Bool { kind == .string || kind == .escapedString }

    /// A short name for the type, for error messages (as `JSON.typeName`).
    public var typeName: String {
        switch kind {
        case .null: return "null"
        case .true, .false: return "a boolean"
        case .number: return "a number"
        case .string, .escapedString: return "a string"
        case .array: return "an array"
        case .object: return "an object"
        }
    }

    public var stringValue: String? { isString ? doc.string(index) : nil }

    public var boolValue: Bool? {
        switch kind {
        case .true: return true
        case .false: return false
        default: return nil
        }
    }

    /// A number's literal text.
    public var numberText: String? {
        guard kind == .number else { return nil }
        return String(decoding: raw, as: UTF8.self)
    }

    /// Whether a number is written as a whole number (no fraction, no exponent).
    public var isIntegerLiteral: Bool {
        guard let r = numberBytes else { return false }
        for c in r where c == UInt8(ascii: ".") || c == UInt8(ascii: "e") || c == UInt8(ascii: "E") { return false }
        return true
    }

    /// A number's literal, between its token's start and end (nil: not a number).
    @inline(__always)
    var numberBytes: UnsafeBufferPointer<UInt8>? {
        let t = token
        guard t.kind == .number else { return nil }
        return UnsafeBufferPointer(start: doc.bytes.baseAddress! + Int(t.start), count: Int(t.end &- t.start))
    }

    /// A whole number that fits an Int (digits only, optional `-`): as the reader kept it
    /// (`Token.kept`), else read from the literal.
    public var intValue: Int? {
        @inline(__always) get {
            let t = token
            guard t.kind == .number else { return nil }
            if let (digits, scale) = t.kept { return scale == 0 ? Int(digits) : nil }
            return Self.int(of: self)
        }
    }

    /// `int` of a number token's literal (out of line: the kept value is the common case).
    @inline(never)
    static func int(of v: JSONValue) -> Int? { int(v.numberBytes!) }

    /// A number as a Double, rounded as `strtod` rounds it (see `double`): as the reader kept
    /// it (`Token.kept`: its digits and a power of ten of at most 10^8, both exact, so that
    /// one division rounds correctly, as in `exactDouble`), else read from the literal.
    public var doubleValue: Double? {
        @inline(__always) get {
            let t = token
            guard t.kind == .number else { return nil }
            if let (digits, scale) = t.kept { return scale == 0 ? Double(digits) : Double(digits) / Self.powersOfTen[scale] }
            return Self.double(of: self)
        }
    }

    /// `double` of a number token's literal (out of line: the kept value is the common case).
    @inline(never)
    static func double(of v: JSONValue) -> Double { double(v.numberBytes!) }

    /// A number literal (already validated) as an Int, if it is a whole number (digits, an
    /// optional `-`) that fits one.
    @inline(__always)
    static func int(_ r: UnsafeBufferPointer<UInt8>) -> Int? {
        let p = r.baseAddress!, n = r.count
        let negative = p[0] == UInt8(ascii: "-")
        var j = negative ? 1 : 0
        if n - j > 18 { return intSlowly(r) }
        // One pass: in a number literal, a byte that is not a digit (after the sign) is a
        // fraction or an exponent.
        var k = 0
        while j < n {
            let d = p[j] &- 0x30
            if d >= 10 { return nil }
            k = k &* 10 &+ Int(d)
            j += 1
        }
        return negative ? -k : k
    }

    /// `int` for literals of more than 18 digits (which may or may not fit).
    @inline(never)
    static func intSlowly(_ r: UnsafeBufferPointer<UInt8>) -> Int? {
        for c in r where c == UInt8(ascii: ".") || c | 0x20 == UInt8(ascii: "e") { return nil }
        return Int(String(decoding: r, as: UTF8.self))
    }

    /// A number literal (already validated) as a Double, rounded as `strtod` rounds it; a
    /// whole number written `-0` reads as 0 (as the integer it is).
    @inline(__always)
    static func double(_ r: UnsafeBufferPointer<UInt8>) -> Double {
        if let d = exactDouble(r) { return d }
        return doubleSlowly(r)
    }

    /// `double` through `Double(String)` (`strtod`).
    @inline(never)
    static func doubleSlowly(_ r: UnsafeBufferPointer<UInt8>) -> Double {
        Double(String(decoding: r, as: UTF8.self))!  // (a JSON number always reads, as ±inf when out of range)
    }

    /// 10^0 … 10^22: every one an exact double.
    private static let powersOfTen: [Double] = [1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
                                                1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22]

    /// A number literal (already validated) whose digits make an integer of at most 2^53
    /// scaled by at most 10^±22, read in one pass without a string: the digits and the power
    /// of ten are both exact doubles, so one multiplication or division rounds correctly, as
    /// `strtod` does (Clinger's fast path). nil: anything else, for `strtod`.
    @inline(__always)
    static func exactDouble(_ r: UnsafeBufferPointer<UInt8>) -> Double? {
        let p = r.baseAddress!, n = r.count
        let negative = p[0] == UInt8(ascii: "-")
        var i = negative ? 1 : 0
        var m: UInt64 = 0
        // (Past 2^59 the digits are beyond 2^53 anyway; the check keeps `m` from overflowing.
        // A literal of at most 18 bytes has at most 18 digits, less than 10^18: no check.)
        let long = n > 18
        while i < n, case let d = p[i] &- 0x30, d < 10 {
            if long && m >= 1 << 59 { return nil }
            m = m &* 10 &+ UInt64(d)
            i &+= 1
        }
        if i == n {
            // A whole number, read as the integer it is (-0 is 0).
            if m > 1 << 53 { return nil }
            return negative && m != 0 ? -Double(m) : Double(m)
        }
        var scale = 0
        if p[i] == UInt8(ascii: ".") {
            i += 1
            let first = i
            while i < n, case let d = p[i] &- 0x30, d < 10 {
                if long && m >= 1 << 59 { return nil }
                m = m &* 10 &+ UInt64(d)
                i &+= 1
            }
            scale = i - first
        }
        var e = 0
        if i < n {  // e or E
            i += 1
            var minus = false
            if p[i] == UInt8(ascii: "-") { minus = true; i += 1 } else if p[i] == UInt8(ascii: "+") { i += 1 }
            if n - i > 4 { return nil }
            while i < n { e = e * 10 + Int(p[i] &- 0x30); i += 1 }
            if minus { e = -e }
        }
        if m == 0 { return negative ? -0.0 : 0.0 }
        if m > 1 << 53 { return nil }
        let e10 = e - scale
        guard e10 >= -22 && e10 <= 22 else { return nil }
        let v = e10 >= 0 ? Double(m) * powersOfTen[e10] : Double(m) / powersOfTen[-e10]
        return negative ? -v : v
    }

    /// An array's elements.
    public var elements: [JSONValue] {
        guard kind == .array else { return [] }
        var out: [JSONValue] = []
        out.reserveCapacity(Int(token.count))
        var k = index + 1
        for _ in 0..<Int(token.count) {
            out.append(JSONValue(doc, k))
            k = Int(doc.tokens[k].next)
        }
        return out
    }

    /// The value of member `key` of an object (nil if absent or not an object).
    public subscript(key: StaticString) -> JSONValue? {
        member(UnsafeBufferPointer(start: key.utf8Start, count: key.utf8CodeUnitCount))
    }

    public subscript(key: String) -> JSONValue? {
        var key = key
        return key.withUTF8 { member($0) }
    }

    @inline(__always)
    func member(_ key: UnsafeBufferPointer<UInt8>) -> JSONValue? {
        // (The tape and the text read once: through the document's pointer they would be
        // loaded again for every member.)
        let tokens = doc.tokens, text = doc.bytes.baseAddress!
        let t = tokens[index]
        guard t.kind == .object else { return nil }
        var k = index + 1, left = Int(t.count)
        while left > 0 {
            let kt = tokens[k]
            if kt.kind == .string {
                // A plain key of another length is told apart without reading it.
                let n = Int(kt.end &- kt.start)
                if n == key.count && (n == 0 || memcmpEqual(text + Int(kt.start), key.baseAddress!, n)) { return JSONValue(doc, k + 1) }
            } else if doc.stringBytes(k).elementsEqual(key) {
                return JSONValue(doc, k + 1)
            }
            k = Int(tokens[k + 1].next)
            left -= 1
        }
        return nil
    }

    /// An object's members in order: key and value.
    public var members: [(key: String, value: JSONValue)] {
        guard kind == .object else { return [] }
        var out: [(key: String, value: JSONValue)] = []
        var k = index + 1
        for _ in 0..<Int(token.count) {
            out.append((doc.string(k), JSONValue(doc, k + 1)))
            k = Int(doc.tokens[k + 1].next)
        }
        return out
    }

    /// The value as a `JSON` tree (for clients and tests; decoding never needs it).
    public var json: JSON {
        switch kind {
        case .null: return .null
        case .true: return .bool(true)
        case .false: return .bool(false)
        case .number: return .number(String(decoding: raw, as: UTF8.self))
        case .string, .escapedString: return .string(doc.string(index))
        case .array: return .array(elements.map(\.json))
        case .object:
            // (Built in place: no array of members first.)
            var out: [JSON.Member] = []
            out.reserveCapacity(Int(token.count))
            var k = index + 1
            for _ in 0..<Int(token.count) {
                out.append(JSON.Member(doc.string(k), JSONValue(doc, k + 1).json))
                k = Int(doc.tokens[k + 1].next)
            }
            return .object(out)
        }
    }

    /// The `JSON` tree of `doc`'s top-level value.
    static func tree(of doc: JSONDocument) -> JSON {
        withExtendedLifetime(doc) { doc.root.json }
    }

    /// A document of its own holding a copy of this value (to keep it past its document's
    /// next parse), and the copy in it. The caller keeps the document.
    public func detached() -> (JSONDocument, JSONValue) {
        // (The copy is valid JSON: it is this value's text.)
        let copy = try! JSONDocument(parsing: raw)
        return (copy, copy.root)
    }

    /// Whether two values have the same text.
    public func sameText(_ other: JSONValue) -> Bool {
        let a = raw, b = other.raw
        return a.count == b.count && (a.count == 0 || memcmpEqual(a.baseAddress!, b.baseAddress!, a.count))
    }
}

extension JSONValue {
    /// Whether this string token (an object's key) spells `key`.
    @inline(__always)
    func isKey(_ k: UnsafeBufferPointer<UInt8>) -> Bool {
        kind == .string ? doc.rawEquals(index, k) : doc.stringBytes(index).elementsEqual(k)
    }
}

extension JSONValue {
    /// `isKey` for a literal.
    @inline(__always)
    func isKey(_ key: StaticString) -> Bool {
        isKey(UnsafeBufferPointer(start: key.utf8Start, count: key.utf8CodeUnitCount))
    }
}
