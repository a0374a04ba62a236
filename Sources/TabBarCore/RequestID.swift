/// A request's `id` as its reply echoes it: the id's JSON text — a number's literal exactly
/// as the request spelt it (`1e2`, `-0`, `12345678901234567890`), a string quoted and escaped
/// as every encoder writes strings (`ByteBuffer.string`), `null` for the reply to a line whose
/// id is unknown.
public struct RequestID: Hashable, Sendable, CustomStringConvertible {
    /// The id's text: a whole number written as `String(Int64)` writes it (most ids) is held
    /// as the number; any other id as its JSON text. (One spelling, one storage: equal texts
    /// are equal values.)
    enum Storage: Hashable, Sendable {
        case integer(Int64)
        case text(String)
    }
    let storage: Storage

    /// The id's JSON text (never empty).
    public var jsonText: String {
        switch storage {
        case .integer(let n): String(n)
        case .text(let t): t
        }
    }

    /// The id whose JSON text is `text` (as the reply writes it: no check is made).
    public init(text: UnsafeBufferPointer<UInt8>) {
        storage = RequestID.integer(text).map { .integer($0) } ?? .text(String(decoding: text, as: UTF8.self))
    }

    /// The number `text` spells when it is written as `String(Int64)` would write it: digits
    /// with no leading zero, at most 18 of them, and a `-` before any but 0.
    private static func integer(_ text: UnsafeBufferPointer<UInt8>) -> Int64? {
        let negative = text.first == UInt8(ascii: "-")
        let digits = negative ? UnsafeBufferPointer(rebasing: text.dropFirst()) : text
        guard (1...18).contains(digits.count), digits.allSatisfy({ (0x30...0x39).contains($0) }),
              digits.count == 1 || digits[0] != 0x30, !(negative && digits.count == 1 && digits[0] == 0x30) else { return nil }
        var n: Int64 = 0
        for d in digits { n = n * 10 + Int64(d - 0x30) }
        return negative ? -n : n
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

    /// The id of a reply to a line whose id is not known (`null`).
    public static let null = RequestID(.null)
    /// A number id from its JSON literal (`"7"`, `"1e2"`).
    public static func number(_ literal: String) -> RequestID { RequestID(.number(literal)) }
    /// A whole-number id.
    public static func int<I: BinaryInteger>(_ value: I) -> RequestID { RequestID(.int(value)) }
    /// A string id.
    public static func string(_ s: String) -> RequestID { RequestID(.string(s)) }

    /// The id's JSON text.
    public var text: [UInt8] { Array(jsonText.utf8) }

    /// The id as a `JSON` value (tests and tools).
    public var json: JSON { try! JSON.parse(text) }

    public var description: String { jsonText }
}

extension RequestID {
    /// The id of a parsed request's `id` member, when it is a number or a string: a number's
    /// literal and a string that needs no escape are taken as the line spells them (the bytes
    /// an encoder would write); a string with escapes is decoded and written again.
    init?(_ v: JSONValue) {
        switch v.kind {
        case .number:
            self.init(text: v.numberBytes!)
        case .string:
            if v.inner.contains(where: JSON.needsEscape) { self = .string(v.stringValue!) } else { self.init(text: v.raw) }
        case .escapedString:
            self = .string(v.stringValue!)
        default:
            return nil
        }
    }
}
