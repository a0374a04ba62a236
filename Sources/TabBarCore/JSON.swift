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
                if byte >= 0x20 && byte != 0x22 && byte != 0x5C && byte != 0x7F {
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
            if byte >= 0x20 && byte != 0x22 && byte != 0x5C && byte != 0x7F { out.append(byte) } else { writeEscaped(byte, into: &out) }
        }
        out.append(UInt8(ascii: "\""))
    }

    private static func writeEscaped(_ byte: UInt8, into out: inout [UInt8]) {
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

    /// Parses exactly one JSON value (surrounding white space allowed).
    /// Rejects invalid UTF-8, unescaped control characters, lone surrogates,
    /// duplicate object keys, NaN/Infinity and nesting deeper than `maxDepth`.
    public static func parse<C: Collection>(_ bytes: C, maxDepth: Int = defaultMaxDepth) throws(JSONParseError) -> JSON
    where C.Element == UInt8 {
        let result: Result<JSON, JSONParseError>? = bytes.withContiguousStorageIfAvailable { buf in
            var p = JSONParser(buf, maxDepth: maxDepth)
            return Result { () throws(JSONParseError) -> JSON in try p.parseDocument() }
        }
        if let result { return try result.get() }
        let copy = Array(bytes)
        return try copy.withUnsafeBufferPointer { buf throws(JSONParseError) -> JSON in
            var p = JSONParser(buf, maxDepth: maxDepth)
            return try p.parseDocument()
        }
    }

    /// Parses a string of JSON text.
    public static func parse(_ text: String, maxDepth: Int = defaultMaxDepth) throws(JSONParseError) -> JSON {
        try parse(Array(text.utf8), maxDepth: maxDepth)
    }
}

struct JSONParser {
    let b: UnsafeBufferPointer<UInt8>
    var i = 0
    let maxDepth: Int
    var depth = 0

    init(_ b: UnsafeBufferPointer<UInt8>, maxDepth: Int) {
        self.b = b
        self.maxDepth = maxDepth
    }

    func fail(_ reason: String) -> JSONParseError { JSONParseError(offset: i, reason: reason) }

    mutating func skipSpace() {
        while i < b.count {
            let c = b[i]
            if c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09 { i += 1 } else { break }
        }
    }

    mutating func parseDocument() throws(JSONParseError) -> JSON {
        skipSpace()
        if i == b.count { throw fail("empty input") }
        let v = try parseValue()
        skipSpace()
        if i != b.count { throw fail("unexpected text after the JSON value") }
        return v
    }

    mutating func parseValue() throws(JSONParseError) -> JSON {
        guard i < b.count else { throw fail("unexpected end of input") }
        switch b[i] {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        case UInt8(ascii: "N"), UInt8(ascii: "I"): throw fail("NaN and Infinity are not JSON")
        default: throw fail("unexpected character '\(Self.show(b[i]))'")
        }
    }

    static func show(_ c: UInt8) -> String {
        c >= 0x20 && c < 0x7F ? String(UnicodeScalar(c)) : "\\x" + String(c, radix: 16)
    }

    mutating func literal(_ word: StaticString) throws(JSONParseError) {
        let n = word.utf8CodeUnitCount
        guard i + n <= b.count else { throw fail("unexpected end of input") }
        let w = UnsafeBufferPointer(start: word.utf8Start, count: n)
        for k in 0..<n where b[i + k] != w[k] { throw fail("invalid literal") }
        i += n
    }

    mutating func enter() throws(JSONParseError) {
        depth += 1
        if depth > maxDepth { throw fail("nesting deeper than \(maxDepth) levels") }
    }

    mutating func parseObject() throws(JSONParseError) -> JSON {
        try enter()
        i += 1
        var members: [JSON.Member] = []
        skipSpace()
        if i < b.count, b[i] == UInt8(ascii: "}") { i += 1; depth -= 1; return .object(members) }
        // One allocation for the usual request object instead of regrowing at 1, 2, 4 members.
        members.reserveCapacity(8)
        while true {
            skipSpace()
            guard i < b.count else { throw fail("unexpected end of input in an object") }
            guard b[i] == UInt8(ascii: "\"") else { throw fail("expected a quoted key") }
            let keyStart = i
            let key = try parseString()
            for m in members where m.key == key {
                throw JSONParseError(offset: keyStart, reason: "duplicate key \"\(key)\"")
            }
            skipSpace()
            guard i < b.count, b[i] == UInt8(ascii: ":") else { throw fail("expected ':' after a key") }
            i += 1
            skipSpace()
            let v = try parseValue()
            members.append(JSON.Member(key, v))
            skipSpace()
            guard i < b.count else { throw fail("unexpected end of input in an object") }
            if b[i] == UInt8(ascii: ",") { i += 1; continue }
            if b[i] == UInt8(ascii: "}") { i += 1; break }
            throw fail("expected ',' or '}' in an object")
        }
        depth -= 1
        return .object(members)
    }

    mutating func parseArray() throws(JSONParseError) -> JSON {
        try enter()
        i += 1
        var values: [JSON] = []
        skipSpace()
        if i < b.count, b[i] == UInt8(ascii: "]") { i += 1; depth -= 1; return .array(values) }
        while true {
            skipSpace()
            values.append(try parseValue())
            skipSpace()
            guard i < b.count else { throw fail("unexpected end of input in an array") }
            if b[i] == UInt8(ascii: ",") { i += 1; continue }
            if b[i] == UInt8(ascii: "]") { i += 1; break }
            throw fail("expected ',' or ']' in an array")
        }
        depth -= 1
        return .array(values)
    }

    mutating func parseNumber() throws(JSONParseError) -> JSON {
        let start = i
        if b[i] == UInt8(ascii: "-") { i += 1 }
        func digit(_ c: UInt8) -> Bool { c >= 0x30 && c <= 0x39 }
        guard i < b.count, digit(b[i]) else { throw fail("invalid number") }
        if b[i] == 0x30 {
            i += 1
            if i < b.count, digit(b[i]) { throw fail("numbers may not have leading zeros") }
        } else {
            while i < b.count, digit(b[i]) { i += 1 }
        }
        if i < b.count, b[i] == UInt8(ascii: ".") {
            i += 1
            guard i < b.count, digit(b[i]) else { throw fail("invalid number: digits expected after '.'") }
            while i < b.count, digit(b[i]) { i += 1 }
        }
        if i < b.count, b[i] == UInt8(ascii: "e") || b[i] == UInt8(ascii: "E") {
            i += 1
            if i < b.count, b[i] == UInt8(ascii: "+") || b[i] == UInt8(ascii: "-") { i += 1 }
            guard i < b.count, digit(b[i]) else { throw fail("invalid number: digits expected in the exponent") }
            while i < b.count, digit(b[i]) { i += 1 }
        }
        return .number(String(decoding: UnsafeBufferPointer(rebasing: b[start..<i]), as: UTF8.self))
    }

    mutating func hex4() throws(JSONParseError) -> UInt32 {
        guard i + 4 <= b.count else { throw fail("unexpected end of input in a \\u escape") }
        var v: UInt32 = 0
        for _ in 0..<4 {
            let c = b[i]
            let d: UInt32
            switch c {
            case 0x30...0x39: d = UInt32(c - 0x30)
            case 0x41...0x46: d = UInt32(c - 0x41 + 10)
            case 0x61...0x66: d = UInt32(c - 0x61 + 10)
            default: throw fail("invalid hex digit in a \\u escape")
            }
            v = v << 4 | d
            i += 1
        }
        return v
    }

    /// Parses a quoted string starting at `"`; validates UTF-8 and escapes.
    mutating func parseString() throws(JSONParseError) -> String {
        i += 1
        let start = i
        // Fast path: no escapes, plain ASCII or valid UTF-8 up to the closing quote.
        var hasEscape = false
        var highBytes = false
        var j = i
        while j < b.count {
            let c = b[j]
            if c == UInt8(ascii: "\"") { break }
            if c == UInt8(ascii: "\\") { hasEscape = true; break }
            if c < 0x20 { i = j; throw fail("unescaped control character in a string") }
            if c >= 0x80 { highBytes = true }
            j += 1
        }
        if !hasEscape {
            guard j < b.count else { i = j; throw fail("unterminated string") }
            let slice = UnsafeBufferPointer(rebasing: b[start..<j])
            i = j + 1
            if highBytes {
                guard let s = String(validating: slice, as: UTF8.self) else {
                    i = start
                    throw fail("invalid UTF-8 in a string")
                }
                return s
            }
            return String(decoding: slice, as: UTF8.self)
        }
        // Slow path with escapes.
        var out: [UInt8] = []
        out.reserveCapacity(j - start + 16)
        out.append(contentsOf: UnsafeBufferPointer(rebasing: b[start..<j]))
        i = j
        while true {
            guard i < b.count else { throw fail("unterminated string") }
            let c = b[i]
            if c == UInt8(ascii: "\"") { i += 1; break }
            if c < 0x20 { throw fail("unescaped control character in a string") }
            if c != UInt8(ascii: "\\") { out.append(c); i += 1; continue }
            i += 1
            guard i < b.count else { throw fail("unterminated string") }
            let e = b[i]
            i += 1
            switch e {
            case UInt8(ascii: "\""): out.append(0x22)
            case UInt8(ascii: "\\"): out.append(0x5C)
            case UInt8(ascii: "/"): out.append(0x2F)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = try hex4()
                if scalar >= 0xD800 && scalar < 0xDC00 {
                    guard i + 2 <= b.count, b[i] == UInt8(ascii: "\\"), b[i + 1] == UInt8(ascii: "u") else {
                        throw fail("lone surrogate in a \\u escape")
                    }
                    i += 2
                    let low = try hex4()
                    guard low >= 0xDC00 && low < 0xE000 else { throw fail("lone surrogate in a \\u escape") }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                } else if scalar >= 0xDC00 && scalar < 0xE000 {
                    throw fail("lone surrogate in a \\u escape")
                }
                guard let u = Unicode.Scalar(scalar) else { throw fail("invalid \\u escape") }
                out.append(contentsOf: Array(String(Character(u)).utf8))
            default:
                throw fail("invalid escape '\\\(Self.show(e))'")
            }
        }
        guard let s = String(validating: out, as: UTF8.self) else { throw fail("invalid UTF-8 in a string") }
        return s
    }
}
