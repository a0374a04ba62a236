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
        var out: [UInt8] = []
        out.reserveCapacity(128)
        write(into: &out)
        return out
    }

    /// Compact text of this value.
    public var text: String { String(decoding: encoded(), as: UTF8.self) }

    /// Appends the compact UTF-8 text of this value to `out`.
    public func write(into out: inout [UInt8]) {
        switch self {
        case .null: out.append(contentsOf: [0x6E, 0x75, 0x6C, 0x6C])
        case .bool(let b):
            if b { out.append(contentsOf: [0x74, 0x72, 0x75, 0x65]) } else { out.append(contentsOf: [0x66, 0x61, 0x6C, 0x73, 0x65]) }
        case .number(let text): out.append(contentsOf: text.utf8)
        case .string(let s): JSON.writeString(s, into: &out)
        case .array(let values):
            out.append(UInt8(ascii: "["))
            for (i, v) in values.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                v.write(into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            for (i, m) in members.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                JSON.writeString(m.key, into: &out)
                out.append(UInt8(ascii: ":"))
                m.value.write(into: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    static let hex: [UInt8] = Array("0123456789abcdef".utf8)

    /// Appends `s` as a quoted JSON string.
    public static func writeString(_ s: String, into out: inout [UInt8]) {
        // Fast path: native strings are contiguous UTF-8; copy runs that need no
        // escaping in one append instead of byte by byte.
        let done: Bool? = s.utf8.withContiguousStorageIfAvailable { bytes in
            out.append(UInt8(ascii: "\""))
            var runStart = 0
            var i = 0
            let n = bytes.count
            while i < n {
                let byte = bytes[i]
                if !needsEscape(byte) {
                    i += 1
                    continue
                }
                if i > runStart { out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<i])) }
                writeEscaped(byte, into: &out)
                i += 1
                runStart = i
            }
            if n > runStart { out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<n])) }
            out.append(UInt8(ascii: "\""))
            return true
        }
        if done == true { return }
        out.append(UInt8(ascii: "\""))
        for byte in s.utf8 {
            if !needsEscape(byte) { out.append(byte) } else { writeEscaped(byte, into: &out) }
        }
        out.append(UInt8(ascii: "\""))
    }

    /// Whether a string's byte is written escaped: a quote, a backslash, DEL or a control byte.
    @inline(__always)
    static func needsEscape(_ byte: UInt8) -> Bool { byte < 0x20 || byte == 0x22 || byte == 0x5C || byte == 0x7F }

    /// The escape of a byte that `needsEscape`.
    static func writeEscaped(_ byte: UInt8, into out: inout [UInt8]) {
        switch byte {
        case UInt8(ascii: "\""): out.append(contentsOf: [0x5C, 0x22])
        case UInt8(ascii: "\\"): out.append(contentsOf: [0x5C, 0x5C])
        case 0x0A: out.append(contentsOf: [0x5C, UInt8(ascii: "n")])
        case 0x0D: out.append(contentsOf: [0x5C, UInt8(ascii: "r")])
        case 0x09: out.append(contentsOf: [0x5C, UInt8(ascii: "t")])
        default:
            out.append(contentsOf: [0x5C, UInt8(ascii: "u"), 0x30, 0x30, hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
        }
    }
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
