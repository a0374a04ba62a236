/// The one JSON grammar (RFC 8259, as JSONTestSuite checks it), read into a document's tape.
extension JSONDocument {
    /// The recursive-descent reader that fills the tape.
    struct Parser {
        let doc: JSONDocument
        let b: UnsafeBufferPointer<UInt8>
        var i = 0
        let maxDepth: Int
        var depth = 0

        init(doc: JSONDocument, b: UnsafeBufferPointer<UInt8>, maxDepth: Int) {
            self.doc = doc
            self.b = b
            self.maxDepth = maxDepth
        }

        func fail(_ reason: String) -> JSONParseError { JSONParseError(offset: i, reason: reason) }

        @inline(__always) mutating func skipSpace() {
            var j = i  // (a local index: `i` lives in memory, behind `self`)
            while j < b.count {
                let c = b[j]
                if c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09 { j += 1 } else { break }
            }
            i = j
        }

        mutating func document() throws(JSONParseError) {
            skipSpace()
            if i == b.count { throw fail("empty input") }
            try value()
            skipSpace()
            if i != b.count { throw fail("unexpected text after the JSON value") }
        }

        @inline(__always)
        mutating func leaf(_ kind: Token.Kind, _ start: Int, _ end: Int) {
            let n = Int32(doc.tokenCount + 1)
            _ = doc.append(Token(kind: kind, start: Int32(start), end: Int32(end), next: n, count: 0))
        }

        mutating func value() throws(JSONParseError) {
            guard i < b.count else { throw fail("unexpected end of input") }
            switch b[i] {
            case UInt8(ascii: "{"): try object()
            case UInt8(ascii: "["): try array()
            case UInt8(ascii: "\""): try string()
            case UInt8(ascii: "t"): try literal("true"); leaf(.true, i - 4, i)
            case UInt8(ascii: "f"): try literal("false"); leaf(.false, i - 5, i)
            case UInt8(ascii: "n"): try literal("null"); leaf(.null, i - 4, i)
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): try number()
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

        /// Closes container token `k`, opened at byte `start`.
        @inline(__always)
        mutating func close(_ k: Int, count: Int) {
            doc.tokens[k].end = Int32(i)
            doc.tokens[k].next = Int32(doc.tokenCount)
            doc.tokens[k].count = Int32(count)
            depth -= 1
        }

        mutating func object() throws(JSONParseError) {
            try enter()
            let k = doc.append(Token(kind: .object, start: Int32(i), end: 0, next: 0, count: 0))
            i += 1
            skipSpace()
            if i < b.count, b[i] == UInt8(ascii: "}") { i += 1; close(k, count: 0); return }
            var members = 0
            while true {
                skipSpace()
                guard i < b.count else { throw fail("unexpected end of input in an object") }
                guard b[i] == UInt8(ascii: "\"") else { throw fail("expected a quoted key") }
                let keyStart = i
                let key = doc.tokenCount
                try string()
                if members > 0 { try checkDuplicate(key, in: k, at: keyStart) }
                skipSpace()
                guard i < b.count, b[i] == UInt8(ascii: ":") else { throw fail("expected ':' after a key") }
                i += 1
                skipSpace()
                try value()
                members += 1
                skipSpace()
                guard i < b.count else { throw fail("unexpected end of input in an object") }
                if b[i] == UInt8(ascii: ",") { i += 1; continue }
                if b[i] == UInt8(ascii: "}") { i += 1; break }
                throw fail("expected ',' or '}' in an object")
            }
            close(k, count: members)
        }

        /// Refuses key token `key` if an earlier member of object `obj` has the same key.
        mutating func checkDuplicate(_ key: Int, in obj: Int, at offset: Int) throws(JSONParseError) {
            var m = obj + 1
            let tokens = doc.tokens
            let t = tokens[key]
            let escaped = t.kind == .escapedString
            let length = t.end - t.start
            while m < key {
                let other = tokens[m]
                let same: Bool
                if !escaped && other.kind == .string && other.end - other.start != length {
                    same = false  // (plain keys of different lengths: the common case, told at once)
                } else if !escaped && other.kind == .string {
                    same = doc.rawEquals(m, UnsafeBufferPointer(start: b.baseAddress! + Int(t.start), count: Int(t.end - t.start)))
                } else {
                    same = doc.stringBytes(m) == doc.stringBytes(key)
                }
                if same { throw JSONParseError(offset: offset, reason: "duplicate key \"\(doc.string(key))\"") }
                m = Int(tokens[m + 1].next)
            }
        }

        mutating func array() throws(JSONParseError) {
            try enter()
            let k = doc.append(Token(kind: .array, start: Int32(i), end: 0, next: 0, count: 0))
            i += 1
            skipSpace()
            if i < b.count, b[i] == UInt8(ascii: "]") { i += 1; close(k, count: 0); return }
            var elements = 0
            while true {
                skipSpace()
                try value()
                elements += 1
                skipSpace()
                guard i < b.count else { throw fail("unexpected end of input in an array") }
                if b[i] == UInt8(ascii: ",") { i += 1; continue }
                if b[i] == UInt8(ascii: "]") { i += 1; break }
                throw fail("expected ',' or ']' in an array")
            }
            close(k, count: elements)
        }

        @inline(__always)
        mutating func number() throws(JSONParseError) {
            let start = i
            @inline(__always) func digit(_ c: UInt8) -> Bool { c &- 0x30 < 10 }
            // A plain integer (the common number), with a local index.
            do {
                var j = i
                if b[j] == UInt8(ascii: "-") { j += 1 }
                if j < b.count, b[j] &- 0x31 < 9 {
                    j += 1
                    while j < b.count, digit(b[j]) { j += 1 }
                    if j == b.count || (b[j] != UInt8(ascii: ".") && b[j] | 0x20 != UInt8(ascii: "e")) {
                        i = j
                        leaf(.number, start, j)
                        return
                    }
                }
            }
            if b[i] == UInt8(ascii: "-") { i += 1 }
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
            leaf(.number, start, i)
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

        /// A quoted string starting at `"`: validates UTF-8 and escapes, records its raw bytes.
        @inline(__always)
        mutating func string() throws(JSONParseError) {
            i += 1
            let start = i
            // Most strings are plain bytes up to the quote: scanned with a local index, eight
            // at a time; anything else goes on below from the first byte that is not plain.
            do {
                let p = b.baseAddress!, n = b.count
                var j = i
                let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
                @inline(__always) func zeroByte(_ x: UInt64) -> UInt64 { (x &- ones) & ~x & highs }
                while j + 8 <= n {
                    let w = UnsafeRawPointer(p + j).loadUnaligned(as: UInt64.self)
                    let special = zeroByte(w ^ (ones &* 0x22)) | zeroByte(w ^ (ones &* 0x5C)) | ((w &- ones &* 0x20) & ~w & highs) | (w & highs)
                    if special != 0 { j += special.trailingZeroBitCount >> 3; break }
                    j += 8
                }
                while j < n {
                    let c = p[j]
                    if c == UInt8(ascii: "\"") || c == UInt8(ascii: "\\") || c < 0x20 || c >= 0x80 { break }
                    j += 1
                }
                i = j
                if j < n && p[j] == UInt8(ascii: "\"") {
                    leaf(.string, start, j)
                    i = j + 1
                    return
                }
            }
            var escaped = false
            var highBytes = false
            while true {
                // Eight plain bytes at a time: none a quote, a backslash, a control or a high byte.
                while i + 8 <= b.count {
                    let w = UnsafeRawPointer(b.baseAddress! + i).loadUnaligned(as: UInt64.self)
                    let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
                    @inline(__always) func zeroByte(_ x: UInt64) -> UInt64 { (x &- ones) & ~x & highs }
                    let special = zeroByte(w ^ (ones &* 0x22)) | zeroByte(w ^ (ones &* 0x5C)) | ((w &- ones &* 0x20) & ~w & highs) | (w & highs)
                    // (The lowest flagged byte is exact: the tricks borrow only upwards.)
                    if special != 0 { i += special.trailingZeroBitCount >> 3; break }
                    i += 8
                }
                guard i < b.count else { throw fail("unterminated string") }
                let c = b[i]
                if c == UInt8(ascii: "\"") { break }
                if c < 0x20 { throw fail("unescaped control character in a string") }
                if c >= 0x80 { highBytes = true; i += 1; continue }
                if c != UInt8(ascii: "\\") { i += 1; continue }
                escaped = true
                i += 1
                guard i < b.count else { throw fail("unterminated string") }
                let e = b[i]
                i += 1
                switch e {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
                     UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                    break
                case UInt8(ascii: "u"):
                    let scalar = try hex4()
                    if scalar >= 0xD800 && scalar < 0xDC00 {
                        guard i + 2 <= b.count, b[i] == UInt8(ascii: "\\"), b[i + 1] == UInt8(ascii: "u") else {
                            throw fail("lone surrogate in a \\u escape")
                        }
                        i += 2
                        let low = try hex4()
                        guard low >= 0xDC00 && low < 0xE000 else { throw fail("lone surrogate in a \\u escape") }
                    } else if scalar >= 0xDC00 && scalar < 0xE000 {
                        throw fail("lone surrogate in a \\u escape")
                    }
                default:
                    throw fail("invalid escape '\\\(Self.show(e))'")
                }
            }
            if highBytes {
                let raw = UnsafeBufferPointer(rebasing: b[start..<i])
                if String(validating: raw, as: UTF8.self) == nil {
                    i = start
                    throw fail("invalid UTF-8 in a string")
                }
            }
            leaf(escaped ? .escapedString : .string, start, i)
            i += 1
        }

        /// The bytes a string's raw text (between its quotes, already validated) stands for.
        static func unescape(_ raw: UnsafeBufferPointer<UInt8>) -> [UInt8] {
            var out: [UInt8] = []
            out.reserveCapacity(raw.count)
            var i = 0
            func hex(_ at: Int) -> UInt32 {
                var v: UInt32 = 0
                for k in at..<(at + 4) {
                    let c = raw[k]
                    v = v << 4 | UInt32(c <= 0x39 ? c - 0x30 : (c | 0x20) - 0x61 + 10)
                }
                return v
            }
            while i < raw.count {
                let c = raw[i]
                if c != UInt8(ascii: "\\") { out.append(c); i += 1; continue }
                let e = raw[i + 1]
                i += 2
                switch e {
                case UInt8(ascii: "b"): out.append(0x08)
                case UInt8(ascii: "f"): out.append(0x0C)
                case UInt8(ascii: "n"): out.append(0x0A)
                case UInt8(ascii: "r"): out.append(0x0D)
                case UInt8(ascii: "t"): out.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = hex(i)
                    i += 4
                    if scalar >= 0xD800 && scalar < 0xDC00 {
                        let low = hex(i + 2)
                        i += 6
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    }
                    out.append(contentsOf: Array(String(Character(Unicode.Scalar(scalar)!)).utf8))
                default: out.append(e)  // " \ /
                }
            }
            return out
        }
    }
}
