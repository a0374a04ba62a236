import Testing
import TabBarCore

/// Where the daemon and docs/PROTOCOL.md disagreed: minimal repros found by the model test
/// (ModelTests.swift), first kept as known issues, now fixed and asserted.
@Suite struct ModelFindingsTests {
    /// docs/PROTOCOL.md, `sound.play`: "An accepted sound is either heard or reported". With the
    /// 16-voice pool full, a voice stolen before its first frame reached the device once got
    /// neither `sound.played` nor `sound.failed` (64 plays in one virtual millisecond: 24
    /// reported); it is now reported failed (`stolen`).
    @Test func everyAcceptedSoundIsHeardOrReported() throws {
        let daemon = try Daemon(extraArgs: ["--clock", "manual"])
        let client = try RawClient(path: daemon.socket)
        var events: [JSON] = []
        _ = try client.call("subscribe", events: &events)
        var accepted = 0
        for _ in 0..<64 {
            let r = try client.call("sound.play", #"{"name":"click"}"#, events: &events)
            if r["result"]?["voice"] != nil { accepted += 1 }
        }
        _ = try client.call("clock.advance", #"{"ms":2000}"#, events: &events)
        _ = try client.call("ping", events: &events)
        let played = events.filter { $0["method"] == .string("sound.played") }.count
        let failed = events.filter { $0["method"] == .string("sound.failed") }.count
        #expect(accepted == 64)
        #expect(played + failed == accepted, "\(accepted) accepted, \(played) sound.played, \(failed) sound.failed")
    }

    /// docs/PROTOCOL.md, "Center and operation buttons": `badge.set` on an action/center item is
    /// ignored — reply `{"seq","badge":null,"ignored":true}`, whatever it asks (a count ≤ 0, a
    /// removal, included: it once got no `ignored`).
    @Test func aBadgeOnTheCenterItemIsIgnoredAndSaysSo() throws {
        let daemon = try Daemon(extraArgs: ["--clock", "manual"])
        let client = try RawClient(path: daemon.socket)
        let three = try client.call("badge.set", #"{"tab":"post","count":3}"#)
        #expect(three["result"]?["ignored"] == .bool(true))
        let zero = try client.call("badge.set", #"{"tab":"post","count":0}"#)
        #expect(zero["result"]?["badge"] == .null)
        #expect(zero["result"]?["ignored"] == .bool(true), "\(zero.text)")
    }
}
