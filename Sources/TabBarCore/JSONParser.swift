/// The one JSON grammar (RFC 8259, as JSONTestSuite checks it), read into a document's tape.
extension JSONDocument {
    /// The reader that fills the tape: one loop over the text, no recursion. Its index, the
    /// tape pointer and the innermost open container are locals (registers), not fields
    /// behind a pointer.
    ///
    /// - The open containers are a stack linked through the tape: while a container is open,
    ///   its token's `next` holds the index of the container around it (-1 at the top) and
    ///   its `count` the members it had when a child opened; closing it writes the real
    ///   `next`, `end` and `count`.
    /// - The text is followed by `padding` zero bytes (`JSONDocument.parse` puts them
    ///   there): a zero byte stops every scan (it is neither white space, nor a digit, nor a
    ///   plain string byte), so scans test the end of the text only where a zero byte is
    ///   found, to tell "the text ended" from "a control character", and word-at-a-time
    ///   scans may read up to `padding` bytes past the end.
    enum Parser {
        /// Zero bytes after the text.
        static let padding = 8

        /// The innermost open container.
        struct Open {
            /// Its token (-1: none, the top level).
            var k: Int
            /// Members (objects) or elements (arrays) read so far.
            var members: Int
            var isObject: Bool
        }

        /// Parses the `s.pointee.count` bytes of `s.pointee.bytes` (followed by `padding` zero
        /// bytes) into the tape; on success `s.pointee.tokenCount` is the number of tokens.
        static func parse(_ s: UnsafeMutablePointer<Storage>, maxDepth: Int) throws(JSONParseError) {
            let p = UnsafePointer(s.pointee.bytes.baseAddress!), n = s.pointee.count
            var tokens = s.pointee.tokens, capacity = s.pointee.tokenCapacity, count = 0
            if n > Int(Int32.max) - padding { throw fail(0, "a JSON text of 2 GiB or more is not read") }
            var i = skipSpace(p, 0)
            if i == n { throw fail(i, "empty input") }
            i = try value(p, n, i, depth: 0, maxDepth: maxDepth, &tokens, &capacity, &count, s)
            i = skipSpace(p, i)
            if i != n { throw fail(i, "unexpected text after the JSON value") }
            s.pointee.tokenCount = count
        }

        /// Reads the value at `i` (white space skipped), inside `depth` open containers, into
        /// the tape from token `count` on; returns the index after it.
        static func value(_ p: UnsafePointer<UInt8>, _ n: Int, _ start: Int, depth: Int, maxDepth: Int,
                          _ tokens: inout UnsafeMutablePointer<Token>, _ capacity: inout Int, _ count: inout Int,
                          _ s: UnsafeMutablePointer<Storage>) throws(JSONParseError) -> Int {
            var open = Open(k: -1, members: 0, isObject: false)
            var depth = depth, i = start
            value: while true {
                // A value starts at `i` (white space skipped).
                let c = p[i]
                switch c {
                case UInt8(ascii: "\""):
                    let (end, kind) = try string(p, n, i + 1)
                    emit(Token(kind: kind, start: i32(i + 1), end: i32(end), next: i32(count + 1), count: 0), &tokens, &capacity, &count, s)
                    i = end + 1
                case UInt8(ascii: "{"), UInt8(ascii: "["):
                    depth += 1
                    if depth > maxDepth { throw fail(i, "nesting deeper than \(maxDepth) levels") }
                    if open.k >= 0 { tokens[open.k].count = i32(open.members) }
                    let isObject = c == UInt8(ascii: "{")
                    emit(Token(kind: isObject ? .object : .array, start: i32(i), end: 0, next: i32(open.k), count: 0), &tokens, &capacity, &count, s)
                    open = Open(k: count - 1, members: 0, isObject: isObject)
                    i = skipSpace(p, i + 1)
                    if p[i] == (isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")) {
                        i += 1
                        open = close(tokens, open, end: i, next: count)
                        depth -= 1
                    } else {
                        if isObject { i = try key(p, n, i, open, &tokens, &capacity, &count, s) }
                        continue value
                    }
                case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                    let (end, value) = try number(p, i, keep: false)
                    emit(Token(kind: .number, start: i32(i), end: i32(end), next: i32(count + 1), count: value), &tokens, &capacity, &count, s)
                    i = end
                case UInt8(ascii: "t"), UInt8(ascii: "f"), UInt8(ascii: "n"):
                    let (word, kind): (StaticString, Token.Kind) = c == UInt8(ascii: "t") ? ("true", .true) : c == UInt8(ascii: "f") ? ("false", .false) : ("null", .null)
                    let end = try literal(p, n, i, word)
                    emit(Token(kind: kind, start: i32(i), end: i32(end), next: i32(count + 1), count: 0), &tokens, &capacity, &count, s)
                    i = end
                case UInt8(ascii: "N"), UInt8(ascii: "I"):
                    throw fail(i, "NaN and Infinity are not JSON")
                default:
                    throw fail(i, i == n ? "unexpected end of input" : "unexpected character '\(show(c))'")
                }
                // A value ended at `i`: the next member of the open container, or its end.
                while open.k >= 0 {
                    open.members += 1
                    i = skipSpace(p, i)
                    let c = p[i]
                    if c == UInt8(ascii: ",") {
                        i = skipSpace(p, i + 1)
                        if open.isObject { i = try key(p, n, i, open, &tokens, &capacity, &count, s) }
                        continue value
                    }
                    if c == (open.isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")) {
                        i += 1
                        open = close(tokens, open, end: i, next: count)
                        depth -= 1
                        continue  // (the closed container is a value that ended too)
                    }
                    let what = open.isObject ? "an object" : "an array"
                    throw fail(i, i == n ? "unexpected end of input in \(what)" : open.isObject ? "expected ',' or '}' in an object" : "expected ',' or ']' in an array")
                }
                return i  // (the value ended)
            }
        }

        /// An index or a count as a token holds it (all are below 2^31: `parse` refuses
        /// longer texts).
        @inline(__always) static func i32(_ x: Int) -> Int32 { Int32(truncatingIfNeeded: x) }

        static func fail(_ offset: Int, _ reason: String) -> JSONParseError { JSONParseError(offset: offset, reason: reason) }

        static func show(_ c: UInt8) -> String {
            c >= 0x20 && c < 0x7F ? String(UnicodeScalar(c)) : "\\x" + String(c, radix: 16)
        }

        /// Writes token `t` at the end of the tape, growing it if it is full.
        @inline(__always)
        static func emit(_ t: Token, _ tokens: inout UnsafeMutablePointer<Token>, _ capacity: inout Int, _ count: inout Int,
                         _ s: UnsafeMutablePointer<Storage>) {
            if count == capacity { (tokens, capacity) = grow(s) }
            tokens[count] = t
            count &+= 1
        }

        /// Doubles the tape's storage (its first `tokenCapacity` tokens kept).
        @inline(never)
        static func grow(_ s: UnsafeMutablePointer<Storage>) -> (UnsafeMutablePointer<Token>, Int) {
            let n = s.pointee.tokenCapacity
            let grown = UnsafeMutablePointer<Token>.allocate(capacity: n * 2)
            grown.moveInitialize(from: s.pointee.tokens, count: n)
            s.pointee.tokens.deallocate()
            s.pointee.tokens = grown
            s.pointee.tokenCapacity = n * 2
            return (grown, n * 2)
        }

        /// Closes container `open` (its closing bracket ends before `end`, its last descendant is
        /// the token before `next`); returns the container around it.
        @inline(__always)
        static func close(_ tokens: UnsafeMutablePointer<Token>, _ open: Open, end: Int, next: Int) -> Open {
            let parent = Int(tokens[open.k].next)
            tokens[open.k].end = i32(end)
            tokens[open.k].next = i32(next)
            tokens[open.k].count = i32(open.members)
            if parent < 0 { return Open(k: -1, members: 0, isObject: false) }
            let t = tokens[parent]
            return Open(k: parent, members: Int(t.count), isObject: t.kind == .object)
        }

        /// The index after white space from `i`.
        @inline(__always)
        static func skipSpace(_ p: UnsafePointer<UInt8>, _ i: Int) -> Int {
            var j = i
            while true {
                let c = p[j]
                if c > 0x20 { return j }  // (compact JSON: the one test)
                guard c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09 else { return j }
                j &+= 1
            }
        }

        /// Reads an object's key at `i` (white space skipped), the ':' and the white space after
        /// it, and refuses it if an earlier member of `open` has the same key; returns where
        /// the member's value starts.
        @inline(__always)
        static func key(_ p: UnsafePointer<UInt8>, _ n: Int, _ i: Int, _ open: Open,
                        _ tokens: inout UnsafeMutablePointer<Token>, _ capacity: inout Int, _ count: inout Int,
                        _ s: UnsafeMutablePointer<Storage>) throws(JSONParseError) -> Int {
            guard p[i] == UInt8(ascii: "\"") else {
                throw fail(i, i == n ? "unexpected end of input in an object" : "expected a quoted key")
            }
            let (end, kind) = try string(p, n, i + 1)
            emit(Token(kind: kind, start: i32(i + 1), end: i32(end), next: i32(count + 1), count: 0), &tokens, &capacity, &count, s)
            if open.members > 0 {
                // Plain keys are compared here (those of other lengths at once); from the first
                // key with escapes on, the decoded bytes are compared, out of line.
                let k = count - 1, length = end - (i + 1)
                var m = open.k + 1
                while m < k {
                    let other = tokens[m]
                    if kind != .string || other.kind != .string {
                        try checkDuplicate(tokens, p, key: k, from: m, at: i)
                        break
                    }
                    if Int(other.end - other.start) == length && (length == 0 || memcmpEqual(p + Int(other.start), p + (i + 1), length)) {
                        throw duplicate(tokens[k], p, at: i)
                    }
                    m = Int(tokens[m + 1].next)
                }
            }
            var j = skipSpace(p, end + 1)
            guard p[j] == UInt8(ascii: ":") else { throw fail(j, "expected ':' after a key") }
            j = skipSpace(p, j + 1)
            return j
        }

        /// Refuses key token `key` if a member of its object from member `m` on has the same key.
        @inline(never)
        static func checkDuplicate(_ tokens: UnsafeMutablePointer<Token>, _ p: UnsafePointer<UInt8>,
                                   key: Int, from m: Int, at offset: Int) throws(JSONParseError) {
            let bytes = decoded(tokens[key], p)
            var m = m
            while m < key {
                if decoded(tokens[m], p) == bytes { throw duplicate(tokens[key], p, at: offset) }
                m = Int(tokens[m + 1].next)
            }
        }

        static func duplicate(_ key: Token, _ p: UnsafePointer<UInt8>, at offset: Int) -> JSONParseError {
            fail(offset, "duplicate key \"\(String(decoding: decoded(key, p), as: UTF8.self))\"")
        }

        /// The bytes string token `t` stands for (escapes resolved).
        static func decoded(_ t: Token, _ p: UnsafePointer<UInt8>) -> [UInt8] {
            let raw = UnsafeBufferPointer(start: p + Int(t.start), count: Int(t.end - t.start))
            return t.kind == .escapedString ? unescape(raw) : Array(raw)
        }

        /// `word` (true, false, null) at `i`, whose first byte is known to match; returns its end.
        @inline(__always)
        static func literal(_ p: UnsafePointer<UInt8>, _ n: Int, _ i: Int, _ word: StaticString) throws(JSONParseError) -> Int {
            let length = word.utf8CodeUnitCount
            guard i + length <= n else { throw fail(i, "unexpected end of input") }
            guard memcmpEqual(p + i, word.utf8Start, length) else { throw fail(i, "invalid literal") }
            return i + length
        }

        /// A number starting at `i` (a '-' or a digit): its end, and its token's `count`: its
        /// value when `keep` and it can be kept (`Token.kept`), else `Token.notKept`.
        @inline(__always)
        static func number(_ p: UnsafePointer<UInt8>, _ start: Int, keep: Bool) throws(JSONParseError) -> (end: Int, count: Int32) {
            @inline(__always) func digit(_ c: UInt8) -> Bool { c &- 0x30 < 10 }
            var i = start
            let negative = p[i] == UInt8(ascii: "-")
            if negative { i &+= 1 }
            let first = i
            // The digits, read as they are checked when kept (wrapping past 8 of them: then unused).
            var m: Int32 = 0
            // A plain integer (the common number): a digit 1-9, digits, then no '.' or exponent.
            if p[i] &- 0x31 < 9 {
                while case let d = p[i] &- 0x30, d < 10 {
                    if keep { m = m &* 10 &+ Int32(d) }
                    i &+= 1
                }
                if p[i] != UInt8(ascii: ".") && p[i] | 0x20 != UInt8(ascii: "e") {
                    return (i, keep && i &- first <= 8 ? Token.keptNumber(negative ? 0 &- m : m, scale: 0) : Token.notKept)
                }
            } else {
                guard digit(p[i]) else { throw fail(i, "invalid number") }
                i &+= 1  // a single zero
                if digit(p[i]) { throw fail(i, "numbers may not have leading zeros") }
            }
            let whole = i &- first
            var scale = 0
            if p[i] == UInt8(ascii: ".") {
                i &+= 1
                guard digit(p[i]) else { throw fail(i, "invalid number: digits expected after '.'") }
                let f = i
                while case let d = p[i] &- 0x30, d < 10 {
                    if keep { m = m &* 10 &+ Int32(d) }
                    i &+= 1
                }
                scale = i &- f
            }
            if p[i] | 0x20 == UInt8(ascii: "e") {
                i &+= 1
                if p[i] == UInt8(ascii: "+") || p[i] == UInt8(ascii: "-") { i &+= 1 }
                guard digit(p[i]) else { throw fail(i, "invalid number: digits expected in the exponent") }
                while digit(p[i]) { i &+= 1 }
                return (i, Token.notKept)
            }
            // (-0.0 is a negative zero, which `digits` cannot hold.)
            guard keep, whole &+ scale <= 8, !(negative && m == 0) else { return (i, Token.notKept) }
            return (i, Token.keptNumber(negative ? 0 &- m : m, scale: scale))
        }

        /// Where the first byte from `i` on that is a quote, a backslash, a control byte
        /// (the zero after the text is one) or a high byte lies: eight bytes a step.
        @inline(__always)
        static func plainRun(_ p: UnsafePointer<UInt8>, _ i: Int) -> Int {
            let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
            @inline(__always) func zeroByte(_ x: UInt64) -> UInt64 { (x &- ones) & ~x & highs }
            var j = i
            while true {
                let w = UnsafeRawPointer(p + j).loadUnaligned(as: UInt64.self)
                let special = zeroByte(w ^ (ones &* 0x22)) | zeroByte(w ^ (ones &* 0x5C)) | ((w &- ones &* 0x20) & ~w & highs) | (w & highs)
                // (The lowest flagged byte is exact: the tricks borrow only upwards.)
                if special != 0 { return j &+ special.trailingZeroBitCount >> 3 }
                j &+= 8
            }
        }

        /// A string whose text starts at `start` (after its opening quote): validates UTF-8
        /// and escapes; returns the index of its closing quote and its kind.
        @inline(__always)
        static func string(_ p: UnsafePointer<UInt8>, _ n: Int, _ start: Int) throws(JSONParseError) -> (Int, Token.Kind) {
            let j = plainRun(p, start)
            if p[j] == UInt8(ascii: "\"") { return (j, .string) }  // (most strings)
            return try stringWithSpecials(p, n, start, from: j)
        }

        /// The rest of a string from `i`, its first byte that is not plain.
        @inline(never)
        static func stringWithSpecials(_ p: UnsafePointer<UInt8>, _ n: Int, _ start: Int, from: Int) throws(JSONParseError) -> (Int, Token.Kind) {
            var i = from
            var escaped = false, highBytes = false
            while true {
                i = plainRun(p, i)
                let c = p[i]
                if c == UInt8(ascii: "\"") { break }
                if c < 0x20 { throw fail(i, i == n ? "unterminated string" : "unescaped control character in a string") }
                if c >= 0x80 { highBytes = true; i += 1; continue }
                // A backslash.
                escaped = true
                i += 1
                if i == n { throw fail(i, "unterminated string") }
                let e = p[i]
                i += 1
                switch e {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
                     UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                    break
                case UInt8(ascii: "u"):
                    let scalar = try hex4(p, n, &i)
                    if scalar >= 0xD800 && scalar < 0xDC00 {
                        guard p[i] == UInt8(ascii: "\\"), p[i + 1] == UInt8(ascii: "u") else { throw fail(i, "lone surrogate in a \\u escape") }
                        i += 2
                        let low = try hex4(p, n, &i)
                        guard low >= 0xDC00 && low < 0xE000 else { throw fail(i, "lone surrogate in a \\u escape") }
                    } else if scalar >= 0xDC00 && scalar < 0xE000 {
                        throw fail(i, "lone surrogate in a \\u escape")
                    }
                default:
                    throw fail(i, "invalid escape '\\\(show(e))'")
                }
            }
            if highBytes && String(validating: UnsafeBufferPointer(start: p + start, count: i - start), as: UTF8.self) == nil {
                throw fail(start, "invalid UTF-8 in a string")
            }
            return (i, escaped ? .escapedString : .string)
        }

        /// Four hex digits at `i`, which moves past them.
        static func hex4(_ p: UnsafePointer<UInt8>, _ n: Int, _ i: inout Int) throws(JSONParseError) -> UInt32 {
            guard i + 4 <= n else { throw fail(i, "unexpected end of input in a \\u escape") }
            var v: UInt32 = 0
            for _ in 0..<4 {
                let c = p[i]
                let d: UInt32
                switch c {
                case 0x30...0x39: d = UInt32(c - 0x30)
                case 0x41...0x46: d = UInt32(c - 0x41 + 10)
                case 0x61...0x66: d = UInt32(c - 0x61 + 10)
                default: throw fail(i, "invalid hex digit in a \\u escape")
                }
                v = v << 4 | d
                i += 1
            }
            return v
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
