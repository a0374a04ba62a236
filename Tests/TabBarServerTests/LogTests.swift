@preconcurrency import Glibc
import Testing
@testable import TabBarServer
import TabBarAudio

/// Log records are one parseable line whatever the values hold.
@Suite struct LogTests {
    /// Reads `key=value` pairs back (values bare or quoted with C escapes), as a log reader would.
    static func pairs(_ line: Substring) -> [(String, String)] {
        var out: [(String, String)] = []
        var s = Array(line.unicodeScalars)
        var i = 0
        while i < s.count {
            while i < s.count, s[i] == " " { i += 1 }
            var key = ""
            while i < s.count, s[i] != "=" { key.unicodeScalars.append(s[i]); i += 1 }
            i += 1
            var value = ""
            if i < s.count, s[i] == "\"" {
                i += 1
                while i < s.count, s[i] != "\"" {
                    if s[i] == "\\" {
                        i += 1
                        switch s[i] {
                        case "n": value += "\n"
                        case "r": value += "\r"
                        case "t": value += "\t"
                        case "x":
                            value.unicodeScalars.append(Unicode.Scalar(UInt8(String(String.UnicodeScalarView(s[(i + 1)...(i + 2)])), radix: 16)!))
                            i += 2
                        case "u":
                            let close = s[i...].firstIndex(of: "}")!
                            value.unicodeScalars.append(Unicode.Scalar(UInt32(String(String.UnicodeScalarView(s[(i + 2)..<close])), radix: 16)!)!)
                            i = close
                        default: value.unicodeScalars.append(s[i])
                        }
                    } else {
                        value.unicodeScalars.append(s[i])
                    }
                    i += 1
                }
                i += 1
            } else {
                while i < s.count, s[i] != " " { value.unicodeScalars.append(s[i]); i += 1 }
            }
            out.append((key, value))
        }
        s.removeAll()
        return out
    }

    static let nasty = ["plain", "", "two words", #"say "x""#, #"back\slash"#, "a=b", "line\nbreak", "cr\rhere", "tab\there",
                        "nul\u{0}here", "bell\u{7}", "del\u{7F}", "c1\u{85}", "ls\u{2028}", "é and ✓", #"\""#, "end\\"]

    @Test(arguments: [true, false])
    func everyRecordIsOneLineAndItsValuesParseBack(journal: Bool) {
        for v in Self.nasty {
            let line = Log.format(.warning, "message with \"quotes\", a\nnewline and a NUL \u{0}", ["file": v, "n": "1"], journal: journal, time: "T")
            #expect(line.hasSuffix("\n"))
            #expect(line.dropLast().unicodeScalars.allSatisfy { !Log.isControl($0) }, "\(line.debugDescription)")
            #expect(line.hasPrefix(journal ? "<4>message with \"quotes\", a\\nnewline and a NUL \\x00 " : "T warning: message"))
            let meta = line.dropLast()[line.range(of: " file=")!.lowerBound...]
            let back = Self.pairs(meta)
            #expect(back.count == 2 && back[0].0 == "file" && back[0].1 == v && back[1] == ("n", "1"), "\(v.debugDescription) → \(line.debugDescription)")
        }
    }

    // Sendable because `SoundBank.load` calls its `log` on the calling thread, which alone reads `all`.
    final class Lines: @unchecked Sendable { var all: [String] = [] }

    @Test func aMissingThemeSoundIsLoggedOnceNamedAndQuoted() {
        let lines = Lines()
        let bank = SoundBank.load(directories: [], files: ["x": #"theme:no "such" sound"#], format: PCMFormat(rate: 48000, channels: 2),
                                  log: { _, m in lines.all.append(m) })
        #expect(bank.failures.count == 1)
        let line = try? #require(lines.all.first { $0.hasPrefix("sound not loaded") })
        #expect(line?.contains("or freedesktop or freedesktop") == false)
        #expect(!(bank.failures.first?.reason.contains("freedesktop or freedesktop") ?? true))
        let meta = Self.pairs(line?.dropFirst("sound not loaded ".count) ?? "")
        #expect(meta.first { $0.0 == "file" }?.1 == #"theme:no "such" sound"#, "\(line ?? "")")
        #expect(meta.first { $0.0 == "reason" }?.1 == bank.failures.first?.reason, "\(line ?? "")")
    }

    @Test func theJournalIsStderrOnlyWhenJournalStreamNamesIt() {
        var st = stat()
        #expect(fstat(2, &st) == 0)
        #expect(Log.stderrIsJournal("\(st.st_dev):\(st.st_ino)"))
        #expect(!Log.stderrIsJournal(nil))
        #expect(!Log.stderrIsJournal("\(st.st_dev):\(st.st_ino &+ 1)"))
        #expect(!Log.stderrIsJournal("garbage"))
        #expect(!Log.stderrIsJournal("\(st.st_dev):\(st.st_ino):1"))
    }

    @Test func timestampsHaveMilliseconds() {
        let t = Log.timestamp()
        #expect(t.count == 23, "\(t)")
        #expect(t.unicodeScalars.enumerated().allSatisfy { k, c in [4, 7].contains(k) ? c == "-" : k == 10 ? c == " " : [13, 16].contains(k) ? c == ":" : k == 19 ? c == "." : ("0"..."9").contains(c) })
    }
}
