import Testing
import TabBarCore
import TabBarTesting

/// Where the daemon and docs/PROTOCOL.md disagreed: minimal repros found by the model test
/// (ModelTests.swift), first kept as known issues, now fixed and asserted.
@Suite struct ModelFindingsTests {
    /// docs/PROTOCOL.md, `sound.play`: "An accepted sound is either heard or reported". With the
    /// 16-voice pool full, a voice stolen before its first frame reached the device once got
    /// neither `sound.played` nor `sound.failed` (64 plays in one virtual millisecond: 24
    /// reported); it is now reported failed (`stolen`).
    @Test func everyAcceptedSoundIsHeardOrReported() throws {
        let daemon = try privateDaemon()
        defer { #expect(daemon.stop() == 0) }
        var accepted = 0
        for _ in 0..<64 {
            if try daemon.call("sound.play", .obj(["name": .string("click")]))["voice"] != nil { accepted += 1 }
        }
        try daemon.advance(ms: 2000)
        let events = daemon.pendingEvents
        let played = events.filter { $0["method"] == .string("sound.played") }.count
        let failed = events.filter { $0["method"] == .string("sound.failed") }.count
        #expect(accepted == 64)
        #expect(played + failed == accepted, "\(accepted) accepted, \(played) sound.played, \(failed) sound.failed")
    }

    /// docs/PROTOCOL.md, "Center and operation buttons": `badge.set` on an action/center item is
    /// ignored — reply `{"seq","badge":null,"ignored":true}`, whatever it asks (a count ≤ 0, a
    /// removal, included: it once got no `ignored`).
    @Test func aBadgeOnTheCenterItemIsIgnoredAndSaysSo() throws {
        let daemon = try privateDaemon()
        defer { #expect(daemon.stop() == 0) }
        let three = try daemon.call("badge.set", .obj(["tab": .string("post"), "count": .int(3)]))
        #expect(three["ignored"] == .bool(true))
        let zero = try daemon.call("badge.set", .obj(["tab": .string("post"), "count": .int(0)]))
        #expect(zero["badge"] == .null)
        #expect(zero["ignored"] == .bool(true), "\(zero.text)")
    }
}
