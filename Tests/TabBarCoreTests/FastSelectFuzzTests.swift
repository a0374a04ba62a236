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

    /// An id of more than 64 digits is a parse error on the slow path (numbers are at most
    /// 64 characters); the fast path selected the tab and echoed it.
    @Test func anIDLongerThanANumberMayBeIsLeftToTheSlowPath() {
        let long = #"{"jsonrpc":"2.0","id":\#(String(repeating: "8", count: 65)),"method":"tab.select","params":{"tab":"chat"}}"#
        #expect(scan(long) == nil)
        if case .success = slow(long) { Issue.record("the slow path accepts a 65-digit id") }
        let ok = #"{"jsonrpc":"2.0","id":-\#(String(repeating: "8", count: 63)),"method":"tab.select","params":{"tab":"chat"}}"#
        #expect(scan(ok) != nil)
        if case .failure = slow(ok) { Issue.record("the slow path rejects a 64-character id") }
    }
}
