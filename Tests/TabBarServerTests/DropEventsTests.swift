@preconcurrency import Glibc
import Testing
import TabBarCore
@testable import TabBarServer

/// What pruning a slow subscriber keeps (`Connection.dropEvents`), however many replies are queued.
@Suite struct DropEventsTests {
    /// Events and replies interleaved, many replies, the first event partly written: pruning keeps that line whole and every reply, in order.
    @Test func droppingEventsKeepsEveryReplyInOrder() {
        var sv: [Int32] = [0, 0]
        socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &sv)
        defer { close(sv[0]); close(sv[1]) }
        let c = Connection(fd: sv[0], id: 1, maxLine: 65536)
        let event = Array(#"{"jsonrpc":"2.0","method":"tab.selected","params":{"seq":1}}"#.utf8) + [0x0A]
        c.out.append(event)
        for k in 0..<50 {
            c.queueReply(id: .int(k), .success(.empty))
            c.out.append(event)
        }
        c.sent = 10  // (the first event is partly written)
        c.dropEvents()
        let text = String(decoding: c.out.bytes[c.sent...], as: UTF8.self)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        #expect(lines.count == 51)
        #expect(lines.first.map { String($0) } == String(decoding: event[10..<(event.count - 1)], as: UTF8.self))
        let ids = lines.dropFirst().map { (try? JSON.parse(String($0)))?["id"] }
        #expect(ids == (0..<50).map { .int($0) })
        // Pruned again (nothing more to drop), the replies stay.
        c.dropEvents()
        #expect(String(decoding: c.out.bytes[c.sent...], as: UTF8.self) == text)
    }
}
