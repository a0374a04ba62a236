import Testing
@testable import TabBarCore

/// A request's id comes back in its reply exactly as an encoder writes it: a number's
/// literal as the client spelt it (docs/PROTOCOL.md, "Numbers": ids are echoed, never
/// re-read), a string quoted as every string of the protocol is.
@Suite struct RequestIDTests {
    /// The reply line's id, as bytes, for a request line.
    func echoed(_ line: String) throws -> String {
        let request = try decode(line).get()
        let id = try #require(request.id)
        var out: [UInt8] = []
        Wire.reply(id: id, .success(.empty), into: &out)
        let text = String(decoding: out, as: UTF8.self)
        let head = #"{"jsonrpc":"2.0","id":"#, tail = #","result":{}}"# + "\n"
        try #require(text.hasPrefix(head) && text.hasSuffix(tail), "\(text)")
        return String(text.dropFirst(head.count).dropLast(tail.count))
    }

    @Test(arguments: [
        ("7", "7"), ("-0", "-0"), ("1e2", "1e2"), ("1E+2", "1E+2"), ("0.50", "0.50"), ("-12.5e-3", "-12.5e-3"),
        ("12345678901234567890", "12345678901234567890"),
        ("123456789012345678901234567890123456789012345678901234567890", "123456789012345678901234567890123456789012345678901234567890"),
        (#""a""#, #""a""#), (#""""#, #""""#), (#""héllo ✓""#, #""héllo ✓""#),
        // Escapes are read and written again as the encoder writes them.
        (#""\u0041\/""#, #""A/""#), (#""tab\tquote\"back\\""#, #""tab\tquote\"back\\""#),
        (#""\u007f\u0001""#, #""\u007f\u0001""#), (#""\n\r""#, #""\n\r""#),
        // DEL may stand unescaped in a JSON string; replies escape it.
        ("\"a\u{7F}b\"", #""a\u007fb""#),
        // Longer than the inline room.
        (#""0123456789abcdef0123456789abcdef-and-more""#, #""0123456789abcdef0123456789abcdef-and-more""#),
    ])
    func everyKindIsEchoed(_ id: String, _ expected: String) throws {
        #expect(try echoed(#"{"jsonrpc":"2.0","id":\#(id),"method":"ping"}"#) == expected)
    }

    @Test func theTextIsTheSameHoweverItIsMade() {
        #expect(RequestID.int(42) == RequestID.number("42"))
        #expect(RequestID.string("a\"b") .description == #""a\"b""#)
        #expect(RequestID.null.description == "null")
        #expect(RequestID.string(String(repeating: "x", count: 100)).json == .string(String(repeating: "x", count: 100)))
        #expect(RequestID.number("1e2") != RequestID.number("100"))
        #expect(RequestID.string("7") != RequestID.int(7))
    }

    @Test func aRefusalEchoesTheIdToo() {
        guard case .failure(let r) = decode(#"{"id":1e2,"method":5}"#) else { Issue.record("accepted"); return }
        var out: [UInt8] = []
        Wire.reply(id: r.id, .failure(r.error), into: &out)
        #expect(String(decoding: out, as: UTF8.self).hasPrefix(#"{"jsonrpc":"2.0","id":1e2,"error":"#))
    }
}
