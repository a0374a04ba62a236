/// A request's `id` as its reply echoes it: the id's JSON text, kept as bytes — a number's
/// literal exactly as the request spelt it (`1e2`, `-0`, `12345678901234567890`), a string
/// quoted and escaped as every encoder writes strings (`ByteBuffer.string`), `null` for the
/// reply to a line whose id is unknown.
///
/// Up to `inlineCapacity` bytes are held in the value itself: copying or dropping the id of
/// a request, a staged reply or a refusal then costs no allocation and no reference count
/// (a longer id is kept in an array).
public struct RequestID: Equatable, Sendable, CustomStringConvertible {
    private var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
    /// The inline bytes' count; unused when `long` holds them.
    private var count: UInt8 = 0
    private var long: [UInt8]?

    /// How many bytes of text are held without an allocation.
    public static let inlineCapacity = 32

    /// The id whose JSON text is `text` (as the reply writes it: no check is made).
    public init(text: UnsafeBufferPointer<UInt8>) {
        guard text.count <= RequestID.inlineCapacity else {
            long = Array(text)
            return
        }
        count = UInt8(text.count)
        if let p = text.baseAddress {
            withUnsafeMutableBytes(of: &words) { $0.baseAddress!.copyMemory(from: p, byteCount: text.count) }
        }
    }

    /// An id of `count` (at most `inlineCapacity`) bytes, held in `words`.
    @inline(__always)
    fileprivate init(words: (UInt64, UInt64, UInt64, UInt64), count: Int) {
        self.words = words
        self.count = UInt8(count)
    }

    /// The id as a request spells it in JSON (tests and tools): a number keeps its literal,
    /// a string is quoted as replies quote it; other kinds are written as `JSON.write` does.
    public init(_ json: JSON) {
        var text: [UInt8] = []
        switch json {
        case .number(let literal): text = Array(literal.utf8)
        case .string(let s): text = ByteBuffer.collect { $0.string(s) }
        default: json.write(into: &text)
        }
        self = text.withUnsafeBufferPointer { RequestID(text: $0) }
    }

    /// No id (a notification's `Request.storedID`): never echoed, never compared.
    static var absent: RequestID {
        @inline(__always) get {
            var r = RequestID(text: UnsafeBufferPointer(start: nil, count: 0))
            r.count = 0xFF
            return r
        }
    }
    var isAbsent: Bool { @inline(__always) get { count == 0xFF } }

    /// The id of a reply to a line whose id is not known (`null`).
    public static let null = RequestID(.null)
    /// A number id from its JSON literal (`"7"`, `"1e2"`).
    public static func number(_ literal: String) -> RequestID { RequestID(.number(literal)) }
    /// A whole-number id.
    public static func int<I: BinaryInteger>(_ value: I) -> RequestID { RequestID(.int(value)) }
    /// A string id.
    public static func string(_ s: String) -> RequestID { RequestID(.string(s)) }

    /// Calls `body` with the id's JSON text.
    @inline(__always)
    public func withText<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        if let long { return try long.withUnsafeBufferPointer(body) }
        var w = words
        let n = Int(count)
        return try withUnsafeBytes(of: &w) { try body(UnsafeBufferPointer(start: $0.baseAddress!.assumingMemoryBound(to: UInt8.self), count: n)) }
    }

    /// The id's JSON text.
    public var text: [UInt8] { withText { Array($0) } }

    /// The id as a `JSON` value (tests and tools).
    public var json: JSON { try! JSON.parse(text) }

    public var description: String { String(decoding: text, as: UTF8.self) }

    public static func == (a: RequestID, b: RequestID) -> Bool {
        a.withText { x in b.withText { y in x.elementsEqual(y) } }
    }
}

extension RequestID {
    /// The id of a parsed request's `id` member, when it is a number or a string: a number's
    /// literal and a string that needs no escape are taken as the line spells them (the bytes
    /// an encoder would write); a string with escapes is decoded and written again.
    @inline(__always)
    init?(_ v: JSONValue) {
        switch v.kind {
        case .number:
            self.init(inDocument: v.numberBytes!)
        case .string:
            let inner = v.inner
            var plain = true
            for b in inner where JSON.needsEscape(b) { plain = false; break }
            if plain { self.init(inDocument: v.raw) } else { self = .string(v.stringValue!) }
        case .escapedString:
            self = .string(v.stringValue!)
        default:
            return nil
        }
    }

    /// `init(text:)` for text in a document, which eight readable bytes follow (the zero
    /// bytes after a document's text): the inline words loaded from it directly.
    @inline(__always)
    init(inDocument text: UnsafeBufferPointer<UInt8>) {
        let n = text.count
        guard n <= RequestID.inlineCapacity, let p = text.baseAddress else { self.init(text: text); return }
        @inline(__always) func word(_ k: Int) -> UInt64 {
            if n <= k { return 0 }
            let w = UnsafeRawPointer(p + k).loadUnaligned(as: UInt64.self)
            return n - k >= 8 ? w : w & ((1 << (8 * UInt64(n - k))) &- 1)
        }
        self.init(words: (word(0), word(8), word(16), word(24)), count: n)
    }
}

extension RequestID {
    /// Room `writeUnchecked(into:)` needs in a buffer.
    var room: Int { @inline(__always) get { long?.count ?? RequestID.inlineCapacity } }

    /// Writes the id's text in room already reserved (`room`): an inline id as its four
    /// words whatever its length, with no copy to the stack first and no branch on the
    /// length (the bytes past the text are room, written over by what follows).
    @inline(__always)
    func writeUnchecked(into o: inout ByteBuffer) {
        assert(!isAbsent)
        if let long { return long.withUnsafeBufferPointer { o.uncheckedAppend($0) } }
        o.uncheckedWords(words, count: Int(count))
    }
}
