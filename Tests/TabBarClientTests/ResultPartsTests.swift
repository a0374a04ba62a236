import Testing
@testable import TabBarClient

/// The reader's short cut for a result the daemon wrote in its own form: the id and the
/// result's bytes, and nil for every other line (which is then parsed whole).
@Suite struct ResultPartsTests {
    func parts(_ line: String) -> (id: Int, result: String)? {
        Array(line.utf8).withUnsafeBufferPointer { b in
            Wire.resultParts(b).map { ($0.id, String(decoding: $0.result, as: UTF8.self)) }
        }
    }

    @Test func aResultInTheDaemonsForm() {
        let p = parts(#"{"jsonrpc":"2.0","id":42,"result":{"seq":1,"selected":"b"}}"#)
        #expect(p?.id == 42)
        #expect(p?.result == #"{"seq":1,"selected":"b"}"#)
        #expect(parts(#"{"jsonrpc":"2.0","id":0,"result":true}"#)?.result == "true")
    }

    @Test func anyOtherLineIsParsedWhole() {
        for line in [
            #"{"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"no"}}"#,
            #"{"jsonrpc":"2.0","method":"tab.selected","params":{}}"#,
            #"{"jsonrpc":"2.0","id":"7","result":1}"#,       // (a string id: not this client's)
            #"{"jsonrpc":"2.0","id":-7,"result":1}"#,
            #"{"jsonrpc":"2.0","id":07,"result":1}"#,        // (not JSON)
            #"{"jsonrpc":"2.0","id":null,"result":1}"#,
            #"{"jsonrpc":"2.0","id":1234567890123456789012,"result":1}"#,
            #"{"id":7,"jsonrpc":"2.0","result":1}"#,
            #"{"jsonrpc":"2.0","id":7,"result":}"#,
            #"{"jsonrpc":"2.0","id":7,"result":1} "#,
            #"{"jsonrpc":"2.0","id":7,"#,
        ] {
            #expect(parts(line) == nil, "\(line)")
        }
    }
}
