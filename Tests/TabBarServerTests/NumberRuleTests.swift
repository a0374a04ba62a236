import Testing
import TabBarCore
@testable import TabBarServer

/// The number rule (docs/PROTOCOL.md, "Numbers"):
/// a whole-number field takes a number written as one — no fraction, no exponent —
/// within its range (by default ±(2^53−1)); anything else is refused, never rounded.
/// Any valid number literal parses, whatever its length (within max_line).
@Suite(.serialized) struct NumberRuleTests {
    static let safe = "between -9007199254740991 and 9007199254740991"

    static func reply(_ p: LineRig, _ line: String) -> JSON? {
        let text = p.check(line)  // the reply line
        return try? JSON.parse(text.trimmingSuffixNewline)
    }

    @Test(arguments: [
        (#""index":1"#, nil),
        (#""index":1.0"#, #"Field "index" must be a whole number written without a fraction or exponent, not 1.0."#),
        (#""index":1e0"#, #"Field "index" must be a whole number written without a fraction or exponent, not 1e0."#),
        (#""index":9007199254740993.0"#, #"Field "index" must be a whole number written without a fraction or exponent, not 9007199254740993.0."#),
        (#""index":9007199254740992"#, "Field \"index\" must be \(safe), not 9007199254740992."),
        (#""index":-9007199254740992"#, "Field \"index\" must be \(safe), not -9007199254740992."),
        ("\"index\":\(String(repeating: "9", count: 65))", "Field \"index\" must be \(safe), not \(String(repeating: "9", count: 37))...."),
        (#""tab":"chat","if_seq":1e18"#, #"Field "if_seq" must be a whole number written without a fraction or exponent, not 1e18."#),
        (#""tab":"chat","if_seq":1000000000000000000"#, "Field \"if_seq\" must be \(safe), not 1000000000000000000."),
    ])
    func selectIndexAndIfSeq(_ params: String, _ message: String?) throws {
        let p = try LineRig()
        let r = try #require(Self.reply(p, #"{"jsonrpc":"2.0","id":1,"method":"tab.select","params":{\#(params)}}"#))
        if let message {
            #expect(r["error"]?["message"] == .string(message), "\(params)")
            #expect(r["error"]?["data"]?["kind"] == .string("invalid_params"))
        } else {
            #expect(r["result"]?["selected"] == .string("nearby"), "\(params)")
        }
    }

    @Test func badgeCountsAgreeWithTheirMessage() throws {
        let p = try LineRig()
        func count(_ n: String) -> JSON? { Self.reply(p, #"{"jsonrpc":"2.0","id":1,"method":"badge.set","params":{"tab":"chat","count":\#(n)}}"#) }
        #expect(count("9007199254740991")?["result"]?["badge"]?["value"] == .int(9_007_199_254_740_991))
        for n in ["9007199254740992", "9223372036854775807", "1000000000000000000", "100000000000000000000"] {
            #expect(count(n)?["error"]?["message"] == .string("Field \"count\" must be \(Self.safe), not \(n)."), "\(n)")
        }
        for n in ["1e18", "3.0", "2.5", "1E2"] {
            #expect(count(n)?["error"]?["message"] == .string("Field \"count\" must be a whole number written without a fraction or exponent, not \(n)."), "\(n)")
        }
    }

    /// JSONTestSuite y_number_double_close_to_zero: a valid literal longer than 64 characters.
    @Test func longLiteralsParse() throws {
        let p = try LineRig()
        let tiny = "0.000000000000000000000000000000000000000000000000000000000000000000000000000001"
        #expect(Self.reply(p, #"{"jsonrpc":"2.0","id":1,"method":"feedback.set","params":{"volume":\#(tiny)}}"#)?["result"] != nil)
        let longID = String(repeating: "7", count: 500)
        let r = Self.reply(p, #"{"jsonrpc":"2.0","id":\#(longID),"method":"tab.select","params":{"index":3}}"#)
        #expect(r?["id"] == .number(longID))
        #expect(r?["result"]?["selected"] == .string("chat"))
        #expect(Self.reply(p, #"{"jsonrpc":"2.0","id":\#(longID).5e-3,"method":"ping"}"#)?["id"] == .number(longID + ".5e-3"))
    }

    @Test func aNullIDIsAnInvalidRequest() throws {
        let p = try LineRig()
        let r = try #require(Self.reply(p, #"{"jsonrpc":"2.0","id":null,"method":"tab.select","params":{"index":1}}"#))
        #expect(r["id"] == .null)
        #expect(r["error"]?["data"]?["kind"] == .string("invalid_request"))
        #expect(r["error"]?["message"] == .string(#""id" must be a number or a string, not null; leave "id" out for a notification."#))
        #expect(p.server.reducer.state.selected == "home")
    }
}

extension String {
    var trimmingSuffixNewline: String { hasSuffix("\n") ? String(dropLast()) : self }
}
