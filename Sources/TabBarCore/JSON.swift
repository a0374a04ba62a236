/// A JSON value as it travels on the wire.
///
/// Numbers keep their literal text so that ids like `12345678901234567890`
/// are echoed back unchanged; objects keep their members in order.
public enum JSON: Equatable, Sendable {
    case null
    case bool(Bool)
    /// A number, as its JSON literal text (always valid JSON number grammar).
    case number(String)
    case string(String)
    case array([JSON])
    case object([Member])

    /// One `"key": value` member of an object.
    public struct Member: Equatable, Sendable {
        public var key: String
        public var value: JSON
        public init(_ key: String, _ value: JSON) {
            self.key = key
            self.value = value
        }
    }

    /// An integer number.
    public static func int<I: BinaryInteger>(_ value: I) -> JSON { .number(String(value)) }

    /// A finite floating point number (NaN and infinities become `null`, which JSON lacks).
    public static func double(_ value: Double) -> JSON {
        guard value.isFinite else { return .null }
        if value == value.rounded(), abs(value) < 1e15 { return .number(String(Int64(value))) }
        return .number(String(value))
    }

    /// An object from ordered pairs.
    public static func obj(_ pairs: KeyValuePairs<String, JSON>) -> JSON {
        .object(pairs.map { Member($0.key, $0.value) })
    }

    /// A string, or `null` when absent.
    public static func optional(_ s: String?) -> JSON { s.map(JSON.string) ?? .null }

    /// The value of member `key` of an object (`nil` if absent or not an object).
    public subscript(key: String) -> JSON? {
        guard case .object(let members) = self else { return nil }
        for m in members where m.key == key { return m.value }
        return nil
    }

    public var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    public var boolValue: Bool? {
        if case .bool(let b) = self { return b }
        return nil
    }

    /// The number as a Double, if this is a number.
    public var doubleValue: Double? {
        guard case .number(let text) = self else { return nil }
        return Double(text)
    }

    /// The number as an Int when it is written as a whole number (`-12`, `3`: digits, no
    /// fraction, no exponent) and fits. `3.0` and `3e2` are not: see "Numbers" in
    /// docs/PROTOCOL.md, the one rule every whole-number field follows.
    public var intValue: Int? {
        guard case .number(let text) = self, JSON.isIntegerLiteral(text) else { return nil }
        return Int(text)
    }

    /// Whether a number literal is spelt as a whole number: no `.`, no exponent.
    public static func isIntegerLiteral(_ text: String) -> Bool {
        !text.utf8.contains { $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E") }
    }

    public var isNull: Bool { self == .null }

    /// A short name for the type, for error messages.
    public var typeName: String {
        switch self {
        case .null: return "null"
        case .bool: return "a boolean"
        case .number: return "a number"
        case .string: return "a string"
        case .array: return "an array"
        case .object: return "an object"
        }
    }
}

// MARK: - Writing

extension JSON {
    /// Compact UTF-8 text of this value (no trailing newline).
    public func encoded() -> [UInt8] {
        ByteBuffer.collect { $0.json(self) }
    }

    /// Compact text of this value.
    public var text: String { String(decoding: encoded(), as: UTF8.self) }

    /// Appends the compact UTF-8 text of this value to `out` (the one encoder, `ByteBuffer.json`).
    public func write(into out: inout [UInt8]) {
        out += ByteBuffer.collect { $0.json(self) }
    }

    /// Appends `s` as a quoted JSON string (`ByteBuffer.string`).
    public static func writeString(_ s: String, into out: inout [UInt8]) {
        out += ByteBuffer.collect { $0.string(s) }
    }

    /// Whether a string's byte is written escaped: a quote, a backslash, DEL or a control byte.
    static func needsEscape(_ byte: UInt8) -> Bool { byte < 0x20 || byte == 0x22 || byte == 0x5C || byte == 0x7F }
}

// MARK: - Parsing

/// Why a text is not acceptable JSON; `offset` is the byte where it went wrong.
public struct JSONParseError: Error, Equatable, Sendable {
    public var offset: Int
    public var reason: String
    public var description: String { "\(reason) at byte \(offset)" }
}

extension JSON {
    /// Deepest nesting of arrays and objects that `parse` accepts.
    public static let defaultMaxDepth = 64

    /// Parses exactly one JSON value (surrounding white space allowed), through the one
    /// reader (`JSONDocument`): invalid UTF-8, unescaped control characters, lone
    /// surrogates, duplicate object keys, NaN/Infinity and nesting deeper than `maxDepth`
    /// are refused.
    public static func parse<C: Collection>(_ bytes: C, maxDepth: Int = defaultMaxDepth) throws(JSONParseError) -> JSON
    where C.Element == UInt8 {
        let doc = JSONDocument()
        let done: Result<Void, JSONParseError>? = bytes.withContiguousStorageIfAvailable { buf in
            Result { () throws(JSONParseError) in try doc.parse(buf, maxDepth: maxDepth) }
        }
        if let done { try done.get() } else { try doc.parse(Array(bytes), maxDepth: maxDepth) }
        return JSONValue.tree(of: doc)
    }

    /// Parses a string of JSON text.
    public static func parse(_ text: String, maxDepth: Int = defaultMaxDepth) throws(JSONParseError) -> JSON {
        try parse(Array(text.utf8), maxDepth: maxDepth)
    }
}
