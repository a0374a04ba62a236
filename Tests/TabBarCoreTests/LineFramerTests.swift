import Testing
@testable import TabBarCore

enum Framed: Equatable {
    case line(String)
    case tooLong
}

func frame(_ chunks: [[UInt8]], maxLine: Int = 65536, finish: Bool = false) -> [Framed] {
    var f = LineFramer(maxLine: maxLine)
    var out: [Framed] = []
    let sink: (LineFramer.Line) -> Void = { unit in
        switch unit {
        case .line(let l): out.append(.line(String(decoding: l, as: UTF8.self)))
        case .tooLong: out.append(.tooLong)
        }
    }
    for c in chunks { f.feed(c, sink) }
    if finish { f.finish(sink) }
    return out
}

@Suite struct LineFramerTests {
    let input = Array("{\"id\":1}\n\r\n{\"id\":2}\r\n\n   \n{\"x\":\"é\"}\n".utf8)
    let expected: [Framed] = [.line("{\"id\":1}"), .line("{\"id\":2}"), .line("{\"x\":\"é\"}")]

    @Test func wholeInput() {
        #expect(frame([input]) == expected)
    }

    @Test func splitAtEveryByteOffset() {
        for cut in 0...input.count {
            #expect(frame([Array(input[..<cut]), Array(input[cut...])]) == expected, "cut at \(cut)")
        }
    }

    @Test func splitAtEveryPairOfOffsets() {
        for a in 0...input.count {
            for b in a...input.count {
                let parts = [Array(input[..<a]), Array(input[a..<b]), Array(input[b...])]
                #expect(frame(parts) == expected, "cuts at \(a), \(b)")
            }
        }
    }

    @Test func byteByByte() {
        #expect(frame(input.map { [$0] }) == expected)
    }

    @Test func overlongLineIsReportedOnceAndSkipped() {
        let long = Array(repeating: UInt8(ascii: "a"), count: 100)
        let data = Array("ok1\n".utf8) + long + Array("\nok2\n".utf8)
        for cut in 0...data.count {
            #expect(frame([Array(data[..<cut]), Array(data[cut...])], maxLine: 10) == [.line("ok1"), .tooLong, .line("ok2")], "cut at \(cut)")
        }
        #expect(frame(data.map { [$0] }, maxLine: 10) == [.line("ok1"), .tooLong, .line("ok2")])
    }

    @Test func lineOfExactlyMaxLineIsAccepted() {
        let ten = String(repeating: "b", count: 10)
        #expect(frame([Array("\(ten)\n".utf8)], maxLine: 10) == [.line(ten)])
        #expect(frame([Array("\(ten)\r\n".utf8)], maxLine: 10) == [.line(ten)])
        #expect(frame([Array("\(ten)b\n".utf8)], maxLine: 10) == [.tooLong])
    }

    /// Found by the fuzzer: "\r" arriving before its "\n" in another read made a line of
    /// exactly max_line bytes too long, though the same bytes in one read were accepted.
    @Test func lineOfExactlyMaxLineWithCRLFIsAcceptedAtEverySplit() {
        let ten = String(repeating: "b", count: 10)
        let data = Array("\(ten)\r\nok\n".utf8)
        for cut in 0...data.count {
            #expect(frame([Array(data[..<cut]), Array(data[cut...])], maxLine: 10) == [.line(ten), .line("ok")], "cut at \(cut)")
        }
        #expect(frame(data.map { [$0] }, maxLine: 10) == [.line(ten), .line("ok")])
        // One byte more is too long however it is cut.
        let eleven = Array("\(ten)b\r\nok\n".utf8)
        for cut in 0...eleven.count {
            #expect(frame([Array(eleven[..<cut]), Array(eleven[cut...])], maxLine: 10) == [.tooLong, .line("ok")], "cut at \(cut)")
        }
        #expect(frame([Array("\(ten)\r".utf8)], maxLine: 10, finish: true) == [.line(ten)])
    }

    @Test func finalLineWithoutNewlineCountsAtEOF() {
        #expect(frame([Array("a\nb".utf8)]) == [.line("a")])
        #expect(frame([Array("a\nb".utf8)], finish: true) == [.line("a"), .line("b")])
    }

    /// The vector newline search finds the first `\n` at every position and start (in
    /// either half of a 32-byte step, in the 16-byte step, in the bytes after them, with a
    /// second newline 7 or 17 bytes on), next to bytes that differ from it by one bit, or
    /// says there is none.
    @Test func theNewlineSearchFindsTheFirstNewlineEverywhere() {
        for length in 0...72 {
            for start in 0...length {
                for at in [nil] + Array(0..<length) {
                    var bytes = (0..<length).map { UInt8(truncatingIfNeeded: 0x0B ^ (($0 & 1) * 0x05)) }  // 0x0B, 0x0E: one bit off 0x0A
                    for k in 0..<length where k % 3 == 2 { bytes[k] = 0x8A }
                    if let at {
                        bytes[at] = 0x0A
                        let next = at + (at % 2 == 0 ? 17 : 7)
                        if next < length { bytes[next] = 0x0A }
                    }
                    let expected = bytes[start...].firstIndex(of: 0x0A) ?? length
                    let found = bytes.withUnsafeBufferPointer { LineFramer.newline(in: $0, from: start) }
                    if found != expected {
                        Issue.record("length \(length), start \(start), newline at \(String(describing: at)): found \(found), expected \(expected)")
                        return
                    }
                }
            }
        }
    }
}
