import Testing
@testable import TabBarCore

/// The byte buffer as a connection's queue (Transport.swift: replies encoded into it,
/// sent bytes dropped from its front, events pruned from its end) and the array helpers
/// that move a step's outputs instead of copying them.
@Suite struct ByteBufferTests {
    func text(_ b: borrowing ByteBuffer) -> String { String(decoding: b.bytes, as: UTF8.self) }

    @Test func aQueueDropsFromItsFrontAndItsEnd() {
        var b = ByteBuffer(capacity: 4)
        b.append(Array("line one\nline two\n".utf8))
        #expect(b[0] == UInt8(ascii: "l") && b[8] == 0x0A)
        b.removeFirst(9)
        #expect(text(b) == "line two\n")
        b.truncate(to: 4)
        #expect(text(b) == "line")
        b.put(" three\n")
        #expect(text(b) == "line three\n")
        b.removeFirst(b.count)
        #expect(b.bytes.isEmpty)
    }

    /// Appends of up to 16 and of up to 32 bytes take paths of their own (overlapping loads and stores):
    /// every length, after every offset, across a growth, byte for byte.
    @Test func shortAndLongAppendsCopyExactly() {
        for start in 0..<9 {
            var b = ByteBuffer(capacity: 4)
            var want: [UInt8] = Array(repeating: 0x2E, count: start)
            b.append(want)
            for n in 0...40 {
                let piece = (0..<n).map { UInt8(truncatingIfNeeded: 0x41 + n + $0) }
                b.append(piece)
                want += piece
                b.append(UInt8(ascii: "|"))
                want.append(UInt8(ascii: "|"))
            }
            #expect(b.array == want, "after \(start) bytes")
        }
    }

    /// Whole numbers of every digit count (written in blocks of eight digits, the first
    /// without its leading zeros), after text already written.
    @Test func wholeNumbersOfEveryLength() {
        var values: [UInt64] = [0, 1, 9, UInt64.max, UInt64.max - 1]
        var p: UInt64 = 10
        for _ in 1...19 { values += [p - 1, p, p + 1]; p = p &* 10 }
        for v in values {
            let b = ByteBuffer.collect { $0.put("x"); $0.uint(v); $0.put("y") }
            #expect(String(decoding: b, as: UTF8.self) == "x\(v)y")
        }
        #expect(String(decoding: ByteBuffer.collect { $0.int(-42); $0.int(Int.min) }, as: UTF8.self) == "-42\(Int.min)")
    }

    @Test func aReplyIsEncodedAfterWhatIsQueued() {
        var b = ByteBuffer(capacity: 8)
        b.append(Array("{\"event\":1}\n".utf8))
        let start = b.count
        Wire.reply(id: .string("a"), .success(.seq(7)), into: &b)
        #expect(String(decoding: b.bytes[start...], as: UTF8.self) == #"{"jsonrpc":"2.0","id":"a","result":{"seq":7}}"# + "\n")
        #expect(text(b).hasPrefix("{\"event\":1}\n{"))
    }
}
