/// One parsed JSON text, read once into a flat tape of tokens (no tree, no per-value
/// allocation): what requests, journal entries and snapshots are decoded from
/// (`JSONValue`, `Params`), and what `JSON.parse` builds its tree from. The grammar is
/// RFC 8259's, as JSONTestSuite checks it: invalid UTF-8, unescaped control characters,
/// lone surrogates, duplicate keys, NaN/Infinity, nesting deeper than `maxDepth` and texts
/// of 2 GiB or more are refused.
///
/// A document is reused: `parse` overwrites the previous text (the server keeps one for
/// every line it reads). Values read from it are valid until the next `parse`.
// Sendable because a document is used by one thread at a time: whoever parses into it owns it
// (the server's dispatcher, a request's `owner`); nothing shares one across threads.
public final class JSONDocument: @unchecked Sendable {
    /// One value in document order; a container's members (key, value, key, value…) or
    /// elements follow it, and `next` is the token after its last descendant.
    public struct Token: Sendable {
        public enum Kind: UInt8, Sendable { case null, `true`, `false`, number, string, escapedString, array, object }
        public var kind: Kind
        /// Strings: the bytes between the quotes; numbers: the literal; containers: from the
        /// opening bracket to after the closing one.
        public var start: Int32
        public var end: Int32
        /// The index of the token after this value (and all it contains).
        public var next: Int32
        /// Members (objects) or elements (arrays). Numbers: their value, when the reader
        /// kept it as it read the literal (`kept`), else `Token.notKept`.
        public var count: Int32

        /// A number's `count` when its value is not kept (it is read from the literal), as
        /// every other value's that is not a container.
        public static let notKept: Int32 = 0

        /// A number's value as the reader kept it: exactly `digits` / 10^`scale` (`digits`
        /// the literal's digits without the point, its sign applied, `scale` the digits
        /// after the point); nil: not kept. Kept in `count` as `digits << 4 | (scale + 1)`:
        /// the envelope reader keeps the numbers of a method's declared params when they
        /// have at most 8 digits and no exponent (not a negative zero, which `digits` cannot
        /// hold).
        @inline(__always)
        var kept: (digits: Int32, scale: Int)? {
            count & 15 == 0 ? nil : (count >> 4, Int(count & 15) &- 1)
        }

        /// The `count` of a number kept as `digits` / 10^`scale` (see `kept`).
        @inline(__always)
        static func keptNumber(_ digits: Int32, scale: Int) -> Int32 { digits << 4 | Int32(truncatingIfNeeded: scale &+ 1) }
    }

    /// What a parse fills in. Held through a pointer (`let`), so that reading it costs no
    /// run-time exclusivity check, as a class's `var` would on every access.
    struct Storage {
        var bytes: UnsafeMutableBufferPointer<UInt8>
        var count = 0
        var tokens: UnsafeMutablePointer<Token>
        var tokenCount = 0
        var tokenCapacity: Int
        /// The object whose declared fields `slots` locate (`Params.reading`; -1: none) and
        /// their declaration.
        var slotObject = -1
        var slotFields: Fields.Entries?
        /// The value's token of each of the first `Fields.slotCount` declared fields (0:
        /// absent), read and written in place (no copy of them on the stack).
        let slots: UnsafeMutablePointer<Int32>
        /// The methods' names, as the envelope reader looks them up (`MethodNames.shared`,
        /// taken once: a lazy global costs a `swift_once` call at every read).
        let names = MethodNames.shared
    }
    let s: UnsafeMutablePointer<Storage>

    public var bytes: UnsafeMutableBufferPointer<UInt8> { @inline(__always) get { s.pointee.bytes } }
    public var count: Int { @inline(__always) get { s.pointee.count } }
    public var tokens: UnsafeMutablePointer<Token> { @inline(__always) get { s.pointee.tokens } }
    public var tokenCount: Int { @inline(__always) get { s.pointee.tokenCount } }

    public init() {
        s = .allocate(capacity: 1)
        s.initialize(to: Storage(bytes: .allocate(capacity: 256), tokens: .allocate(capacity: 32), tokenCapacity: 32,
                                 slots: .allocate(capacity: Fields.slotCount)))
    }

    /// A document parsed from `text`.
    public convenience init(parsing text: UnsafeBufferPointer<UInt8>, maxDepth: Int = JSON.defaultMaxDepth) throws(JSONParseError) {
        self.init()
        try parse(text, maxDepth: maxDepth)
    }

    /// A document parsed from `bytes`.
    public convenience init(parsing bytes: [UInt8], maxDepth: Int = JSON.defaultMaxDepth) throws(JSONParseError) {
        self.init()
        try parse(bytes, maxDepth: maxDepth)
    }

    /// A document holding `value`'s text (tests and tools).
    public convenience init(_ value: JSON) {
        try! self.init(parsing: value.encoded())
    }

    deinit {
        s.pointee.bytes.deallocate()
        s.pointee.tokens.deallocate()
        s.pointee.slots.deallocate()
        s.deallocate()
    }

    /// The document's text.
    public var text: UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(start: bytes.baseAddress, count: count) }

    /// The top-level value (valid after a successful `parse`).
    public var root: JSONValue { JSONValue(tape, 0) }

    /// Reads `text` (a copy is kept), replacing what the document held.
    public func parse(_ text: UnsafeBufferPointer<UInt8>, maxDepth: Int = JSON.defaultMaxDepth) throws(JSONParseError) {
        load(text)
        do {
            try Parser.parse(s, maxDepth: maxDepth)
        } catch {
            s.pointee.tokenCount = 0
            throw error
        }
    }

    /// Copies `text` in, replacing what the document held (no tokens yet).
    @inline(__always)
    func load(_ text: UnsafeBufferPointer<UInt8>) {
        // The copy is followed by zero bytes that end the parser's scans (`Parser.padding`).
        let needed = text.count + Parser.padding
        if needed > s.pointee.bytes.count {
            let old = s.pointee.bytes
            s.pointee.bytes = .allocate(capacity: max(needed, old.count * 2))
            old.deallocate()
        }
        let base = s.pointee.bytes.baseAddress!
        if let src = text.baseAddress, text.count > 0 { UnsafeMutableRawPointer(base).copyMemory(from: src, byteCount: text.count) }
        (base + text.count).update(repeating: 0, count: Parser.padding)
        s.pointee.count = text.count
        s.pointee.tokenCount = 0
        s.pointee.slotObject = -1
    }

    /// Parses a copy of `bytes`.
    public func parse(_ bytes: [UInt8], maxDepth: Int = JSON.defaultMaxDepth) throws(JSONParseError) {
        try bytes.withUnsafeBufferPointer { b throws(JSONParseError) in try parse(b, maxDepth: maxDepth) }
    }

    /// What values read: the tape and the text, through a plain pointer (no reference
    /// counting per value read, as a class reference would have).
    public var tape: Tape { Tape(s: s) }

    /// A document's tokens and text as values read them. Valid while the document is
    /// alive: whoever made the document keeps it (`Request.owner`, `Params.owner`, the
    /// server's reused documents).
    // Sendable because it is a read-only view of its document's storage, valid (and used)
    // only where the document is: the thread that owns the document.
    public struct Tape: @unchecked Sendable {
        let s: UnsafeMutablePointer<Storage>
        public var bytes: UnsafeMutableBufferPointer<UInt8> { @inline(__always) get { s.pointee.bytes } }
        public var tokens: UnsafeMutablePointer<Token> { @inline(__always) get { s.pointee.tokens } }

        /// Whether the string token `k` (raw bytes, no escapes) spells `key`.
        @inline(__always)
        func rawEquals(_ k: Int, _ key: UnsafeBufferPointer<UInt8>) -> Bool {
            let t = tokens[k]
            let n = Int(t.end - t.start)
            guard n == key.count else { return false }
            if n == 0 { return true }
            return memcmpEqual(bytes.baseAddress! + Int(t.start), key.baseAddress!, n)
        }

        /// The decoded bytes of string token `k` (escapes resolved).
        func stringBytes(_ k: Int) -> [UInt8] {
            let t = tokens[k]
            let raw = UnsafeBufferPointer(start: bytes.baseAddress! + Int(t.start), count: Int(t.end - t.start))
            guard t.kind == .escapedString else { return Array(raw) }
            return Parser.unescape(raw)
        }

        /// The decoded string of string token `k`.
        func string(_ k: Int) -> String {
            let t = tokens[k]
            if t.kind == .string {
                return String(decoding: UnsafeBufferPointer(start: bytes.baseAddress! + Int(t.start), count: Int(t.end - t.start)), as: UTF8.self)
            }
            return String(decoding: stringBytes(k), as: UTF8.self)
        }
    }
}

/// Compares `n` bytes.
@inline(__always)
func memcmpEqual(_ a: UnsafePointer<UInt8>, _ b: UnsafePointer<UInt8>, _ n: Int) -> Bool {
    if n >= 4 && n <= 8 {
        // Two overlapping four-byte words cover it.
        @inline(__always) func word(_ p: UnsafePointer<UInt8>, _ at: Int) -> UInt32 { UnsafeRawPointer(p + at).loadUnaligned(as: UInt32.self) }
        return word(a, 0) == word(b, 0) && word(a, n - 4) == word(b, n - 4)
    }
    if n > 8 && n <= 16 {
        // Two overlapping eight-byte words.
        @inline(__always) func word(_ p: UnsafePointer<UInt8>, _ at: Int) -> UInt64 { UnsafeRawPointer(p + at).loadUnaligned(as: UInt64.self) }
        return word(a, 0) == word(b, 0) && word(a, n &- 8) == word(b, n &- 8)
    }
    var k = 0
    while k + 8 <= n {
        if UnsafeRawPointer(a + k).loadUnaligned(as: UInt64.self) != UnsafeRawPointer(b + k).loadUnaligned(as: UInt64.self) { return false }
        k += 8
    }
    while k < n {
        if a[k] != b[k] { return false }
        k += 1
    }
    return true
}
