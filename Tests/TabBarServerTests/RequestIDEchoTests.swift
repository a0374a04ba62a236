import Testing
import TabBarCore
@testable import TabBarServer

/// Every reply the server queues carries its request's id exactly as the client wrote it
/// (a number's literal, never re-read: docs/PROTOCOL.md, "Numbers"), or as the encoder
/// quotes a string — for a change staged in the group commit, for a method the server
/// answers itself, and for a refusal.
@Suite(.serialized) struct RequestIDEchoTests {
    static let ids: [(sent: String, echoed: String)] = [
        ("7", "7"), ("-0", "-0"), ("1e2", "1e2"), ("0.50", "0.50"),
        ("12345678901234567890", "12345678901234567890"),
        (String(repeating: "9", count: 60), String(repeating: "9", count: 60)),
        (#""a""#, #""a""#), (#""\u0041\/""#, #""A/""#), (#""q\"b\\""#, #""q\"b\\""#),
        (#""0123456789abcdef0123456789abcdef-longer-than-inline""#, #""0123456789abcdef0123456789abcdef-longer-than-inline""#),
    ]

    @Test(arguments: [
        #""method":"tab.select","params":{"index":1}"#,  // a change (staged, then committed)
        #""method":"ping""#,  // the server's own
        #""method":"tab.select","params":{"index":99}"#,  // a refusal
        #""method":"no.such.method""#,  // not found
    ])
    func theIdIsEchoedByteForByte(_ rest: String) throws {
        let rig = try LineRig()
        for (sent, echoed) in Self.ids {
            let reply = rig.check(#"{"jsonrpc":"2.0","id":\#(sent),\#(rest)}"#)
            #expect(reply.hasPrefix(#"{"jsonrpc":"2.0","id":\#(echoed),""#), "\(sent) → \(reply)")
            #expect(reply.filter { $0 == "\n" }.count == 1, "\(reply)")
        }
    }
}
