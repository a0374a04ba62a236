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
        guard kind == .number else { return false }
        for c in raw where c == UInt8(ascii: ".") || c == UInt8(ascii: "e") || c == UInt8(ascii: "E") { return false }
        return true
    }

    /// A whole number that fits an Int (digits only, optional `-`).
    public var intValue: Int? {
        guard kind == .number else { return nil }
        let r = raw
        var k = 0
        let negative = r[0] == UInt8(ascii: "-")
        var j = negative ? 1 : 0
        if r.count - j > 18 { return isIntegerLiteral ? Int(String(decoding: r, as: UTF8.self)) : nil }
        // One pass: in a number token, a byte that is not a digit (after the sign) is a
        // fraction or an exponent.
        while j < r.count {
            let d = r[j] &- 0x30
            if d >= 10 { return nil }
            k = k &* 10 &+ Int(d)
            j += 1
        }
        return negative ? -k : k
    }

    public var doubleValue: Double? {
        guard kind == .number else { return nil }
        if let i = intValue, i.magnitude < 1 << 53 { return Double(i) }
        if let d = Self.exactDouble(raw) { return d }
        return Double(String(decoding: raw, as: UTF8.self))
    }

    static let powersOfTen: [Double] = [1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
                                        1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22]

    /// A number literal (already validated) of at most 15 significant digits scaled by at
    /// most 10^±22, read without a string: the digits and the power of ten are both exact
    /// doubles, so one multiplication or division rounds correctly, as `strtod` does
    /// (Clinger's fast path). nil: anything else, for `Double(String)`.
    static func exactDouble(_ r: UnsafeBufferPointer<UInt8>) -> Double? {
        var i = 0
        let negative = r[0] == UInt8(ascii: "-")
        if negative { i = 1 }
        var m: UInt64 = 0, digits = 0, scale = 0, afterPoint = false
        while i < r.count {
            let c = r[i]
            if c == UInt8(ascii: ".") { afterPoint = true; i += 1; continue }
            let d = c &- 0x30
            if d >= 10 { break }
            if m != 0 || d != 0 { digits += 1 }
            if digits > 15 { return nil }
            m = m &* 10 &+ UInt64(d)
            if afterPoint { scale += 1 }
            i += 1
        }
        var e = 0
        if i < r.count {  // e or E
            i += 1
            var minus = false
            if r[i] == UInt8(ascii: "-") { minus = true; i += 1 } else if r[i] == UInt8(ascii: "+") { i += 1 }
            if r.count - i > 4 { return nil }
            while i < r.count { e = e * 10 + Int(r[i] &- 0x30); i += 1 }
            if minus { e = -e }
        }
        if m == 0 { return negative ? -0.0 : 0.0 }
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
        case .object: return .object(members.map { JSON.Member($0.key, $0.value.json) })
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
