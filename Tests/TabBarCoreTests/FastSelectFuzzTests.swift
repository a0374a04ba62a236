import Testing
@testable import TabBarCore

/// Lines the fuzzer found where the byte-level `tab.select` path and the slow path disagreed.
@Suite struct FastSelectFuzzTests {
    func scan(_ s: String) -> FastSelect? {
        Array(s.utf8).withUnsafeBufferPointer { FastSelect.scan($0, maxIDLength: 64) }
    }

    func slow(_ s: String) -> Result<Request, Envelope.Rejection> {
        Array(s.utf8).withUnsafeBufferPointer { Envelope.decode($0) }
    }

    /// A long id (any valid number literal within max_line) is echoed by both paths alike.
    @Test func aLongIDIsAcceptedByBothPaths() {
        let long = #"{"jsonrpc":"2.0","id":\#(String(repeating: "8", count: 400)),"method":"tab.select","params":{"tab":"chat"}}"#
        #expect(scan(long) != nil)
        guard case .success(let r) = slow(long) else { Issue.record("the slow path rejects a 400-digit id"); return }
        #expect(r.id == .number(String(repeating: "8", count: 400)))
    }
}
