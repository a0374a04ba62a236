import Testing
@testable import TabBarCore

/// The tape parser (`JSONDocument.Parser`): one loop with the open containers linked through
/// the tape, the text followed by zero bytes. What its shape could get wrong: the tape's
/// links and counts across nested containers, the depth limit, the end of the text told
/// from a zero byte in it, a document reused for lines of other sizes.
@Suite struct JSONTapeTests {
    func tokens(_ doc: JSONDocument) -> [(JSONDocument.Token.Kind, Int32, Int32, Int32, Int32)] {
        (0..<doc.tokenCount).map { let t = doc.tokens[$0]; return (t.kind, t.start, t.end, t.next, t.count) }
    }

    func error(_ text: [UInt8], maxDepth: Int = JSON.defaultMaxDepth) -> String? {
        do { _ = try JSONDocument(parsing: text, maxDepth: maxDepth); return nil } catch { return error.description }
    }

    func error(_ text: String, maxDepth: Int = JSON.defaultMaxDepth) -> String? { error(Array(text.utf8), maxDepth: maxDepth) }

    @Test func nestedContainersGetTheirEndsNextsAndCounts() throws {
        //             0         1         2
        //             012345678901234567890123456789
        let text = #"{"a":[1,{"b":null},[]],"c":{}}"#
        let doc = try JSONDocument(parsing: Array(text.utf8))
        let t = tokens(doc)
        // (kind, start, end, next, count)
        let expected: [(JSONDocument.Token.Kind, Int32, Int32, Int32, Int32)] = [
            (.object, 0, 30, 10, 2),   // {"a":…,"c":{}}
            (.string, 2, 3, 2, 0),     // "a"
            (.array, 5, 22, 8, 3),     // [1,{"b":null},[]]
            (.number, 6, 7, 4, 0),     // 1
            (.object, 8, 18, 7, 1),    // {"b":null}
            (.string, 10, 11, 6, 0),   // "b"
            (.null, 13, 17, 7, 0),     // null
            (.array, 19, 21, 8, 0),    // []
            (.string, 24, 25, 9, 0),   // "c"
            (.object, 27, 29, 10, 0),  // {}
        ]
        #expect(t.count == expected.count)
        for (k, e) in expected.enumerated() where k < t.count {
            #expect(t[k].0 == e.0 && t[k].1 == e.1 && t[k].2 == e.2 && t[k].3 == e.3 && t[k].4 == e.4, "token \(k): \(t[k]) is not \(e)")
        }
        #expect(doc.root["a"]?.elements.count == 3)
        #expect(doc.root["a"]?.elements[1]["b"]?.isNull == true)
        #expect(doc.root["c"]?.kind == .object)
    }

    @Test func depthIsCountedDownWhenContainersClose() throws {
        // Siblings at the limit: each closes before the next opens.
        _ = try JSONDocument(parsing: Array(#"[[[]],{"a":[]},[[]],[{}]]"#.utf8), maxDepth: 3)
        #expect(error("[[[[]]]]", maxDepth: 3) == "nesting deeper than 3 levels at byte 3")
        #expect(error(#"{"a":{"b":{"c":{}}}}"#, maxDepth: 3) == "nesting deeper than 3 levels at byte 15")
        #expect(error("[]", maxDepth: 0) == "nesting deeper than 0 levels at byte 0")
        _ = try JSONDocument(parsing: Array("1".utf8), maxDepth: 0)
    }

    @Test func theDefaultLimitHoldsForObjectsAndArraysMixed() throws {
        func mixed(_ levels: Int) -> String {
            (0..<levels).map { $0 % 2 == 0 ? #"{"k":"# : "[" }.joined() + "0" + (0..<levels).reversed().map { $0 % 2 == 0 ? "}" : "]" }.joined()
        }
        let doc = try JSONDocument(parsing: Array(mixed(64).utf8))
        #expect(doc.tokenCount == 32 * 2 + 32 + 1)  // 32 objects with a key each, 32 arrays, the 0
        #expect(doc.tokens[0].next == Int32(doc.tokenCount))
        let deep = Array(mixed(65).utf8)
        let opening = deep.indices.filter { deep[$0] == 0x7B || deep[$0] == 0x5B }
        #expect(error(deep) == "nesting deeper than 64 levels at byte \(opening[64])")
        #expect(error(String(repeating: "[", count: 100_000)) == "nesting deeper than 64 levels at byte 64")
    }

    @Test func theEndOfTheTextIsToldFromAZeroByteInIt() {
        // Each context, once cut at the end of the text and once with a zero byte there.
        let cases: [(String, [UInt8], String)] = [
            ("", [], "empty input at byte 0"),
            ("[", [0x5B, 0x00, 0x5D], "unexpected character '\\x0' at byte 1"),
            ("[", [0x5B], "unexpected end of input at byte 1"),
            ("[1", [0x5B, 0x31, 0x00, 0x5D], "expected ',' or ']' in an array at byte 2"),
            ("[1", [0x5B, 0x31], "unexpected end of input in an array at byte 2"),
            ("{", [0x7B, 0x00, 0x7D], "expected a quoted key at byte 1"),
            ("{", [0x7B], "unexpected end of input in an object at byte 1"),
            (#"{"a":1,"#, Array(#"{"a":1,"#.utf8), "unexpected end of input in an object at byte 7"),
            (#"{"a""#, Array(#"{"a""#.utf8), "expected ':' after a key at byte 4"),
            (#"{"a":"#, Array(#"{"a":"#.utf8), "unexpected end of input at byte 5"),
            (#"{"a":1"#, Array(#"{"a":1"#.utf8) + [0x00, 0x7D], "expected ',' or '}' in an object at byte 6"),
            (#"{"a":1"#, Array(#"{"a":1"#.utf8), "unexpected end of input in an object at byte 6"),
            (#""a"#, [0x22, 0x61, 0x00, 0x22], "unescaped control character in a string at byte 2"),
            (#""a"#, [0x22, 0x61], "unterminated string at byte 2"),
            (#""\"#, [0x22, 0x5C, 0x00, 0x22], #"invalid escape '\\x0' at byte 3"#),
            (#""\"#, [0x22, 0x5C], "unterminated string at byte 2"),
            (#""\u12"#, Array(#""\u12"#.utf8), "unexpected end of input in a \\u escape at byte 3"),
            (#""\ud800"#, Array(#""\ud800"#.utf8), "lone surrogate in a \\u escape at byte 7"),
            ("tru", Array("tru".utf8), "unexpected end of input at byte 0"),
            ("tru", Array("tru".utf8) + [0x00], "invalid literal at byte 0"),
            ("-", Array("-".utf8), "invalid number at byte 1"),
            ("1.", Array("1.".utf8), "invalid number: digits expected after '.' at byte 2"),
            ("1e+", Array("1e+".utf8), "invalid number: digits expected in the exponent at byte 3"),
            ("1", Array("1".utf8) + [0x00], "unexpected text after the JSON value at byte 1"),
        ]
        for (name, text, expected) in cases {
            #expect(error(text) == expected, "\(name) \(text)")
        }
    }

    @Test func aReusedDocumentReadsNothingOfAnEarlierLongerLine() throws {
        let doc = JSONDocument()
        let long = "[" + (0..<5_000).map { #"{"n":\#($0),"s":"\#(String(repeating: "x", count: $0 % 40))"}"# }.joined(separator: ",") + "]"
        try doc.parse(Array(long.utf8))
        #expect(doc.tokenCount == 1 + 5_000 * 5)
        #expect(doc.root.elements.last?["n"]?.intValue == 4_999)
        // Shorter lines after it: their end is the end, not the old line's bytes after it.
        #expect(throws: JSONParseError(offset: 4, reason: "unterminated string")) { try doc.parse(Array(#"["ab"#.utf8)) }
        #expect(doc.tokenCount == 0)
        try doc.parse(Array("[123456789]".utf8))
        #expect(throws: JSONParseError(offset: 2, reason: "unexpected end of input in an array")) { try doc.parse(Array("[1".utf8)) }
        #expect(throws: JSONParseError(offset: 5, reason: "unexpected end of input in an array")) { try doc.parse(Array("[1   ".utf8)) }
        try doc.parse(Array(#"{"id":7}"#.utf8))
        #expect(doc.tokenCount == 3)
        #expect(doc.root["id"]?.intValue == 7)
        // And a longer one again, then a short one.
        try doc.parse(Array(long.utf8))
        #expect(doc.root.elements.count == 5_000)
        #expect(doc.root.elements[1234]["s"]?.stringValue == String(repeating: "x", count: 1234 % 40))
        try doc.parse(Array("[]".utf8))
        #expect(doc.root.elements.count == 0)
    }

    @Test func duplicateKeysAreFoundPastNestedValuesAndThroughEscapes() {
        #expect(error(#"{"ab":1,"ba":2,"abc":3}"#) == nil)
        #expect(error(#"{"a":{"a":1},"b":{"a":2,"b":[{"a":3}]}}"#) == nil)
        #expect(error(#"{"a":{"x":[1,2,{"y":3}]},"a":2}"#) == #"duplicate key "a" at byte 25"#)
        #expect(error(#"{"":1,"":2}"#) == #"duplicate key "" at byte 6"#)
        #expect(error(#"{"a":1,"\u0061":2}"#) == #"duplicate key "a" at byte 7"#)
        #expect(error(#"{"\u0061":1,"a":2}"#) == #"duplicate key "a" at byte 12"#)
        #expect(error(#"{"x\n":1,"y":2,"x\u000a":3}"#) == "duplicate key \"x\n\" at byte 15")
        #expect(error(#"{"x\n":1,"x\\n":2}"#) == nil)
    }
}
