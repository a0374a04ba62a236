import Testing
@testable import TabBarCore

/// `sound.played` and `sound.failed` are written straight from their values, byte for byte as
/// the notification of their params as a `JSON` object (what subscribers got before).
@Suite struct SoundEventTests {
    static let names = ["click", "", "a\"b", "back\\slash", "tab\there", "new\nline", "\u{1}\u{1f}", "é 日本 🎵",
                        String(repeating: "x", count: 40), "\u{7f}/<>"]

    @Test func playedIsItsParamsNotification() throws {
        for name in Self.names {
            for (voice, frame) in [(UInt32(0), Int64(0)), (1, 1), (UInt32.max, Int64.max), (12_345, -1), (99, Int64.min)] {
                let want = Wire.notification("sound.played", .obj(["voice": .int(Int(voice)), "name": .string(name), "frame": .int(Int(frame))]))
                let e = SoundEvent.played(voice: voice, name: name, frame: frame)
                #expect(e.line == want, "\(name) \(voice) \(frame)")
                #expect(e.method == "sound.played")
            }
        }
    }

    @Test func failedIsItsParamsNotification() throws {
        for name in Self.names {
            for reason in Self.names + ["the audio device was lost before the sound was played: hw:0"] {
                let want = Wire.notification("sound.failed", .obj(["voice": .int(7), "name": .string(name), "reason": .string(reason)]))
                let e = SoundEvent.failed(voice: 7, name: name, reason: reason)
                #expect(e.line == want, "\(name) \(reason)")
                #expect(e.method == "sound.failed")
            }
        }
    }
}
