import Testing
@testable import TabBarAudio

@Suite struct SoundBankTests {
    @Test func loadsDirectoryAndReportsBrokenFilesOneLineEach() throws {
        let dir = TempDir()
        defer { dir.cleanup() }
        sox(dir.file("click.wav"), ["0.05", "sine", "1000"])
        sox(dir.file("tick.wav"), ["0.01", "sine", "2000"])
        writeBytes(dir.file("broken.wav"), Array("RIFF....WAVEfmt garbage".utf8))
        writeBytes(dir.file("notes.txt"), Array("ignored".utf8))
        let logs = LogCollector()
        let bank = SoundBank.load(directories: [dir.path], files: ["missing": dir.file("nope.wav")],
                                  format: PCMFormat(rate: 48000, channels: 2), log: logs.log)
        #expect(bank.sounds.map(\.name) == ["click", "tick"])
        let click = try #require(bank.sound(named: "click"))
        #expect(click.frames == 2400)
        #expect(click.channels == 2 && click.rate == 48000)
        #expect(click.source == dir.file("click.wav"))
        let errors = logs.all.filter { $0.0 == .error }
        #expect(errors.count == 2)
        #expect(errors.contains { $0.1.contains("broken.wav") && $0.1.contains("reason=") })
        #expect(errors.contains { $0.1.contains("nope.wav") && $0.1.contains("No such file") })
        #expect(bank.failures.count == 2)
    }

    @Test func monoIsCopiedToBothChannelsExactly() throws {
        let dir = TempDir()
        defer { dir.cleanup() }
        sox(dir.file("c.wav"), ["0.01", "sine", "1000"])
        let mono = try #require(SoundBank.load(directories: [dir.path], format: PCMFormat(rate: 48000, channels: 1), log: { _, _ in }).sound(named: "c"))
        let stereo = try #require(SoundBank.load(directories: [dir.path], format: PCMFormat(rate: 48000, channels: 2), log: { _, _ in }).sound(named: "c"))
        #expect(stereo.frames == mono.frames)
        for f in 0..<mono.frames {
            #expect(stereo.samples[2 * f] == mono.samples[f] && stereo.samples[2 * f + 1] == mono.samples[f])
        }
        // 16-bit input decodes to exact multiples of 1/32768.
        #expect(mono.samples.allSatisfy { ($0 * 32768).rounded() == $0 * 32768 })
    }

    @Test func resamplesToDeviceRate() throws {
        let dir = TempDir()
        defer { dir.cleanup() }
        sox(dir.file("a.wav"), rate: 44100, channels: 2, ["0.1", "sine", "440"])
        let bank = SoundBank.load(directories: [dir.path], format: PCMFormat(rate: 48000, channels: 2), log: { _, _ in })
        let s = try #require(bank.sound(named: "a"))
        #expect(s.sourceFormat == PCMFormat(rate: 44100, channels: 2))
        #expect(abs(s.frames - 4800) <= 1)
        let source = try Decoder.decode(path: dir.file("a.wav"), into: PCMFormat(rate: 44100, channels: 2))
        let sourcePeak = source.samples.map { abs($0) }.max() ?? 0
        #expect(abs(s.peak - sourcePeak) < 0.02 * sourcePeak)
    }

    @Test func themeLookupFollowsFallbacks() throws {
        let theme = SoundTheme(name: "no-such-theme")
        let bell = try #require(theme.lookup("bell"))
        #expect(bell.hasSuffix("/freedesktop/stereo/bell.oga"))
        // Dash-stripping fallback: message-new-instant-urgent → message-new-instant.
        #expect(theme.lookup("message-new-instant-urgent")?.hasSuffix("message-new-instant.oga") == true)
        #expect(theme.lookup("zzz-not-a-sound") == nil)
        let logs = LogCollector()
        let bank = SoundBank.load(directories: [], files: ["theme:bell": "theme:bell", "theme:nothing": "theme:nothing"],
                                  format: .standard, log: logs.log)
        let s = try #require(bank.sound(named: "theme:bell"))
        #expect(s.sourceFormat.rate == 44100 && s.rate == 48000)
        #expect(logs.contains(.error, "theme:nothing"))
    }
}
