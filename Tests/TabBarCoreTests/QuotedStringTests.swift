import Testing
@testable import TabBarCore

/// Strings as every encoder quotes them (`ByteBuffer.string`): the short ones (up to 16
/// bytes: ids, names, method names) take a path of their own (`quotedShort`), which must
/// write exactly what the general one (`JSON.writeString`) writes, at every length and
/// with a byte that needs an escape — or one that does not, though it looks close — at
/// every place.
@Suite struct QuotedStringTests {
    func quoted(_ s: String) -> [UInt8] { ByteBuffer.collect { $0.string(s) } }
    func reference(_ s: String) -> [UInt8] {
        var out: [UInt8] = []
        JSON.writeString(s, into: &out)
        return out
    }

    @Test func everyLengthAndEveryPlaceOfAByteThatNeedsAnEscape() {
        let specials: [Unicode.Scalar] = ["\"", "\\", "\u{7F}", "\u{00}", "\u{01}", "\u{1F}", "\n"]
        // Close to them but plain: space, `!` and `#` around the quote, `[` `]` around the
        // backslash, `~`, a two-byte and a three-byte character.
        let plains: [Unicode.Scalar] = [" ", "!", "#", "[", "]", "~", "é", "€"]
        for n in 0...20 {
            let base = String(repeating: "a", count: n)
            #expect(quoted(base) == reference(base), "length \(n)")
            for k in 0..<max(n, 1) {
                for c in specials + plains {
                    var scalars = Array(base.unicodeScalars)
                    if scalars.isEmpty { scalars = [c] } else { scalars[k] = c }
                    var s = ""
                    s.unicodeScalars.append(contentsOf: scalars)
                    #expect(quoted(s) == reference(s), "\(Array(s.utf8)) (length \(n), at \(k))")
                }
            }
        }
    }

    @Test func afterWhatIsAlreadyWrittenAndAcrossAGrowth() {
        var b = ByteBuffer(capacity: 4)
        b.put("[")
        b.string("nearby")
        b.put(",")
        b.string("a\"b")
        b.put(",")
        b.string("")
        b.put(",")
        b.string("exactly16bytes..")
        b.put("]")
        #expect(String(decoding: b.bytes, as: UTF8.self) == #"["nearby","a\"b","","exactly16bytes.."]"#)
    }
}
