@preconcurrency import Glibc
import Foundation
import Testing
import TabBarCore
@testable import TabBarServer

/// `AudioService.play` keeps the sound it found last (a run of taps plays one click without
/// a lookup in the bank per click); a reload that changes the bank must not leave it
/// playing a sound the bank no longer has.
@Suite(.serialized) struct SoundLookupTests {
    @Test func aReloadForgetsTheSoundPlayedLast() throws {
        let sounds = String(#filePath.split(separator: "/", omittingEmptySubsequences: false).dropLast(3).joined(separator: "/")) + "/Sounds"  // the package's
        let dir = Rigs.tempDir("tabbard-lookup")
        defer { _ = system("rm -rf '\(dir)'") }
        #expect(system("cp '\(sounds)/click.wav' '\(sounds)/reselect.wav' '\(dir)/'") == 0)
        var cfg = ServerConfig(socketPath: "\(dir)/s.sock", statePath: "\(dir)/s/state.json", soundDirs: [dir])
        cfg.audio = .null
        let audio = AudioService(config: cfg)
        defer { audio.shutdown() }
        SoundLookupTests.settle(audio)
        let now = MonotonicClock.nanoseconds()
        for _ in 0..<3 { #expect(throws: Never.self) { try audio.play(name: "click", gain: 1, requestedAt: now).get() } }
        #expect(unlink("\(dir)/click.wav") == 0)
        audio.reload { _ in }
        SoundLookupTests.settle(audio)
        #expect(audio.play(name: "click", gain: 1, requestedAt: now) == .failure(.unknownSound("click")))
        #expect(throws: Never.self) { try audio.play(name: "reselect", gain: 1, requestedAt: now).get() }
    }

    /// What the state loop does with the loader's eventfd, until no load runs.
    static func settle(_ audio: AudioService) {
        while audio.load != nil {
            var p = pollfd(fd: audio.loadFD, events: Int16(POLLIN), revents: 0)
            #expect(poll(&p, 1, 10_000) == 1)
            audio.applyLoaded()
        }
    }
}
