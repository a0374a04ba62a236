import Foundation
import Testing
import FuzzSupport

/// The fuzzer's invariants in a plain build: every corpus file, and a fixed-seed
/// batch of mutations of them, must pass `ProtocolFuzz.run`. (libFuzzer itself
/// runs in `make fuzz` and, for a short bounded time, in `make test`.)
@Suite struct CorpusTests {
    static let corpusDir: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url.path + "/Fuzz/corpus"
    }()

    static func corpus() throws -> [(String, [UInt8])] {
        let names = try FileManager.default.contentsOfDirectory(atPath: corpusDir).sorted()
        return try names.map { ($0, Array(try Data(contentsOf: URL(fileURLWithPath: corpusDir + "/" + $0)))) }
    }

    @Test func everyCorpusInputKeepsTheInvariants() throws {
        let files = try Self.corpus()
        #expect(files.count >= 20)
        for (name, bytes) in files {
            let v = ProtocolFuzz.run(bytes)
            #expect(v == nil, "\(name): \(v?.description ?? "")")
        }
    }

    /// Splices, byte flips, insertions and cuts of corpus inputs (xorshift, fixed seed).
    @Test func mutationsKeepTheInvariants() throws {
        let files = try Self.corpus().map(\.1)
        var seed: UInt64 = 0x5EED_CAFE_F00D_0001
        func next(_ n: Int) -> Int {
            seed ^= seed << 13; seed ^= seed >> 7; seed ^= seed << 17
            return Int(seed % UInt64(max(n, 1)))
        }
        let tokens: [[UInt8]] = ["\n", "\r\n", "\"", "{", "}", "[", "]", ",", ":", "\\u0000", "\u{00}", "\u{FF}", "1e400", "-1",
                                 "null", "\"tab\":\"chat\"", "\"count\":", "\"id\":", "\"method\":\"tab.select\"", "\"params\":{}"]
            .map { Array($0.utf8) }
        for round in 0..<1500 {
            var input = files[next(files.count)]
            for _ in 0...next(4) {
                switch next(5) {
                case 0 where !input.isEmpty: input[next(input.count)] ^= UInt8(1 << next(8))
                case 1: input.insert(contentsOf: tokens[next(tokens.count)], at: next(input.count + 1))
                case 2 where !input.isEmpty:
                    let a = next(input.count), b = min(input.count, a + next(40))
                    input.removeSubrange(a..<b)
                case 3:
                    let other = files[next(files.count)]
                    let a = next(other.count), b = min(other.count, a + next(300))
                    input.insert(contentsOf: other[a..<b], at: next(input.count + 1))
                default: input = Array(input.prefix(next(input.count + 1)))
                }
            }
            if let v = ProtocolFuzz.run(input) {
                Issue.record("round \(round): \(v) — input (base64) \(Data(input).base64EncodedString())")
                return
            }
        }
    }
}
