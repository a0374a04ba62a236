import Testing
@testable import TabBarCore

@Suite struct JSONTests {
    @Test func roundTripsValues() throws {
        let text = #"{"a":[1,-2.5,3e2,true,false,null],"b":"x\"y\\z\n\u0001é","c":{}}"#
        let v = try JSON.parse(text)
        #expect(v["a"] == .array([.number("1"), .number("-2.5"), .number("3e2"), .bool(true), .bool(false), .null]))
        #expect(v["b"]?.stringValue == "x\"y\\z\n\u{1}é")
        let again = try JSON.parse(v.text)
        #expect(again == v)
    }

    @Test func keepsLargeIdsExactly() throws {
        let v = try JSON.parse(#"{"id":12345678901234567890123}"#)
        #expect(v.text == #"{"id":12345678901234567890123}"#)
    }

    @Test func integersAreExact() throws {
        #expect(JSON.number("3").intValue == 3)
        #expect(JSON.number("3.0").intValue == nil)  // the number rule: whole numbers are written as such
        #expect(JSON.number("3e0").intValue == nil)
        #expect(JSON.number("3.5").intValue == nil)
        #expect(JSON.number("1e300").intValue == nil)
        #expect(JSON.number("-0").intValue == 0)
    }

    @Test(arguments: [
        ("", "empty input"),
        ("{", "unexpected end of input"),
        (#"{"a":1,"a":2}"#, "duplicate key"),
        ("NaN", "NaN and Infinity"),
        ("[1,]", "unexpected character"),
        ("01", "leading zeros"),
        ("\"a\u{1}\"", "control character"),
        (#""\ud800""#, "lone surrogate"),
        ("{} x", "unexpected text"),
        (#""\x""#, "invalid escape"),
    ])
    func rejectsBadText(_ input: String, _ reason: String) {
        #expect(throws: JSONParseError.self) { try JSON.parse(input) }
        do { _ = try JSON.parse(input) } catch { #expect(error.reason.contains(reason), "\(error.reason)") }
    }

    @Test func rejectsInvalidUTF8() {
        let bytes: [UInt8] = [0x22, 0xC3, 0x28, 0x22]
        #expect(throws: JSONParseError.self) { try JSON.parse(bytes) }
    }

    @Test func limitsNesting() throws {
        let deep = String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)
        do {
            _ = try JSON.parse(deep)
            Issue.record("10,000 levels were accepted")
        } catch {
            #expect(error.reason.contains("nesting deeper than 64"))
        }
        let ok = String(repeating: "[", count: 64) + String(repeating: "]", count: 64)
        _ = try JSON.parse(ok)
    }

    @Test func decodesSurrogatePairs() throws {
        #expect(try JSON.parse(#""\ud83d\ude00""#).stringValue == "😀")
    }

    @Test func escapesControlCharactersOnOutput() {
        #expect(JSON.string("a\u{0}b\u{7f}").text == #""a\u0000b\u007f""#)
    }

    @Test func writesRunsBetweenEscapesInLongAndShortStrings() throws {
        // Short (inline) and long (heap) strings, escapes at the start, middle and end, non-ASCII kept.
        for s in ["\"", "x\\", "\ty", "héllo \"wörld\"\n", String(repeating: "abc\u{1}é", count: 40) + "\"", "plain"] {
            let text = JSON.string(s).text
            #expect(try JSON.parse(text).stringValue == s)
        }
        #expect(JSON.string("tab\there \"q\" \\ end\r\n").text == #""tab\there \"q\" \\ end\r\n""#)
    }
}
