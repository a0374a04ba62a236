/// Typed access to a request's `params` object, read in place from its document
/// (`JSONValue`: no tree), producing `invalid_params` errors that name the field.
/// `prefix` qualifies nested fields (`items[2].id`).
public struct Params: Sendable {
    /// The object (nil: no params, or `null`).
    public let object: JSONValue?
    /// The prefix and the owner, when there is either (nested params, params made from
    /// `JSON`, `detached`); nil for a request's own params, as the server reads them.
    @usableFromInline let context: Context?
    public var prefix: String { context?.prefix ?? "" }
    /// The document `object` is in, when these params keep it alive themselves (made from
    /// `JSON`, or `detached`); nil: someone else keeps it.
    public var owner: JSONDocument? { context?.owner }

    /// What params other than a request's own carry.
    @usableFromInline final class Context: Sendable {
        let prefix: String
        let owner: JSONDocument?
        init(prefix: String, owner: JSONDocument?) { self.prefix = prefix; self.owner = owner }
    }

    /// A request's own params (no prefix; the document is kept alive by whoever read the
    /// line).
    public init(_ value: JSONValue?) throws(RPCError) {
        guard let value, !value.isNull else { self.init(request: nil); return }
        guard value.kind == .object else { throw Params.notAnObject(value, prefix: "") }
        self.init(request: value)
    }

    /// The params of a request as the envelope read them (`Request.params`: an object or
    /// nil, never anything else): nothing to check. (Inlinable: the server makes one for
    /// every request, and as a trivial value it is then neither counted nor destroyed.)
    @inlinable @inline(__always)
    public init(request value: JSONValue?) {
        context = nil
        object = value
    }

    public init(_ value: JSONValue?, prefix: String = "", owner: JSONDocument? = nil) throws(RPCError) {
        context = prefix.isEmpty && owner == nil ? nil : Context(prefix: prefix, owner: owner)
        if let value, value.kind == .object {
            object = value
        } else if value == nil || value!.isNull {
            object = nil
        } else {
            throw Params.notAnObject(value!, prefix: prefix)
        }
    }

    /// The refusal of params that are not an object.
    @inline(never)
    static func notAnObject(_ value: JSONValue, prefix: String) -> RPCError {
        .invalidParams(prefix.isEmpty ? "params" : prefix, "\(prefix.isEmpty ? "params" : prefix) must be an object, not \(value.typeName).")
    }

    /// The params of a `JSON` value (tests and tools; the server reads its lines in place).
    public init(json: JSON?, prefix: String = "") throws(RPCError) {
        guard let json else { try self.init(nil as JSONValue?, prefix: prefix); return }
        let doc = JSONDocument(json)
        try self.init(doc.root, prefix: prefix, owner: doc)
    }

    /// Members in order.
    public var members: [(key: String, value: JSONValue)] { object?.members ?? [] }

    /// A copy that outlives the document it was read from (see `JSONValue.detached`).
    public func detached() -> Params {
        guard let object else { return self }
        let (doc, copy) = object.detached()
        return try! Params(copy, prefix: prefix, owner: doc)
    }

    public func name(_ key: String) -> String { prefix.isEmpty ? key : "\(prefix).\(key)" }

    // Fields are named by literals, `StaticString`s: a literal for a `String` (or a generic
    // `FieldName`) parameter would be made a `String` at every lookup. Names made at run time
    // take the `name:` variants.
    @inline(__always)
    public subscript(key: StaticString) -> JSONValue? { member(key) }

    /// `self[key]` for a name made at run time.
    public subscript(name name: String) -> JSONValue? { member(name) }

    /// Field `key`'s value: by its slot when the object's fields were read by their
    /// declaration (`reading`), else by walking the keys.
    @inline(__always)
    func member<K: FieldName>(_ key: K) -> JSONValue? {
        guard let object else { return nil }
        return key.withBytes { name in object.doc.declaredMember(name, of: object.index) ?? Self.walk(object, name) }
    }

    /// Member `name` of `object`, found by walking its keys (out of line: the readers that
    /// inline `member` stay small).
    @inline(never)
    static func walk(_ object: JSONValue, _ name: UnsafeBufferPointer<UInt8>) -> JSONValue? { object.member(name) }

    public func has(_ key: StaticString) -> Bool { self[key] != nil }

    /// `has` for a name made at run time.
    public func has(name: String) -> Bool { self[name: name] != nil }

    /// Rejects any member not in `allowed`, naming it.
    public func only(_ allowed: [StaticString]) throws(RPCError) { try onlyNames(allowed) }

    /// `only` for names made at run time.
    public func only(names allowed: [String]) throws(RPCError) { try onlyNames(allowed) }

    private func onlyNames<K: FieldName>(_ allowed: [K]) throws(RPCError) {
        guard let object else { return }
        let doc = object.doc, tokens = doc.tokens, text = doc.bytes.baseAddress!
        var k = object.index + 1, left = Int(tokens[object.index].count)
        while left > 0 {
            var known = false
            let kt = tokens[k]
            if kt.kind == .string {
                // A plain key is compared as bytes, read once (a name of another length is not read).
                let raw = text + Int(kt.start), n = Int(kt.end &- kt.start)
                for a in allowed where a.withBytes({ $0.count == n && (n == 0 || memcmpEqual($0.baseAddress!, raw, n)) }) {
                    known = true
                    break
                }
            } else {
                let key = JSONValue(doc, k)
                for a in allowed where a.withBytes({ key.isKey($0) }) { known = true; break }
            }
            if !known { throw unknown(doc.string(k), allowed) }
            k = Int(tokens[k + 1].next)
            left -= 1
        }
    }

    func unknown<K: FieldName>(_ key: String, _ allowed: [K]) -> RPCError {
        let list = allowed.isEmpty ? "none" : allowed.map(\.text).joined(separator: ", ")
        return .invalidParams(name(key), "Unknown field \"\(name(key))\"; accepted fields: \(list).")
    }

    func missing(_ key: String, _ what: String) -> RPCError {
        .invalidParams(name(key), "Missing field \"\(name(key))\" (\(what)).")
    }

    func wrong(_ key: String, _ what: String, _ got: JSONValue) -> RPCError {
        .invalidParams(name(key), "Field \"\(name(key))\" must be \(what), not \(got.typeName).")
    }

    // The readers below are inlined where they are called: the common case — a field that
    // is absent, or present and valid — is its lookup and a few tests; what is unusual (a
    // refusal, an escaped string) is out of line.

    @inline(__always)
    public func string(_ key: StaticString, maxLength: Int = 1024) throws(RPCError) -> String? {
        guard let v = self[key], !v.isNull else { return nil }
        return try string(v, field: key, maxLength: maxLength)
    }

    /// Field `key`'s value `v` (present, not null) as a string.
    @inline(never)
    func string<K: FieldName>(_ v: JSONValue, field key: K, maxLength: Int) throws(RPCError) -> String {
        guard let s = v.stringValue else { throw wrong(key.text, "a string", v) }
        if s.utf8.count > maxLength {
            let key = key.text
            throw .invalidParams(name(key), "Field \"\(name(key))\" is \(s.utf8.count) bytes long; at most \(maxLength) are allowed.")
        }
        return s
    }

    @inline(__always)
    public func requiredString(_ key: StaticString, maxLength: Int = 1024) throws(RPCError) -> String {
        guard let v = self[key], !v.isNull else { throw missing(key.text, "a string") }
        return try string(v, field: key, maxLength: maxLength)
    }

    /// `requiredString` for a name made at run time.
    public func requiredString(name key: String, maxLength: Int = 1024) throws(RPCError) -> String {
        guard let v = self[name: key], !v.isNull else { throw missing(key.text, "a string") }
        return try string(v, field: key, maxLength: maxLength)
    }

    /// An item id: 1…`maxLength` bytes, no control characters.
    @inline(__always)
    public func id(_ key: StaticString, maxLength: Int = 64) throws(RPCError) -> String? {
        guard let v = self[key], !v.isNull else { return nil }
        return try id(v, key, maxLength: maxLength)
    }

    /// Field `key`'s value `v` (present, not null) as an item id.
    @inline(never)
    func id(_ v: JSONValue, _ key: StaticString, maxLength: Int) throws(RPCError) -> String {
        let s = try string(v, field: key, maxLength: maxLength)
        if s.isEmpty { let key = key.text; throw .invalidParams(name(key), "Field \"\(name(key))\" must not be empty.") }
        if s.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }) {
            let key = key.text
            throw .invalidParams(name(key), "Field \"\(name(key))\" must not contain control characters.")
        }
        return s
    }

    @inline(__always)
    public func requiredID(_ key: StaticString, maxLength: Int = 64) throws(RPCError) -> String {
        guard let v = self[key], !v.isNull else { throw missing(key.text, "an item id") }
        return try id(v, key, maxLength: maxLength)
    }

    @inline(__always)
    public func bool(_ key: StaticString) throws(RPCError) -> Bool? {
        guard let v = self[key], !v.isNull else { return nil }
        guard let b = v.boolValue else { throw wrong(key.text, "true or false", v) }
        return b
    }

    @inline(__always)
    public func requiredBool(_ key: StaticString) throws(RPCError) -> Bool {
        guard let b = try bool(key) else { throw missing(key.text, "true or false") }
        return b
    }

    /// Integers that survive a trip through a JavaScript client: ±(2^53−1).
    public static var safeIntegers: ClosedRange<Int> { -9_007_199_254_740_991...9_007_199_254_740_991 }

    /// A whole number. The number rule (docs/PROTOCOL.md, "Numbers"): the field takes a
    /// number written as a whole number — digits, an optional `-`, no fraction and no
    /// exponent — whose value is in `range`; anything else is refused, never rounded or
    /// clamped. Without a `range`, the safe integers.
    @inline(__always)
    public func int(_ key: StaticString, range: ClosedRange<Int>? = nil) throws(RPCError) -> Int? {
        guard let v = self[key], !v.isNull else { return nil }
        if let i = v.intValue, (range ?? Self.safeIntegers).contains(i) { return i }
        throw refusedInt(v, key, range: range ?? Self.safeIntegers)
    }

    /// Why field `key`'s value `v` is not a whole number in `range`.
    @inline(never)
    func refusedInt(_ v: JSONValue, _ key: StaticString, range: ClosedRange<Int>) -> RPCError {
        guard v.kind == .number else { return wrong(key.text, "a whole number", v) }
        let text = v.numberText!, key = key.text
        guard v.isIntegerLiteral else {
            return .invalidParams(name(key), "Field \"\(name(key))\" must be a whole number written without a fraction or exponent, not \(Self.clip(text)).")
        }
        return .invalidParams(name(key), "Field \"\(name(key))\" must be between \(range.lowerBound) and \(range.upperBound), not \(Self.clip(text)).")
    }

    /// A number literal for a message: at most 40 characters of it.
    static func clip(_ text: String) -> String { text.utf8.count <= 40 ? text : String(text.prefix(37)) + "..." }

    @inline(__always)
    public func double(_ key: StaticString, range: ClosedRange<Double>? = nil) throws(RPCError) -> Double? {
        guard let v = self[key], !v.isNull else { return nil }
        if let d = v.doubleValue, d.isFinite, range?.contains(d) ?? true { return d }
        throw refusedDouble(v, key, range: range)
    }

    /// Why field `key`'s value `v` is not a finite number in `range`.
    @inline(never)
    func refusedDouble(_ v: JSONValue, _ key: StaticString, range: ClosedRange<Double>?) -> RPCError {
        guard let literal = v.numberBytes else { return wrong(key.text, "a number", v) }
        let d = JSONValue.double(literal), key = key.text
        guard d.isFinite else { return .invalidParams(name(key), "Field \"\(name(key))\" must be a finite number.") }
        let range = range!  // (a finite number is refused only by its range)
        return .invalidParams(name(key), "Field \"\(name(key))\" must be between \(range.lowerBound) and \(range.upperBound), not \(d).")
    }

    @inline(__always)
    public func requiredDouble(_ key: StaticString, range: ClosedRange<Double>? = nil) throws(RPCError) -> Double {
        guard let d = try double(key, range: range) else { throw missing(key.text, "a number") }
        return d
    }

    /// A string that must be one of an enum's raw values.
    /// A plain string (no escapes) is matched by its bytes against the cases' raw values
    /// (`WireChoice.wireNames`), making no `String`; anything else takes the general way
    /// (and its errors).
    @inline(__always)
    public func choice<E: WireChoice>(_ key: StaticString, _ type: E.Type, allowed: @autoclosure () -> [String]) throws(RPCError) -> E? {
        guard let v = self[key], !v.isNull else { return nil }
        if v.kind == .string, let e = E.wireNames.match(v.inner) { return e }
        return try choice(v, key, E.self, allowed: allowed())
    }

    /// Field `key`'s value `v` (present, not null, not a plain raw value) as one of `E`'s cases.
    @inline(never)
    func choice<E: WireChoice>(_ v: JSONValue, _ key: StaticString, _ type: E.Type, allowed: @autoclosure () -> [String]) throws(RPCError) -> E {
        let s = try string(v, field: key, maxLength: 64)
        guard let e = E(rawValue: s) else {
            let key = key.text
            throw .invalidParams(name(key), "Field \"\(name(key))\" must be one of \(allowed().map { "\"\($0)\"" }.joined(separator: ", ")), not \"\(s)\".")
        }
        return e
    }

    public func object(_ key: StaticString) throws(RPCError) -> Params? {
        guard let v = self[key], !v.isNull else { return nil }
        guard v.kind == .object else { throw wrong(key.text, "an object", v) }
        return try Params(v, prefix: name(key.text), owner: owner)
    }

    public func array(_ key: StaticString) throws(RPCError) -> [JSONValue]? {
        guard let v = self[key], !v.isNull else { return nil }
        guard v.kind == .array else { throw wrong(key.text, "an array", v) }
        return v.elements
    }
}

/// A field's name: a literal (`StaticString`, read in place) or a `String` (names made at run time).
public protocol FieldName {
    func withBytes<R>(_ body: (UnsafeBufferPointer<UInt8>) -> R) -> R
    var text: String { get }
}

extension StaticString: FieldName {
    @inline(__always)
    public func withBytes<R>(_ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        body(UnsafeBufferPointer(start: utf8Start, count: utf8CodeUnitCount))
    }
    public var text: String { description }
}

extension String: FieldName {
    @inline(__always)
    public func withBytes<R>(_ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        var s = self
        return s.withUTF8(body)
    }
    public var text: String { self }
}
