/// Typed access to a request's `params` object, producing `invalid_params`
/// errors that name the field. `prefix` qualifies nested fields (`items[2].id`).
public struct Params: Sendable {
    public let members: [JSON.Member]
    public let prefix: String

    public init(_ json: JSON?, prefix: String = "") throws(RPCError) {
        switch json {
        case nil, .null?: members = []
        case .object(let m)?: members = m
        case let other?:
            throw .invalidParams(prefix.isEmpty ? "params" : prefix,
                                 "\(prefix.isEmpty ? "params" : prefix) must be an object, not \(other.typeName).")
        }
        self.prefix = prefix
    }

    public func name(_ key: String) -> String { prefix.isEmpty ? key : "\(prefix).\(key)" }

    public subscript(key: String) -> JSON? {
        for m in members where m.key == key { return m.value }
        return nil
    }

    public func has(_ key: String) -> Bool { self[key] != nil }

    /// Rejects any member not in `allowed`, naming it.
    public func only(_ allowed: [String]) throws(RPCError) {
        for m in members where !allowed.contains(m.key) {
            let list = allowed.isEmpty ? "none" : allowed.joined(separator: ", ")
            throw .invalidParams(name(m.key), "Unknown field \"\(name(m.key))\"; accepted fields: \(list).")
        }
    }

    func missing(_ key: String, _ what: String) -> RPCError {
        .invalidParams(name(key), "Missing field \"\(name(key))\" (\(what)).")
    }

    func wrong(_ key: String, _ what: String, _ got: JSON) -> RPCError {
        .invalidParams(name(key), "Field \"\(name(key))\" must be \(what), not \(got.typeName).")
    }

    public func string(_ key: String, maxLength: Int = 1024) throws(RPCError) -> String? {
        guard let v = self[key], v != .null else { return nil }
        guard case .string(let s) = v else { throw wrong(key, "a string", v) }
        if s.utf8.count > maxLength {
            throw .invalidParams(name(key), "Field \"\(name(key))\" is \(s.utf8.count) bytes long; at most \(maxLength) are allowed.")
        }
        return s
    }

    public func requiredString(_ key: String, maxLength: Int = 1024) throws(RPCError) -> String {
        guard let s = try string(key, maxLength: maxLength) else { throw missing(key, "a string") }
        return s
    }

    /// An item id: 1…`maxLength` bytes, no control characters.
    public func id(_ key: String, maxLength: Int = 64) throws(RPCError) -> String? {
        guard let s = try string(key, maxLength: maxLength) else { return nil }
        if s.isEmpty { throw .invalidParams(name(key), "Field \"\(name(key))\" must not be empty.") }
        if s.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
            throw .invalidParams(name(key), "Field \"\(name(key))\" must not contain control characters.")
        }
        return s
    }

    public func requiredID(_ key: String, maxLength: Int = 64) throws(RPCError) -> String {
        guard let s = try id(key, maxLength: maxLength) else { throw missing(key, "an item id") }
        return s
    }

    public func bool(_ key: String) throws(RPCError) -> Bool? {
        guard let v = self[key], v != .null else { return nil }
        guard case .bool(let b) = v else { throw wrong(key, "true or false", v) }
        return b
    }

    public func requiredBool(_ key: String) throws(RPCError) -> Bool {
        guard let b = try bool(key) else { throw missing(key, "true or false") }
        return b
    }

    /// Integers that survive a trip through a JavaScript client: ±(2^53−1).
    public static let safeIntegers: ClosedRange<Int> = -9_007_199_254_740_991...9_007_199_254_740_991

    /// A whole number. The number rule (docs/PROTOCOL.md, "Numbers"): the field takes a
    /// number written as a whole number — digits, an optional `-`, no fraction and no
    /// exponent — whose value is in `range`; anything else is refused, never rounded or
    /// clamped. Without a `range`, the safe integers.
    public func int(_ key: String, range: ClosedRange<Int>? = nil) throws(RPCError) -> Int? {
        guard let v = self[key], v != .null else { return nil }
        guard case .number(let text) = v else { throw wrong(key, "a whole number", v) }
        let range = range ?? Self.safeIntegers
        guard JSON.isIntegerLiteral(text) else {
            throw .invalidParams(name(key), "Field \"\(name(key))\" must be a whole number written without a fraction or exponent, not \(Self.clip(text)).")
        }
        guard let i = Int(text), range.contains(i) else {
            throw .invalidParams(name(key), "Field \"\(name(key))\" must be between \(range.lowerBound) and \(range.upperBound), not \(Self.clip(text)).")
        }
        return i
    }

    /// A number literal for a message: at most 40 characters of it.
    static func clip(_ text: String) -> String { text.utf8.count <= 40 ? text : String(text.prefix(37)) + "..." }

    public func double(_ key: String, range: ClosedRange<Double>? = nil) throws(RPCError) -> Double? {
        guard let v = self[key], v != .null else { return nil }
        guard case .number = v else { throw wrong(key, "a number", v) }
        guard let d = v.doubleValue, d.isFinite else {
            throw .invalidParams(name(key), "Field \"\(name(key))\" must be a finite number.")
        }
        if let range, !range.contains(d) {
            throw .invalidParams(name(key), "Field \"\(name(key))\" must be between \(range.lowerBound) and \(range.upperBound), not \(d).")
        }
        return d
    }

    public func requiredDouble(_ key: String, range: ClosedRange<Double>? = nil) throws(RPCError) -> Double {
        guard let d = try double(key, range: range) else { throw missing(key, "a number") }
        return d
    }

    /// A string that must be one of an enum's raw values.
    public func choice<E: RawRepresentable>(_ key: String, _ type: E.Type, allowed: [String]) throws(RPCError) -> E?
    where E.RawValue == String {
        guard let s = try string(key, maxLength: 64) else { return nil }
        guard let e = E(rawValue: s) else {
            throw .invalidParams(name(key), "Field \"\(name(key))\" must be one of \(allowed.map { "\"\($0)\"" }.joined(separator: ", ")), not \"\(s)\".")
        }
        return e
    }

    public func object(_ key: String) throws(RPCError) -> Params? {
        guard let v = self[key], v != .null else { return nil }
        guard case .object = v else { throw wrong(key, "an object", v) }
        return try Params(v, prefix: name(key))
    }

    public func array(_ key: String) throws(RPCError) -> [JSON]? {
        guard let v = self[key], v != .null else { return nil }
        guard case .array(let a) = v else { throw wrong(key, "an array", v) }
        return a
    }
}
