import CSndFile
import Glibc
import Testing
@testable import TabBarAudio

/// Runs a shell command line (fixtures made with sox), returns its exit status.
@discardableResult
func sh(_ command: String) -> Int32 { run("/bin/sh", ["-c", command]) }

/// Sounds users bring (issue 38): files of unknown length, more than two channels, every
/// format libsndfile reads, the file's own frames, the override rule, quoted log values,
/// and the loader that runs off the state loop.
@Suite struct SoundLoadingTests {
    let stereo = PCMFormat(rate: 48000, channels: 2)

    @Test func aFlacWrittenToAPipeIsReadToItsEnd() throws {
        let dir = TempDir()
        defer { dir.cleanup() }
        // Through a pipe sox cannot seek back to write the length: libsndfile reports SF_COUNT_MAX.
        #expect(sh("sox -n -r 48000 -c 1 -b 16 -t flac - synth 1.09 sine 440 | cat > '\(dir.file("piped.flac"))'") == 0)
        let s = try SoundBank.loadSound(name: "piped", path: dir.file("piped.flac"), format: stereo)
        #expect(s.sourceFrames == 52_320)
        #expect(s.frames == 52_320)
    }

    @Test func aTruncatedOggPlaysWhatItHolds() throws {
        let dir = TempDir()
        defer { dir.cleanup() }
        // Cut at 80 %: libsndfile cannot find the last page's position and reports SF_COUNT_MAX.
        let whole = dir.file("whole.ogg"), cut = dir.file("cut.ogg")
        #expect(sh("sox -R -n -r 48000 -c 1 '\(whole)' synth 5 pinknoise && head -c $(( $(stat -c %s '\(whole)') * 8 / 10 )) '\(whole)' > '\(cut)'") == 0)
        let s = try SoundBank.loadSound(name: "cut", path: cut, format: stereo)
        #expect(s.sourceFrames > 120_000 && s.sourceFrames < 240_000)
    }

    @Test func aSoundOfUnknownLengthPastThirtySecondsIsRefusedOnceReadThatFar() throws {
        let dir = TempDir()
        defer { dir.cleanup() }
        #expect(sh("sox -n -r 8000 -c 1 -b 16 -t flac - synth 31 sine 440 | cat > '\(dir.file("long.flac"))'") == 0)
        #expect(throws: AudioError.decode(path: dir.file("long.flac"), reason: "longer than 30 s")) {
            try SoundBank.loadSound(name: "long", path: dir.file("long.flac"), format: stereo)
        }
    }

    /// A mono 1 kHz tone in channel `channel` of a six-channel (5.1) WAV, and the tone itself.
    func sixChannels(_ dir: TempDir, channel: Int) throws -> (Sound, [Float]) {
        sox(dir.file("mono.wav"), ["0.05", "sine", "1000"])
        let picks = (0..<6).map { $0 == channel ? "1" : "0" }.joined(separator: " ")
        #expect(sh("sox -D '\(dir.file("mono.wav"))' -c 6 '\(dir.file("six.wav"))' remix \(picks)") == 0)
        let six = try SoundBank.loadSound(name: "six", path: dir.file("six.wav"), format: stereo)
        let mono = try SoundBank.loadSound(name: "mono", path: dir.file("mono.wav"), format: PCMFormat(rate: 48000, channels: 1))
        #expect(six.sourceFormat.channels == 6 && six.frames == mono.frames)
        return (six, Array(mono.samples))
    }

    @Test func fiveOneIsDownmixedAsFfmpegDoesCentreAtMinusThreeDecibels() throws {
        let dir = TempDir()
        defer { dir.cleanup() }
        // FL FR FC LFE BL BR: each side's coefficients 1 + 0.7071 + 0.7071, scaled to sum to 1.
        let scale: Float = 1 / (1 + 2 * 0.70710677)
        /// The largest difference of each output channel from `gain` × the tone.
        func error(_ s: Sound, _ tone: [Float], left: Float, right: Float) -> (Float, Float) {
            var l: Float = 0, r: Float = 0
            for f in 0..<tone.count {
                l = max(l, abs(s.samples[2 * f] - left * tone[f]))
                r = max(r, abs(s.samples[2 * f + 1] - right * tone[f]))
            }
            return (l, r)
        }
        let (centre, tone) = try sixChannels(dir, channel: 2)
        #expect(centre.peak > 0.2)  // was silence: channels past the first two were dropped
        let c = error(centre, tone, left: 0.70710677 * scale, right: 0.70710677 * scale)
        #expect(c.0 < 1e-6 && c.1 < 1e-6, "\(c)")
        let (left, toneL) = try sixChannels(TempDir(), channel: 0)
        let l = error(left, toneL, left: scale, right: 0)
        #expect(l.0 < 1e-6 && l.1 == 0, "\(l)")
        let (lfe, _) = try sixChannels(TempDir(), channel: 3)
        #expect(lfe.peak == 0)  // the LFE is dropped, as ffmpeg's default does
        let (backRight, toneBR) = try sixChannels(TempDir(), channel: 5)
        let br = error(backRight, toneBR, left: 0, right: 0.70710677 * scale)
        #expect(br.0 == 0 && br.1 < 1e-6, "\(br)")
    }

    @Test func oggChannelsFollowTheVorbisOrder() {
        // Vorbis puts the centre second: L C R BL BR LFE.
        #expect(Downmix.defaultPositions(channels: 6, ogg: true)[1] == Int32(SF_CHANNEL_MAP_FRONT_CENTER))
        #expect(Downmix.defaultPositions(channels: 6, ogg: false)[2] == Int32(SF_CHANNEL_MAP_FRONT_CENTER))
        let mix = Downmix(positions: Downmix.defaultPositions(channels: 6, ogg: true), to: 2)
        #expect(mix.matrix?[0][1] == mix.matrix?[1][1] && (mix.matrix?[0][1] ?? 0) > 0.29)
        #expect(mix.matrix?[0][5] == 0 && mix.matrix?[1][5] == 0)
    }

    @Test func aDirectoryLoadsEveryFormatLibsndfileReads() throws {
        for ext in ["wav", "flac", "ogg", "oga", "opus", "mp3", "aiff", "aif", "caf", "w64", "au", "rf64"] {
            #expect(SoundBank.extensions.contains(ext), "\(ext)")
        }
        #expect(!SoundBank.extensions.contains("raw") && !SoundBank.extensions.contains("txt"))
        let dir = TempDir()
        defer { dir.cleanup() }
        for ext in ["aiff", "au", "w64", "caf", "flac"] {
            #expect(sh("sox -n -r 48000 -c 1 -b 16 '\(dir.file("s-" + ext + "." + ext))' synth 0.02 sine 500") == 0, "\(ext)")
        }
        writeBytes(dir.file("notes.txt"), Array("not a sound".utf8))
        let bank = SoundBank.load(directories: [dir.path], format: stereo, log: { _, _ in })
        #expect(bank.sounds.map(\.name) == ["s-aiff", "s-au", "s-caf", "s-flac", "s-w64"])
        #expect(bank.failures.isEmpty)
    }

    @Test func framesAreTheFilesOwn() throws {
        let dir = TempDir()
        defer { dir.cleanup() }
        #expect(sh("sox -r 44100 -n -c 2 -b 16 '\(dir.file("a.wav"))' synth 13728s sine 440") == 0)
        let s = try SoundBank.loadSound(name: "a", path: dir.file("a.wav"), format: stereo)
        #expect(s.sourceFrames == 13_728)
        #expect(abs(s.frames - 14_942) <= 1)  // 13728 × 48000/44100 = 14941.7
    }

    @Test func theLastDefinitionOfANameWinsEvenWhenItFails() throws {
        let a = TempDir(), b = TempDir()
        defer { a.cleanup(); b.cleanup() }
        sox(a.file("pop.wav"), ["0.01", "sine", "1000"])
        writeBytes(b.file("pop.wav"), Array("RIFF garbage".utf8))
        let logs = LogCollector()
        let bank = SoundBank.load(directories: [a.path, b.path], format: stereo, log: logs.log)
        #expect(bank.sound(named: "pop") == nil)
        #expect(bank.failure(named: "pop")?.path == b.file("pop.wav"))
        #expect(logs.contains(.info, "sound overridden name=pop file=\(b.file("pop.wav")) instead_of=\(a.file("pop.wav"))"))
    }

    @Test func logValuesWithSpacesAreQuoted() throws {
        let dir = TempDir()
        defer { dir.cleanup() }
        writeBytes(dir.file("Time not Lost.ogg"), Array("OggS but not really".utf8))
        let logs = LogCollector()
        let bank = SoundBank.load(directories: [dir.path], format: stereo, log: logs.log)
        #expect(bank.failure(named: "Time not Lost") != nil)
        #expect(logs.contains(.error, "sound not loaded name=\"Time not Lost\" file=\"\(dir.file("Time not Lost.ogg"))\" reason="))
        #expect(logValue("a=b") == "\"a=b\"" && logValue("plain") == "plain" && logValue("") == "\"\"")
    }

    @Test func resamplingKeepsTheToneAndTheLength() throws {
        // 1 s of 1 kHz at 44.1 kHz → 48 000 frames whose zero crossings are 1 kHz's.
        let input = (0..<44_100).map { Float(sin(2 * Double.pi * 1000 * Double($0) / 44_100)) * 0.5 }
        let out = try Converter.resample(input, channels: 1, from: 44_100, to: 48_000)
        #expect(abs(out.count - 48_000) <= 1)
        let middle = out[4800..<43_200]
        var crossings = 0
        for k in middle.indices.dropFirst() where (middle[k - 1] < 0) != (middle[k] < 0) { crossings += 1 }
        #expect(abs(crossings - 1600) <= 1)  // 0.8 s × 1000 Hz × 2
        #expect(abs((middle.max() ?? 0) - 0.5) < 0.005)
    }

    @Test func theLoaderPostsEachSoundThenTheBankAndStopsWhenCancelled() throws {
        let dir = TempDir()
        defer { dir.cleanup() }
        sox(dir.file("big.wav"), ["0.5", "sine", "300"])
        sox(dir.file("click.wav"), ["0.02", "sine", "1000"])
        sox(dir.file("tiny.wav"), ["0.01", "sine", "2000"])
        let loader = SoundLoader()
        let quiet: AudioLog = { _, _ in }
        let started = loader.start(directories: [dir.path], files: [:], format: stereo, first: ["big"], progressive: true, log: quiet)
        #expect(started)
        var updates: [SoundLoader.Update] = []
        while !updates.contains(where: { if case .finished = $0 { true } else { false } }) {
            #expect(waitReadable(loader.fd))
            updates += loader.take()
        }
        guard case .planned(let names) = updates.first else { Issue.record("no plan first"); return }
        #expect(names == ["big", "tiny", "click"])  // named first, then the smaller files
        let loaded = updates.compactMap { if case .loaded(let s) = $0 { s.name } else { nil } }
        #expect(loaded == names)
        guard case .finished(let bank) = updates.last else { Issue.record("no bank last"); return }
        #expect(bank.sounds.map(\.name) == ["big", "click", "tiny"])

        // A load held at its gate stops at once when cancelled, posting nothing more.
        let gate = dir.file("gate")
        writeBytes(gate, [])
        let held = SoundLoader(gate: gate)
        let heldStarted = held.start(directories: [dir.path], files: [:], format: stereo, progressive: false, log: quiet)
        #expect(heldStarted)
        #expect(waitReadable(held.fd))
        #expect(held.take().count == 1)  // the plan only
        held.cancel()
        #expect(held.take().isEmpty)
    }
}
